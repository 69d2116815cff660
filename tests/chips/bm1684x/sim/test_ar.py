"""AR kinds (long AR and short sAR) through bytes and the simulator, against numpy references
from seed 001's formulas; each dtype's extremes, all rounding modes, shifts by -32 and 31."""
import itertools

import numpy as np
import pytest

import bmk
from bmk import dtypes
from tests.chips.bm1684x.sim.helpers import (FLOATS, INTS, LANE, bits_of, get, prec, put, rand, rec, round_shift, run,
                                       sat, sign, wrap)

SHAPE = (2, 70, 3, 5)            # 70 channels: two channel groups on NPUs 0..63
A, B, R = 0, 0x10000, 0x20000
I8, U8, I16, U16, I32, U32 = INTS


def ar(kind, cls, a, a_dt, b, b_dt, r_dt, *, b_const=False, **extra):
    """Run one AR command on fresh memory: opd0 = a, opd1 = b (a tensor or a constant)."""
    shape = np.shape(a)
    fields = dict(res0_n=shape[0], res0_c=shape[1], res0_h=shape[2], res0_w=shape[3], res0_addr=R,
                  opd0_addr=A, opd1_addr=B, res0_prec=prec(r_dt), opd0_prec=prec(a_dt), opd1_prec=prec(b_dt),
                  opd0_sign=sign(a_dt), opd1_sign=sign(b_dt), tsk_opd_num=2,
                  opd0_n=shape[0], opd0_c=shape[1], opd0_h=shape[2], opd0_w=shape[3])
    fields.update(extra)
    sim = bmk.Simulator("bm1684x")
    put(sim, A, a, a_dt)
    if b_const:
        fields.update(opd1_const=1, opd1_addr=bits_of(b, b_dt))
    elif b is not None:
        put(sim, B, b, b_dt)
    sim, report = run([rec("tiu", cls, kind, **fields)], sim)
    assert report.total_cycles > 0
    return get(sim, R, shape, r_dt)


CLASSES = ("AR", "sAR")


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dt", INTS, ids=str)
@pytest.mark.parametrize("op", ["and", "or", "xor"])
@pytest.mark.parametrize("const", [False, True])
def test_logic(cls, dt, op, const):
    rng = np.random.default_rng(hash((cls, dt.name, op, const)) % 2**32)
    a = rand(rng, SHAPE, dt)
    b = int(rng.integers(dt.min, dt.max, endpoint=True)) if const else rand(rng, SHAPE, dt)
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    out = ar(f"arith.{op}", cls, a, dt, b, dt, dt, b_const=const)
    np.testing.assert_array_equal(out, wrap(fn(a, b), dt))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dt", INTS + FLOATS, ids=str)
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("const", [False, True])
def test_max_min(cls, dt, op, const):
    rng = np.random.default_rng(hash((cls, dt.name, op, const)) % 2**32)
    a = rand(rng, SHAPE, dt)
    b = (dt.min if op == "max" else dt.max) if const and not dt.is_float else \
        (float(a.reshape(-1)[5]) if const else rand(rng, SHAPE, dt))
    out = ar(f"arith.{op}", cls, a, dt, b, dt, dt, b_const=const)
    np.testing.assert_array_equal(out, (np.maximum if op == "max" else np.minimum)(a, b))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dt", INTS, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("satu", [False, True])
