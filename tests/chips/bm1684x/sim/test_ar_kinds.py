"""The AR kinds seed 001 does not emit, and AR's edges (issue 21 item 4): numpy references
written from the field meanings bmk.sim.bm1684x.ar documents (each an independent formula:
no simulator code), on long and short classes; float results under every rounding mode;
int4 storage; lane masks; the offset layout; LAR against the AR command it mirrors."""
import functools
from fractions import Fraction

import numpy as np
import pytest

import bmk
from tests.chips.bm1684x.sim.helpers import (FLOATS, INTS, LANE, get, prec, put, rand, rec, round_shift, run, sat,
                                       sign, wrap)

I8, U8, I16, U16, I32, U32 = INTS
FP16, FP32, BF16 = FLOATS
SHAPE = (2, 70, 2, 3)               # 70 channels: two channel groups
A, B, R, P = 0, 0x8000, 0x10000, 0x18000
CLASSES = ("AR", "sAR")


def ar(kind, cls, shape, a, a_dt, b=None, b_dt=None, r_dt=None, *, res_init=None, sim=None, **extra):
    """One AR command: opd0 = a (aligned at A), opd1 = b (aligned at B) when given, res0 at R."""
    r_dt = r_dt or a_dt
    f = dict(res0_n=shape[0], res0_c=shape[1], res0_h=shape[2], res0_w=shape[3], res0_addr=R, opd0_addr=A,
             opd1_addr=B, res0_prec=prec(r_dt), opd0_prec=prec(a_dt), opd0_sign=sign(a_dt),
             tsk_opd_num=1 if b is None else 2)
    if b_dt is not None:
        f.update(opd1_prec=prec(b_dt), opd1_sign=sign(b_dt))
    f.update(extra)
    sim = sim or bmk.Simulator("bm1684x")
    if a is not None:
        put(sim, A, a, a_dt)
    if b is not None and not f.get("opd1_const"):
        put(sim, B, b, b_dt)
    if res_init is not None:
        put(sim, R, res_init, r_dt)
    sim, report = run([rec("tiu", cls, kind, **f)], sim)
    assert not report.races
    return sim, get(sim, R, shape, r_dt)


def f32(v):
    return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("cls", CLASSES)
def test_mac_float_is_one_rounding_of_a_times_b_plus_res(cls):
    rng = np.random.default_rng(1)
    a, b, c = (f32(rng.standard_normal(SHAPE) * 10) for _ in range(3))
    _, out = ar("arith.mac", cls, SHAPE, a, FP32, b, FP32, FP32, res_init=c)
    np.testing.assert_array_equal(out, f32(a * b + c))        # a * b is exact in float64


@pytest.mark.parametrize("cls", CLASSES)
def test_mac_int8_into_int16_wraps(cls):
    """The firmware check's integer form: int8 x int8 -> int16 (opd2 its constant 0)."""
    rng = np.random.default_rng(2)
    a, b, c = rand(rng, SHAPE, I8), rand(rng, SHAPE, I8), rand(rng, SHAPE, I16)
    _, out = ar("arith.mac", cls, SHAPE, a, I8, b, I8, I16, res_init=c, tsk_opd_num=3, opd2_const=1, opd2_addr=0)
    np.testing.assert_array_equal(out, wrap(a * b + c, I16))


def test_mac_refuses_a_non_zero_int16_operand():
    with pytest.raises(bmk.errors.SimulationError, match="arith.mac: opd2"):
        ar("arith.mac", "sAR", (1, 1, 1, 1), np.ones((1, 1, 1, 1)), I8, np.ones((1, 1, 1, 1)), I8, I16,
           tsk_opd_num=3, opd2_const=1, opd2_addr=3)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_div_is_the_correctly_rounded_quotient(dt):
    rng = np.random.default_rng(3)
    a = rand(rng, SHAPE, dt)
    b = rand(rng, SHAPE, dt)
    b[b == 0] = 1
    _, out = ar("arith.div", "sAR", SHAPE, a, dt, b, dt, dt, opd2_n_str=3)
    want = np.array([_nearest(Fraction(float(x)) / Fraction(float(y)), dt) for x, y in zip(a.ravel(), b.ravel())])
    np.testing.assert_array_equal(out.ravel(), want)


