"""Packing, unpacking and framing, all derived from the isa specs."""
from bmk.encoders.codec import Codec, codec_for
from bmk.encoders.cmdbuf import Record, decode_cmdbuf, decode_raw, encode_record, encode_raw

__all__ = ["Codec", "codec_for", "Record", "decode_cmdbuf", "decode_raw", "encode_record", "encode_raw"]
