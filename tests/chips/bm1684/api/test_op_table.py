"""The bm1684 op table against the seed and the spec, and its shape: rows carry family check
and lowering functions, which read every fact from the chip they are given."""
import functools
import inspect
import re

import attrs
import pytest

from bmk import bm1684
from bmk.isa import load_chip
from bmk.bm1684 import api
from bmk.bm1684.checks.common import Check
from bmk.errors import ArgumentError
from bmk.sim import semantics

CHIP = load_chip("bm1684")
LANE = CHIP.space("local").lane_bytes


def spec_kinds():
    return {f"{engine}.{kind}" for engine, kind in semantics.spec_kinds(CHIP)}


def test_rows_are_well_formed():
    """(Every chip's rows: tests/chips/test_op_tables.py.) bm1684's cite a seed-003 group."""
    for row in bm1684.Context.OPS:
        assert row.c_name == f"okk_{row.name}"
        assert row.seed.startswith("003 ") and row.seed.endswith("Functions")
        method = getattr(bm1684.Context, row.name)
        # keywords are the C parameter names, in C order (API.md)
        params = list(inspect.signature(method).parameters)[1:]
        assert params and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) for p in params)


def test_signatures_follow_the_seed():
    """Each method's parameters are the C function's, in C order (seed 003 signatures)."""
    from tests.chips.bm1684.seed import signatures
    sig = signatures()
    for row in bm1684.Context.OPS:
        c_params = sig[row.c_name]
        ours = list(inspect.signature(getattr(bm1684.Context, row.name)).parameters)[1:]
        assert ours == c_params, (row.name, ours, c_params)


LOWERING = {"GDMA Functions": "gdma", "Memory Functions": "memory", "Data Type Converting Functions": "converting",
            "FP32 Binary Functions": "fp32_binary", "32-Bit Binary Functions": "bit32_binary",
            "Fixed Point Binary Functions": "fixed_point", "Fixed Point Unary Functions": "fixed_point",
            "FP32 Unary Functions": "fp32_unary", "FP32 Neural Network Functions": "neural_network"}


def test_rows_name_their_family_check_and_lowering():
    """Rows carry the family functions of checks/ and lowering/ (with their parameters), never a
    one-line wrapper named after the API function; the lowering is in its seed group's module."""
    for row in api.OPS:
        lower = row.lower.func if isinstance(row.lower, functools.partial) else row.lower
        assert lower.__module__ == "bmk.bm1684.lowering." + LOWERING[row.seed.split(" ", 1)[1]]
        assert row.c_name == f"okk_{row.name}" and row.call == "positional"


def _variant(**params):
    """The bm1684 spec with its local window moved and some params changed."""
    spec = load_chip("bm1684")
    memory = tuple(attrs.evolve(m, base=0x9000000) if m.name == "local" else m for m in spec.memory)
    return attrs.evolve(spec, memory=memory, params=tuple({**dict(spec.params), **params}.items()))


ROW = {row.name: row for row in api.OPS}


def test_lowering_reads_the_chip_it_is_given():
    chip = _variant(channel_align_bytes=64)
    (_, f), = ROW["bdc_add"].lower(chip, ROW["bdc_add"].record(0, 4096, 8192, (1, 2, 3, 4), None, None, None))
    assert (f["res0_addr"], f["opd0_addr"], f["opd1_addr"]) == (0x9000000, 0x9001000, 0x9002000)
    copy = ROW["gdma_32bit_cpy_S2L"]
    (_, f), = copy.lower(chip, copy.record(0, 0x100000000, (1, 2, 3, 7), None, None))
    assert chip.compose("gdma", "dst_addr", f) == 0x9000000
    assert f["dst_cstride"] == 32           # ALIGN(3 * 7, 64 bytes / 4): the variant's alignment
    (_, g), = copy.lower(CHIP, copy.record(0, 0x100000000, (1, 2, 3, 7), None, None))
    assert g["dst_cstride"] == 32 and CHIP.compose("gdma", "dst_addr", g) == 0x8000000
    (_, g), = copy.lower(CHIP, copy.record(0, 0x100000000, (1, 2, 5, 7), None, None))
    (_, f), = copy.lower(chip, copy.record(0, 0x100000000, (1, 2, 5, 7), None, None))
    assert (g["dst_cstride"], f["dst_cstride"]) == (64, 48)


def test_checks_read_the_chip_they_are_given():
    row = ROW["bdc_add"]
    record = row.record(32 * LANE, 32 * LANE + 4096, 32 * LANE + 8192, (1, 2, 3, 4), None, None, None)
    row.check(Check(CHIP, "bdc_add"), record)
    with pytest.raises(ArgumentError, match=r"bdc_add: dst_addr must be a local address in \[0, 0x1000000\)"):
        row.check(Check(_variant(npu_num=32), "bdc_add"), record)
