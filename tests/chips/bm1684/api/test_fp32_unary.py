"""FP32 Unary functions (seed 003): through bytes and the simulator against numpy references of
the seed's formulas; the accuracy of the sequences in ulp; the remarks as errors; the vendor's
lut / md_sfu taylor / md_scalar mul rebuilt field for field.

Accuracy: the reference is the exact function computed in float64 and rounded to float32 (the
correctly rounded fp32 result, what numpy float32 aims at); errors are counted in ulp of fp32
(distance in the ordered bit patterns), over the inputs whose result is a normal float.
Measured on these tests' data (32768 inputs in [-103, 88], in [-1, 1] and near 0), pinned below:
rsqrt 0, sqrt 1, lookup_exp 0, taylor_exp (12 to 64 series, |x| < 1) 3, exp 2, sigmoid 3,
tanh 3 (the same with 8 to 64 series).
"""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.bm1684 import api
from bmk.isa import load_chip
from tests.chips.bm1684.helpers import LANE, get, npu_addr, put, run, unchanged_after
from tests.vectors.vendor import streams

rng = np.random.default_rng(11)
f32 = np.float32
ROWS = {row.name: row for row in api.OPS}
IDS = {"cmd_id_tpu", "cmd_id_gdma"}
TINY = np.finfo(f32).tiny
BIG = (1, 64, 16, 32)                                    # 32768 elements, one channel per NPU
SRC, DST, WORK = npu_addr(0, 0), npu_addr(0, 4096), npu_addr(0, 8192)


def kinds_of(ctx):
    return {f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())}


def ulp(got, want):
    """|got - want| in fp32 ulp (the distance of the two in the ordered fp32 bit patterns)."""
    def order(a):
        i = np.asarray(a, f32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(order(got) - order(want))


def simulate(call, x, shape, *args, dst=DST, src=SRC, sim=None, kinds=True):
    """Run ctx.<call>(dst, src, *args) on x; return dst's values."""
    ctx = bm1684.Context()
    getattr(ctx, call)(dst, src, *args)
    if kinds:
        assert kinds_of(ctx) == set(ROWS[call].kinds)
    sim = sim or bmk.Simulator("bm1684")
    put(sim, src, np.asarray(x, f32).reshape(shape))
    run(ctx, sim)
    return get(sim, dst, shape)


def exp_inputs(seed=0):
    """Uniform in the remark's [-103, 88], uniform in [-1, 1], and tiny values (relative accuracy);
    always the same data, so the measured maxima below are reproducible."""
    gen = np.random.default_rng(seed)
    n = BIG[2] * BIG[3] * BIG[1] // 4
    x = np.concatenate([gen.uniform(-103, 88, 2 * n), gen.uniform(-1, 1, n), gen.standard_normal(n) * 1e-4])
    x[:6] = [-103.0, 88.0, 0.0, -0.0, -87.0, 1e-30]
    return x.astype(f32).reshape(BIG)


def exact(fn, x):
    with np.errstate(over="ignore", divide="ignore"):
        return fn(np.asarray(x, np.float64)).astype(f32)


def max_ulp(got, want):
    normal = np.abs(want) >= TINY
    return int(ulp(got[normal], want[normal]).max())


# -- single commands -------------------------------------------------------------------------------
@pytest.mark.parametrize("start", [0, 37])
def test_rsqrt_and_sqrt(start):
    shape = (2, 70, 3, 5)
    x = np.abs(rng.standard_normal(shape) * 1e3).astype(f32)
    x.flat[:4] = [0.0, np.inf, 1.0, 4.0]
    src, dst = npu_addr(start, 0), npu_addr(start, 8192)
    r = simulate("bdc_rsqrt", x, shape, shape, dst=dst, src=src)
    s = simulate("bdc_sqrt", x, shape, shape, dst=dst, src=src)
    assert max_ulp(r, exact(lambda v: 1 / np.sqrt(v), x)) == 0
    assert max_ulp(s, exact(np.sqrt, x)) <= 1
    assert list(s.flat[:4]) == [0.0, np.inf, 1.0, 2.0] and list(r.flat[:4]) == [np.inf, 0.0, 1.0, 0.5]
    assert np.isnan(simulate("bdc_sqrt", np.full(shape, -1.0), shape, shape, kinds=False)).all()


def test_lookup_exp_every_input():
    shape = (1, 192, 1, 1)                               # [-103, 88]: 192 values, three channel slots
    k = np.arange(-103, 89, dtype=np.int32).reshape(shape)
    ctx = bm1684.Context()
    ctx.bdc_lookup_exp(DST, SRC, shape)
    assert kinds_of(ctx) == {"tiu.lut"}
    sim = bmk.Simulator("bm1684")
    put(sim, SRC, k, dtype="int32")
    run(ctx, sim)
    got = get(sim, DST, shape)
    assert np.array_equal(got, exact(np.exp, k))
    assert max_ulp(got, exact(np.exp, k)) == 0


@pytest.mark.parametrize("num_series, to_exp", [(1, None), (3, None), (8, 100), (12, 3), (32, 3), (64, 3)])
def test_taylor_exp(num_series, to_exp):
    """dst = 1 + sum_{k=1..num_series} x^k / k! (the seed's 'taylor expansion', |x| < 1): within
    3 ulp of that sum; from 12 series on within 3 ulp of e^x (1 + (e^x - 1) loses up to 1.7x
    the relative error of e^x - 1 near x = -1)."""
    x = np.random.default_rng(1).uniform(-1, 1, BIG).astype(f32)
    got = simulate("bdc_taylor_exp", x, BIG, BIG, num_series)
    xd = x.astype(np.float64)
    series = 1 + sum(xd ** k / np.prod(np.arange(1, k + 1, dtype=np.float64)) for k in range(1, num_series + 1))
    assert max_ulp(got, series.astype(f32)) <= 3
    if to_exp:
        assert max_ulp(got, exact(np.exp, x)) <= to_exp


@pytest.mark.parametrize("name, fn", [("bdc_reciprocal", lambda x: 1 / x), ("bdc_neg", lambda x: -x)])
def test_reciprocal_and_neg_with_strides(name, fn):
    shape = (2, 5, 3, 4)
    src_stride, dst_stride = (60, 12, 4, 1), (128, 40, 8, 2)
    x = (rng.standard_normal(shape) * 10).astype(f32)
    x.flat[:3] = [0.0, -0.0, np.inf]
    src, dst = npu_addr(9, 0), npu_addr(9, 4096)
    ctx = bm1684.Context()
    getattr(ctx, name)(dst, src, shape, dst_stride, src_stride)
    assert kinds_of(ctx) == set(ROWS[name].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, src, x, src_stride)
    run(ctx, sim)
    with np.errstate(divide="ignore"):
        want = fn(x).astype(f32)
    got = get(sim, dst, shape, dst_stride)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))        # bit exact, -0 and inf included


