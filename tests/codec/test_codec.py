"""Bit order pinned by hand, and pack/unpack round trips of every format."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bmk.isa import chips as spec_chips
from bmk.encoders import codec_for, decode_cmdbuf, encode_record
from bmk.errors import DecodeError, EncodeError
from bmk.isa import load_chip

BM1880 = load_chip("bm1880")
TIU = codec_for(BM1880.engine("tiu").format)
TDMA = codec_for(BM1880.engine("tdma").format)
FORMATS = [(chip, fmt) for chip in spec_chips() for fmt in load_chip(chip).formats + (load_chip(chip).header,)]


def test_field_crossing_a_word_boundary():
    # cmd_id_gdma is bits [19, 35): byte 2 bits 3-7, byte 3, byte 4 bits 0-2 (LSB first, LE words).
    body = TIU.pack({f.name: 0 for f in TIU.format.fields} | {"cmd_id_gdma": 0xFFFF})
    assert body[:6] == bytes([0x00, 0x00, 0xF8, 0xFF, 0x07, 0x00])
    assert TIU.unpack(body)["cmd_id_gdma"] == 0xFFFF


def test_little_endian_words():
    body = TDMA.pack({f.name: 0 for f in TDMA.format.fields} | {"cmd_id": 0x1234, "vld": 1})
    assert body[:4] == bytes([0x01, 0x00, 0x34, 0x12])


def test_header_layout():
    rec = encode_record(BM1880, "tdma", {})
    assert rec[:8] == bytes([0xA5, 64, 2, 0, 0, 0, 0, 0])


def test_value_too_wide_names_the_field():
    with pytest.raises(EncodeError, match=r"tiu.res0_c must be in \[0, 4095\], not 4096"):
        TIU.pack({"res0_c": 4096})
    with pytest.raises(EncodeError, match=r"unknown fields \['nope'\]"):
        TIU.pack({"nope": 1})


def values_for(fmt):
    return st.fixed_dictionaries({f.name: st.integers(0, f.max) for f in fmt.fields})


@pytest.mark.parametrize("chip, fmt", FORMATS, ids=[f"{c}.{f.name}" for c, f in FORMATS])
def test_unpack_pack_round_trip(chip, fmt):
    """Every class of every chip: random field values pack to bytes whose bits [bit, bit + width)
    (one little-endian integer, LSB first: specs/README.md) hold each value, and unpack back;
    random bytes unpack and pack back. Deterministic per class (seeded), fast for ~300 classes."""
    codec = codec_for(fmt)
    rng = random.Random(f"{chip}.{fmt.name}")
    for _ in range(25):
        values = {f.name: rng.choice((0, f.max, rng.randrange(f.max + 1))) for f in fmt.fields}
        packed = codec.pack(values)
        assert len(packed) == fmt.nbytes
        word = int.from_bytes(packed, "little")
        assert {f.name: (word >> f.bit) & f.max for f in fmt.fields} == values
        assert codec.unpack(packed) == values
        raw = rng.randbytes(fmt.nbytes)
        assert codec.pack(codec.unpack(raw)) == raw


@pytest.mark.parametrize("data, message", [
    (b"\xa5\x40\x02", "byte 0: truncated cmd_hdr_t: 3 bytes left, a header is 8"),
    (b"\x5a\x40\x02\x00\x00\x00\x00\x00" + bytes(64), "byte 0: bad magic 0x5a, expected 0xa5 for bm1880"),
    (b"\xa5\x40\x07\x00\x00\x00\x00\x00" + bytes(64), "byte 0: unknown engine id 7"),
    (b"\xa5\x40\x00\x00\x00\x00\x00\x00" + bytes(64), "byte 0: length mismatch: header says 64 bytes, a tiu command is 112"),
    (b"\xa5\x40\x02\x00\x00\x00\x00\x00" + bytes(10), "byte 0: truncated tdma command: 10 of 64 bytes"),
])
def test_corrupt_buffers(data, message):
    with pytest.raises(DecodeError) as e:
        decode_cmdbuf(BM1880, data)
    assert str(e.value) == message


def test_corrupt_offset_points_at_the_bad_record():
    good = encode_record(BM1880, "tdma", {"vld": 1})
    with pytest.raises(DecodeError) as e:
        decode_cmdbuf(BM1880, good + b"\x00" * 8)
    assert e.value.offset == len(good)


def test_encode_never_writes_a_header_decode_refuses():
    """Issue 32.12: bmk.encode wrote a cmd_hdr_t with len=5 (or a bad magic or engine id) from a
    Record's header that bmk.decode then rejected; encode refuses it, naming the field."""
    import attrs
    import bmk
    from bmk.errors import EncodeError
    from tests.models import files as F
    m = bmk.load_model(F.HAND_181X)
    buf = m.groups()[0].cmdbuf
    recs = bmk.decode(m.chip, buf)
    assert bmk.encode(m.chip, recs) == buf
    for hdr, rule in (({"len": 5}, "len must be 64 .* not len=5"), ({"magic": 0x12}, "magic must be 0xa7"),
                      ({"engine_id": 7}, "engine_id must be 2 \\(the tdma engine\\), not 7")):
        bad = attrs.evolve(recs[0], header={**recs[0].header, **hdr})
        with pytest.raises(EncodeError, match=f"tdma command header: {rule}"):
            bmk.encode(m.chip, [bad])
    long_form = attrs.evolve(recs[0], header={**recs[0].header, "len": 0, "mask": 64})
    assert bmk.decode(m.chip, bmk.encode(m.chip, [long_form]))[0].fields == recs[0].fields
