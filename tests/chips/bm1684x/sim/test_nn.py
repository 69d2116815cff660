"""CONV, PorD, MM and MM2 against numpy references written from the field meanings their
modules document (bmk.sim.bm1684x conv.py, window.py, pord.py, mm.py), on the field
combinations of the golden yolov5s stream (its int8 convs: 1x6 stride (1, 2), 3x3 stride 2
with asymmetric pads, 1x1; its depthwise 6x1 stride 2; its 5x5 max pool with -128 pads) and
on their edges (dilation, inserted zeros, kernel rotation, accumulation, two channel groups,
start NPUs, the long classes)."""
import numpy as np
import pytest

import bmk
from tests.chips.bm1684x.sim.helpers import (FLOATS, INTS, LANE, bits_of, get, prec, put, rand, rec, round_shift, run, sat,
                                       sign, to_storage)

I8, U8, I16, _, I32, _ = INTS
_, FP32, _ = FLOATS


def extended(x, pads, ins, pad_val, ins_val):
    """The input with ins zeros (ins_val) between elements and pads (pad_val) around: the
    firmware's ih_ext = (ih - 1) * (ins + 1) + 1 + pads."""
    n, c, h, w = x.shape
    up, dn, lf, rt = pads
    hi, wi = (h - 1) * (ins[0] + 1) + 1, (w - 1) * (ins[1] + 1) + 1
    out = np.full((n, c, hi + up + dn, wi + lf + rt), pad_val, np.float64)
    out[:, :, up:up + hi, lf:lf + wi] = ins_val
    out[:, :, up:up + hi:ins[0] + 1, lf:lf + wi:ins[1] + 1] = x
    return out


def windows(ext, kh, kw, stride, dil):
    """(n, c, oh, ow, kh, kw): the input under each kernel tap of each output position."""
    n, c, H, W = ext.shape
    oh = (H - ((kh - 1) * dil[0] + 1)) // stride[0] + 1
    ow = (W - ((kw - 1) * dil[1] + 1)) // stride[1] + 1
    out = np.empty((n, c, oh, ow, kh, kw))
    for y in range(oh):
        for x in range(ow):
            out[:, :, y, x] = ext[:, :, y * stride[0]:y * stride[0] + (kh - 1) * dil[0] + 1:dil[0],
                                  x * stride[1]:x * stride[1] + (kw - 1) * dil[1] + 1:dil[1]]
    return out