# -- sequences -------------------------------------------------------------------------------------
SEQUENCES = [
    ("bdc_exp", np.exp, 2),
    ("bdc_sigmoid", lambda v: 1 / (1 + np.exp(-v)), 3),
    ("bdc_tanh", np.tanh, 3),
]


@pytest.mark.parametrize("name, fn, bound", SEQUENCES)
def test_sequence_accuracy(name, fn, bound):
    """The default (32 series) sequences within `bound` ulp of the correctly rounded result
    wherever it is a normal float, over the remark's input range [-103, 88]."""
    x = exp_inputs()
    got = simulate(name, x, BIG, WORK, BIG)
    assert max_ulp(got, exact(fn, x)) == bound        # the measured figure: a change must update it


@pytest.mark.parametrize("name, fn, bound", SEQUENCES)
@pytest.mark.parametrize("num_series", [8, 64])
def test_tunable_sequences(name, fn, bound, num_series):
    """e^f, |f| <= 0.5, needs 8 series for fp32; the _tunable form with 32 equals the default one."""
    x = exp_inputs()
    got = simulate(f"{name}_tunable", x, BIG, WORK, BIG, num_series)
    assert max_ulp(got, exact(fn, x)) <= bound
    if num_series == 64:
        default = simulate(name, x, BIG, WORK, BIG, kinds=False)
        again = simulate(f"{name}_tunable", x, BIG, WORK, BIG, 32, kinds=False)
        assert np.array_equal(default, again)


