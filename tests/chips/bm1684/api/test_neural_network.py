"""FP32 Neural Network functions (seed 003): bias/scale, conv2d, depthwise2d, pooling, matmul,
through bytes and the simulator against numpy references written from the seed's formulas.

Numerics (bmk/sim/bm1684/nn.py): conv and matmul: the exact sum rounded to fp32 once, then the
bias added in fp32 (`documented`); depthwise and pooling: taps in (i, j) order in fp32. Each
result is checked twice: bit-exactly against that, and against a float64 reference of the formula within the rigorous bound of
recursive summation, |got - exact| <= (terms + 2) * 2^-24 * sum(|terms|). Small-integer data
make every partial sum exact, so there the float64 reference must match exactly.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import bmk
from bmk import bm1684
from bmk.bm1684 import api, geometry
from bmk.isa import load_chip
from bmk.sim.bm1684 import SEMANTICS
from tests.chips.bm1684.helpers import LANE, get, npu_addr, put, run, unchanged_after

rng = np.random.default_rng(1684)
U = 2.0 ** -24
F32_MAX_NEG = np.uint32(0xFF7FFFFF).view(np.float32)


def _data(shape, ints):
    if ints:
        return rng.integers(-8, 9, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def _within_bound(got, exact, magnitude, terms):
    assert got.dtype == np.float32
    err = np.abs(got.astype(np.float64) - exact)
    assert np.all(err <= (terms + 2) * U * magnitude), float(np.max(err / np.maximum(magnitude, 1e-300)))


def compact(addr, shape):
    return bm1684.compact_stride(bm1684.start_npu_index(addr), shape)


def put_compact(sim, addr, values):
    put(sim, addr, values, compact(addr, values.shape))


# -- relu ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("start_npu, strided", [(0, False), (37, False), (63, True)])
def test_relu(start_npu, strided):
    """dst = src if src > 0 else 0 (zeros compare equal whatever their sign). The lowering is the
    facts' arith.max with the constant 0; NaN is not in the data: that max propagates NaN where
    the seed's formula would give 0 (bmk/sim/bm1684/arith.py)."""
    shape = (5, 70, 3, 4)
    src, dst = npu_addr(start_npu, 0), npu_addr(start_npu, 65536)
    src_stride = (400, 100, 5, 1) if strided else None
    dst_stride = (300, 80, 4, 1) if strided else None
    x = _data(shape, False)
    x[0, 0, 0] = (0.0, -0.0, np.inf, -np.inf)
    x[1, 69, 2] = (F32_MAX_NEG, -F32_MAX_NEG, np.float32(1e-45), np.float32(-1e-45))
    ctx = bm1684.Context()
    ctx.bdc_relu(dst, src, shape, dst_stride, src_stride)
    rec, = bmk.decode("bm1684", ctx.acquire_streams())
    assert (rec.kind, rec.fields["opt_opd1_const"], rec.fields["opd1_addr"]) == ("arith.max", 1, 0)
    sim = bmk.Simulator("bm1684")
    put(sim, src, x, src_stride)
    got = get(run(ctx, sim), dst, shape, dst_stride)
    assert np.array_equal(got, np.where(x > 0, x, np.float32(0)))


# -- per-channel element-wise functions ----------------------------------------------------------
@pytest.mark.parametrize("name", ["bdc_bias", "bdc_scale", "bdc_scale_bias"])
@pytest.mark.parametrize("start_npu, strided", [(0, False), (37, False), (5, True)])
def test_per_channel(name, start_npu, strided):
    shape = (3, 70, 4, 5)                              # 70 channels: crosses NPU 63 unless at 0
    src, dst = npu_addr(start_npu, 0), npu_addr(start_npu, 16384)
    scale_addr, bias_addr = npu_addr(start_npu, 32768), npu_addr(start_npu, 32768 + 1024)
    src_stride = (300, 100, 6, 1) if strided else None   # h stride 6 > w: a gap per row
    dst_stride = (200, 80, 5, 1) if strided else None
    x = _data(shape, False)
    s = _data((1, 70, 1, 1), False)
    b = _data((1, 70, 1, 1), False)
    x[0, 0, 0, :2] = (-0.0, np.inf)
    ctx = bm1684.Context()
    args = {"bdc_bias": (bias_addr,), "bdc_scale": (scale_addr,), "bdc_scale_bias": (scale_addr, bias_addr)}[name]
    getattr(ctx, name)(dst, src, *args, shape, dst_stride, src_stride)
    sim = bmk.Simulator("bm1684")
    put(sim, src, x, src_stride)
    put_compact(sim, scale_addr, s)
    put_compact(sim, bias_addr, b)
    got = get(run(ctx, sim), dst, shape, dst_stride)
    with np.errstate(all="ignore"):
        expect = {"bdc_bias": x + b, "bdc_scale": x * s, "bdc_scale_bias": x * s + b}[name]
    assert np.array_equal(got, expect) and np.array_equal(np.signbit(got), np.signbit(expect))


def test_per_channel_fields():
    ctx = bm1684.Context()
    ctx.bdc_scale(0, 4096, 8192, (1, 2, 3, 4), None, None)
    ctx.bdc_bias(0, 4096, 8192, (1, 2, 3, 4), None, None)
    scale, bias = (r.fields for r in bmk.decode("bm1684", ctx.acquire_streams()))
    assert scale["opt_opd2_const"] == 1 and scale["opd2_addr"] == 0x80000000       # -0.0
    assert bias["opt_opd1_const"] == 1 and bias["opd1_addr"] == 0x3F800000         # 1.0
    assert scale["short_opd1_str"] == bias["short_opd2_str"] == 2                 # per-channel (offset)


