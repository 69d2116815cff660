"""Convolution, winograd, depthwise and pooling (seed 4.41-4.45) through encode -> simulator."""
import numpy as np
import pytest

from bmk.bm1880 import shape_t4

from .helpers import I8, U8, conv_ref, get, new, pool_windows, put, rand, rshift, run, sat


def align16(x):
    return -(-x // 16) * 16


def put_weight(ctx, sim, w_t, w):
    """Conv weight (Cin, Cout, kh, kw) in its lmem layout (1, Cout, kh*kw, Cin) (seed 4.41)."""
    cin, cout, kh, kw = w.shape
    view = ctx.tl_prealloc(w_t.la, shape_t4(1, cout, kh * kw, cin), w_t.fmt)
    put(sim, view, np.ascontiguousarray(w.transpose(1, 2, 3, 0)).reshape(1, cout, kh * kw, cin))


def put_bias(sim, b_t, bias):
    u = np.asarray(bias, np.int64) & 0xFFFF
    put(sim, b_t, np.stack([u & 0xFF, u >> 8]).astype(np.uint8)[:, :, None, None])


def out_hw(h, w, k, ins=(0, 0), ins_last=(0, 0), pad=(0, 0, 0, 0), stride=(1, 1), dil=(1, 1)):
    hi = 1 + (h - 1) * (ins[0] + 1) + ins_last[0] + pad[0] + pad[1]
    wi = 1 + (w - 1) * (ins[1] + 1) + ins_last[1] + pad[2] + pad[3]
    return ((hi - ((k[0] - 1) * dil[0] + 1)) // stride[0] + 1, (wi - ((k[1] - 1) * dil[1] + 1)) // stride[1] + 1)


CONV_CASES = [
    # (N, Cin, H, W, Cout, (kh, kw), fmts x/w/b, ins, ins_last, pad, stride, dilation, bias, relu, rshift)
    (1, 16, 8, 8, 32, (3, 3), (I8, I8, I8), (0, 0), (0, 0), (0, 0, 0, 0), (1, 1), (1, 1), False, False, 6),
    (2, 3, 15, 15, 8, (3, 3), (I8, I8, I8), (0, 0), (0, 0), (1, 1, 1, 1), (2, 2), (1, 1), True, True, 8),
    (1, 4, 6, 6, 16, (3, 3), (U8, I8, I8), (1, 1), (0, 1), (0, 0, 0, 0), (1, 1), (2, 2), False, False, 4),
    (1, 6, 9, 7, 12, (2, 3), (U8, U8, U8), (0, 0), (0, 0), (2, 0, 1, 3), (1, 2), (1, 1), True, False, 5),
    (2, 40, 5, 5, 70, (1, 1), (I8, I8, I8), (0, 0), (0, 0), (0, 0, 0, 0), (1, 1), (1, 1), True, True, 7),
    (1, 5, 6, 5, 9, (2, 3), (I8, U8, I8), (2, 0), (1, 0), (0, 1, 2, 0), (2, 1), (3, 1), True, False, 3),
    (1, 8, 7, 7, 33, (3, 3), (I8, I8, I8), (0, 0), (0, 0), (1, 1, 1, 1), (1, 1), (1, 1), False, False, 0),
    (1, 16, 6, 6, 8, (3, 3), (U8, U8, U8), (0, 0), (0, 0), (1, 1, 1, 1), (1, 1), (1, 1), True, False, 0),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=range(len(CONV_CASES)))
def test_conv(case):
    n, cin, h, w, cout, k, (fx, fw, fb), ins, ins_last, pad, stride, dil, has_bias, relu, rsh = case
    rng = np.random.default_rng(100)
    ctx, sim = new()
    ho, wo = out_hw(h, w, k, ins, ins_last, pad, stride, dil)
    signed = I8 in (fx, fw) or (has_bias and fb == I8)
    fo = I8 if signed else U8
    x_t = ctx.tl_prealloc_align(0, shape_t4(n, cin, h, w), fx)
    w_la = align16(x_t.lane_bytes)
    w_t = ctx.tl_prealloc(w_la, shape_t4(cin, cout, *k), fw)
    b_la = align16(w_la + -(-cout // 32) * cin * k[0] * k[1])
    b_t = ctx.tl_prealloc(b_la, shape_t4(2, cout, 1, 1), fb)
    o_t = ctx.tl_prealloc_align(align16(b_la + 2 * -(-cout // 32)), shape_t4(n, cout, ho, wo), fo)
    x, wt = rand(rng, (n, cin, h, w), fx), rand(rng, (cin, cout, *k), fw)
    bias = rng.integers(-3000, 3000, cout) if fb == I8 else rng.integers(0, 6000, cout)
    put(sim, x_t, x), put_weight(ctx, sim, w_t, wt), put_bias(sim, b_t, bias)
    ctx.tpu_conv(ofmap=o_t, ifmap=x_t, weight=w_t, bias=b_t if has_bias else None, ins_h=ins[0], ins_w=ins[1],
                 ins_last_h=ins_last[0], ins_last_w=ins_last[1], pad_top=pad[0], pad_bottom=pad[1],
                 pad_left=pad[2], pad_right=pad[3], stride_h=stride[0], stride_w=stride[1],
                 dilation_h=dil[0], dilation_w=dil[1], relu_enable=relu, rshift_width=rsh)
    run(ctx, sim)
    ref = conv_ref(x, wt, bias=bias if has_bias else None, ins=ins, ins_last=ins_last, pad=pad, stride=stride,
                   dilation=dil, relu=relu, rshift_width=rsh)
    got = get(sim, o_t)
    np.testing.assert_array_equal(got, sat(ref, signed))
    if rsh == 0:   # saturation at both ends is exercised
        assert got.max() == (127 if signed else 255) and (not signed or got.min() == -128)


@pytest.mark.parametrize("pad,relu", [((0, 0, 0, 0), False), ((1, 1, 1, 1), True), ((1, 0, 0, 1), False)])
def test_winograd(pad, relu):
    rng = np.random.default_rng(101)
    ctx, sim = new()
    n, cin, h, w, cout = 1, 8, 6, 6, 16
    ho, wo = out_hw(h, w, (3, 3), pad=pad)
    x_t = ctx.tl_prealloc_align(0, shape_t4(n, cin, h, w), I8)
    w_t = ctx.tl_prealloc(1024, shape_t4(cin, cout, 3, 3), I8)
    b_t = ctx.tl_prealloc(2048, shape_t4(2, cout, 1, 1), I8)
    o_t = ctx.tl_prealloc_align(4096, shape_t4(n, cout, ho, wo), I8)
    x, wt, bias = rand(rng, (n, cin, h, w), I8), rand(rng, (cin, cout, 3, 3), I8), rng.integers(-900, 900, cout)
    put(sim, x_t, x), put_weight(ctx, sim, w_t, wt), put_bias(sim, b_t, bias)
    ctx.tpu_winograd(ofmap=o_t, ifmap=x_t, weight=w_t, bias=b_t, pad_top=pad[0], pad_bottom=pad[1],
                     pad_left=pad[2], pad_right=pad[3], relu_enable=relu, rshift_width=6)
    run(ctx, sim)
    ref = conv_ref(x, wt, bias=bias, pad=pad, relu=relu, rshift_width=6)
    np.testing.assert_array_equal(get(sim, o_t), sat(ref, True))


DW_CASES = [
    # N, C, H, W, (kh, kw), fmts x/w/b/o, ins, ins_last, pad, stride, bias, rshift
    (1, 32, 10, 10, (3, 3), (I8, I8, I8, I8), (0, 0), (0, 0), (1, 1, 1, 1), (1, 1), True, 5),
    (2, 40, 7, 9, (2, 3), (U8, I8, I8, I8), (1, 1), (1, 0), (0, 0, 1, 2), (2, 1), True, 3),
    (1, 20, 8, 8, (3, 3), (U8, I8, I8, I8), (0, 0), (0, 0), (0, 1, 0, 1), (2, 2), True, 4),
    (1, 64, 5, 5, (3, 3), (I8, I8, I8, I8), (0, 0), (0, 0), (1, 1, 1, 1), (1, 1), False, 0),
]


@pytest.mark.parametrize("case", DW_CASES, ids=range(len(DW_CASES)))
def test_depthwise(case):
    n, c, h, w, k, (fx, fw, fb, fo), ins, ins_last, pad, stride, has_bias, rsh = case
    rng = np.random.default_rng(102)
    ctx, sim = new()
    ho, wo = out_hw(h, w, k, ins, ins_last, pad, stride)
    x_t = ctx.tl_prealloc_align(0, shape_t4(n, c, h, w), fx)
    w_t = ctx.tl_prealloc_align(4096, shape_t4(1, c, *k), fw)
    b_t = ctx.tl_prealloc(6144, shape_t4(2, c, 1, 1), fb)
    o_t = ctx.tl_prealloc_align(8192, shape_t4(n, c, ho, wo), fo)
    x, wt = rand(rng, (n, c, h, w), fx), rand(rng, (1, c, *k), fw)
    bias = rng.integers(-2000, 2000, c)
    put(sim, x_t, x), put(sim, w_t, wt), put_bias(sim, b_t, bias)
    ctx.tpu_depthwise(ofmap=o_t, ifmap=x_t, weight=w_t, bias=b_t if has_bias else None, ins_h=ins[0],
                      ins_w=ins[1], ins_last_h=ins_last[0], ins_last_w=ins_last[1], pad_top=pad[0],
                      pad_bottom=pad[1], pad_left=pad[2], pad_right=pad[3], stride_h=stride[0],
                      stride_w=stride[1], rshift_width=rsh)
    run(ctx, sim)
    ref = conv_ref(x, wt[0], bias=bias if has_bias else None, ins=ins, ins_last=ins_last, pad=pad, stride=stride,
                   rshift_width=rsh, depthwise=True)
    np.testing.assert_array_equal(get(sim, o_t), sat(ref, fo == I8))


POOL_CASES = [
    # N, C, H, W, (kh, kw), fmt, pad, stride
    (1, 32, 8, 8, (2, 2), I8, (0, 0, 0, 0), (2, 2)),
    (2, 20, 9, 9, (3, 3), U8, (1, 1, 1, 1), (1, 1)),
    (1, 40, 7, 6, (3, 2), I8, (2, 0, 1, 1), (2, 1)),
    (1, 70, 5, 5, (5, 5), U8, (0, 0, 0, 0), (1, 1)),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=range(len(POOL_CASES)))
def test_max_pooling(case):
    n, c, h, w, k, fmt, pad, stride = case
    rng = np.random.default_rng(103)
    ctx, sim = new()
    ho, wo = out_hw(h, w, k, pad=pad, stride=stride)
    x_t = ctx.tl_prealloc_align(0, shape_t4(n, c, h, w), fmt)
    o_t = ctx.tl_prealloc_align(8192, shape_t4(n, c, ho, wo), fmt)
    x = rand(rng, (n, c, h, w), fmt)
    put(sim, x_t, x)
    ctx.tpu_max_pooling(ofmap=o_t, ifmap=x_t, kh=k[0], kw=k[1], pad_top=pad[0], pad_bottom=pad[1],
                        pad_left=pad[2], pad_right=pad[3], stride_h=stride[0], stride_w=stride[1])
    run(ctx, sim)
    ref = pool_windows(x, *k, pad=pad, stride=stride, fill=-128 if fmt == I8 else 0).max(axis=-1)
    np.testing.assert_array_equal(get(sim, o_t), ref)


AVG_CASES = [
    # N, C, H, W, (kh, kw), fmt, ins, ins_last, pad, stride, const, rshift
    (1, 32, 8, 8, (2, 2), I8, (0, 0), (0, 0), (0, 0, 0, 0), (2, 2), 64, 8),
    (1, 40, 5, 5, (3, 3), U8, (1, 1), (0, 0), (1, 1, 1, 1), (2, 2), 28, 8),
    (2, 20, 6, 7, (3, 2), I8, (0, 1), (1, 1), (1, 0, 2, 0), (1, 2), 200, 4),
    (1, 33, 4, 4, (2, 2), U8, (0, 0), (0, 0), (0, 0, 0, 0), (1, 1), 255, 0),
]


@pytest.mark.parametrize("case", AVG_CASES, ids=range(len(AVG_CASES)))
def test_avg_pooling(case):
    n, c, h, w, k, fmt, ins, ins_last, pad, stride, const, rsh = case
    rng = np.random.default_rng(104)
    ctx, sim = new()
    ho, wo = out_hw(h, w, k, ins, ins_last, pad, stride)
    x_t = ctx.tl_prealloc_align(0, shape_t4(n, c, h, w), fmt)
    o_t = ctx.tl_prealloc_align(8192, shape_t4(n, c, ho, wo), fmt)
    x = rand(rng, (n, c, h, w), fmt)
    put(sim, x_t, x)
    ctx.tpu_avg_pooling(ofmap=o_t, ifmap=x_t, kh=k[0], kw=k[1], ins_h=ins[0], ins_w=ins[1], ins_last_h=ins_last[0],
                        ins_last_w=ins_last[1], pad_top=pad[0], pad_bottom=pad[1], pad_left=pad[2],
                        pad_right=pad[3], stride_h=stride[0], stride_w=stride[1], avg_pooling_const=const,
                        rshift_width=rsh)
    run(ctx, sim)
    ref = rshift(pool_windows(x, *k, ins=ins, ins_last=ins_last, pad=pad, stride=stride).sum(axis=-1) * const, rsh)
    np.testing.assert_array_equal(get(sim, o_t), sat(ref, fmt == I8))