def test_few_series_trade_accuracy():
    """num_series trades accuracy for speed: 2 series leave e^f's truncation (f^3/6 at |f| = 0.5)."""
    x = exp_inputs()
    rough = max_ulp(simulate("bdc_exp_tunable", x, BIG, WORK, BIG, 2), exact(np.exp, x))
    assert 1e5 < rough < 2e6
    ctx = bm1684.Context()
    ctx.bdc_exp_tunable(DST, SRC, WORK, BIG, 2)
    taylor, = (r for r in bmk.decode("bm1684", ctx.acquire_streams()) if r.kind == "md_sfu.taylor")
    assert taylor.fields["opd1_n"] == 2


@pytest.mark.parametrize("start", [0, 50])
def test_sequences_saturate_outside_the_range(start):
    """Out-of-range inputs are clamped to [-103, 88] (the vendor's clamp): exp(200) = e^88,
    tanh reaches exactly 1 / -1, sigmoid 1 and, for x <= -88, 1 / (1 + e^88) (a subnormal
    result in any case); shapes cross the NPU boundary; dst may be src."""
    shape = (2, 20, 2, 3)
    x = np.array([200.0, -200.0, 88.0, -103.0, 0.0, 1.0] * 40, f32).reshape(shape)
    src, work = npu_addr(start, 0), npu_addr(start, 4096)
    e = simulate("bdc_exp", x, shape, work, shape, dst=src, src=src)
    s = simulate("bdc_sigmoid", x, shape, work, shape, dst=src, src=src)
    t = simulate("bdc_tanh", x, shape, work, shape, dst=src, src=src)
    assert list(e.flat[:6]) == list(exact(np.exp, [88.0, -103.0, 88.0, -103.0, 0.0, 1.0]))
    floor = exact(lambda v: 1 / (1 + np.exp(v)), 88.0)          # -x clamped to 88: ~6.05e-39
    assert list(s.flat[:6]) == [1.0, floor, 1.0, floor, 0.5, exact(lambda v: 1 / (1 + np.exp(-v)), 1.0)]
    assert list(t.flat[:5]) == [1.0, -1.0, 1.0, -1.0, 0.0] and ulp(t.flat[5], exact(np.tanh, 1.0)) <= 1


def test_work_is_the_only_scratch():
    """The sequences write dst and work only: a guard word after each tensor and the source stay."""
    shape = (1, 3, 2, 2)
    x = rng.uniform(-5, 5, shape).astype(f32)
    for name in ("bdc_exp", "bdc_sigmoid", "bdc_tanh"):
        sim = bmk.Simulator("bm1684")
        for addr in (SRC, DST, WORK):
            sim.lmem_write(addr + 16, np.full(4, 7, np.uint8).tobytes())
        simulate(name, x, shape, WORK, shape, sim=sim, kinds=False)
        assert np.array_equal(get(sim, SRC, shape), x)
        assert all(sim.lmem_read(a + 16, 4) == bytes([7] * 4) for a in (SRC, DST, WORK))


# -- the vendor's commands -------------------------------------------------------------------------
def vendor(kind, **want):
    for rec in bmk.decode("bm1684", streams("bm1684")):
        if rec.kind == kind and all(rec.fields[k] == v for k, v in want.items()):
            return rec.fields
    raise AssertionError(f"no vendor {kind} with {want}")


def vendor_args(v):
    base = load_chip("bm1684").space("local").base
    return v["res0_addr"] - base, v["opd0_addr"] - base, (v["res0_n"], v["res0_c"], v["res0_h"], v["res0_w"])


def first(call, *args):
    ctx = bm1684.Context()
    getattr(ctx, call)(*args)
    return {k: x for k, x in bmk.decode("bm1684", ctx.acquire_streams())[0].fields.items() if k not in IDS}


def test_rebuilds_the_vendor_exp_lut():
    """The vendor's first SiLU lut (e^k of the clamped, rounded input) with okk_bdc_lookup_exp:
    every field equal but the sync ids; opd1_addr is the exp table's L2 SRAM offset 0x300400."""
    v = vendor("lut", opd1_addr=0x300400)
    assert first("bdc_lookup_exp", *vendor_args(v)) == {k: x for k, x in v.items() if k not in IDS}


def test_rebuilds_the_vendor_taylor():
    """The vendor's md_sfu taylor (12 series, table at 0x300C00) is the first command of
    okk_bdc_taylor_exp(..., num_series=12): every field equal but the sync ids."""
    v = vendor("md_sfu.taylor")
    dst, src, shape = vendor_args(v)
    assert first("bdc_taylor_exp", dst, src, shape, v["opd1_n"]) == {k: x for k, x in v.items() if k not in IDS}