def put_weights(sim, addr, w, dt):
    """(OC, IC, kh, kw) weights in the IC-parallel layout (conv.py, cmodel get_alignic_data):
    output channel o on NPU (s + o) % 64, group g = (s + o) // 64; element (o, i, y, x) at
    g * ALIGN(IC, cube) * kh * kw + (i // cube) * cube * kh * kw + (y * kw + x) * cube + i % cube."""
    oc, ic, kh, kw = w.shape
    cube = 1 if dt.bits == 32 else 64 * 8 // dt.bits
    blocks = -(-ic // cube)
    s0, off0 = divmod(addr, LANE)
    data = {}
    for o in range(oc):
        lane, g = (s0 + o) % 64, (s0 + o) // 64
        for i in range(ic):
            for y in range(kh):
                for x in range(kw):
                    e = g * blocks * cube * kh * kw + (i // cube) * cube * kh * kw + (y * kw + x) * cube + i % cube
                    data[(lane, e)] = w[o, i, y, x]
    for (lane, e), v in data.items():
        sim.lmem_write(lane * LANE + off0 + e * dt.itemsize, to_storage(np.array([v]), dt).tobytes())


GEOMETRIES = {   # kernel, stride, pads (up, dn, lf, rt), dilation, inserts
    "yolo_1x6_s12": ((1, 6), (1, 2), (0, 0, 2, 2), (1, 1), (0, 0)),
    "yolo_3x3_s2": ((3, 3), (2, 2), (1, 0, 1, 1), (1, 1), (0, 0)),
    "yolo_1x1": ((1, 1), (1, 1), (0, 0, 0, 0), (1, 1), (0, 0)),
    "dilated_inserted": ((3, 2), (2, 1), (1, 2, 0, 3), (2, 3), (1, 2)),
}


def conv_fields(x_shape, oc, out_hw, geom, **extra):
    (kh, kw), stride, pads, dil, ins = geom
    n, ic, ih, iw = x_shape
    f = dict(res0_n=n, res0_c=oc, res0_h=out_hw[0], res0_w=out_hw[1], opd0_c=ic, opd0_h=ih, opd0_w=iw,
             opd1_h=kh, opd1_w=kw, res_op_y_str=stride[0], res_op_x_str=stride[1], opd0_up_pad=pads[0],
             opd0_dn_pad=pads[1], opd0_lf_pad=pads[2], opd0_rt_pad=pads[3], opd1_y_ins0=dil[0] - 1,
             opd1_x_ins0=dil[1] - 1, opd0_y_ins0=ins[0], opd0_x_ins0=ins[1])
    f.update(extra)
    return f


@pytest.mark.parametrize("geom", list(GEOMETRIES), ids=str)
@pytest.mark.parametrize("cls", ["CONV", "sCONV"])
@pytest.mark.parametrize("x_dt", [U8, I8], ids=str)
def test_conv_int8_into_int32(geom, cls, x_dt):
    """int8 data, int8 weights, a constant kernel zero point and pad: the int32 sums."""
    g = GEOMETRIES[geom]
    rng = np.random.default_rng(hash((geom, cls, x_dt.name)) % 2**32)
    n, ic, ih, iw, oc = 2, 70, 7, 11, 66
    x, w = rand(rng, (n, ic, ih, iw), x_dt), rand(rng, (oc, ic) + g[0], I8)
    kzp, pad_val, ins_val = -3, 5, -2
    ext = extended(x, g[2], g[4], pad_val if x_dt.signed else 250, ins_val if x_dt.signed else 7)
    win = windows(ext, *g[0], g[1], g[3])
    want = np.einsum("ncyxhw,ochw->noyx", win, (w - kzp).astype(np.float64)).astype(np.int64)
    X, Wt, Rz = 0, 3 * LANE + 0x8000, 3 * LANE + 0x10000
    sim = bmk.Simulator("bm1684x")
    put(sim, X, x, x_dt)
    put_weights(sim, Wt, w, I8)
    pad_bits = ((ins_val if x_dt.signed else 7) & 0xFF) << 8 | ((pad_val if x_dt.signed else 250) & 0xFF)
    f = conv_fields(x.shape, oc, want.shape[2:], g, res0_addr=Rz, opd0_addr=X, opd1_addr=Wt, res0_prec=prec(I32),
                    opd0_prec=prec(I8), opd0_sign=sign(x_dt), opd1_sign=1, opd2_const=1, opd2_sign=1,
                    opd2_addr=kzp & 0xFF, opd3_const=1, opd3_addr=pad_bits)
    sim, report = run([rec("tiu", cls, "conv.normal", **f)], sim)
    np.testing.assert_array_equal(get(sim, Rz, want.shape, I32), want)


def test_conv_fp32_bias_rotation_accumulation_relu_lane_mask():
    """The long CONV: fp32 with a per-channel bias tensor, the kernel turned by 180 degrees,
    added to what res0 holds, ReLU; only the enabled NPUs written."""
    rng = np.random.default_rng(3)
    n, ic, ih, iw, oc = 1, 5, 6, 7, 70
    geom = ((3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (0, 0))
    x = rng.standard_normal((n, ic, ih, iw)).astype(np.float32).astype(np.float64)
    w = rng.standard_normal((oc, ic, 3, 3)).astype(np.float32).astype(np.float64)
    bias = rng.standard_normal(oc).astype(np.float32).astype(np.float64)
    old = rng.standard_normal((n, oc, ih, iw)).astype(np.float32).astype(np.float64)
    win = windows(extended(x, geom[2], (0, 0), 0.0, 0.0), 3, 3, (1, 1), (1, 1))
    acc = np.einsum("ncyxhw,ochw->noyx", win, w[:, :, ::-1, ::-1]) + bias.reshape(1, -1, 1, 1)
    mask = (1 << 64) - 1 - (1 << 5)
    want = np.maximum(acc + old, 0).astype(np.float32)
    X, Wt, Bs, Rz = 0, 0x4000, 0x20000, 0x30000
    sim = bmk.Simulator("bm1684x")
    put(sim, X, x, FP32)
    put_weights(sim, Wt, w, FP32)
    put(sim, Bs, bias.reshape(1, oc, 1, 1), FP32, (0, 1, 1, 1))
    put(sim, Rz, old, FP32)
    f = conv_fields(x.shape, oc, (ih, iw), geom, res0_addr=Rz, opd0_addr=X, opd1_addr=Wt, opd2_addr=Bs,
                    res0_prec=prec(FP32), opd0_prec=prec(FP32), opd0_sign=1, opd1_sign=1, opd3_const=1, opd3_addr=0,
                    kernel_rotate=1, res_add=1, relu=1, tsk_lane_num=mask)
    sim, _ = run([rec("tiu", "CONV", "conv.normal", **f)], sim)
    got = get(sim, Rz, want.shape, FP32)
    keep = (np.arange(oc) % 64 == 5).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(np.where(keep, 0, got), np.where(keep, 0, want), rtol=2e-6, atol=1e-5)
    np.testing.assert_array_equal(got[:, 5], old[:, 5].astype(np.float32))


@pytest.mark.parametrize("kind", ["conv.wrq", "conv.wrqrelu"])
def test_conv_wrq_adds_the_bias_and_shifts_half_up(kind):
    rng = np.random.default_rng(4)
    x, w = rand(rng, (1, 9, 5, 5), I8), rand(rng, (10, 9, 3, 3), I8)
    geom = ((3, 3), (1, 1), (0, 0, 0, 0), (1, 1), (0, 0))
    acc = np.einsum("ncyxhw,ochw->noyx", windows(x.astype(np.float64), 3, 3, (1, 1), (1, 1)), w).astype(np.int64)
    bias, shift = -300, 7
    v = (acc + bias + (1 << (shift - 1))) >> shift
    if kind == "conv.wrqrelu":
        v = np.maximum(v, 0)
    want = sat(v, I8)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    put_weights(sim, 0x8000, w, I8)
    f = conv_fields(x.shape, 10, (3, 3), geom, res0_addr=0x10000, opd0_addr=0, opd1_addr=0x8000,
                    res0_prec=prec(I8), opd0_prec=prec(I8), opd0_sign=1, opd1_sign=1, opd2_const=1, opd2_sign=1,
                    opd2_addr=bias & 0xFFFF, opd3_const=1, opd3_addr=shift)
    sim, _ = run([rec("tiu", "sCONV", kind, **f)], sim)
    np.testing.assert_array_equal(get(sim, 0x10000, want.shape, I8), want)


def test_conv_refuses_sizes_that_disagree_and_other_pad_modes():
    geom = GEOMETRIES["yolo_1x1"]
    f = conv_fields((1, 4, 5, 5), 4, (5, 6), geom, res0_addr=0x1000, opd0_prec=prec(I8), res0_prec=prec(I32),
                    opd2_const=1, opd3_const=1)
    with pytest.raises(bmk.errors.SimulationError, match=r"res0_w must be 5"):
        run([rec("tiu", "sCONV", "conv.normal", **f)])
    with pytest.raises(bmk.errors.SimulationError, match="pad_mode must be 0"):
        run([rec("tiu", "sCONV", "conv.normal", **dict(f, res0_w=5, pad_mode=1))])


# -- PorD ---------------------------------------------------------------------------------------
def test_depthwise_like_the_yolo_focus_layer():
    """6x1 one-hot kernel (1, C, 6, 1) compact, stride (2, 1), pads (2, 0, 0, 0), uint8: each
    output row is an input row; bias and shift 0, as the golden stream."""
    rng = np.random.default_rng(5)
    c, ih, iw = 18, 13, 20
    x = rand(rng, (1, c, ih, iw), U8)
    k = np.zeros((1, c, 6, 1), np.int64)
    k[0, np.arange(c), np.arange(c) % 6, 0] = 1
    ext = extended(x, (2, 0, 0, 0), (0, 0), 0, 0)
    win = windows(ext, 6, 1, (2, 1), (1, 1))
    want = sat(np.einsum("ncyxhw,nchw->ncyx", win, k), U8)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, U8)
    put(sim, 0x8000, k, U8, (0, 6, 1, 1))
    f = dict(res0_n=1, res0_c=c, res0_h=want.shape[2], res0_w=iw, opd0_h=ih, opd0_w=iw, opd1_h=6, opd1_w=1,
             res_op_y_str=2, res_op_x_str=1, opd0_up_pad=2, res0_addr=0x10000, opd0_addr=0, opd1_addr=0x8000,
             res0_prec=prec(U8), opd0_prec=prec(U8), opd2_const=1, opd3_const=1)
    sim, _ = run([rec("tiu", "sPorD", "pord.depthwise", **f)], sim)
    np.testing.assert_array_equal(get(sim, 0x10000, want.shape, U8), want)


@pytest.mark.parametrize("mode", [0, 1, 5])
@pytest.mark.parametrize("kind", ["pord.depthwise", "pord.depthwiserelu"])
def test_depthwise_int8_with_bias_and_shift(kind, mode):
    rng = np.random.default_rng(6 + mode)
    c = 70
    x, k = rand(rng, (2, c, 6, 7), I8), rand(rng, (1, c, 3, 2), I8)
    bias = rng.integers(-5000, 5000, c)
    shift = 4
    ext = extended(x, (1, 0, 1, 1), (0, 0), -7, 0)
    acc = np.einsum("ncyxhw,nchw->ncyx", windows(ext, 3, 2, (1, 2), (1, 1)), k).astype(np.int64) + \
        bias.reshape(1, -1, 1, 1)
    v = np.vectorize(lambda t: round_shift(t, shift, mode))(acc)
    r_dt = I8
    if kind == "pord.depthwiserelu":
        v, r_dt = np.maximum(v, 0), U8
    want = sat(v, r_dt)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    put(sim, 0x8000, k, I8, (0, 6, 2, 1))
    put(sim, 0xC000, bias.reshape(1, c, 1, 1), I32, (0, 1, 1, 1))
    f = dict(res0_n=2, res0_c=c, res0_h=want.shape[2], res0_w=want.shape[3], opd0_h=6, opd0_w=7, opd1_h=3, opd1_w=2,
             res_op_y_str=1, res_op_x_str=2, opd0_up_pad=1, opd0_lf_pad=1, opd0_rt_pad=1, res0_addr=0x10000,
             opd0_addr=0, opd1_addr=0x8000, opd2_addr=0xC000, res0_prec=prec(r_dt), opd0_prec=prec(I8),
             opd0_sign=1, opd1_sign=1, opd2_sign=1, opd3_const=1, opd3_addr=(-7) & 0xFF, opd2_n_str=mode,
             res1_addr=shift)
    sim, _ = run([rec("tiu", "PorD", kind, **f, tsk_lane_num=(1 << 64) - 1)], sim)
    np.testing.assert_array_equal(get(sim, 0x10000, want.shape, r_dt), want)


@pytest.mark.parametrize("cls", ["PorD", "sPorD"])
def test_maxpool_5x5_pad_2_with_the_vendors_constant(cls):
    """The golden stream's SPPF max pool: (1, 256, 20, 20) int8, 5x5, pads 2, opd3 0x...8080."""
    rng = np.random.default_rng(7)
    x = rand(rng, (1, 256, 20, 20), I8)
    want = windows(extended(x, (2, 2, 2, 2), (0, 0), -128, -128), 5, 5, (1, 1), (1, 1)).max(axis=(4, 5))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    f = dict(res0_n=1, res0_c=256, res0_h=20, res0_w=20, opd0_h=20, opd0_w=20, opd1_h=5, opd1_w=5, res_op_y_str=1,
             res_op_x_str=1, opd0_up_pad=2, opd0_dn_pad=2, opd0_lf_pad=2, opd0_rt_pad=2, res0_addr=0x10000,
             opd0_addr=0, res0_prec=prec(I8), opd0_prec=prec(I8), opd0_sign=1, opd3_const=1, opd3_addr=3357339520)
    sim, _ = run([rec("tiu", cls, "pord.maxpooling", **f, tsk_lane_num=(1 << 64) - 1)], sim)
    np.testing.assert_array_equal(get(sim, 0x10000, want.shape, I8), want.astype(np.int64))


def test_avgpool_is_a_sum_times_the_constant_scale():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 70, 6, 6)).astype(np.float32).astype(np.float64)
    s = np.float32(1 / 9)
    want = (windows(x, 3, 3, (3, 3), (1, 1)).sum(axis=(4, 5)) * np.float64(s)).astype(np.float32)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, FP32)
    f = dict(res0_n=1, res0_c=70, res0_h=2, res0_w=2, opd0_h=6, opd0_w=6, opd1_h=3, opd1_w=3, res_op_y_str=3,
             res_op_x_str=3, res0_addr=0x10000, opd0_addr=0, res0_prec=prec(FP32), opd0_prec=prec(FP32),
             opd0_sign=1, opd1_const=1, opd1_addr=bits_of(float(s), FP32), opd3_const=1)
    sim, _ = run([rec("tiu", "sPorD", "pord.avgpooling", **f)], sim)
    np.testing.assert_allclose(get(sim, 0x10000, want.shape, FP32), want, rtol=1e-6)


