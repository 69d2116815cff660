"""The op-table rows of the Converting and FP32 Unary sections (api.CONVERTING, api.UNARY): the
seed's 4 + 12 functions, each row's `kinds` exactly what its lowering emits, and a program of
all of them goes through disassembly and assembly unchanged (and runs on the simulator)."""
import pytest

import bmk
from bmk import bm1684
from bmk.bm1684 import api
from bmk.isa import load_chip
from bmk.text import asm as asmtext

CHIP = load_chip("bm1684")

SHAPE, D, S, W = (3, 66, 2, 3), 32768, 0, 16384
ARGS = {
    "Unary": (D, S, SHAPE),
    "TaylorSeries": (D, S, SHAPE, 12),
    "UnaryWork": (D, S, W, SHAPE),
    "UnaryWorkSeries": (D, S, W, SHAPE, 16),
    "Int8ToFp32": (D, S, W, SHAPE, True, False),
    "Copy": (D, S, SHAPE, None, None),
}
ROWS = api.CONVERTING + api.UNARY
LENGTHS = {"bdc_int8_to_fp32": 3, "bdc_sqrt": 2, "bdc_taylor_exp": 2, "bdc_exp": 10, "bdc_exp_tunable": 10,
           "bdc_sigmoid": 13, "bdc_sigmoid_tunable": 13, "bdc_tanh": 14, "bdc_tanh_tunable": 14}


def test_the_sections_have_the_seed_functions():
    assert [row.name for row in api.CONVERTING] == ["bdc_fp32_to_int32", "bdc_lookup_int32_to_fp32",
                                                    "bdc_4N_int8_to_fp32", "bdc_int8_to_fp32"]
    assert len(api.UNARY) == 12 and len({row.name for row in ROWS}) == 16
    assert all(row.seed in ("003 Data Type Converting Functions", "003 FP32 Unary Functions") for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_kinds_are_what_the_lowering_emits(row):
    ctx = bm1684.Context()
    getattr(ctx, row.name)(*ARGS[row.record.__name__])
    emitted = [f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())]
    assert sorted(set(emitted)) == sorted(row.kinds)
    assert len(emitted) == LENGTHS.get(row.name, 1)


def test_a_program_of_every_row_round_trips_through_the_text_tools():
    ctx = bm1684.Context()
    for row in ROWS:
        getattr(ctx, row.name)(*ARGS[row.record.__name__])
    buf = ctx.acquire_cmdbuf()
    records = bmk.decode("bm1684", buf)
    assert len(records) == sum(LENGTHS.get(row.name, 1) for row in ROWS)
    assert asmtext.assemble(asmtext.disassemble(CHIP, records)) == buf
    report = bmk.Simulator("bm1684").run(buf)                 # zeroed data: every kind is modelled
    assert len(report.instructions) == len(records)