def test_rebuilds_the_vendor_neg():
    """The vendor's SiLU starts with x * -1.0 (md_scalar mul, constant opd1): okk_bdc_neg."""
    v = vendor("md_scalar.mul", opt_opd1_const=1, opd1_addr=0xBF800000)
    assert first("bdc_neg", *vendor_args(v), None, None) == {k: x for k, x in v.items() if k not in IDS}


# -- remarks ---------------------------------------------------------------------------------------
WORK_FUNCS = ["bdc_exp", "bdc_sigmoid", "bdc_tanh"]


@pytest.mark.parametrize("name", WORK_FUNCS + [f"{n}_tunable" for n in WORK_FUNCS])
@pytest.mark.parametrize("args, match", [
    ((0, 4096, 0, (1, 1, 1, 1)), "dst_addr must be different from work_addr"),
    ((0, 4096, 4096, (1, 1, 1, 1)), "src_addr must be different from work_addr"),
    ((0, 4096, LANE, (1, 1, 1, 1)), "work_addr must be an address on NPU [0-9]+, where dst_addr starts"),
    ((0, LANE, 8192, (1, 1, 1, 1)), "src_addr must be an address on NPU [0-9]+, where dst_addr starts"),
    ((0, 4096, 8194, (1, 1, 1, 1)), "work_addr must be divisible by 4"),
    ((0, 4096, 8192, (1, 4096, 1, 1)), r"shape.c must be an integer in \[1, 4095\]"),
    ((0, 4096, LANE - 4, (1, 1, 1, 2)), "work_addr must be such that the tensor fits"),
])
def test_work_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_exp(0, 4096, 8192, (1, 2, 3, 4))
    extra = (32,) if name.endswith("_tunable") else ()
    unchanged_after(ctx, getattr(ctx, name), *args, *extra, match=f"{name}: {match}")


@pytest.mark.parametrize("name", ["bdc_exp_tunable", "bdc_sigmoid_tunable", "bdc_tanh_tunable", "bdc_taylor_exp"])
@pytest.mark.parametrize("num_series", [0, 65, 2.0, True, None])
def test_num_series_in_1_to_64(name, num_series):
    ctx = bm1684.Context()
    args = (0, 4096, (1, 1, 1, 1)) if name == "bdc_taylor_exp" else (0, 4096, 8192, (1, 1, 1, 1))
    unchanged_after(ctx, getattr(ctx, name), *args, num_series,
                    match=rf"{name}: num_series must be an integer in \[1, 64\]")
    getattr(ctx, name)(*args, np.int16(64))


@pytest.mark.parametrize("name", ["bdc_rsqrt", "bdc_sqrt", "bdc_lookup_exp", "bdc_reciprocal", "bdc_neg"])
@pytest.mark.parametrize("args, match", [
    ((6, 0, (1, 1, 1, 1)), "dst_addr must be divisible by 4"),
    ((0, 2 * LANE, (1, 1, 1, 1)), "src_addr must be an address on NPU [0-9]+, where dst_addr starts"),
    ((0, 4096, (1, 1, 1, 65536)), r"shape.w must be an integer in \[1, 65535\]"),
    ((0, 64 * LANE, (1, 1, 1, 1)), "src_addr must be a local address in"),
])
def test_two_operand_remarks(name, args, match):
    ctx = bm1684.Context()
    unchanged_after(ctx, getattr(ctx, name), *args, match=f"{name}: {match}")


def test_numpy_integers_are_integers():
    ctx, other = bm1684.Context(), bm1684.Context()
    ctx.bdc_tanh_tunable(np.uint32(0), np.int64(4096), np.int32(8192), (1, np.int16(2), 3, 4), np.int8(8))
    ctx.bdc_neg(np.uint64(0), np.int32(4096), (1, 2, 3, np.uint8(4)), (np.int64(64), 32, 4, 1), None)
    other.bdc_tanh_tunable(0, 4096, 8192, (1, 2, 3, 4), 8)
    other.bdc_neg(0, 4096, (1, 2, 3, 4), (64, 32, 4, 1), None)
    assert ctx.acquire_cmdbuf() == other.acquire_cmdbuf()
