"""Fixed Point Binary and Unary functions (seed 003): every valid op_type_t / mul_type_t through
bytes and the simulator against widened-integer references written from the seed's formulas
((x + 2^(rshift-1)) RSH rshift, saturated to the destination type), 4N/2N tensors; the
remarks as errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bmk
from bmk import bm1684
from bmk.bm1684 import api, constants
from bmk.bm1684.checks.fixed_point import VALID
from tests.chips.bm1684.helpers import LANE, get, put, run, unchanged_after

rng = np.random.default_rng(16)
SHAPE = (5, 66, 2, 3)                     # n = 5: a partial 4N/2N group; c = 66 crosses 64 NPUs
A, B, D, W = 0, 16384, 32768, 49152
ROWS = {row.name: row for row in api.OPS}
P = "bdc_fixed_point_packed_"


def pack(dt):
    return 4 // dt.itemsize


def kinds_of(ctx):
    return [f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())]


def values(dt, shape=SHAPE):
    x = rng.integers(dt.min, dt.max + 1, shape, dtype=np.int64)
    x.flat[:4] = [dt.min, dt.max, dt.min, dt.max]            # saturation at both ends
    return x.astype(dt.numpy)


def store(sim, addr, x, dt):
    put(sim, addr, x, dtype=dt.numpy, pack=pack(dt))


def load(sim, addr, dt, shape=SHAPE):
    return get(sim, addr, shape, dtype=dt.numpy, pack=pack(dt))


def formula(x, rshift):
    """The seed's rounding right shift: (x + 2^(rshift-1)) RSH rshift when rshift > 0."""
    x = np.asarray(x, np.int64)
    return (x + (1 << (rshift - 1))) >> rshift if rshift > 0 else x


def saturate(x, dt):
    return np.clip(x, dt.min, dt.max).astype(dt.numpy)


OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
NAMES = {v: n for n, v in constants.OP_TYPES.items()}


def cases(valid):
    return [(name, constants.OP_TYPES[name]) for name in VALID[valid]]


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("rshift", [0, 3])
def test_binary_every_op_type(op, rshift):
    for name, t in cases(op):
        s0, s1, d = constants.op_type_dtypes(t)
        a, b = values(s0), values(s1)
        ctx = bm1684.Context()
        getattr(ctx, P + op)(D, A, B, SHAPE, None, None, None, t, rshift)
        assert kinds_of(ctx) == list(ROWS[P + op].kinds)
        sim = bmk.Simulator("bm1684")
        store(sim, A, a, s0)
        store(sim, B, b, s1)
        run(ctx, sim)
        expect = saturate(formula(OPS[op](a.astype(np.int64), b.astype(np.int64)), rshift), d)
        assert np.array_equal(load(sim, D, d), expect), name


@pytest.mark.parametrize("op", ["add", "sub", "C_sub", "mul"])
@pytest.mark.parametrize("rshift", [0, 5])
def test_binary_C_every_op_type(op, rshift):
    valid = op.replace("C_", "")
    for name, t in cases(valid):
        s0, s1, d = constants.op_type_dtypes(t)
        src_dt, c_dt = (s1, s0) if op == "C_sub" else (s0, s1)
        a = values(src_dt)
        for C in (c_dt.min, c_dt.max, int(rng.integers(c_dt.min, c_dt.max + 1))):
            ctx = bm1684.Context()
            getattr(ctx, f"{P}{op}" if op == "C_sub" else f"{P}{op}_C")(D, A, C, SHAPE, None, None, t, rshift)
            sim = bmk.Simulator("bm1684")
            store(sim, A, a, src_dt)
            run(ctx, sim)
            x = a.astype(np.int64)
            exact = {"add": x + C, "sub": x - C, "C_sub": C - x, "mul": x * C}[op]
            assert np.array_equal(load(sim, D, d), saturate(formula(exact, rshift), d)), (name, C)


