"""tpu_depthwise with the weight "default strided" (seed 4.43), which includes the unaligned
layout tl_prealloc gives (issue 12, item 4): with C <= npu_num it is the aligned layout (same
bytes); with more channels its strides are written out (short_opd1_str 3). Against numpy."""
import numpy as np
import pytest

from bmk.bm1880 import shape_t4
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip

from .helpers import I8, U8, conv_ref, get, new, put, rand, run, sat
from .test_conv import put_bias

CHIP = load_chip("bm1880")


def depthwise(c, k, weight_aligned, fx=I8):
    rng = np.random.default_rng(c)
    ctx, sim = new()
    n, h, w = 2, 6, 7
    ho, wo = h - k[0] + 3, w - k[1] + 3           # pad 1 on every side, stride 1
    x_t = ctx.tl_prealloc_align(0, shape_t4(n, c, h, w), fx)
    w_t = (ctx.tl_prealloc_align if weight_aligned else ctx.tl_prealloc)(4096, shape_t4(1, c, *k), I8)
    b_t = ctx.tl_prealloc(6144, shape_t4(2, c, 1, 1), I8)
    o_t = ctx.tl_prealloc_align(8192, shape_t4(n, c, ho, wo), I8)
    x, wt, bias = rand(rng, (n, c, h, w), fx), rand(rng, (1, c, *k), I8), rng.integers(-2000, 2000, c)
    put(sim, x_t, x), put(sim, w_t, wt), put_bias(sim, b_t, bias)
    ctx.tpu_depthwise(ofmap=o_t, ifmap=x_t, weight=w_t, bias=b_t, pad_top=1, pad_bottom=1, pad_left=1,
                      pad_right=1, stride_h=1, stride_w=1, rshift_width=4)
    buf = ctx.acquire_cmdbuf()
    run(ctx, sim)
    ref = conv_ref(x, wt[0], bias=bias, pad=(1, 1, 1, 1), rshift_width=4, depthwise=True)
    np.testing.assert_array_equal(get(sim, o_t), sat(ref, True))
    (rec,) = decode_cmdbuf(CHIP, buf)
    return buf, rec.fields


@pytest.mark.parametrize("c, k", [(20, (3, 3)), (32, (2, 3))])
def test_unaligned_weight_with_one_channel_per_lane_is_the_aligned_layout(c, k):
    assert depthwise(c, k, weight_aligned=False)[0] == depthwise(c, k, weight_aligned=True)[0]


@pytest.mark.parametrize("c, k, fx", [(40, (3, 3), I8), (70, (2, 3), U8), (64, (5, 5), I8)])
def test_unaligned_weight_with_more_channels_than_lanes(c, k, fx):
    _, f = depthwise(c, k, weight_aligned=False, fx=fx)
    kk = k[0] * k[1]
    assert f["short_opd1_str"] == 3
    assert (f["opd1_n_str"], f["opd1_c_str"], f["opd1_h_str"], f["opd1_w_str"]) == (kk * -(-c // 32), kk, k[1], 1)
    depthwise(c, k, weight_aligned=True, fx=fx)     # the aligned weight keeps the v2 encoding and result
