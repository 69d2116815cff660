"""Mutated copies of every model under tests/models (issue 32: the fuzz harness extended to model
files). Each case runs what a user does with a model file, in a forked child bounded in time and
memory (tests/bounded.py), and may end only in success or a BmkError: read it, `bmk info` (data
and text), decode every group, `bmk check`, diff it against the original, read its coefficients
(verified, as `bmk extract` does), and `m.run` on zero inputs where the original runs in well
under a second. The mutations are seeded by the file's name, so a failing case is replayed by
its id: bit flips in the container's tables, in the binary area and in a command stream, a
truncation, and 32-bit words overwritten with a huge and a small count."""
import random
import struct

import numpy as np
import pytest

import bmk
from bmk.models import read_model
from bmk.text.model_diff import diff_models
from bmk.text.model_info import info_dict, info_lines
from tests.bounded import bounded
from tests.models import files as F

QUICK_RUN = {F.FACE_DETECTION, F.YUV2RGB, F.FACE_ATTR_1684X, F.BABY_CRY_1684X, F.HAND_KEYPOINT_1684X}
MAX_INPUT = 1 << 22          # elements: larger mutated inputs are the harness's cost, not the code's


def _tables_end(data):
    """Where a file's tables end: a bmodel's header + FlatBuffer; a cvimodel's first 3 KB."""
    if data[:4] == struct.pack("<I", 0xFF55AAEE):
        _, header, fb, _ = struct.unpack_from("<IIIQ", data)
        return min(len(data), header + fb)
    return min(len(data), 3000)


def _stream_offset(path, data):
    """The file offset of the first group's first command bytes."""
    m = bmk.load_model(path)
    g = m.groups()[0]
    blob = g.cmdbuf if g.cmdbuf else next(iter(g.streams.values()))
    at = data.find(bytes(blob[:64]))
    return at if at >= 0 else len(data) // 2


def _mutations(path):
    data = path.read_bytes()
    rng = random.Random(path.name)
    end = _tables_end(data)
    cmd = _stream_offset(path, data)
    cases = []

    def flip(at, why):
        bit = rng.randrange(8)
        cases.append((f"{why}@{at}^{1 << bit:#x}", data[:at] + bytes([data[at] ^ (1 << bit)]) + data[at + 1:]))

    def word(at, value, why):
        at -= at % 4
        if data[at:at + 4] == struct.pack("<I", value):     # a mutation must change the file
            value += 1
        cases.append((f"{why}@{at}={value}", data[:at] + struct.pack("<I", value) + data[at + 4:]))
    for _ in range(3):
        flip(rng.randrange(8, end), "table-bit")
    flip(rng.randrange(end, len(data)) if end < len(data) else rng.randrange(len(data)), "binary-bit")
    flip(cmd + rng.randrange(min(64, len(data) - cmd)), "command-bit")
    cut = rng.randrange(len(data))
    cases.append((f"cut@{cut}", data[:cut]))
    word(rng.randrange(8, end - 4), 0x7FFFFFF0, "table-huge")
    word(rng.randrange(8, end - 4), 21, "table-small")
    return [(path, name, mutated) for name, mutated in cases]


CASES = [c for p in F.ALL for c in _mutations(p)]


def _exercise(path, mutated):
    original = bmk.load_model(path)
    m = read_model(mutated, f"mutated-{path.name}")
    info_dict(m)
    "\n".join(info_lines(m))
    for g in m.groups():
        _ = g.payload
        if m.decodable:
            m.records(g)
    bmk.check(m)
    "\n".join(diff_models(original, m).iter_text())
    for net in m.nets:
        for st in net.stages:
            m.coefficients(st, verify=True)
    if path in QUICK_RUN:
        st = m.nets[0].stages[0]
        if all(np.prod(t.shape, dtype=object) <= MAX_INPUT for t in st.inputs):
            m.run({t.name: np.zeros(t.shape, t.dtype) for t in st.inputs})
    return "ok"


@pytest.mark.parametrize("path, name, mutated", CASES, ids=[f"{p.name}-{n}" for p, n, _ in CASES])
def test_a_mutated_model_is_bounded_and_only_bmk_errors(path, name, mutated):
    what = bounded(_exercise, path, mutated, seconds=8.0, show=lambda out: out)
    assert what == "ok" or what.startswith(("ModelError", "DecodeError", "SimulationError", "ArgumentError")), what


def test_the_harness_reaches_the_run_and_the_readers_refusals():
    """Not vacuous: a command flipped in a quick model still runs to its end (the run is reached),
    a cut file is refused at load, and a flipped coefficient bit by the sha256 check."""
    cases = {name.split("@")[0]: m for p, name, m in CASES if p == F.FACE_DETECTION}
    assert _exercise(F.FACE_DETECTION, cases["command-bit"]) == "ok"
    with pytest.raises(bmk.ModelError, match="truncated"):
        _exercise(F.FACE_DETECTION, cases["cut"])
    with pytest.raises(bmk.ModelError, match="sha256"):
        _exercise(F.FACE_DETECTION, cases["binary-bit"])
    assert len(CASES) == 8 * len(F.ALL) and all(m != p.read_bytes() for p, _, m in CASES)
