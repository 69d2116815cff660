"""32-Bit Binary functions (seeds 003, 004): bit operations and shifts through bytes and the
simulator against numpy references written from the seeds' formulas; the remarks as errors."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.bm1684 import api
from tests.chips.bm1684.helpers import LANE, get, npu_addr, put, run, unchanged_after

rng = np.random.default_rng(32)
SHAPE = (3, 66, 2, 7)
ROWS = {row.name: row for row in api.OPS}


def kinds_of(ctx):
    return {f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())}


def words(shape=SHAPE):
    return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)


def shift_ref(x, amount, arithmetic):
    """x LSH amount if amount > 0 else x RSH -amount, on 32 bits (seed 003 formula)."""
    x = np.asarray(x, np.int64)
    x = np.where(x >= 2**31, x - 2**32, x) if arithmetic else x & 0xFFFFFFFF
    amount = np.broadcast_to(np.asarray(amount, np.int64), np.broadcast(x, amount).shape)
    out = [(int(v) << int(s)) if s > 0 else (int(v) >> int(-s)) for v, s in
           zip(np.broadcast_to(x, amount.shape).ravel(), amount.ravel())]
    return (np.array(out, dtype=object) & 0xFFFFFFFF).astype(np.uint64).astype(np.uint32).reshape(amount.shape)


LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("op", sorted(LOGIC))
@pytest.mark.parametrize("start", [0, 62])
def test_logic(op, start):
    a, b = words(), words()
    A, B, D = npu_addr(start, 0), npu_addr(start, 8192), npu_addr(start, 16384)
    ctx = bm1684.Context()
    getattr(ctx, f"bdc_32bit_{op}")(D, A, B, SHAPE, None, None, None)
    assert kinds_of(ctx) == set(ROWS[f"bdc_32bit_{op}"].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a, dtype="uint32")
    put(sim, B, b, dtype="uint32")
    run(ctx, sim)
    assert np.array_equal(get(sim, D, SHAPE, dtype="uint32"), LOGIC[op](a, b))


@pytest.mark.parametrize("op", sorted(LOGIC))
@pytest.mark.parametrize("C, bits", [(-1, 0xFFFFFFFF), (0x0F0F00FF, 0x0F0F00FF), (-2**31, 0x80000000),
                                     (1.0, 0x3F800000)])
def test_logic_C(op, C, bits):
    a = words()
    ctx = bm1684.Context()
    getattr(ctx, f"bdc_32bit_{op}_C")(npu_addr(9, 4096), npu_addr(9, 0), C, SHAPE, None, None)
    assert kinds_of(ctx) == set(ROWS[f"bdc_32bit_{op}_C"].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, npu_addr(9, 0), a, dtype="uint32")
    run(ctx, sim)
    assert np.array_equal(get(sim, npu_addr(9, 4096), SHAPE, dtype="uint32"), LOGIC[op](a, np.uint32(bits)))


def amounts(shape=SHAPE):
    s = rng.integers(-32, 33, shape).astype(np.int32)
    s.flat[:4] = [-32, 32, 0, 31]                       # the remark's boundaries
    return s


@pytest.mark.parametrize("kind", ["arithmetic", "logical"])
def test_shift_tensor_by_tensor(kind):
    a, s = words(), amounts()
    a.flat[:4] = [0x80000001, 0x80000001, 0xFFFFFFFF, 1]
    A, B, D = npu_addr(40, 0), npu_addr(40, 8192), npu_addr(40, 16384)
    ctx = bm1684.Context()
    getattr(ctx, f"bdc_32bit_{kind}_shift")(D, A, B, SHAPE, None, None, None)
    assert kinds_of(ctx) == set(ROWS[f"bdc_32bit_{kind}_shift"].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a, dtype="uint32")
    put(sim, B, s, dtype="int32")
    run(ctx, sim)
    assert np.array_equal(get(sim, D, SHAPE, dtype="uint32"), shift_ref(a, s, kind == "arithmetic"))


@pytest.mark.parametrize("kind", ["arithmetic", "logical"])
@pytest.mark.parametrize("C", [-32, -5, 0, 7, 32])
def test_shift_by_C(kind, C):
    a = words()
    ctx = bm1684.Context()
    getattr(ctx, f"bdc_32bit_{kind}_shift_C")(4096, 0, C, SHAPE, None, None)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, a, dtype="uint32")
    run(ctx, sim)
    assert np.array_equal(get(sim, 4096, SHAPE, dtype="uint32"), shift_ref(a, C, kind == "arithmetic"))


@pytest.mark.parametrize("kind, C", [("arithmetic", -2**31), ("arithmetic", -77), ("arithmetic", 2**31 - 1),
                                     ("logical", 2**32 - 1), ("logical", 0x80000000), ("logical", 5)])
def test_C_shifted_by_tensor(kind, C):
    s = amounts()
    ctx = bm1684.Context()
    getattr(ctx, f"bdc_32bit_C_{kind}_shift")(npu_addr(63, 4096), npu_addr(63, 0), C, SHAPE, None, None)
    assert kinds_of(ctx) == set(ROWS[f"bdc_32bit_C_{kind}_shift"].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, npu_addr(63, 0), s, dtype="int32")
    run(ctx, sim)
    assert np.array_equal(get(sim, npu_addr(63, 4096), SHAPE, dtype="uint32"),
                          shift_ref(np.full(SHAPE, C & 0xFFFFFFFF, np.uint32), s, kind == "arithmetic"))


@pytest.mark.parametrize("name, args, match", [
    ("bdc_32bit_and", (0, 4096, 8194, (1, 1, 1, 1)), "src1_addr must be divisible by 4"),
    ("bdc_32bit_or", (0, LANE, 8192, (1, 1, 1, 1)), "src0_addr must be an address on NPU"),
    ("bdc_32bit_xor", (0, 4096, 8192, (1, 4096, 1, 1)), r"shape.c must be an integer in \[1, 4095\]"),
    ("bdc_32bit_and_C", (0, 4096, 2**32, (1, 1, 1, 1)), r"C must be an integer in \[-2147483648, 4294967295\]"),
    ("bdc_32bit_or_C", (0, 4096, -2**31 - 1, (1, 1, 1, 1)), r"C must be an integer in"),
    ("bdc_32bit_arithmetic_shift_C", (0, 4096, 33, (1, 1, 1, 1)), r"C must be an integer in \[-32, 32\]"),
    ("bdc_32bit_logical_shift_C", (0, 4096, -33, (1, 1, 1, 1)), r"C must be an integer in \[-32, 32\]"),
    ("bdc_32bit_logical_shift_C", (0, 4096, 1.0, (1, 1, 1, 1)), r"C must be an integer in \[-32, 32\]"),
    ("bdc_32bit_C_arithmetic_shift", (0, 4096, 2**31, (1, 1, 1, 1)),
     r"C must be an integer in \[-2147483648, 2147483647\]"),
    ("bdc_32bit_C_logical_shift", (0, 4096, -1, (1, 1, 1, 1)), r"C must be an integer in \[0, 4294967295\]"),
    ("bdc_32bit_arithmetic_shift", (0, 4096, 8192, (1, 1, 1, 1), None, None, (0, 1, 1)), r"src1_stride must be None \(the default layout\) or a dim4 stride"),
    ("bdc_32bit_logical_shift", (LANE - 4, 4096, 8192, (1, 1, 1, 2)),
     "dst_addr must be such that the tensor fits"),
])
def test_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_32bit_and(0, 4096, 8192, (1, 2, 3, 4))
    unchanged_after(ctx, getattr(ctx, name), *args, match=f"{name}: {match}")