@pytest.mark.parametrize("kind", ["pord.roiDepthwise", "pord.roiavgpooling", "pord.roimaxpooling"])
def test_roi_forms_pool_the_window_each_roi_places(kind):
    rng = np.random.default_rng(9)
    c, ih, iw, R_, kh, kw = 3, 8, 9, 5, 2, 3
    x = rand(rng, (1, c, ih, iw), I8)
    rois = np.array([[0, 0, 0, 0], [3, 4, 0, 0], [6, 7, 0, 0], [7, 8, 0, 0], [-1, 2, 0, 0]], np.int64)
    k = rand(rng, (1, c, kh, kw), I8)
    want = np.zeros((1, c, 1, R_), np.int64)
    for r, (y0, x0, _, _) in enumerate(rois):
        win = np.zeros((c, kh, kw), np.int64)
        for i in range(kh):
            for j in range(kw):
                if 0 <= y0 + i < ih and 0 <= x0 + j < iw:
                    win[:, i, j] = x[0, :, y0 + i, x0 + j]
        want[0, :, 0, r] = win.max(axis=(1, 2)) if kind == "pord.roimaxpooling" else \
            (win * (k[0] if kind == "pord.roiDepthwise" else 1)).sum(axis=(1, 2))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    put(sim, 0x4000, k, I8, (0, kh * kw, kw, 1))
    put(sim, 0x8000, rois.reshape(1, R_, 1, 4), I16, (0, 4, 4, 1))
    r_dt = I8 if kind == "pord.roimaxpooling" else I32
    f = dict(res0_n=1, res0_c=c, res0_h=1, res0_w=R_, opd0_h=ih, opd0_w=iw, opd1_h=kh, opd1_w=kw,
             res0_addr=0x10000, opd0_addr=0, opd1_addr=0x4000, opd3_addr=0x8000, res0_prec=prec(r_dt),
             opd0_prec=prec(I8), opd0_sign=1, opd1_sign=1)
    if kind == "pord.roiavgpooling":
        f.update(opd1_const=1, opd1_addr=1)
    sim, _ = run([rec("tiu", "sPorD", kind, **f)], sim)
    np.testing.assert_array_equal(get(sim, 0x10000, want.shape, r_dt), want)