# -- conv2d --------------------------------------------------------------------------------------
def documented(exact, bias=None):
    """The simulator's documented numerics (bmk/sim/bm1684/nn.py): the exact window or matrix
    sum rounded to fp32 once, then the bias added in fp32."""
    out = np.asarray(exact, np.float64).astype(np.float32)
    if bias is not None:
        out = out + np.asarray(bias, np.float32).reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def conv_reference(x, w, b, pad, stride, dil, dtype=np.float64):
    """The seed's conv2d: out(n, oc) = sum over (ic, i, j) of in_padded * weight, + bias."""
    n, ic, h, wd = x.shape
    oc, kh, kw = w.shape[1:]
    oh, ow = geometry.output_hw(h, wd, kh, kw, pad, stride, dil)
    xp = np.pad(x.astype(dtype), ((0, 0), (0, 0), (pad.top, pad.bottom), (pad.left, pad.right)))
    out = np.zeros((n, oc, oh, ow), dtype)
    for ci in range(ic):
        for i in range(kh):
            for j in range(kw):
                win = xp[:, ci:ci + 1, i * dil.h:i * dil.h + (oh - 1) * stride.h + 1:stride.h,
                         j * dil.w:j * dil.w + (ow - 1) * stride.w + 1:stride.w]
                out += win * w[ci, :, i, j].astype(dtype).reshape(1, oc, 1, 1)
    return out if b is None else out + b.astype(dtype).reshape(1, oc, 1, 1)


