"""Packing, unpacking and framing, all derived from the isa specs."""
from bmk.encoders.codec import Codec, codec_for
from bmk.encoders.fields import Fields, as_dict
from bmk.encoders.framing import (Record, decode, decode_cmdbuf, decode_stream, encode, encode_cmdbuf, encode_header,
                                  encode_record, encode_stream, encode_streams, header_length, make_record,
                                  merge_streams, pack, Streams)

__all__ = ["Codec", "codec_for", "Fields", "as_dict", "Record", "decode", "decode_cmdbuf", "decode_stream", "encode",
           "encode_cmdbuf", "encode_header", "encode_record", "encode_stream", "encode_streams", "header_length",
           "make_record", "merge_streams", "pack", "Streams"]