def test_add_sub_mul(cls, dt, op, satu):
    rng = np.random.default_rng(hash((cls, dt.name, op, satu)) % 2**32)
    a, b = rand(rng, SHAPE, dt), rand(rng, SHAPE, dt)
    if op == "mul" and dt == U32 and satu:
        b = b % 65536                        # uint32 x uint32 products reaching 2**63 are refused
    exact = {"add": a + b, "sub": a - b, "mul": a.astype(object) * b.astype(object)}[op]
    kind = f"arith.{op}s" if satu else f"arith.{op}"
    # a subtraction's result is signed whatever its operands are (seed 003: U8_OP_U8_TO_S8, no
    # U8_OP_U8_TO_U8; ar.py): read it as the signed type of its width
    r_dt = dtypes.integer(dt.bits, True) if op == "sub" else dt
    out = ar(kind, cls, a, dt, b, dt, r_dt)

    def one(v):
        v = int(v)
        if satu:
            return min(max(v, r_dt.min), r_dt.max)
        v %= 1 << r_dt.bits
        return v - (1 << r_dt.bits) if r_dt.signed and v >= 1 << (r_dt.bits - 1) else v
    ref = np.array([one(v) for v in exact.reshape(-1)], np.int64).reshape(SHAPE)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("cls", CLASSES)
def test_muls_with_shift_like_the_vendor(cls):
    """The golden stream's arith.muls: int8 x const 67, shifted by const opd2 = -8 (0xF8) with
    HALF_UP, saturated to int16."""
    rng = np.random.default_rng(7)
    a = rand(rng, SHAPE, I8)
    out = ar("arith.muls", cls, a, I8, 67, U8, I16, b_const=True, tsk_opd_num=3, opd2_const=1, opd2_addr=0xF8,
             opd2_n_str=5)
    ref = np.vectorize(lambda x: round_shift(x * 67, 8, 5))(a)
    np.testing.assert_array_equal(out, sat(ref, I16))


SHIFT_COMBOS = [(s, t, d) for s in INTS for t in (I8, I16, I32) for d in INTS
                if t.bits <= s.bits and d.signed == s.signed]


def shift_ref(x, s, src, dst, mode, logical):
    if s > 0:       # seed 001: dst = src << shift, exact, then narrowed to dst
        return min(max(int(x) << int(s), dst.min), dst.max)
    return min(max(round_shift(x, -int(s), mode), dst.min), dst.max)


def shifts(rng, shape, t):
    s = rng.integers(max(t.min, -32), min(t.max, 31), shape, endpoint=True)
    flat = s.reshape(-1)
    flat[:4] = (-32, 31, 0, -1)          # the range's ends, no shift, a tie-maker
    return s


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("src,sh,dst", SHIFT_COMBOS, ids=lambda d: str(d))
def test_arithmetic_shift(cls, src, sh, dst):
    """seed 001 tpu_bdc_arithmetic_shift: every allowed (dst, src, shift) dtype combination."""
    rng = np.random.default_rng(hash((cls, src.name, sh.name, dst.name)) % 2**32)
    shape = (1, 66, 1, 7)
    a, s = rand(rng, shape, src), shifts(rng, shape, sh)
    mode = int(rng.integers(0, 7))
    out = ar("arith.ashift", cls, a, src, s, sh, dst, opd2_n_str=mode)
    ref = np.vectorize(lambda x, k: shift_ref(x, k, src, dst, mode, False))(a, s)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("src,sh,dst", [c for c in SHIFT_COMBOS if not c[0].signed], ids=lambda d: str(d))
def test_logical_shift(cls, src, sh, dst):
    """seed 001 tpu_bdc_logical_shift: unsigned src/dst, signed shifts in [-32, 31]."""
    rng = np.random.default_rng(hash((cls, src.name, sh.name, dst.name, "l")) % 2**32)
    shape = (1, 66, 1, 7)
    a, s = rand(rng, shape, src), shifts(rng, shape, sh)
    mode = int(rng.integers(0, 7))
    out = ar("arith.logicShift", cls, a, src, s, sh, dst, opd2_n_str=mode)
    ref = np.vectorize(lambda x, k: shift_ref(x, k, src, dst, mode, True))(a, s)
    np.testing.assert_array_equal(out, ref)