def put_conv_weight(sim, addr, w, pair_stride):
    """Store an (IC, OC, kh, kw) weight in the 2IC-mode: fp32 pairs of input channels 2p, 2p+1.
    The unused second word of the last pair (odd IC) holds NaN: it must not be read."""
    ic = w.shape[0]
    wp = np.full((2 * -(-ic // 2),) + w.shape[1:], np.nan, np.float32)
    wp[:ic] = w
    words = tuple(2 * s for s in pair_stride)          # pair strides -> fp32 word strides
    put(sim, addr, wp[0::2], words)
    put(sim, addr + 4, wp[1::2], words)


CONV_CASES = [
    # (n, ic, h, w), oc, (kh, kw), padding, stride, dilation, bias, result_add, start NPU, kernel_stride
    ((1, 3, 11, 13), 5, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True, False, 0, None),
    ((2, 4, 9, 10), 70, (3, 2), (2, 0, 1, 3), (2, 1), (1, 2), True, True, 37, None),
    ((1, 7, 16, 12), 9, (2, 3), None, (3, 2), (2, 1), False, False, 63, "vendor"),
    ((1, 1, 6, 6), 1, (1, 1), (15, 15, 15, 15), (15, 15), (15, 15), False, True, 1, None),
]


def _conv_case(case, ints, seed_result=None):
    shape, oc, (kh, kw), pad, stride, dil, use_bias, result_add, npu, kstride = case
    pad = bm1684.Padding(*pad) if pad else geometry.NO_PADDING
    stride, dil = bm1684.dim2(*stride), bm1684.dim2(*dil)
    out_addr, in_addr = npu_addr(npu, 0), npu_addr((npu + 9) % 64, 65536)
    w_addr, b_addr = npu_addr(npu, 200000), npu_addr(npu, 300000)
    icp = -(-shape[1] // 2)
    input_stride = None
    if kstride == "vendor":                          # the yolov5s layout: pairs innermost
        kstride = bm1684.dim4(1, kh * kw * icp, kw * icp, icp)
        input_stride = bm1684.dim4(300, 300, shape[3] + 2, 1)      # and a free input layout
    pair_stride = kstride or geometry.conv_weight_stride(load_chip("bm1684"), w_addr, shape[1], oc, kh, kw)
    x, w = _data(shape, ints), _data((shape[1], oc, kh, kw), ints)
    b = _data((oc,), ints) if use_bias else None
    oh, ow = geometry.output_hw(shape[2], shape[3], kh, kw, pad, stride, dil)
    old = _data((shape[0], oc, oh, ow), ints)
    ctx = bm1684.Context()
    ctx.bdc_conv2d(out_addr, in_addr, w_addr, b_addr if use_bias else None, shape, oc, kh, kw, input_stride, kstride,
                   use_bias, result_add, None if pad == geometry.NO_PADDING else pad, stride, dil)
    sim = bmk.Simulator("bm1684")
    put(sim, in_addr, x, input_stride)
    put_conv_weight(sim, w_addr, w, pair_stride)
    if use_bias:
        put_compact(sim, b_addr, b.reshape(1, oc, 1, 1))
    put(sim, out_addr, old)
    got = get(run(ctx, sim), out_addr, old.shape)
    base = old if result_add else 0
    order = documented(conv_reference(x, w, None, pad, stride, dil), b)
    exact = conv_reference(x, w, b, pad, stride, dil) + base
    magnitude = conv_reference(np.abs(x), np.abs(w), None if b is None else np.abs(b), pad, stride, dil) + np.abs(base)
    return got, (order + base if result_add else order), exact, magnitude, shape[1] * kh * kw + 2


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_random(case):
    got, order, exact, magnitude, terms = _conv_case(case, ints=False)
    assert np.array_equal(got, order)                  # the documented accumulation order
    _within_bound(got, exact, magnitude, terms)        # the seed's formula


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_small_integers_are_exact(case):
    got, _, exact, _, _ = _conv_case(case, ints=True)
    assert np.array_equal(got, exact)


# -- depthwise2d ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, k, pad, stride, dil, use_bias, npu", [
    ((2, 70, 9, 11), (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True, 37),
    ((1, 5, 12, 7), (2, 3), (0, 3, 2, 0), (2, 3), (3, 1), False, 0),
])
@pytest.mark.parametrize("ints", [False, True])
def test_depthwise2d(shape, k, pad, stride, dil, use_bias, npu, ints):
    n, ch, h, w = shape
    kh, kw = k
    pad, stride, dil = bm1684.Padding(*pad), bm1684.dim2(*stride), bm1684.dim2(*dil)
    out_addr, in_addr, w_addr, b_addr = (npu_addr(npu, o) for o in (0, 65536, 200000, 300000))
    x, wt, b = _data(shape, ints), _data((1, ch, kh, kw), ints), _data((1, ch, 1, 1), ints)
    ctx = bm1684.Context()
    ctx.bdc_depthwise2d(out_addr, in_addr, w_addr, b_addr if use_bias else 0, shape, kh, kw, use_bias, pad,
                        stride, dil)
    sim = bmk.Simulator("bm1684")
    put(sim, in_addr, x)
    put_compact(sim, w_addr, wt)
    put_compact(sim, b_addr, b)
    oh, ow = geometry.output_hw(h, w, kh, kw, pad, stride, dil)
    got = get(run(ctx, sim), out_addr, (n, ch, oh, ow))

    def ref(x, wt, b, dtype):
        xp = np.pad(x.astype(dtype), ((0, 0), (0, 0), (pad.top, pad.bottom), (pad.left, pad.right)))
        out = np.zeros((n, ch, oh, ow), dtype)
        for i in range(kh):
            for j in range(kw):
                out += xp[:, :, i * dil.h:i * dil.h + (oh - 1) * stride.h + 1:stride.h,
                          j * dil.w:j * dil.w + (ow - 1) * stride.w + 1:stride.w] * wt[:, :, i:i + 1, j:j + 1]
        return out + b.astype(dtype) if use_bias else out

    assert np.array_equal(got, ref(x, wt, b, np.float32))             # taps in (i, j) order, fp32
    exact = ref(x, wt, b, np.float64)
    if ints:
        assert np.array_equal(got, exact)
    _within_bound(got, exact, ref(np.abs(x), np.abs(wt), np.abs(b), np.float64), kh * kw + 1)


# -- pooling -------------------------------------------------------------------------------------
def _windows(x, kh, kw, pad, stride, value):
    n, ch, h, w = x.shape
    oh, ow = geometry.output_hw(h, w, kh, kw, pad, stride)
    xp = np.pad(x, ((0, 0), (0, 0), (pad.top, pad.bottom), (pad.left, pad.right)), constant_values=value)
    return [xp[:, :, i:i + (oh - 1) * stride.h + 1:stride.h, j:j + (ow - 1) * stride.w + 1:stride.w]
            for i in range(kh) for j in range(kw)], (n, ch, oh, ow)


POOL_CASES = [
    ((2, 70, 9, 11), (3, 3), (1, 1, 1, 1), (2, 2), 37),
    ((1, 5, 7, 8), (2, 5), (0, 2, 4, 1), (1, 3), 0),
    ((1, 3, 1, 1), (1, 1), (15, 15, 15, 15), (15, 15), 63),
]


@pytest.mark.parametrize("shape, k, pad, stride, npu", POOL_CASES)
def test_max_pool2d(shape, k, pad, stride, npu):
    pad, stride = bm1684.Padding(*pad), bm1684.dim2(*stride)
    out_addr, in_addr = npu_addr(npu, 0), npu_addr(npu, 65536)
    x = -np.abs(_data(shape, False)) - 1               # all negative: a padded tap must never win
    ctx = bm1684.Context()
    ctx.bdc_max_pool2d(out_addr, in_addr, shape, *k, pad, stride)
    sim = bmk.Simulator("bm1684")
    put(sim, in_addr, x)
    wins, out_shape = _windows(x, *k, pad, stride, F32_MAX_NEG)
    got = get(run(ctx, sim), out_addr, out_shape)
    assert np.array_equal(got, np.max(wins, axis=0))
    if pad.top >= k[0]:                                # windows that cover padding only
        assert got[0, 0, 0, 0] == F32_MAX_NEG


@pytest.mark.parametrize("shape, k, pad, stride, npu", POOL_CASES)
@pytest.mark.parametrize("scale", [None, 1.0, -0.375])
def test_avg_pool2d(shape, k, pad, stride, npu, scale):
    pad, stride = bm1684.Padding(*pad), bm1684.dim2(*stride)
    out_addr, in_addr = npu_addr(npu, 0), npu_addr(npu, 65536)
    x = _data(shape, False)
    ctx = bm1684.Context()
    if scale is None:
        ctx.bdc_avg_pool2d(out_addr, in_addr, shape, *k, pad, stride)
    else:
        ctx.bdc_avg_pool2d_v2(out_addr, in_addr, shape, scale, *k, pad, stride)
    sim = bmk.Simulator("bm1684")
    put(sim, in_addr, x)
    wins, out_shape = _windows(x, *k, pad, stride, 0.0)
    got = get(run(ctx, sim), out_addr, out_shape)
    s = np.float32(1.0 / (k[0] * k[1]) if scale is None else scale)
    order = np.zeros(out_shape, np.float32)
    for win in wins:
        order += win * s                                  # taps in (i, j) order, fp32
    assert np.array_equal(got, order)
    # seed: the average over the kernel_h x kernel_w window (zero paddings counted) / its sum * scale
    exact = np.sum(np.array(wins, np.float64), axis=0) * (1.0 / (k[0] * k[1]) if scale is None else scale)
    magnitude = np.sum(np.abs(np.array(wins, np.float64)), axis=0) * abs(float(s))
    _within_bound(got, exact, magnitude, k[0] * k[1] + 2)


def test_vendor_avgpooling_is_nearest_upsampling():
    """The yolov5s stream's avg pooling commands (opd0_{x,y}_ins0 = 1, pads 1, 2x2, scale 1.0)
    upsample 2x by nearest neighbour: the simulator's window semantics reproduce that."""
    from tests.vectors import vendor
    rec = next(r for r in bmk.decode("bm1684", vendor.streams("bm1684")) if r.kind == "pord.avgpooling")
    f = {**rec.fields, "cmd_id_gdma": 0, "cmd_id_tpu": 1}
    base = 0x08000000
    x = _data((1, 256, 20, 20), False)
    sim = bmk.Simulator("bm1684")
    put(sim, f["opd0_addr"] - base, x)
    sim.run([bmk.encoders.Record("tiu", rec.cls, rec.kind, f)])
    got = get(sim, f["res0_addr"] - base, (1, 256, 40, 40))
    assert np.array_equal(got, x.repeat(2, axis=2).repeat(2, axis=3))


# -- matmul --------------------------------------------------------------------------------------
def put_matrix(sim, addr, mat, cols_per_channel):
    rows, cols = mat.shape
    shape = geometry.matrix_shape(rows, cols, cols_per_channel)
    t = np.zeros(shape, np.float32)
    flat = t.reshape(rows, -1)
    flat[:, :cols] = mat
    put(sim, addr, flat.reshape(shape))


def get_matrix(sim, addr, rows, cols, cols_per_channel):
    return get(sim, addr, geometry.matrix_shape(rows, cols, cols_per_channel)).reshape(rows, -1)[:, :cols]


@pytest.mark.parametrize("m, k, n, lw, rw, use_bias, result_add, npu", [
    (5, 7, 9, 3, 4, True, False, 0),
    (3, 300, 130, 128, 2, True, True, 60),            # 65 output channels from NPU 60
    (1, 1, 1, 1, 1, False, True, 63),
    (4, 16, 8, 16, 8, False, False, 2),
])
@pytest.mark.parametrize("ints", [False, True])
def test_matmul(m, k, n, lw, rw, use_bias, result_add, npu, ints):
    out, left, right, bias = npu_addr(npu, 0), npu_addr((npu + 7) % 64, 65536), npu_addr(npu, 131072), \
        npu_addr(npu, 393216)
    a, bm, b, old = _data((m, k), ints), _data((k, n), ints), _data((1, n), ints), _data((m, n), ints)
    ctx = bm1684.Context()
    ctx.bdc_matmul(out, left, right, bias, m, k, n, lw, rw, use_bias, result_add)
    sim = bmk.Simulator("bm1684")
    put_matrix(sim, left, a, lw)
    put_matrix(sim, right, bm, rw)
    put_matrix(sim, bias, b, rw)
    put_matrix(sim, out, old, rw)
    got = get_matrix(run(ctx, sim), out, m, n, rw)
    order = (a.astype(np.float64) @ bm).astype(np.float32)
    order = (order + b if use_bias else order)
    order = old + order if result_add else order
    assert np.array_equal(got, order)
    exact = a.astype(np.float64) @ bm + (b if use_bias else 0) + (old if result_add else 0)
    if ints:
        assert np.array_equal(got, exact)
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(bm) + (np.abs(b) if use_bias else 0) + \
        (np.abs(old) if result_add else 0)
    _within_bound(got, exact, magnitude, k + 2)


def test_matmul_fields():
    """okk_bdc_matmul as the vendor's FC reader takes it (tpu-mlir profile_helper/bm1684_defs.py
    get_bd_mem_record, FC: K = (opd0_c - 1) * opd0_w + opd1_w, the right matrix (K, res0_c, 1,
    res0_w)): the left's last-channel width in opd1_w, opd0_h left at its default,
    accumulation as opt_res_add = 1 on the same mm.mul (issue 18 item 1)."""
    ctx = bm1684.Context()
    ctx.bdc_matmul(0, 65536, 131072, 0, 10, 100, 50, 32, 16, False, False)
    ctx.bdc_matmul(0, 65536, 131072, 262144, 10, 100, 50, 32, 16, True, True)
    ctx.bdc_matmul(0, 65536, 131072, 0, 10, 96, 50, 32, 16, False, False)       # K = 3 * 32: opd1_w 32
    mul, acc, even = (r for r in bmk.decode("bm1684", ctx.acquire_streams()))
    assert (mul.kind, acc.kind, even.kind) == ("mm.mul",) * 3
    f = mul.fields
    default_h = load_chip("bm1684").field("tiu", "opd0_h").default
    assert (f["res0_n"], f["res0_c"], f["res0_h"], f["res0_w"]) == (10, 4, 1, 16)
    assert (f["opd0_n"], f["opd0_c"], f["opd0_h"], f["opd0_w"], f["opd1_w"]) == (10, 4, default_h, 32, 4)
    assert (f["opd0_c"] - 1) * f["opd0_w"] + f["opd1_w"] == 100          # the vendor reader's K
    assert (f["opt_res_add"], acc.fields["opt_res_add"]) == (0, 1)
    assert (f["tsk_opd_num"], acc.fields["tsk_opd_num"]) == (2, 3)
    assert (even.fields["opd0_c"], even.fields["opd1_w"]) == (3, 32)


# -- the vendor's commands rebuilt -------------------------------------------------------------
def test_vendor_conv_and_max_pool_rebuilt():
    """The first conv (6x6 stride 2, bias, 2IC weight) and the first max pooling (5x5, pads 2)
    of the real yolov5s stream, rebuilt through the API at the vendor's local addresses: every
    field is equal except the sync ids cmd_id_tpu and cmd_id_gdma, which number the commands of
    the whole vendor program (ours are a two-command program without GDMA). The vendor's avg
    pooling commands are not rebuilt: they are 2x nearest upsampling (opd0_{x,y}_ins0 = 1, scale
    1.0), which no OKKernel function emits (test_vendor_avgpooling_is_nearest_upsampling runs
    them); okk_bdc_avg_pool2d fills the same fields otherwise (tsk_opd_num 2, const opd1)."""
    from tests.vectors import vendor
    recs = bmk.decode("bm1684", vendor.streams("bm1684"))
    conv = next(r for r in recs if r.kind == "conv")
    pool = next(r for r in recs if r.kind == "pord.maxpooling")
    base = 0x08000000
    f = conv.fields
    ctx = bm1684.Context()
    ctx.bdc_conv2d(f["res0_addr"] - base, f["opd0_addr"] - base, f["opd1_addr"] - base, f["opd2_addr"] - base,
                   (1, 3, 110, 640), 32, 6, 6, None, bm1684.dim4(1, 6 * 6 * 2, 6 * 2, 2), True, False,
                   bm1684.Padding(2, 0, 2, 2), bm1684.dim2(2, 2), None)
    f = pool.fields
    ctx.bdc_max_pool2d(f["res0_addr"] - base, f["opd0_addr"] - base, (1, 256, 20, 20), 5, 5,
                       bm1684.Padding(2, 2, 2, 2), None)
    ids = {"cmd_id_tpu", "cmd_id_gdma"}
    for mine, theirs in zip(bmk.decode("bm1684", ctx.acquire_streams()), (conv, pool)):
        assert mine.kind == theirs.kind
        differ = {k for k in theirs.fields if mine.fields[k] != theirs.fields[k]}
        assert differ <= ids, {k: (mine.fields[k], theirs.fields[k]) for k in differ - ids}


def test_vendor_depthwise_rebuilt():
    """Every depthwise conv of the real retinaface network (the vendor compiler's pord.depthwise:
    its kernel with short_opd1_str aligned, which the engine reads as the compact [1, C, kh, kw]
    tensor) rebuilt with okk_bdc_depthwise2d: every field equal but the sync ids."""
    from tests.chips.bm1684.sim.real import records
    from tests.models import files
    base, ids = 0x08000000, {"cmd_id_tpu", "cmd_id_gdma"}
    convs = [r.fields for r in records(files.RETINAFACE) if r.kind == "pord.depthwise"]
    assert convs
    for f in convs:
        ctx = bm1684.Context()
        ctx.bdc_depthwise2d(f["res0_addr"] - base, f["opd0_addr"] - base, f["opd1_addr"] - base,
                            f["opd2_addr"] - base, (f["res0_n"], f["res0_c"], f["opd0_h"], f["opd0_w"]),
                            f["opd1_h"], f["opd1_w"], f["tsk_opd_num"] == 3,
                            bm1684.Padding(f["opd0_up_pad"], f["opd0_dn_pad"], f["opd0_lf_pad"], f["opd0_rt_pad"]),
                            bm1684.dim2(f["res_op_y_str"], f["res_op_x_str"]),
                            bm1684.dim2(f["opd1_y_ins0"] + 1, f["opd1_x_ins0"] + 1))
        mine, = bmk.decode("bm1684", ctx.acquire_streams())
        differ = {k for k in f if mine.fields[k] != f[k]}
        assert differ <= ids, {k: (mine.fields[k], f[k]) for k in differ - ids}


def test_vendor_conv_simulated():
    """The vendor's first conv command itself (decoded from the yolov5s stream) on the simulator:
    its fields read as our lowering writes them (input opd0, 2IC weight opd1 with the vendor's
    pair strides, per-channel bias opd2, paddings, stride 2) give the seed's convolution."""
    from tests.vectors import vendor
    rec = next(r for r in bmk.decode("bm1684", vendor.streams("bm1684")) if r.kind == "conv")
    f = {**rec.fields, "cmd_id_gdma": 0, "cmd_id_tpu": 1}
    base = 0x08000000
    x, w, b = _data((1, 3, 110, 640), False), _data((3, 32, 6, 6), False), _data((32,), False)
    sim = bmk.Simulator("bm1684")
    put(sim, f["opd0_addr"] - base, x)
    put_conv_weight(sim, f["opd1_addr"] - base, w, (f["opd1_n_str"], f["opd1_c_str"], f["opd1_h_str"],
                                                    f["opd1_w_str"]))
    put_compact(sim, f["opd2_addr"] - base, b.reshape(1, 32, 1, 1))
    sim.run([bmk.encoders.Record("tiu", rec.cls, rec.kind, f)])
    got = get(sim, f["res0_addr"] - base, (1, 32, 54, 320))
    pad, two = bm1684.Padding(2, 0, 2, 2), bm1684.dim2(2, 2)
    assert np.array_equal(got, documented(conv_reference(x, w, None, pad, two, geometry.ONE), b))


# -- op table ------------------------------------------------------------------------------------
NN_ROWS = [row for row in api.NEURAL_NETWORK]


def test_rows_emit_their_declared_kinds():
    calls = {
        "bdc_relu": (0, 4096, (1, 2, 3, 4), None, None),
        "bdc_bias": (0, 4096, 8192, (1, 2, 3, 4), None, None),
        "bdc_scale": (0, 4096, 8192, (1, 2, 3, 4), None, None),
        "bdc_scale_bias": (0, 4096, 8192, 8320, (1, 2, 3, 4), None, None),
        "bdc_conv2d": (0, 4096, 8192, 16384, (1, 2, 3, 4), 3, 2, 2, None, None, True, False, None, None, None),
        "bdc_depthwise2d": (0, 4096, 8192, 16384, (1, 2, 3, 4), 2, 2, True, None, None, None),
        "bdc_avg_pool2d": (0, 4096, (1, 2, 3, 4), 2, 2, None, None),
        "bdc_avg_pool2d_v2": (0, 4096, (1, 2, 3, 4), 0.5, 2, 2, None, None),
        "bdc_max_pool2d": (0, 4096, (1, 2, 3, 4), 2, 2, None, None),
        "bdc_matmul": (0, 4096, 8192, 16384, 2, 3, 4, 3, 4, True, True),
    }
    assert sorted(calls) == sorted(row.name for row in NN_ROWS)
    for row in NN_ROWS:
        ctx = bm1684.Context()
        getattr(ctx, row.name)(*calls[row.name])
        kinds = {f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())}
        assert kinds and kinds <= set(row.kinds), (row.name, kinds)
    ctx = bm1684.Context()
    ctx.bdc_matmul(*calls["bdc_matmul"][:-1], False)
    assert bmk.decode("bm1684", ctx.acquire_streams())[0].kind == "mm.mul"


def test_declared_kinds_are_simulated():
    for row in NN_ROWS:
        for kind in row.kinds:
            engine, name = kind.split(".", 1)
            assert (engine, name) in SEMANTICS.kinds, kind


# -- remarks -------------------------------------------------------------------------------------
A = 128 * 1024                                         # a second 128-aligned tensor in NPU 0
ELEMENTWISE_ERRORS = [
    ("bdc_relu", (2, 0, (1, 1, 1, 1), None, None), "dst_addr must be divisible by 4"),
    ("bdc_relu", (0, LANE, (1, 1, 1, 1), None, None), "src_addr must be an address on NPU [0-9]+, where dst_addr"),
    ("bdc_relu", (0, A, (1, 4096, 1, 1), None, None), r"shape.c must be an integer in \[1, 4095\]"),
    ("bdc_relu", (0, A, (65536, 1, 1, 1), None, None), r"shape.n must be an integer in \[1, 65535\]"),
    ("bdc_relu", (0, A, (1, 1, 1, 0), None, None), r"shape.w must be an integer in \[1, 65535\]"),
    ("bdc_relu", (LANE - 4, A, (1, 1, 2, 1), None, None), "dst_addr must be such that the tensor fits"),
    ("bdc_relu", (0, A, (1, 1, 1, 1), (1, 1, 1), None), r"dst_stride must be None \(the default layout\) or a dim4 stride"),
    ("bdc_bias", (0, A, 6, (1, 1, 1, 1), None, None), "bias_addr must be divisible by 4"),
    ("bdc_bias", (0, A, LANE + 4, (1, 1, 1, 1), None, None), "bias_addr must be an address on NPU"),
    ("bdc_bias", (0, A, LANE - 4, (1, 65, 1, 1), None, None), "bias_addr must be such that the tensor fits"),
    ("bdc_scale", (0, A, 64 * LANE, (1, 1, 1, 1), None, None), "scale_addr must be a local address"),
    ("bdc_scale_bias", (0, A, 256, LANE, (1, 1, 1, 1), None, None), "bias_addr must be an address on NPU"),
]


@pytest.mark.parametrize("name, args, match", ELEMENTWISE_ERRORS)
def test_elementwise_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_32bit_cpy(0, 4096, (1, 2, 3, 4), None, None)
    unchanged_after(ctx, getattr(ctx, name), *args, match=f"{name}: {match}")


CONV = dict(output_addr=0, input_addr=A, weight_addr=2 * A, bias_addr=3 * A, input_shape=(1, 3, 8, 8), output_c=4,
            kernel_h=3, kernel_w=3, input_stride=None, kernel_stride=None, using_bias=True, result_add=False,
            padding=None, stride=None, dilation=None)
CONV_ERRORS = [
    (dict(output_addr=4), "output_addr must be divisible by 128"),
    (dict(input_addr=2), "input_addr must be divisible by 4"),
    (dict(weight_addr=LANE), "weight_addr must be an address on NPU [0-9]+, where output_addr starts"),
    (dict(bias_addr=LANE + 4), "bias_addr must be an address on NPU [0-9]+, where output_addr starts"),
    (dict(bias_addr=2), "bias_addr must be divisible by 4"),
    (dict(input_shape=(1, 3, 2048, 8)), r"input_shape.h must be an integer in \[1, 2047\]"),
    (dict(input_shape=(1, 3, 8, 0)), r"input_shape.w must be an integer in \[1, 2047\]"),
    (dict(input_shape=(1, 4096, 8, 8)), r"input_shape.c must be an integer in \[1, 4095\]"),
    (dict(input_shape=(65536, 3, 8, 8)), r"input_shape.n must be an integer in \[1, 65535\]"),
    (dict(input_shape=(1, 3, 2040, 8), padding=(4, 4, 0, 0)),
     r"input_shape->h \+ padding->top \+ padding->bottom must be at most 2047, not 2048"),
    (dict(input_shape=(1, 3, 8, 2047), padding=(0, 0, 0, 1)),
     r"input_shape->w \+ padding->left \+ padding->right must be at most 2047"),
    (dict(padding=(16, 0, 0, 0)), r"padding->top must be an integer in \[0, 15\]"),
    (dict(padding=(0, 0, 0, -1)), r"padding->right must be an integer in \[0, 15\]"),
    (dict(padding=(0, 0, 0)), "padding must be a Padding"),
    (dict(stride=(0, 1)), r"stride->h must be an integer in \[1, 15\]"),
    (dict(stride=(1, 16)), r"stride->w must be an integer in \[1, 15\]"),
    (dict(dilation=(16, 1)), r"dilation->h must be an integer in \[1, 15\]"),
    (dict(dilation=(1, 0)), r"dilation->w must be an integer in \[1, 15\]"),
    (dict(kernel_h=0), r"kernel_h must be an integer in \[1, 2047\]"),
    (dict(kernel_w=9), r"kernel_w must be a kernel whose extent .* fits the padded input"),
    (dict(kernel_h=3, dilation=(4, 1)), r"kernel_h must be a kernel whose extent \(kernel_h - 1\) \* dilation->h"),
    (dict(output_c=0), r"output_c must be an integer in \[1, 4095\]"),
    (dict(using_bias=2), "using_bias must be a bool"),
    (dict(result_add="yes"), "result_add must be a bool"),
    (dict(kernel_stride=(1, 2, 3)), r"kernel_stride must be None \(the default layout\) or a dim4 stride"),
    (dict(output_addr=LANE - 128), "output_addr must be such that the tensor fits"),
    (dict(weight_addr=LANE - 8, kernel_stride=(1, 1, 1, 1), output_addr=LANE - 8 - 2048,
          bias_addr=LANE - 8 - 4096), "output_addr must be divisible by 128"),
    (dict(weight_addr=LANE - 8), "weight_addr must be such that the tensor fits"),
]


@pytest.mark.parametrize("change, match", CONV_ERRORS)
def test_conv2d_remarks(change, match):
    ctx = bm1684.Context()
    ctx.bdc_conv2d(**CONV)
    unchanged_after(ctx, lambda: ctx.bdc_conv2d(**{**CONV, **change}), match=f"bdc_conv2d: {match}")


def test_conv2d_window_limits():
    """output_h <= 2047 and the padded input at most 2047 are both reachable exactly."""
    ctx = bm1684.Context()
    big = dict(CONV, input_shape=(1, 1, 2047, 1), output_c=1, kernel_h=1, kernel_w=1, using_bias=False)
    ctx.bdc_conv2d(**big)
    assert bmk.decode("bm1684", ctx.acquire_streams())[0].fields["res0_h"] == 2047
    unused = dict(CONV, using_bias=False, bias_addr=None)          # bias_addr unused: None is fine
    ctx.bdc_conv2d(**unused)


DW = dict(output_addr=0, input_addr=A, weight_addr=2 * A, bias_addr=3 * A, input_shape=(1, 3, 8, 8), kernel_h=3,
          kernel_w=3, using_bias=True, padding=None, stride=None, dilation=None)
POOL = dict(output_addr=0, input_addr=A, input_shape=(1, 3, 8, 8), kernel_h=2, kernel_w=2, padding=None,
            stride=None)
WINDOW_ERRORS = [
    (dict(input_addr=A + 4), "input_addr must be divisible by 128"),
    (dict(output_addr=64), "output_addr must be divisible by 128"),
    (dict(input_addr=LANE), "input_addr must be an address on NPU [0-9]+, where output_addr starts"),
    (dict(input_shape=(1, 3, 2048, 8)), r"input_shape.h must be an integer in \[1, 2047\]"),
    (dict(padding=(0, 0, 16, 0)), r"padding->left must be an integer in \[0, 15\]"),
    (dict(stride=(16, 1)), r"stride->h must be an integer in \[1, 15\]"),
    (dict(kernel_h=9), "kernel_h must be a kernel whose extent"),
    (dict(input_shape=(1, 3, 2047, 8), padding=(1, 0, 0, 0)), r"input_shape->h \+ padding->top"),
]


@pytest.mark.parametrize("change, match", WINDOW_ERRORS + [
    (dict(weight_addr=LANE + 4), "weight_addr must be an address on NPU [0-9]+, where output_addr starts"),
    (dict(bias_addr=6), "bias_addr must be divisible by 4"),
    (dict(dilation=(1, 16)), r"dilation->w must be an integer in \[1, 15\]"),
])
def test_depthwise2d_remarks(change, match):
    ctx = bm1684.Context()
    ctx.bdc_depthwise2d(**DW)
    unchanged_after(ctx, lambda: ctx.bdc_depthwise2d(**{**DW, **change}), match=f"bdc_depthwise2d: {match}")


@pytest.mark.parametrize("name", ["bdc_avg_pool2d", "bdc_max_pool2d", "bdc_avg_pool2d_v2"])
@pytest.mark.parametrize("change, match", WINDOW_ERRORS)
def test_pool_remarks(name, change, match):
    ctx = bm1684.Context()
    base = dict(POOL, scale=0.5) if name.endswith("v2") else POOL
    getattr(ctx, name)(**base)
    unchanged_after(ctx, lambda: getattr(ctx, name)(**{**base, **change}), match=f"{name}: {match}")


def test_avg_pool2d_v2_scale_is_a_float():
    ctx = bm1684.Context()
    unchanged_after(ctx, lambda: ctx.bdc_avg_pool2d_v2(**dict(POOL, scale="0.5")),
                    match="bdc_avg_pool2d_v2: scale must be a float")


MM = dict(output_addr=0, left_addr=A, right_addr=2 * A, bias_addr=3 * A, left_rows=4, left_cols=10, right_cols=6,
          left_cols_per_channel=5, right_cols_per_channel=3, using_bias=True, result_add=False)


@pytest.mark.parametrize("change, match", [
    (dict(output_addr=4), "output_addr must be divisible by 128"),
    (dict(left_addr=A + 4), "left_addr must be divisible by 128"),
    (dict(bias_addr=3 * A + 4), "bias_addr must be divisible by 128"),
    (dict(right_addr=LANE), "right_addr must be an address on NPU [0-9]+, where output_addr starts"),
    (dict(bias_addr=LANE), "bias_addr must be an address on NPU [0-9]+, where output_addr starts"),
    (dict(left_rows=0), r"left_rows must be an integer in \[1, 65535\]"),
    (dict(left_rows=65536), r"left_rows must be an integer in \[1, 65535\]"),
    (dict(left_cols_per_channel=11), r"left_cols_per_channel must be an integer in \[1, 10\]"),
    (dict(left_cols=500, left_cols_per_channel=129), r"left_cols_per_channel must be an integer in \[1, 128\]"),
    (dict(right_cols_per_channel=0), r"right_cols_per_channel must be an integer in \[1, 6\]"),
    (dict(left_cols=4096, left_cols_per_channel=1),
     r"ceil\(left_cols / left_cols_per_channel\) must be at most 4095, not 4096"),
    (dict(right_cols=4097, right_cols_per_channel=1), r"ceil\(right_cols / right_cols_per_channel\) must be at most"),
    (dict(using_bias=None), "using_bias must be a bool"),
    (dict(left_rows=2000, left_cols=4095 * 128, left_cols_per_channel=128),
     "left_addr must be such that the tensor"),
])
def test_matmul_remarks(change, match):
    ctx = bm1684.Context()
    ctx.bdc_matmul(**MM)
    unchanged_after(ctx, lambda: ctx.bdc_matmul(**{**MM, **change}), match=f"bdc_matmul: {match}")


def test_numpy_integers_and_named_tuples():
    ctx = bm1684.Context()
    ctx.bdc_conv2d(np.int64(0), np.uint32(A), 2 * A, 3 * A, (np.int32(1), 3, 8, 8), np.int16(4), np.int8(3), 3, None,
                   None, np.bool_(True), False, bm1684.Padding(1, 1, 1, 1), bm1684.dim2(1, 1), (1, 1))
    other = bm1684.Context()
    other.bdc_conv2d(0, A, 2 * A, 3 * A, (1, 3, 8, 8), 4, 3, 3, None, None, True, False, (1, 1, 1, 1), None, None)
    assert ctx.acquire_cmdbuf() == other.acquire_cmdbuf()


# -- the simulator on commands no API call emits ------------------------------------------------
@pytest.mark.parametrize("kind, fields, match", [
    ("conv", dict(res0_n=65535, res0_c=4095, res0_h=65535, res0_w=65535, short_res0_str=3, res0_n_str=0,
                  res0_c_str=0, res0_h_str=0, res0_w_str=0), "res0 must have at most 8388608 elements"),
    ("conv", dict(opd0_c=4095, opd1_h=500, opd1_w=600, opd0_h=600, opd0_w=700),
     "at most 1048576 passes over its output"),
    ("pord.maxpooling", dict(res0_c=64, res0_h=256, res0_w=256, opd0_h=300, opd0_w=300, opd1_h=25, opd1_w=40,
                             short_res0_str=3, res0_n_str=0, res0_c_str=0, res0_h_str=0, res0_w_str=0,
                             short_opd0_str=3, opd0_n_str=0, opd0_c_str=0, opd0_h_str=0, opd0_w_str=0),
     "at most 2147483648 multiply-adds"),
    ("mm.mul", dict(opd0_c=4095, opd0_w=65535, opd0_h=65535), "at most 1048576 passes"),
    ("pord.avgpooling", dict(opt_opd1_const=1, opd0_h=3, opd0_w=3, opd1_h=2, opd1_w=2, res0_h=9, res0_w=2,
                             res0_addr=0x08000000, opd0_addr=0x08001000),
     "res0_h = 9 needs a padded input of at least 10 along h"),
    ("conv", dict(opt_opd0_prec=3), "opt_opd0_prec must be fp32"),
    ("conv", dict(opt_opd0_prec=0), "opt_opd1_prec must be int8 here"),          # int8 input, fp32 weight
    ("mm.mul", dict(opt_opd0_const=1), "opt_opd0_const must be 0 here"),
    ("pord.maxpooling", dict(opd1_h=0, res0_addr=0x08000000, opd0_addr=0x08001000), "opd1_h and opd1_w"),
])
def test_simulator_refuses_what_it_cannot_do(kind, fields, match):
    """Hand-made commands: bounded work (free layouts with zero strides make huge shapes cheap to
    describe), windows that do not fit, non-fp32 operands: SimulationError, quickly."""
    rec = bmk.encoders.Record("tiu", None, kind, {**load_chip("bm1684").kind("tiu", kind), **fields})
    with pytest.raises(bmk.SimulationError, match=match):
        bmk.Simulator("bm1684").run(bmk.decode("bm1684", {"tiu": bmk.encode("bm1684", [rec], raw=True)["tiu"]}))


# -- the window remarks as an oracle ---------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(h=st.integers(0, 2060), pads=st.tuples(*[st.integers(-1, 17)] * 2), k=st.integers(0, 40),
       s=st.integers(0, 16), d=st.integers(0, 16), pool=st.booleans())
def test_window_remarks_accept_exactly_what_the_seed_allows(h, pads, k, s, d, pool):
    """conv2d and max_pool2d accept a window along h iff the seed's remarks hold: h in [1, 2047],
    paddings in [0, 15], stride (and dilation) in [1, 15], h + top + bottom <= 2047, and a
    kernel that leaves output_h = (h + pads - ((k - 1) * d + 1)) / stride + 1 >= 1."""
    top, bottom = pads
    dil = 1 if pool else d
    ok = (1 <= h <= 2047 and 0 <= top <= 15 and 0 <= bottom <= 15 and 1 <= s <= 15 and 1 <= dil <= 15
          and h + top + bottom <= 2047 and k >= 1 and h + top + bottom - ((k - 1) * dil + 1) >= 0)
    ctx = bm1684.Context()
    if pool:
        call = lambda: ctx.bdc_max_pool2d(0, A, (1, 2, h, 3), k, 1, (top, bottom, 0, 0), (s, 1))  # noqa: E731
    else:
        call = lambda: ctx.bdc_conv2d(0, A, 2 * A, None, (1, 2, h, 3), 3, k, 1, None, None, False, False,  # noqa: E731
                                      (top, bottom, 0, 0), (s, 1), (d, 1))
    if ok:
        call()
        f = bmk.decode("bm1684", ctx.acquire_streams())[0].fields
        assert f["res0_h"] == (h + top + bottom - ((k - 1) * dil + 1)) // s + 1 <= 2047
    else:
        unchanged_after(ctx, call, error=bmk.BmkError)
