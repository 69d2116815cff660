"""Every golden case reproduces the vendor's bytes through the public API, and decodes
to the listed fields with our decoder."""
import hashlib

import pytest

import bmk
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip
from tests.goldens import GOLDEN_BUFFERS, GOLDEN_IDS, load_cases, run_calls
from tests.vectors import vendor

CASES = load_cases()
CHIP = load_chip("bm1880")


def nonzero(record):
    return {"engine": record.engine, "fields": {k: v for k, v in record.fields.items() if v}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_bytes(name):
    case = CASES[name]
    acquired = run_calls(case)
    if "acquisitions" in case:
        assert [(a["ctx"] or "ctx", a["cmdbuf_hex"]) for a in case["acquisitions"]] == \
            [(ctx, buf.hex()) for ctx, buf in acquired]
    elif "cmdbuf_sha256" in case:
        buf = acquired[-1][1]
        assert len(buf) == case["cmdbuf_len"]
        assert hashlib.sha256(buf).hexdigest() == case["cmdbuf_sha256"]
    else:
        assert acquired[-1][1].hex() == case["cmdbuf_hex"]


@pytest.mark.parametrize("name, buf, instructions", GOLDEN_BUFFERS, ids=GOLDEN_IDS)
def test_golden_decode(name, buf, instructions):
    assert [nonzero(r) for r in decode_cmdbuf(CHIP, buf)] == instructions


def test_padding_after_an_end_command_is_never_a_command():
    """Issue 18 item 5: two closed bm1684x streams back to back decode to both programs (the
    first one's zero padding is padding, not a CONV of zeros) and encode back to the bytes."""
    streams = vendor.streams("bm1684x")
    for engine, data in streams.items():
        one = bmk.decode("bm1684x", {engine: data})
        two = bmk.decode("bm1684x", {engine: data + data})
        assert [(r.kind, r.fields) for r in two] == [(r.kind, r.fields) for r in one] * 2
        assert bmk.encode("bm1684x", two, raw=True)[engine] == data + data
