"""cmd_hdr_t framing: records back to back, each a header then one descriptor.

bm1880 header (isa-facts cmd_hdr): magic, len (descriptor bytes), engine_id (low nibble of
byte 2), flags, mask. A `len` of 0 means "the length is in mask".
Raw per-engine streams (the vendor runtime's form) are descriptors back to back, no header.
"""
import attrs

from bmk.encoders.codec import codec_for
from bmk.errors import DecodeError, EncodeError


@attrs.frozen
class Record:
    """One decoded instruction: where it was, its engine, its header and its fields."""

    offset: int
    engine: str
    fields: dict = attrs.field(eq=False)
    header: dict = attrs.field(factory=dict, eq=False)


def encode_record(chip, engine, fields, header=None):
    """Frame one descriptor: cmd_hdr_t followed by the packed fields."""
    eng = chip.engine(engine)
    if eng.format is None:
        raise EncodeError(f"engine {engine!r} of chip {chip.name!r} has no descriptor format")
    body = codec_for(eng.format).pack(fields)
    return encode_header(chip, eng, len(body), header) + body


def encode_header(chip, eng, length, header=None):
    h = {"magic": chip.magic, "len": length, "engine_id": eng.id}
    if header:
        h.update(header)
    return codec_for(chip.header).pack(h)


def decode_cmdbuf(chip, data):
    """bytes -> list of Records. Any defect raises DecodeError naming the byte offset."""
    data = bytes(data)
    hdr_codec = codec_for(chip.header)
    hsize = hdr_codec.nbytes
    records, offset = [], 0
    while offset < len(data):
        if len(data) - offset < hsize:
            raise DecodeError(f"truncated cmd_hdr_t: {len(data) - offset} bytes left, a header is {hsize}", offset)
        header = hdr_codec.unpack(data[offset:offset + hsize])
        if header["magic"] != chip.magic:
            raise DecodeError(f"bad magic 0x{header['magic']:02x}, expected 0x{chip.magic:02x} for {chip.name}", offset)
        eng = chip.engine_by_id(header["engine_id"])
        if eng is None:
            raise DecodeError(f"unknown engine id {header['engine_id']}", offset)
        if eng.format is None:
            raise DecodeError(f"engine {eng.name!r} (id {eng.id}) has no descriptor format in {chip.name}", offset)
        length = header["len"] or header["mask"]
        if length != eng.format.nbytes:
            raise DecodeError(f"length mismatch: header says {length} bytes, a {eng.name} descriptor is "
                              f"{eng.format.nbytes}", offset)
        start = offset + hsize
        if start + length > len(data):
            raise DecodeError(f"truncated {eng.name} descriptor: {len(data) - start} of {length} bytes", offset)
        fields = codec_for(eng.format).unpack(data[start:start + length])
        extra = {k: v for k, v in header.items() if k not in ("magic", "len", "engine_id") and v}
        if header["len"] == 0:
            extra["len"] = 0
        records.append(Record(offset, eng.name, fields, extra))
        offset = start + length
    return records


def decode_raw(chip, engine, data):
    """A raw per-engine stream (fixed-size descriptors back to back) -> Records."""
    eng = chip.engine(engine)
    codec = codec_for(eng.format)
    data = bytes(data)
    if len(data) % codec.nbytes:
        raise DecodeError(f"raw {engine} stream of {len(data)} bytes is not a whole number of "
                          f"{codec.nbytes}-byte descriptors", len(data) - len(data) % codec.nbytes)
    return [Record(off, engine, codec.unpack(data[off:off + codec.nbytes]))
            for off in range(0, len(data), codec.nbytes)]


def encode_raw(chip, engine, field_dicts):
    """Field dicts of one engine -> a raw stream, no headers."""
    codec = codec_for(chip.engine(engine).format)
    return b"".join(codec.pack(f) for f in field_dicts)