@pytest.mark.parametrize("origin_signed", [True, False])
@pytest.mark.parametrize("const", [False, True])
@pytest.mark.parametrize("lshift, rshift", [(0, 0), (4, 2), (8, 9)])
def test_mac(origin_signed, const, lshift, rshift):
    origin = bmk.dtypes.INT16 if origin_signed else bmk.dtypes.UINT16
    for name, t in cases("mac_signed" if origin_signed else "mac_unsigned"):
        s0, s1, d = constants.op_type_dtypes(t)
        a, b, old = values(s0), values(s1), values(origin)
        ctx = bm1684.Context()
        sim = bmk.Simulator("bm1684")
        store(sim, A, a, s0)
        store(sim, D, old, origin)
        if const:
            b = int(rng.integers(s1.min, s1.max + 1))
            ctx.bdc_fixed_point_packed_mac_C(D, A, b, SHAPE, None, None, origin_signed, t, lshift, rshift)
        else:
            store(sim, B, b, s1)
            ctx.bdc_fixed_point_packed_mac(D, A, B, SHAPE, None, None, None, origin_signed, t, lshift, rshift)
        assert kinds_of(ctx) == ["tiu.arith.mac"]
        run(ctx, sim)
        exact = (old.astype(np.int64) << lshift) + a.astype(np.int64) * np.asarray(b, np.int64)
        assert np.array_equal(load(sim, D, d), saturate(formula(exact, rshift), d)), name


@pytest.mark.parametrize("op, fn", [("max", np.maximum), ("min", np.minimum)])
@pytest.mark.parametrize("const", [False, True])
def test_max_min(op, fn, const):
    for name, t in cases("maxmin"):
        s0, s1, d = constants.op_type_dtypes(t)
        a, b = values(s0), values(s1)
        ctx = bm1684.Context()
        sim = bmk.Simulator("bm1684")
        store(sim, A, a, s0)
        if const:
            b = int(rng.integers(s1.min, s1.max + 1))
            getattr(ctx, f"{P}{op}_C")(D, A, b, SHAPE, None, None, t)
        else:
            store(sim, B, b, s1)
            getattr(ctx, P + op)(D, A, B, SHAPE, None, None, None, t)
        assert kinds_of(ctx) == list(ROWS[P + op].kinds)
        run(ctx, sim)
        assert np.array_equal(load(sim, D, d), fn(a.astype(np.int64), b).astype(d.numpy)), name


def test_strided_4N_operands():
    """Free strides count 32-bit words of 4N / 2N groups; dst int16 2N from int8 4N sources."""
    t = constants.S8_OP_U8_TO_S16
    s0, s1, d = constants.op_type_dtypes(t)
    shape = (6, 3, 2, 3)
    sa, sb, sd = (20, 6, 3, 1), (24, 8, 4, 1), (32, 10, 4, 1)
    a, b = values(s0, shape), values(s1, shape)
    ctx = bm1684.Context()
    ctx.bdc_fixed_point_packed_add(D, A, B, shape, sd, sa, sb, t, 1)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a, sa, dtype=s0.numpy, pack=4)
    put(sim, B, b, sb, dtype=s1.numpy, pack=4)
    run(ctx, sim)
    expect = saturate(formula(a.astype(np.int64) + b, 1), d)
    assert np.array_equal(get(sim, D, shape, sd, dtype=d.numpy, pack=2), expect)


def shift16_ref(x, amount, arithmetic):
    x = np.asarray(x, np.int64)
    x = np.where(x >= 2**15, x - 2**16, x) if arithmetic else x & 0xFFFF
    x, amount = np.broadcast_arrays(x, np.asarray(amount, np.int64))
    out = [(int(v) << int(s)) if s > 0 else (int(v) >> int(-s)) for v, s in zip(x.ravel(), amount.ravel())]
    return (np.array(out, dtype=object) & 0xFFFF).astype(np.int64).astype(np.uint16).reshape(x.shape)


@pytest.mark.parametrize("kind", ["arithmetic", "logical"])
def test_16bit_shifts(kind):
    I16, U16 = bmk.dtypes.INT16, bmk.dtypes.UINT16
    x = values(U16)
    s = rng.integers(-16, 17, SHAPE).astype(np.int16)
    s.flat[:4] = [-16, 16, 0, 15]
    arithmetic = kind == "arithmetic"
    ctx = bm1684.Context()
    getattr(ctx, f"{P}16bit_{kind}_shift")(D, A, B, SHAPE, None, None, None)
    getattr(ctx, f"{P}16bit_{kind}_shift_C")(D + 4096, A, -3, SHAPE, None, None)
    getattr(ctx, f"{P}16bit_C_{kind}_shift")(D + 8192, B, -30000 if arithmetic else 40000, SHAPE, None, None)
    assert kinds_of(ctx) == ["tiu.arith.shift"] * 3
    sim = bmk.Simulator("bm1684")
    store(sim, A, x, U16)
    store(sim, B, s, I16)
    run(ctx, sim)
    assert np.array_equal(load(sim, D, U16), shift16_ref(x, s, arithmetic))
    assert np.array_equal(load(sim, D + 4096, U16), shift16_ref(x, -3, arithmetic))
    C = (-30000 if arithmetic else 40000) & 0xFFFF
    assert np.array_equal(load(sim, D + 8192, U16), shift16_ref(np.full(SHAPE, C), s, arithmetic))


