"""Fuzz on the decode-only chips (issue 23 item 4): mutated real streams of BM1688, BM1690
(TIU, GDMA, SDMA, HAU), CV184X and CV181X cmd_hdr_t buffers, and random bytes. `bmk.decode`
returns records or raises a BmkError; whatever decodes goes through the text and back to the
same bytes. Hypothesis, derandomized and bounded."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bmk
from bmk.text import asm as asmtext
from tests.models import files as F

SEED_BYTES = 2048          # a prefix of each real stream keeps a case fast


def _streams():
    out = []
    for path in (F.YOLO_1688_CORE2, F.YOLO_1690, F.HAND_184X):
        m = bmk.load_model(path)
        g = m.groups()[0]
        out += [(m.chip, engine, data[:SEED_BYTES]) for engine, data in g.streams.items()]
    g = bmk.load_model(F.HAND_181X).groups()[0]
    out.append(("cv181x", None, g.cmdbuf[:SEED_BYTES]))
    return out


STREAMS = _streams()
EDIT = st.tuples(st.sampled_from(["flip", "set", "cut", "truncate", "extend", "zeros"]),
                 st.integers(0, SEED_BYTES), st.integers(0, 255), st.binary(max_size=160))


def _mutate(data, edits):
    buf = bytearray(data)
    for op, pos, value, extra in edits:
        pos = pos % (len(buf) + 1)
        if op == "flip" and pos < len(buf):
            buf[pos] ^= 1 << (value % 8)
        elif op == "set" and pos < len(buf):
            buf[pos] = value
        elif op == "cut":
            del buf[pos:pos + value + 1]
        elif op == "truncate":
            del buf[pos:]
        elif op == "extend":
            buf[pos:pos] = extra
        elif op == "zeros":
            buf += bytes(value)
    return bytes(buf)


def _round_trip(chip, engine, data):
    payload = data if engine is None else {engine: data}
    try:
        recs = bmk.decode(chip, payload)
    except bmk.BmkError as e:
        assert isinstance(e, bmk.DecodeError)
        return
    text = asmtext.disassemble(asmtext.parse(f".chip {chip}\n").chip, recs, locations=True)
    again = asmtext.parse(text).records
    if engine is None:
        assert bmk.encode(chip, again) == data
    else:
        assert bmk.encode(chip, again, raw=True) == ({engine: data} if recs else {})


@pytest.mark.parametrize("case", range(len(STREAMS)), ids=lambda i: f"{STREAMS[i][0]}-{STREAMS[i][1] or 'cmdbuf'}")
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_mutated_streams_decode_or_raise_bmk_errors(case, edits):
    chip, engine, data = STREAMS[case]
    _round_trip(chip, engine, _mutate(data, edits))


@pytest.mark.parametrize("chip, engine", [("bm1688", "tiu"), ("bm1688", "gdma"), ("bm1690", "cdma"),
                                          ("bm1690", "sdma"), ("cv184x", "tiu"), ("cv182x", None), ("cv183x", None)])
@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.binary(max_size=400))
def test_random_bytes_decode_or_raise_bmk_errors(chip, engine, data):
    _round_trip(chip, engine, data)


def test_several_cores_of_random_streams():
    """A list of per-core streams, one of them broken: a DecodeError, never anything else."""
    m = bmk.load_model(F.YOLO_1688_CORE2)
    cores = [g.streams for g in m.groups()]
    cores[1] = {**cores[1], "tiu": cores[1]["tiu"][:-130]}
    with pytest.raises(bmk.DecodeError):
        bmk.decode("bm1688", cores)
    with pytest.raises(bmk.DecodeError, match="one per core"):
        bmk.decode("bm1688", [cores[0], b"x"])
    with pytest.raises(bmk.DecodeError, match="has no engine 'xdma'"):
        bmk.decode("bm1690", {"xdma": b""})