def test_div_iteration_count_is_checked():
    with pytest.raises(bmk.errors.SimulationError, match=r"opd2_n_str \(iterations - 1\) must be in \[0, 4\]"):
        ar("arith.div", "sAR", (1, 1, 1, 1), np.ones((1, 1, 1, 1)), FP32, np.ones((1, 1, 1, 1)), FP32,
           opd2_n_str=5)


@functools.lru_cache(maxsize=None)
def _values(dt):
    """Every finite value of a 16-bit float type, sorted (for exact rounding references)."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    v = (bits.astype(np.uint32) << 16).view(np.float32) if dt == BF16 else bits.view(np.float16)
    v = v[np.isfinite(v)]               # before widening: a NaN's cast warns
    return np.unique(v.astype(np.float64))


def _nearest(q, dt, mode=0):
    """The value of dt a rational q rounds to under rounding_mode_t `mode`, from the list of
    representable values (fp32: from its neighbours in float64 arithmetic on Fractions)."""
    if dt == FP32:
        lo = float(np.float32(float(q)))
        lo = lo if Fraction(lo) <= q else float(np.nextafter(np.float32(lo), np.float32(-np.inf)))
        hi = lo if Fraction(lo) == q else float(np.nextafter(np.float32(lo), np.float32(np.inf)))
    else:
        vals = _values(dt)
        i = np.searchsorted(vals, float(q))
        if i < len(vals) and Fraction(vals[i]) == q:
            return vals[i]
        lo = vals[i - 1] if i > 0 else -np.inf
        hi = vals[i] if i < len(vals) else np.inf
    if Fraction(lo) == q:
        return lo
    if mode in (3, 4, 2):
        return {3: lo, 4: hi, 2: lo if q > 0 else hi}[mode]
    dl, dh = q - Fraction(lo) if np.isfinite(lo) else None, Fraction(hi) - q if np.isfinite(hi) else None
    if dl is None or dh is None:
        return hi if dl is None else lo
    if dl != dh:
        return lo if dl < dh else hi
    even = lo if (int(np.array([lo], dt.numpy).view({16: np.uint16, 32: np.uint32}[dt.bits])[0]) & 1) == 0 and \
        dt != BF16 else None
    if dt == BF16:
        even = lo if (int((np.array([lo], np.float32).view(np.uint32) >> 16)[0]) & 1) == 0 else hi
    return {0: even if even is not None else hi, 1: hi if q > 0 else lo, 5: hi, 6: lo}[mode]


@pytest.mark.parametrize("dst", [FP16, BF16], ids=str)
@pytest.mark.parametrize("mode", range(7))
def test_cast_fp32_to_half_rounds_by_every_mode(dst, mode):
    rng = np.random.default_rng(10 + mode)
    x = f32(rng.standard_normal((1, 64, 1, 8)) * 3)
    ulp = 2.0 ** -10 if dst == FP16 else 2.0 ** -7
    x[0, :8, 0, 0] = [1 + ulp / 2, 1 + 3 * ulp / 2, -(1 + ulp / 2), 2.5, 1 + ulp / 4, -(1 + 3 * ulp / 4), 0.0, -0.0]
    _, out = ar("arith.cast", "sAR", x.shape, x, FP32, r_dt=dst, opd2_n_str=mode, opd2_sign=1)
    want = np.array([_nearest(Fraction(float(v)), dst, mode) for v in x.ravel()]).reshape(x.shape)
    np.testing.assert_array_equal(out, want)


# each rounding mode (numerics.Round) as a numpy function of the value: to an integral value
_INTEGRAL = {0: np.rint, 1: lambda v: np.trunc(v + np.copysign(0.5, v)), 2: np.trunc, 3: np.floor, 4: np.ceil,
             5: lambda v: np.floor(v + 0.5), 6: lambda v: np.ceil(v - 0.5)}


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("mode", range(7))
def test_a_float_cast_into_its_own_type_rounds_to_an_integral_value(dt, mode):
    """TPU-Kernel's tpu_bdc_fp_round / fp_floor / fp_ceil: the vendor's CV184X cmodel gives
    floor(x) for a bf16 -> bf16 cast with mode 3 (its softmax's power of two)."""
    x = np.array([-2.5, -1.5, -0.97265625, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.5, 2.5, 3.25, 100.5, -7.75, 1024.0,
                  0.125] * 4).reshape(1, 64, 1, 1)
    _, out = ar("arith.cast", "sAR", x.shape, x, dt, r_dt=dt, opd2_n_str=mode, opd2_sign=1)
    np.testing.assert_array_equal(out, _INTEGRAL[mode](x) + 0.0)


@pytest.mark.parametrize("mode", range(7))
def test_cast_int32_to_fp32_rounds_by_every_mode(mode):
    x = np.array([2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 1), 2 ** 31 - 1, -2 ** 31, 123456789, -987654321, 7] * 8,
                 np.int64).reshape(1, 64, 1, 1)
    _, out = ar("arith.cast", "AR", x.shape, x, I32, r_dt=FP32, opd2_n_str=mode, opd2_sign=1,
                tsk_lane_num=(1 << 64) - 1)
    want = np.array([_nearest(Fraction(int(v)), FP32, mode) for v in x.ravel()]).reshape(x.shape)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("cls", CLASSES)