def test_a_logical_left_shift_is_exact_before_narrowing():
    """Issue 18 item 3: a u8 255 << 3 into u32 is 2040 (seed formula), not 248."""
    a = np.full((1, 64, 1, 4), 255, np.uint8)
    out = ar("arith.logicShift", "sAR", a, U8, np.full(a.shape, 3, np.int8), I8, U32, opd2_n_str=0)
    assert (out == 2040).all()


# bm1684x-memory.md §4 worked table, literally: ties x >> 1, non-ties x >> 2, 32-bit >> 32.
TABLE_X1 = (-5, -3, -1, 1, 3, 5)
TABLE_X2 = (-7, -5, 5, 7)
TABLE = {0: ((-2, -2, 0, 0, 2, 2), (-2, -1, 1, 2), (0, 0, 0, 1, 0)),
         1: ((-3, -2, -1, 1, 2, 3), (-2, -1, 1, 2), (-1, 0, 0, 1, 1)),
         2: ((-2, -1, 0, 0, 1, 2), (-1, -1, 1, 1), (0, 0, 0, 0, 0)),
         3: ((-3, -2, -1, 0, 1, 2), (-2, -2, 1, 1), (-1, 0, -1, 0, 0)),
         4: ((-2, -1, 0, 1, 2, 3), (-1, -1, 2, 2), (0, 1, 0, 1, 1)),
         5: ((-2, -1, 0, 1, 2, 3), (-2, -1, 1, 2), (0, 0, 0, 1, 1)),
         6: ((-3, -2, -1, 0, 1, 2), (-2, -1, 1, 2), (-1, 0, 0, 1, 0))}


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("mode", range(7))
def test_rounding_modes_worked_table(cls, mode):
    """All seven rounding modes on positive and negative ties, as the memory facts' table."""
    ties, quarters, wide = TABLE[mode]
    x = np.array(TABLE_X1 + TABLE_X2, np.int64).reshape(1, 10, 1, 1)
    s = np.array((-1,) * 6 + (-2,) * 4, np.int64).reshape(1, 10, 1, 1)
    out = ar("arith.ashift", cls, x, I32, s, I8, I32, opd2_n_str=mode)
    assert tuple(out.reshape(-1)) == ties + quarters
    x32 = np.array([I32.min, I32.max, -1], np.int64).reshape(1, 3, 1, 1)
    out = ar("arith.ashift", cls, x32, I32, -32, I8, I32, b_const=True, opd2_n_str=mode)
    assert tuple(out.reshape(-1)) == wide[:3]
    u32 = np.array([U32.max, 1 << 31], np.int64).reshape(1, 2, 1, 1)
    for kind in ("arith.ashift", "arith.logicShift"):
        out = ar(kind, cls, u32, U32, -32, I8, U32, b_const=True, opd2_n_str=mode)
        assert tuple(out.reshape(-1)) == wide[3:]


@pytest.mark.parametrize("cls", CLASSES)
def test_shift_left_31_saturates(cls):
    """Left shifts are exact, then saturated to dst: ashift and (seed 001's formula, issue 18)
    logicShift alike."""
    x = np.array([1, -1, 3, 0], np.int64).reshape(1, 4, 1, 1)
    out = ar("arith.ashift", cls, x, I32, 31, I8, I32, b_const=True)
    assert tuple(out.reshape(-1)) == (I32.max, I32.min, I32.max, 0)
    u = np.array([1, 3, U32.max, 0], np.int64).reshape(1, 4, 1, 1)
    out = ar("arith.logicShift", cls, u, U32, 31, I8, U32, b_const=True)
    assert tuple(out.reshape(-1)) == (1 << 31, U32.max, U32.max, 0)