# -- MM / MM2 -----------------------------------------------------------------------------------
def put_matrix(sim, addr, mat, per, dt):
    """An (R, J) matrix with `per` columns per channel: element (r, j) at n = r, channel j // per."""
    rows, cols = mat.shape
    chans = -(-cols // per)
    full = np.zeros((rows, chans * per), np.float64 if dt.is_float else np.int64)
    full[:, :cols] = mat
    put(sim, addr, full.reshape(rows, chans, 1, per), dt)


def get_matrix(sim, addr, rows, cols, per, dt):
    chans = -(-cols // per)
    return get(sim, addr, (rows, chans, 1, per), dt).reshape(rows, -1)[:, :cols]


@pytest.mark.parametrize("left_tran", [0, 1])
@pytest.mark.parametrize("cls", ["MM", "sMM"])
def test_mm_fp32_with_bias(cls, left_tran):
    rng = np.random.default_rng(10 + left_tran)
    M, K, N, w0, wr = 5, 70, 100, 16, 20
    a = rng.standard_normal((K, M) if left_tran else (M, K)).astype(np.float32).astype(np.float64)
    b = rng.standard_normal((K, N)).astype(np.float32).astype(np.float64)
    bias = rng.standard_normal((1, N)).astype(np.float32).astype(np.float64)
    stored_rows, stored_cols = a.shape
    want = ((a.T if left_tran else a) @ b + bias).astype(np.float32)
    sim = bmk.Simulator("bm1684x")
    put_matrix(sim, 0, a, w0, FP32)
    put_matrix(sim, 0x8000, b, wr, FP32)
    put_matrix(sim, 0x20000, bias, wr, FP32)
    c0 = -(-stored_cols // w0)
    f = dict(opd0_n=stored_rows, opd0_c=c0, opd0_w=w0, opd1_w=stored_cols - (c0 - 1) * w0, res0_c=-(-N // wr),
             res0_w=wr, res0_addr=0x30000, opd0_addr=0, opd1_addr=0x8000, opd2_addr=0x20000, res0_prec=prec(FP32),
             opd0_prec=prec(FP32), opd0_sign=1, opd1_sign=1, left_tran=left_tran)
    sim, _ = run([rec("tiu", cls, "mm.normal", **f)], sim)
    np.testing.assert_allclose(get_matrix(sim, 0x30000, want.shape[0], N, wr, FP32), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["mm.wrq", "mm.wrqrelu"])
def test_mm_wrq_int8(kind):
    rng = np.random.default_rng(12)
    M, K, N, w0, wr = 4, 30, 40, 8, 10
    a, b = rand(rng, (M, K), I8), rand(rng, (K, N), I8)
    bias = rng.integers(-1000, 1000, (1, N))
    mode, shift = 1, 6
    v = np.vectorize(lambda t: round_shift(t, shift, mode))(a @ b + bias)
    if kind == "mm.wrqrelu":
        v = np.maximum(v, 0)
    want = sat(v, I8)
    sim = bmk.Simulator("bm1684x")
    put_matrix(sim, 0, a, w0, I8)
    put_matrix(sim, 0x8000, b, wr, I8)
    put_matrix(sim, 0x20000, bias, wr, I16)
    c0 = -(-K // w0)
    f = dict(opd0_n=M, opd0_c=c0, opd0_w=w0, opd1_w=K - (c0 - 1) * w0, res0_c=N // wr, res0_w=wr, res0_addr=0x30000,
             opd0_addr=0, opd1_addr=0x8000, opd2_addr=0x20000, res0_prec=prec(I8), opd0_prec=prec(I8), opd0_sign=1,
             opd1_sign=1, opd2_sign=1, opd3_addr=shift, opd2_n_str=mode)
    sim, _ = run([rec("tiu", "MM", kind, **f, tsk_lane_num=(1 << 64) - 1)], sim)
    np.testing.assert_array_equal(get_matrix(sim, 0x30000, M, N, wr, I8), want)


def put_matrix2(sim, addr, mat, dt):
    put(sim, addr, mat.reshape(1, mat.shape[0], 1, mat.shape[1]), dt)


@pytest.mark.parametrize("kind", ["mm2.nn", "mm2.nt", "mm2.tt"])
@pytest.mark.parametrize("cls", ["MM2", "sMM2"])
def test_mm2_fp32(kind, cls):
    rng = np.random.default_rng(hash((kind, cls)) % 2**32)
    M, K, N = 6, 70, 9
    left = {"mm2.nn": (M, K), "mm2.nt": (M, K), "mm2.tt": (K, M)}[kind]
    right = (K, N) if kind == "mm2.nn" else (N, K)
    a = rng.standard_normal(left).astype(np.float32).astype(np.float64)
    b = rng.standard_normal(right).astype(np.float32).astype(np.float64)
    want = ((a.T if kind == "mm2.tt" else a) @ (b if kind == "mm2.nn" else b.T)).astype(np.float32)
    sim = bmk.Simulator("bm1684x")
    put_matrix2(sim, 0, a, FP32)
    put_matrix2(sim, 0x8000, b, FP32)
    f = dict(res0_c=M, res0_w=N, opd1_c=right[0], opd1_w=right[1], res0_addr=0x20000, opd0_addr=0,
             opd1_addr=0x8000, res0_prec=prec(FP32), opd0_prec=prec(FP32), opd0_sign=1, opd1_sign=1)
    sim, _ = run([rec("tiu", cls, kind, **f)], sim)
    np.testing.assert_allclose(get(sim, 0x20000, (1, M, 1, N), FP32).reshape(M, N), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["mm2.nn", "mm2.nt", "mm2.tt"])
def test_mm2_int8_zero_points(kind):
    """nn / nt: one zero point per output column (a (1, 64, 1, N) aligned row), taken from R;
    tt: one per output row ((1, M, 1, 1) compact), taken from L^T (mm.py)."""
    rng = np.random.default_rng(hash(kind) % 2**32)
    M, K, N = 5, 20, 7
    left = (K, M) if kind == "mm2.tt" else (M, K)
    right = (K, N) if kind == "mm2.nn" else (N, K)
    a, b = rand(rng, left, I8), rand(rng, right, I8)
    sim = bmk.Simulator("bm1684x")
    put_matrix2(sim, 0, a, I8)
    put_matrix2(sim, 0x8000, b, I8)
    L = a.T if kind == "mm2.tt" else a
    Rm = b if kind == "mm2.nn" else b.T
    if kind == "mm2.tt":
        zp = rng.integers(-5, 5, M)
        put(sim, 0x18000, zp.reshape(1, M, 1, 1), I8, (0, 1, 1, 1))
        want = (L - zp[:, None]) @ Rm
    else:
        zp = rng.integers(-5, 5, N)
        put(sim, 0x18000, zp.reshape(1, 1, 1, N), I8)
        want = L @ (Rm - zp[None, :])
    f = dict(res0_c=M, res0_w=N, opd1_c=right[0], opd1_w=right[1], res0_addr=0x20000, opd0_addr=0,
             opd1_addr=0x8000, opd2_addr=0x18000, res0_prec=prec(I32), opd0_prec=prec(I8), opd0_sign=1, opd1_sign=1)
    sim, _ = run([rec("tiu", "sMM2", kind, **f)], sim)
    np.testing.assert_array_equal(get(sim, 0x20000, (1, M, 1, N), I32).reshape(M, N), want)


def test_conv_and_matmul_work_is_bounded():
    geom = ((15, 15), (1, 1), (0, 0, 0, 0), (1, 1), (0, 0))
    f = conv_fields((1, 65535, 142, 142), 64, (128, 128), geom, opd0_prec=prec(I8), res0_prec=prec(I32),
                    opd2_const=1, opd3_const=1)
    with pytest.raises(bmk.errors.SimulationError, match="multiply-accumulate steps"):
        run([rec("tiu", "sCONV", "conv.normal", **f)])



def test_conv_int8_sums_past_2_24_stay_exact():
    """Large same-sign int8 data over 512 channels and 9 taps: sums near 2**27, every one exact
    (a float32 GEMM would round them: the data's bound must count the taps as well as the
    channels before float32 is taken)."""
    rng = np.random.default_rng(7)
    n, ic, ih, iw, oc = 1, 512, 5, 6, 4
    x, w = rng.integers(200, 256, (n, ic, ih, iw)), rng.integers(100, 128, (oc, ic, 3, 3))
    win = windows(extended(x, (0, 0, 0, 0), (0, 0), 0, 0), 3, 3, (1, 1), (1, 1))
    want = np.einsum("ncyxhw,ochw->noyx", win.astype(np.int64), w.astype(np.int64))
    assert want.max() > 1 << 26
    X, Wt, Rz = 0, 3 * LANE + 0x8000, 3 * LANE + 0x10000
    sim = bmk.Simulator("bm1684x")
    put(sim, X, x, U8)
    put_weights(sim, Wt, w, I8)
    f = conv_fields(x.shape, oc, want.shape[2:], ((3, 3), (1, 1), (0, 0, 0, 0), (1, 1), (0, 0)), res0_addr=Rz,
                    opd0_addr=X, opd1_addr=Wt, res0_prec=prec(I32),
                    opd0_prec=prec(I8), opd0_sign=0, opd1_sign=1, opd2_const=1, opd2_sign=1, opd2_addr=0,
                    opd3_const=1, opd3_addr=0)
    sim, report = run([rec("tiu", "CONV", "conv.normal", **f)], sim)
    np.testing.assert_array_equal(get(sim, Rz, want.shape, I32), want)