@pytest.mark.parametrize("mul_type", ["S16_MUL_S8_TO_S16", "U16_MUL_S8_TO_S16", "U16_MUL_U8_TO_U16"])
@pytest.mark.parametrize("rshift", [0, 1, 7])
def test_16bit_mul_8bit(mul_type, rshift):
    t = constants.MUL_TYPES[mul_type]
    s0, s1, d = constants.mul_type_dtypes(t)
    src0, b = values(s0).astype(np.int64), values(s1)
    high, low = src0 >> 8, src0 & 0xFF                    # what split_high / split_low give
    hi_dt = bmk.dtypes.INT8 if s0.signed else bmk.dtypes.UINT8
    ctx = bm1684.Context()
    ctx.bdc_fixed_point_packed_16bit_mul_8bit(D, A, W, B, SHAPE, None, None, None, None, t, rshift)
    assert kinds_of(ctx) == list(ROWS[P + "16bit_mul_8bit"].kinds)
    sim = bmk.Simulator("bm1684")
    store(sim, A, high.astype(hi_dt.numpy), hi_dt)
    store(sim, W, low.astype(np.uint8), bmk.dtypes.UINT8)
    store(sim, B, b, s1)
    run(ctx, sim)
    assert np.array_equal(load(sim, D, d), saturate(formula(src0 * b, rshift), d))


def test_split_high_and_low_rebuild_the_16bit_value():
    I16, I8 = bmk.dtypes.INT16, bmk.dtypes.INT8
    x = values(I16)
    ctx = bm1684.Context()
    ctx.bdc_fixed_point_packed_16bit_split_high_8bit(B, A, SHAPE, None, None)
    ctx.bdc_fixed_point_packed_16bit_split_low_8bit(D, A, W, SHAPE, None, None, None)
    assert kinds_of(ctx) == ["tiu.arith.shift"] * 3
    sim = bmk.Simulator("bm1684")
    store(sim, A, x, I16)
    run(ctx, sim)
    high = load(sim, B, I8).view(np.uint8)
    low = load(sim, D, I8).view(np.uint8)
    assert np.array_equal(high, (x.view(np.uint16) >> 8).astype(np.uint8))
    assert np.array_equal(low, (x.view(np.uint16) & 0xFF).astype(np.uint8))
    assert np.array_equal((high.astype(np.uint16) << 8 | low).view(np.int16), x)


S8 = constants.S8_OP_S8_TO_S8