SELECT_COMBOS = [(s, d) for s in INTS + FLOATS for d in INTS + FLOATS if d.bits <= s.bits]


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("src,dst", SELECT_COMBOS, ids=lambda d: str(d))
def test_select_true_val_at_bounds(cls, src, dst):
    """seed 001 greater / less / equal: true_val (at dst's bounds) where the relation holds, else 0."""
    rng = np.random.default_rng(hash((cls, src.name, dst.name)) % 2**32)
    shape = (1, 67, 2, 3)
    a = rand(rng, shape, src)
    b = np.where(rng.random(shape) < 0.3, a, rand(rng, shape, src))
    for kind, rel in (("arith.selectGreat", np.greater), ("arith.selectLess", np.less),
                      ("arith.selectEqual", np.equal)):
        for true_val in (dst.min, dst.max):
            out = ar(kind, cls, a, src, b, src, dst, tsk_opd_num=3, opd2_const=1, opd2_addr=bits_of(true_val, dst),
                     opd2_prec=prec(dst), opd2_sign=sign(dst))
            np.testing.assert_array_equal(out, np.where(rel(a, b), true_val, 0), err_msg=f"{kind} {true_val}")


@pytest.mark.parametrize("cls", CLASSES)
def test_select_const_operand(cls):
    a = np.arange(-8, 8, dtype=np.int64).reshape(1, 16, 1, 1)
    out = ar("arith.selectGreat", cls, a, I8, 0, I8, U8, b_const=True, tsk_opd_num=3, opd2_const=1,
             opd2_addr=255, opd2_prec=prec(U8), opd2_sign=0)
    np.testing.assert_array_equal(out, np.where(a > 0, 255, 0))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("src,dst", list(itertools.product(INTS, INTS)), ids=lambda d: str(d))
def test_cast_saturates(cls, src, dst):
    rng = np.random.default_rng(hash((cls, src.name, dst.name, "c")) % 2**32)
    a = rand(rng, (1, 65, 1, 3), src)
    out = ar("arith.cast", cls, a, src, None, src, dst, tsk_opd_num=1, opd2_sign=sign(dst))
    np.testing.assert_array_equal(out, sat(a, dst))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("mode", range(7))
def test_cast_float_to_int_rounds(cls, mode):
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1e10, -1e10], np.float64).reshape(1, 8, 1, 1)
    out = ar("arith.cast", cls, a, dtypes.FP32, None, dtypes.FP32, I16, tsk_opd_num=1, opd2_sign=1,
             opd2_n_str=mode)
    ref = [round_shift(int(v * 2), 1, mode) for v in a.reshape(-1)[:6]] + [I16.max, I16.min]
    assert tuple(out.reshape(-1)) == tuple(ref)


@pytest.mark.parametrize("cls", CLASSES)
def test_copy_free_layouts_and_const_fill(cls):
    rng = np.random.default_rng(3)
    shape = (2, 3, 4, 5)
    src_st, dst_st = (400, 90, 7, 1), (300, 64, 10, 2)
    a = rand(rng, shape, I16)
    sim = bmk.Simulator("bm1684x")
    put(sim, 5 * LANE + 0x100, a, I16, src_st)
    fields = dict(res0_n=2, res0_c=3, res0_h=4, res0_w=5, res0_addr=5 * LANE + 0x4000, opd0_addr=5 * LANE + 0x100,
                  res0_prec=prec(I16), opd0_prec=prec(I16), opd0_sign=1, tsk_opd_num=1, res0_str=3, opd0_str=3,
                  **{f"opd0_{d}_str": v for d, v in zip("nchw", src_st)},
                  **{f"res0_{d}_str": v for d, v in zip("nchw", dst_st)})
    sim, _ = run([rec("tiu", cls, "arith.copy", **fields)], sim)
    np.testing.assert_array_equal(get(sim, 5 * LANE + 0x4000, shape, I16, dst_st), a)
    fill = dict(fields, opd0_const=1, opd0_addr=bits_of(-7, I16))
    sim, _ = run([rec("tiu", cls, "arith.copy", **fill)], sim)
    np.testing.assert_array_equal(get(sim, 5 * LANE + 0x4000, shape, I16, dst_st), np.full(shape, -7))
