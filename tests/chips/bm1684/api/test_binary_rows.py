"""The op-table rows of the Binary section (api.BINARY): each one's `kinds` is exactly what its
lowering emits, and a program of all of them goes through disassembly and assembly unchanged."""
import pytest

import bmk
from bmk import bm1684
from bmk.bm1684 import api
from bmk.isa import load_chip
from bmk.text import asm as asmtext

CHIP = load_chip("bm1684")

SHAPE, D, A, B, W = (5, 66, 2, 3), 32768, 0, 16384, 49152
S8, S16 = bm1684.S8_OP_S8_TO_S16, bm1684.S16_OP_S16_TO_S16

ARGS = {
    "Binary": (D, A, B, SHAPE, None, None, None),
    "BinaryC": (D, A, 3, SHAPE, None, None),
    "SelectValue": (D, A, B, 1, SHAPE, None, None, None),
    "SelectCValue": (D, A, 1.0, 1, SHAPE, None, None),
    "FixedBinary": (D, A, B, SHAPE, None, None, None, S8, 2),
    "FixedBinaryC": (D, A, 3, SHAPE, None, None, S8, 2),
    "FixedMac": (D, A, B, SHAPE, None, None, None, True, S8, 1, 2),
    "FixedMacC": (D, A, 3, SHAPE, None, None, True, S8, 1, 2),
    "FixedMaxMin": (D, A, B, SHAPE, None, None, None, S16),
    "FixedMaxMinC": (D, A, 3, SHAPE, None, None, S16),
    "Mul16x8": (D, A, W, B, SHAPE, None, None, None, None, bm1684.S16_MUL_S8_TO_S16, 3),
    "Copy": (D, A, SHAPE, None, None),
    "SplitWork": (D, A, W, SHAPE, None, None, None),
}


def test_the_binary_section_has_the_seed_functions():
    assert len(api.BINARY) == 21 + 12 + 20 + 2
    assert len({row.name for row in api.BINARY}) == len(api.BINARY)


@pytest.mark.parametrize("row", api.BINARY, ids=lambda row: row.name)
def test_kinds_are_what_the_lowering_emits(row):
    ctx = bm1684.Context()
    getattr(ctx, row.name)(*ARGS[row.record.__name__])
    emitted = [f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())]
    assert sorted(set(emitted)) == sorted(row.kinds)


def test_a_program_of_every_row_round_trips_through_the_text_tools():
    ctx = bm1684.Context()
    for row in api.BINARY:
        getattr(ctx, row.name)(*ARGS[row.record.__name__])
    buf = ctx.acquire_cmdbuf()
    records = bmk.decode("bm1684", buf)
    assert len(records) == len(api.BINARY) + 2            # 16bit_mul_8bit and split_low emit two
    text = asmtext.disassemble(CHIP, records)
    assert asmtext.assemble(text) == buf