@pytest.mark.parametrize("name, args, match", [
    ("add", (D, A, B, SHAPE, None, None, None, constants.U8_OP_U8_TO_S8, 0), "op_type must be one of S8_OP_S8_TO_S8"),
    ("sub", (D, A, B, SHAPE, None, None, None, constants.U8_OP_U8_TO_U8, 0), "op_type must be one of"),
    ("mul", (D, A, B, SHAPE, None, None, None, constants.S16_OP_S16_TO_S16, 0), "op_type must be one of"),
    ("max", (D, A, B, SHAPE, None, None, None, constants.S8_OP_S8_TO_S16),
     "op_type must be one of S8_OP_S8_TO_S8, U8_OP_U8_TO_U8"),
    ("add", (D, A, B, SHAPE, None, None, None, True, 0), "op_type must be one of"),
    ("add", (D, A, B, SHAPE, None, None, None, S8, 32), r"rshift must be an integer in \[0, 31\]"),
    ("mul", (D, A, B, SHAPE, None, None, None, S8, -1), r"rshift must be an integer in \[0, 31\]"),
    ("add", (D, LANE, B, SHAPE, None, None, None, S8, 0), "src0_addr must be a local address on NPU 0"),
    ("add", (D, A, B + 2, SHAPE, None, None, None, S8, 0), "src1_addr must be divisible by 4"),
    ("add", (LANE - 4, A, B, (5, 1, 1, 1), None, None, None, S8, 0),
     "dst_addr must be such that the tensor fits"),
    ("add", (D, A, B, (1, 4096, 1, 1), None, None, None, S8, 0), r"shape.c must be an integer in \[1, 4095\]"),
    ("add_C", (D, A, 256, SHAPE, None, None, constants.S8_OP_U8_TO_S8, 0), r"C must be an integer in \[0, 255\]"),
    ("add_C", (D, A, -129, SHAPE, None, None, S8, 0), r"C must be an integer in \[-128, 127\]"),
    ("sub_C", (D, A, 32768, SHAPE, None, None, constants.S16_OP_S16_TO_S16, 0),
     r"C must be an integer in \[-32768, 32767\]"),
    ("C_sub", (D, A, -1, SHAPE, None, None, constants.U8_OP_S8_TO_S8, 0), r"C must be an integer in \[0, 255\]"),
    ("C_sub", (D, A, 65536, SHAPE, None, None, constants.U16_OP_S16_TO_S16, 0),
     r"C must be an integer in \[0, 65535\]"),
    ("mul_C", (D, A, 1.5, SHAPE, None, None, S8, 0), r"C must be an integer in \[-128, 127\]"),
    ("max_C", (D, A, 65536, SHAPE, None, None, constants.U16_OP_U16_TO_U16), r"C must be an integer in \[0, 65535\]"),
    ("mac", (D, A, B, SHAPE, None, None, None, True, constants.U8_OP_U8_TO_U16, 0, 0),
     "op_type must be one of S8_OP_S8_TO_S16, S8_OP_U8_TO_S16, U8_OP_S8_TO_S16, not 1"),
    ("mac", (D, A, B, SHAPE, None, None, None, 2, constants.S8_OP_S8_TO_S16, 0, 0),
     "is_origin_dst_signed must be a bool"),
    ("mac", (D, A, B, SHAPE, None, None, None, False, S8, 0, 0), "op_type must be one of"),
    ("mac", (D, A, B, SHAPE, None, None, None, False, constants.U8_OP_U8_TO_U16, 32, 0),
     r"lshift must be an integer in \[0, 31\]"),
    ("mac_C", (D, A, 300, SHAPE, None, None, False, constants.U8_OP_U8_TO_U16, 0, 0),
     r"C must be an integer in \[0, 255\]"),
    ("mac_C", (D, A, 1, SHAPE, None, None, True, constants.S8_OP_S8_TO_S16, 0, 40), r"rshift must be an integer"),
    ("16bit_arithmetic_shift_C", (D, A, 17, SHAPE, None, None), r"C must be an integer in \[-16, 16\]"),
    ("16bit_logical_shift_C", (D, A, -17, SHAPE, None, None), r"C must be an integer in \[-16, 16\]"),
    ("16bit_C_arithmetic_shift", (D, A, 32768, SHAPE, None, None), r"C must be an integer in \[-32768, 32767\]"),
    ("16bit_C_logical_shift", (D, A, -1, SHAPE, None, None), r"C must be an integer in \[0, 65535\]"),
    ("16bit_logical_shift", (D, A, LANE + B, SHAPE, None, None, None), "src1_addr must be a local address on NPU 0"),
    ("16bit_mul_8bit", (D, A, W, B, SHAPE, None, None, None, None, constants.S16_MUL_U8_TO_S16, 0),
     r"mul_type must be one of S16_MUL_S8_TO_S16, U16_MUL_S8_TO_S16, U16_MUL_U8_TO_U16 "
     r"\(S16_MUL_U8_TO_S16 is unsupported for BM1684\), not 5"),
    ("16bit_mul_8bit", (D, A, W, D + 64, SHAPE, None, None, None, None, 7, 0),
     "dst_addr must be an address whose tensor does not overlap src1_addr"),
    ("16bit_mul_8bit", (D, A, D, B, SHAPE, None, None, None, None, 7, 0),
     "dst_addr must be an address whose tensor does not overlap src0_low_addr"),
    ("16bit_mul_8bit", (D, A, W, B, SHAPE, None, None, None, None, 0, 32), r"rshift must be an integer in \[0, 31\]"),
    ("16bit_mul_8bit", (D, A, LANE + W, B, SHAPE, None, None, None, None, 0, 0),
     "src0_low_addr must be a local address on NPU 0"),
    ("16bit_split_high_8bit", (D, LANE + A, SHAPE, None, None), "src_addr must be a local address on NPU 0"),
    ("16bit_split_low_8bit", (D, A, D, SHAPE, None, None, None), "dst_addr must be different from work_addr"),
    ("16bit_split_low_8bit", (D, A, D + 128, SHAPE, None, None, None),
     "dst_addr must be an address whose tensor does not overlap work_addr"),
    ("16bit_split_low_8bit", (D, A, LANE + W, SHAPE, None, None, None), "work_addr must be a local address on NPU 0"),
])
def test_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_fixed_point_packed_add(D, A, B, SHAPE, None, None, None, S8, 1)
    unchanged_after(ctx, getattr(ctx, P + name), *args, match=f"{P}{name}: {match}")