def test_clamp_takes_per_channel_bounds_from_a_compact_pair(cls):
    rng = np.random.default_rng(4)
    a = rand(rng, SHAPE, I16)
    lo = rng.integers(-300, 0, SHAPE[1])
    hi = rng.integers(0, 300, SHAPE[1])
    sim = bmk.Simulator("bm1684x")
    pairs = np.stack([lo, hi], -1).reshape(1, SHAPE[1], 1, 2)
    put(sim, P, pairs, I16, _compact(P, (1, SHAPE[1], 1, 2)))
    _, out = ar("arith.clamp", cls, SHAPE, a, I16, sim=sim, opd2_addr=P)
    np.testing.assert_array_equal(out, np.clip(a, lo.reshape(1, -1, 1, 1), hi.reshape(1, -1, 1, 1)))


def _compact(addr, shape):
    n, c, h, w = shape
    return (-(-(addr // LANE + c) // 64) * h * w, h * w, w, 1)


@pytest.mark.parametrize("dt", [I8, U16, I32], ids=str)
def test_cshift_rotates_the_bit_pattern(dt):
    rng = np.random.default_rng(5)
    a = rand(rng, SHAPE, dt)
    s = rng.integers(-40, 40, SHAPE)
    _, out = ar("arith.cshift", "sAR", SHAPE, a, dt, s, I8, dt)
    bits = dt.bits
    u = a & ((1 << bits) - 1)
    k = s % bits
    want = ((u << k) | (u >> ((bits - k) % bits))) & ((1 << bits) - 1)
    np.testing.assert_array_equal(out, wrap(want, dt))


@pytest.mark.parametrize("mode", range(7))
def test_mul_dhr_is_the_rounding_doubling_high_multiply(mode):
    rng = np.random.default_rng(6)
    a, b = rand(rng, SHAPE, I16), rand(rng, SHAPE, I16)
    _, out = ar("arith.mulDHR", "sAR", SHAPE, a, I16, b, I16, I16, opd2_n_str=mode)
    want = np.array([round_shift(2 * int(x) * int(y), 16, mode) for x, y in zip(a.ravel(), b.ravel())])
    np.testing.assert_array_equal(out.ravel(), sat(want, I16))


def test_index_generators():
    shape = (2, 70, 3, 5)
    sim = bmk.Simulator("bm1684x")
    _, eu = ar("arith.euIdxGen", "sAR", shape, None, I16, sim=sim, res0_prec=prec(I16), opd0_sign=1)
    np.testing.assert_array_equal(eu, np.broadcast_to(np.arange(15).reshape(1, 1, 3, 5), shape))
    sim = bmk.Simulator("bm1684x")
    sim, _ = run([rec("tiu", "sAR", "arith.npuIdxGen", res0_n=2, res0_c=70, res0_h=3, res0_w=5,
                      res0_addr=5 * LANE, res0_prec=prec(I16), opd0_sign=1)], sim)
    got = get(sim, 5 * LANE, shape, I16)
    np.testing.assert_array_equal(got, np.broadcast_to(((5 + np.arange(70)) % 64).reshape(1, 70, 1, 1), shape))


@pytest.mark.parametrize("dt", [I8, I32, FP32, BF16], ids=str)
def test_abs_saturates(dt):
    rng = np.random.default_rng(7)
    a = rand(rng, SHAPE, dt)
    _, out = ar("arith.abs", "sAR", SHAPE, a, dt)
    want = np.abs(a) if dt.is_float else sat(np.abs(a), dt)
    np.testing.assert_array_equal(out, want)


def test_fsubabs():
    rng = np.random.default_rng(8)
    a, b = f32(rng.standard_normal(SHAPE)), f32(rng.standard_normal(SHAPE))
    _, out = ar("arith.fsubabs", "sAR", SHAPE, a, FP32, b, FP32, FP32)
    np.testing.assert_array_equal(out, f32(np.abs(a - b)))


def test_copy_mb_copies_batch_zero_to_every_batch():
    rng = np.random.default_rng(9)
    a = rand(rng, (1,) + SHAPE[1:], I8)
    sim = bmk.Simulator("bm1684x")
    put(sim, A, a, I8)
    sim, _ = run([rec("tiu", "sAR", "arith.copyMb", res0_n=3, res0_c=70, res0_h=2, res0_w=3, res0_addr=R,
                      opd0_addr=A, res0_prec=prec(I8), opd0_prec=prec(I8), opd0_sign=1, tsk_opd_num=1)], sim)
    np.testing.assert_array_equal(get(sim, R, (3,) + SHAPE[1:], I8), np.broadcast_to(a, (3,) + SHAPE[1:]))


@pytest.mark.parametrize("bit", [1, 0])
def test_get_first_one_and_zero(bit):
    rng = np.random.default_rng(11)
    a = rand(rng, SHAPE, U16)
    a.reshape(-1)[:4] = [0, 0xFFFF, 0x8000, 0x7FFF]
    kind = "arith.getFirstOne" if bit else "arith.getFirstZero"
    _, out = ar(kind, "sAR", SHAPE, a, U16, r_dt=U8)

    def first(v):
        for i in range(16):
            if (int(v) >> i) & 1 == bit:
                return i
        return 16
    np.testing.assert_array_equal(out.ravel(), [first(v) for v in a.ravel()])


def _int4_bytes(values):
    """Two int4 a byte, the even element in the low nibble (bmk's assumption, stated in operands.py)."""
    v = np.asarray(values, np.int64).ravel() & 0xF
    v = np.concatenate([v, [0]]) if len(v) % 2 else v
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def test_int4_copy_and_saturating_cast_from_int8():
    """int4 tensors: one channel (1, 1, 4, 32) aligned (eu 128: the plane is 128 nibbles)."""
    sim = bmk.Simulator("bm1684x")
    x = np.arange(-8, 120, dtype=np.int64) % 16 - 8                  # 128 int4 values
    sim.lmem_write(A, _int4_bytes(x).tobytes())
    int4 = CHIP_PREC_INT4
    sim, _ = run([rec("tiu", "sAR", "arith.copy", res0_n=1, res0_c=1, res0_h=4, res0_w=32, res0_addr=R,
                      opd0_addr=A, res0_prec=int4, opd0_prec=int4, opd0_sign=1, tsk_opd_num=1)], sim)
    assert sim.lmem_read(R, 64) == _int4_bytes(x).tobytes()
    y = np.arange(-64, 64, dtype=np.int64)
    put(sim, B, y.reshape(1, 1, 4, 32), I8)
    sim, _ = run([rec("tiu", "sAR", "arith.cast", res0_n=1, res0_c=1, res0_h=4, res0_w=32, res0_addr=R,
                      opd0_addr=B, res0_prec=int4, opd0_prec=prec(I8), opd0_sign=1, opd2_sign=1, tsk_opd_num=1)], sim)
    assert sim.lmem_read(R, 64) == _int4_bytes(np.clip(y, -8, 7)).tobytes()


CHIP_PREC_INT4 = bmk.isa.load_chip("bm1684x").code("tiu", "res0_prec", "int4")


def test_lane_mask_writes_only_the_enabled_npus():
    rng = np.random.default_rng(12)
    a, b = rand(rng, SHAPE, I8), rand(rng, SHAPE, I8)
    old = rand(rng, SHAPE, I8)
    mask = int(rng.integers(0, 1 << 63)) | 1
    _, out = ar("arith.add", "AR", SHAPE, a, I8, b, I8, I8, res_init=old, tsk_lane_num=mask)
    on = np.array([(mask >> (c % 64)) & 1 for c in range(SHAPE[1])], bool).reshape(1, -1, 1, 1)
    np.testing.assert_array_equal(out, np.where(on, wrap(a + b, I8), old))


def test_offset_layout_is_one_element_per_channel_group():
    """opd1_str 2 (offset): strides (0, 1, 0, 0): channel c's value at element c // 64 of its NPU."""
    rng = np.random.default_rng(13)
    a = rand(rng, SHAPE, I32)
    per = rng.integers(-1000, 1000, SHAPE[1])
    sim = bmk.Simulator("bm1684x")
    put(sim, B, per.reshape(1, -1, 1, 1), I32, (0, 1, 0, 0))
    _, out = ar("arith.adds", "sAR", SHAPE, a, I32, None, I32, I32, sim=sim, tsk_opd_num=2, opd1_str=2,
                opd1_prec=prec(I32), opd1_sign=1)
    np.testing.assert_array_equal(out, sat(a + per.reshape(1, -1, 1, 1), I32))


LAR_KINDS = ["add", "sub", "mul", "max", "min", "and", "or", "xor", "adds", "subs", "muls", "not", "copy", "abs",
             "logicShift", "ashift", "cshift", "selectGreat", "selectEqual", "selectLess", "mulDHR", "euIdxGen",
             "npuIdxGen", "getFirstOne", "getFirstZero", "copyMb", "mac", "cast", "div", "fsubabs", "clamp"]


@pytest.mark.parametrize("op", LAR_KINDS)
def test_lar_is_ar_on_a_c_by_w_tensor(op):
    """lar.<op> (res0_c x res0_w; opd0 steps along w, opd1 broadcast: opd1_w_str 0) =
    arith.<op> with the equivalent free strides (bmk's assumption, lar.py); results compared,
    and against numpy for add."""
    dt = FP32 if op in ("div", "fsubabs", "mac") else I16
    c, w = 40, 9
    A, B, R, P = 0, 0x2000, 0x4000, 0x6000          # LAR addresses are 16 bits wide
    rng = np.random.default_rng(hash(op) % 2**32)
    a = rand(rng, (1, c, 1, 2 * w), dt)
    b = rand(rng, (1, c, 1, 2 * w), dt)
    if dt.is_float:
        b[b == 0] = 1
    lar = dict(res0_c=c, res0_w=w, res0_addr=R, opd0_addr=A, opd1_addr=B, res0_prec=prec(dt), opd0_prec=prec(dt),
               opd1_prec=prec(dt), opd0_sign=1, opd1_sign=1, opd0_w_str=1, opd1_w_str=0,
               tsk_opd_num=1 if op == "cast" else 2, opd2_addr=P if op == "clamp" else 0, opd2_n_str=1)
    outs = []
    for kind, f in ((f"lar.{op}", lar), (f"arith.{op}", None)):
        sim = bmk.Simulator("bm1684x")
        for addr, v in ((A, a), (B, b)):
            put(sim, addr, v, dt, (0, 0, 0, 1))
        put(sim, P, np.stack([np.full(c, -100), np.full(c, 100)], -1).reshape(1, c, 1, 2), dt, _compact(P, (1, c, 1, 2)))
        if f is None:
            f = dict(res0_n=1, res0_c=c, res0_h=1, res0_w=w, res0_addr=R, opd0_addr=A, opd1_addr=B,
                     res0_prec=prec(dt), opd0_prec=prec(dt), opd1_prec=prec(dt), opd0_sign=1, opd1_sign=1,
                     opd0_str=3, opd0_w_str=1, opd1_str=3, opd1_w_str=0, tsk_opd_num=lar["tsk_opd_num"],
                     opd2_addr=lar["opd2_addr"],
                     opd2_n_str=1)
            r = rec("tiu", "AR", kind, **f)
        else:
            r = bmk.encoders.Record("tiu", "LAR", kind, {**_lar_base(kind), **f})
        sim, _ = run([r], sim)
        outs.append(get(sim, R, (1, c, 1, w), dt))
    np.testing.assert_array_equal(outs[0], outs[1])
    if op == "add":
        np.testing.assert_array_equal(outs[0], wrap(a[..., :w] + b[..., :1], dt))


def _lar_base(kind):
    c = bmk.isa.load_chip("bm1684x").engine("tiu").cls("LAR")
    f = {fld.name: 0 for fld in c.fields}
    f.update(dict(c.keys[0]))
    f.update(dict(c.instruction(kind).match))
    return f


def test_lar_start_tid_is_refused():
    f = {**_lar_base("lar.add"), "res0_c": 1, "res0_w": 1, "start_tid": 1}
    with pytest.raises(bmk.errors.SimulationError, match="lar.add: start_tid must be 0"):
        run([bmk.encoders.Record("tiu", "LAR", "lar.add", f)])