def test_numpy_integers_and_keywords():
    ctx = bm1684.Context()
    ctx.bdc_fixed_point_packed_add(np.uint32(D), A, B, SHAPE, None, None, None, np.int64(S8), np.int8(2))
    other = bm1684.Context()
    other.bdc_fixed_point_packed_add(D, A, B, SHAPE, None, None, None, op_type=bm1684.S8_OP_S8_TO_S8, rshift=2)
    assert ctx.acquire_cmdbuf() == other.acquire_cmdbuf()


@settings(max_examples=25, deadline=None)
@given(op=st.sampled_from(["add", "sub", "mul"]), which=st.integers(0, 15), n=st.integers(1, 9),
       c=st.integers(1, 130), hw=st.tuples(st.integers(1, 3), st.integers(1, 4)), rshift=st.integers(0, 31),
       seed=st.integers(0, 2**32 - 1))
def test_binary_random_shapes_and_shifts(op, which, n, c, hw, rshift, seed):
    """Any valid op_type, shape (partial 4N/2N groups, up to three channel slots per NPU) and
    rshift in [0, 31] against the seed's formula."""
    local = np.random.default_rng(seed)
    name, t = cases(op)[which % len(VALID[op])]
    s0, s1, d = constants.op_type_dtypes(t)
    shape = (n, c, *hw)
    a = local.integers(s0.min, s0.max + 1, shape).astype(s0.numpy)
    b = local.integers(s1.min, s1.max + 1, shape).astype(s1.numpy)
    ctx = bm1684.Context()
    getattr(ctx, P + op)(D, A, B, shape, None, None, None, t, rshift)
    sim = bmk.Simulator("bm1684")
    store(sim, A, a, s0)
    store(sim, B, b, s1)
    run(ctx, sim)
    expect = saturate(formula(OPS[op](a.astype(np.int64), b.astype(np.int64)), rshift), d)
    assert np.array_equal(load(sim, D, d, shape), expect), name


@settings(max_examples=20, deadline=None)
@given(which=st.integers(0, 3), origin_signed=st.booleans(), lshift=st.integers(0, 31), rshift=st.integers(0, 31),
       seed=st.integers(0, 2**32 - 1))
def test_mac_random_shifts(which, origin_signed, lshift, rshift, seed):
    """mac with any lshift and rshift in [0, 31]: widened exactly, then rounded and saturated."""
    local = np.random.default_rng(seed)
    valid = "mac_signed" if origin_signed else "mac_unsigned"
    name, t = cases(valid)[which % len(VALID[valid])]
    s0, s1, d = constants.op_type_dtypes(t)
    origin = bmk.dtypes.INT16 if origin_signed else bmk.dtypes.UINT16
    shape = (3, 65, 1, 2)
    a, b = (local.integers(x.min, x.max + 1, shape).astype(x.numpy) for x in (s0, s1))
    old = local.integers(origin.min, origin.max + 1, shape).astype(origin.numpy)
    ctx = bm1684.Context()
    ctx.bdc_fixed_point_packed_mac(D, A, B, shape, None, None, None, origin_signed, t, lshift, rshift)
    sim = bmk.Simulator("bm1684")
    store(sim, A, a, s0)
    store(sim, B, b, s1)
    store(sim, D, old, origin)
    run(ctx, sim)
    exact = (old.astype(np.int64) << lshift) + a.astype(np.int64) * b
    assert np.array_equal(load(sim, D, d, shape), saturate(formula(exact, rshift), d)), name
