"""Bad arguments of mdsum, lut, conv, winograd, depthwise, pooling and matrix_mac(_2) raise
ArgumentError with the standard message, and leave the command buffer unchanged."""
import re

import pytest

import bmk
from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, CTRL_RA, CTRL_RELU, FMT_I8, FMT_U8, shape_t2, shape_t4


@pytest.fixture
def ctx():
    c = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    # One good op first, so "unchanged" means more than "still empty".
    a = c.tl_prealloc_align(0, shape_t4(1, 32, 4, 4), FMT_I8)
    r = c.tl_prealloc(1024, shape_t4(1, 32, 1, 1), FMT_I8)
    c.tpu_mdsum(res_low=r, a=a)
    return c


def rejected(ctx, call, message, **fields):
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match="^" + re.escape(message) + "$"):
        getattr(ctx, call)(**fields)
    assert ctx.acquire_cmdbuf() == before


def t4(ctx, la, dims, fmt=FMT_I8, aligned=True):
    make = ctx.tl_prealloc_align if aligned else ctx.tl_prealloc
    return make(la, shape_t4(*dims), fmt)


def t2(ctx, la, dims, fmt=FMT_I8, aligned=True):
    make = ctx.tl_prealloc_align if aligned else ctx.tl_prealloc
    return make(la, shape_t2(*dims), fmt)


# -- tpu_mdsum --------------------------------------------------------------------------------------
def test_mdsum(ctx):
    a = t4(ctx, 0, (2, 32, 4, 4), aligned=False)
    r = t4(ctx, 1024, (1, 32, 1, 1), aligned=False)
    rejected(ctx, "tpu_mdsum", "tpu_mdsum: res_low.shape must be (1, 32, 1, 1) (one sum per channel of a), "
             "not shape_t4(1, 16, 1, 1)", res_low=t4(ctx, 1024, (1, 16, 1, 1), aligned=False), a=a)
    rejected(ctx, "tpu_mdsum", "tpu_mdsum: res_low.fmt must be as signed as a (FMT_I8), not 'FMT_U8'",
             res_low=t4(ctx, 1024, (1, 32, 1, 1), FMT_U8, aligned=False), a=a)
    rejected(ctx, "tpu_mdsum", "tpu_mdsum: res_high.la must be above res_low.la (0x400) by at most 0xffff, not 1000",
             res_high=t4(ctx, 1000, (1, 32, 1, 1), aligned=False), res_low=r, a=a)
    big = t4(ctx, 0, (2, 40, 4, 4), aligned=False)
    rejected(ctx, "tpu_mdsum", "tpu_mdsum: res_high.la must be at least res_low.la + 32 = 0x420 (the planes must "
             "not overlap), not 1040", res_high=t4(ctx, 1040, (1, 40, 1, 1)), res_low=t4(ctx, 1024, (1, 40, 1, 1)),
             a=big)
    rejected(ctx, "tpu_mdsum", "tpu_mdsum: a must be a TensorLmem (not NULL), not None", res_low=r)


# -- tpu_lut ----------------------------------------------------------------------------------------
def test_lut(ctx):
    idx = t4(ctx, 256, (1, 32, 8, 8))
    table = t4(ctx, 4096, (1, 32, 16, 16))
    res = t4(ctx, 2048, (1, 32, 8, 8))
    rejected(ctx, "tpu_lut", "tpu_lut: table.shape must be (1, 32, 16, 16) (one 256-entry table per lmem slice), "
             "not shape_t4(1, 16, 16, 16)", ofmap=res, ifmap=idx, table=t4(ctx, 4096, (1, 16, 16, 16)))
    rejected(ctx, "tpu_lut", "tpu_lut: ifmap must be aligned (tl_prealloc_align / CTRL_AL), not "
             "TensorLmem(la=0x100, shape=shape_t4(1, 32, 8, 8), fmt=FMT_I8, aligned=False)",
             ofmap=res, ifmap=t4(ctx, 256, (1, 32, 8, 8), aligned=False), table=table)
    rejected(ctx, "tpu_lut", "tpu_lut: ofmap.la must be a multiple of 16, not 2056",
             ofmap=t4(ctx, 2056, (1, 32, 8, 8)), ifmap=idx, table=table)
    rejected(ctx, "tpu_lut", "tpu_lut: ofmap.shape must be the shape of ifmap shape_t4(1, 32, 8, 8), not "
             "shape_t4(1, 32, 4, 8)", ofmap=t4(ctx, 2048, (1, 32, 4, 8)), ifmap=idx, table=table)


# -- tpu_conv / tpu_winograd --------------------------------------------------------------------------
CONV_OK = dict(stride_h=1, stride_w=1, dilation_h=1, dilation_w=1, rshift_width=6)


@pytest.fixture
def conv(ctx):
    return dict(ifmap=t4(ctx, 0, (1, 16, 8, 8)), weight=t4(ctx, 2048, (16, 32, 3, 3), aligned=False),
                ofmap=t4(ctx, 4096, (1, 32, 6, 6)))


def test_conv_window(ctx, conv):
    rejected(ctx, "tpu_conv", "tpu_conv: stride_h must be an integer in [1, 15], not 0",
             **conv, **{**CONV_OK, "stride_h": 0})
    rejected(ctx, "tpu_conv", "tpu_conv: dilation_w must be an integer in [1, 16], not 0",
             **conv, **{**CONV_OK, "dilation_w": 0})
    rejected(ctx, "tpu_conv", "tpu_conv: pad_left must be an integer in [0, 15], not 16",
             **conv, **{**CONV_OK, "pad_left": 16})
    rejected(ctx, "tpu_conv", "tpu_conv: ofmap.shape must be of H, W = (8, 8) for this ifmap, kernel and window, "
             "not shape_t4(1, 32, 6, 6)", **conv, **{**CONV_OK, "pad_top": 1, "pad_bottom": 1,
                                                    "pad_left": 1, "pad_right": 1})
    rejected(ctx, "tpu_conv", "tpu_conv: rshift_width must be an integer in [0, 31], not 32",
             **conv, **{**CONV_OK, "rshift_width": 32})


def test_conv_tensors(ctx, conv):
    rejected(ctx, "tpu_conv", "tpu_conv: ifmap must be aligned (tl_prealloc_align / CTRL_AL), not "
             "TensorLmem(la=0x0, shape=shape_t4(1, 16, 8, 8), fmt=FMT_I8, aligned=False)",
             **{**conv, "ifmap": t4(ctx, 0, (1, 16, 8, 8), aligned=False)}, **CONV_OK)
    rejected(ctx, "tpu_conv", "tpu_conv: ifmap.la must be a multiple of 16, not 8",
             **{**conv, "ifmap": t4(ctx, 8, (1, 16, 8, 8))}, **CONV_OK)
    rejected(ctx, "tpu_conv", "tpu_conv: weight.shape must be (Cin, Cout, kh, kw) = (16, 32, kh, kw) (C of ifmap, "
             "C of ofmap), not shape_t4(32, 16, 3, 3)",
             **{**conv, "weight": t4(ctx, 2048, (32, 16, 3, 3), aligned=False)}, **CONV_OK)
    rejected(ctx, "tpu_conv", "tpu_conv: bias must be unaligned, not "
             "TensorLmem(la=0x1800, shape=shape_t4(2, 32, 1, 1), fmt=FMT_I8, aligned=True)",
             **conv, bias=t4(ctx, 6144, (2, 32, 1, 1)), **CONV_OK)
    rejected(ctx, "tpu_conv", "tpu_conv: bias.shape must be (2, 32, 1, 1) (16-bit, one value per ofmap channel), "
             "not shape_t4(1, 32, 1, 1)", **conv, bias=t4(ctx, 6144, (1, 32, 1, 1), aligned=False), **CONV_OK)
    rejected(ctx, "tpu_conv", "tpu_conv: weight must be a tensor (shape_t4), not "
             "TensorLmem(la=0x800, shape=shape_t2(16, 32), fmt=FMT_I8, aligned=False)",
             **{**conv, "weight": t2(ctx, 2048, (16, 32), aligned=False)}, **CONV_OK)


def test_winograd(ctx, conv):
    pads = dict(pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
    rejected(ctx, "tpu_winograd", "tpu_winograd: weight.shape must be (16, 32, 3, 3) (winograd takes 3x3 kernels "
             "only), not shape_t4(16, 32, 5, 5)",
             **{**conv, "weight": t4(ctx, 2048, (16, 32, 5, 5), aligned=False)}, **pads)
    rejected(ctx, "tpu_winograd", "tpu_winograd: ofmap.shape must be of H, W = (6, 6) for this ifmap, kernel and "
             "window, not shape_t4(1, 32, 8, 8)", **{**conv, "ofmap": t4(ctx, 4096, (1, 32, 8, 8))})
    rejected(ctx, "tpu_winograd", "tpu_winograd: relu_enable must be a bool, not 2", **conv, relu_enable=2)
    ctx.tpu_winograd(**{**conv, "ofmap": t4(ctx, 4096, (1, 32, 8, 8))}, **pads)   # and a good one


# -- tpu_depthwise ----------------------------------------------------------------------------------
def test_depthwise(ctx):
    ifmap, ofmap = t4(ctx, 0, (1, 32, 10, 10)), t4(ctx, 2048, (1, 32, 8, 8))
    ok = dict(ofmap=ofmap, ifmap=ifmap, weight=t4(ctx, 1024, (1, 32, 3, 3)), stride_h=1, stride_w=1)
    rejected(ctx, "tpu_depthwise", "tpu_depthwise: weight.fmt must be FMT_I8 (bm1880 depthwise weights are "
             "signed), not 'FMT_U8'", **{**ok, "weight": t4(ctx, 1024, (1, 32, 3, 3), FMT_U8)})
    rejected(ctx, "tpu_depthwise", "tpu_depthwise: weight.shape must be (1, 32, kh, kw) (one kernel per channel "
             "of ifmap), not shape_t4(2, 32, 3, 3)", **{**ok, "weight": t4(ctx, 1024, (2, 32, 3, 3))})
    rejected(ctx, "tpu_depthwise", "tpu_depthwise: ofmap.shape must be of C = 32 (the C of ifmap), not "
             "shape_t4(1, 16, 8, 8)", **{**ok, "ofmap": t4(ctx, 2048, (1, 16, 8, 8))})
    rejected(ctx, "tpu_depthwise", "tpu_depthwise: bias.shape must be (2, 32, 1, 1) (16-bit, one value per "
             "channel), not shape_t4(2, 16, 1, 1)", **ok, bias=t4(ctx, 1280, (2, 16, 1, 1), aligned=False))
    rejected(ctx, "tpu_depthwise", "tpu_depthwise: stride_w must be an integer in [1, 15], not 0",
             **{**ok, "stride_w": 0})


# -- tpu_max_pooling / tpu_avg_pooling ----------------------------------------------------------------
@pytest.fixture
def pool(ctx):
    return dict(ifmap=t4(ctx, 0, (1, 32, 8, 8)), ofmap=t4(ctx, 1024, (1, 32, 4, 4)), kh=2, kw=2,
                stride_h=2, stride_w=2)


def test_max_pooling(ctx, pool):
    rejected(ctx, "tpu_max_pooling", "tpu_max_pooling: kh must be an integer in [1, 255], not 0",
             **{**pool, "kh": 0})
    rejected(ctx, "tpu_max_pooling", "tpu_max_pooling: ofmap.fmt must be as signed as ifmap (FMT_I8), not 'FMT_U8'",
             **{**pool, "ofmap": t4(ctx, 1024, (1, 32, 4, 4), FMT_U8)})
    rejected(ctx, "tpu_max_pooling", "tpu_max_pooling: ofmap must be aligned (tl_prealloc_align / CTRL_AL), not "
             "TensorLmem(la=0x400, shape=shape_t4(1, 32, 4, 4), fmt=FMT_I8, aligned=False)",
             **{**pool, "ofmap": t4(ctx, 1024, (1, 32, 4, 4), aligned=False)})
    rejected(ctx, "tpu_max_pooling", "tpu_max_pooling: ofmap.shape must be of N = 1 (the N of ifmap), not "
             "shape_t4(2, 32, 4, 4)", **{**pool, "ofmap": t4(ctx, 1024, (2, 32, 4, 4))})
    rejected(ctx, "tpu_max_pooling", "tpu_max_pooling: ifmap.shape must be at least as high as the kernel "
             "(9 rows, after insertion, padding and dilation), not shape_t4(1, 32, 8, 8)", **{**pool, "kh": 9})


def test_avg_pooling(ctx, pool):
    ok = dict(pool, avg_pooling_const=64, rshift_width=8)
    rejected(ctx, "tpu_avg_pooling", "tpu_avg_pooling: avg_pooling_const must be an integer in [0, 255], not 256",
             **{**ok, "avg_pooling_const": 256})
    rejected(ctx, "tpu_avg_pooling", "tpu_avg_pooling: rshift_width must be an integer in [0, 31], not -1",
             **{**ok, "rshift_width": -1})
    rejected(ctx, "tpu_avg_pooling", "tpu_avg_pooling: ins_last_w must be an integer in [0, 15], not 16",
             **{**ok, "ins_last_w": 16})
    rejected(ctx, "tpu_avg_pooling", "tpu_avg_pooling: ofmap.shape must be of H, W = (7, 7) for this ifmap, "
             "kernel and window, not shape_t4(1, 32, 4, 4)", **{**ok, "stride_h": 1, "stride_w": 1})


# -- tpu_matrix_mac / tpu_matrix_mac_2 ------------------------------------------------------------------
@pytest.fixture
def mm(ctx):
    return dict(left=t2(ctx, 0, (4, 20)), right=t2(ctx, 64, (20, 40)), bias=t2(ctx, 384, (2, 40)),
                res=t2(ctx, 416, (4, 40)), rshift_width=4, res_is_int8=True, ctrls=CTRL_NULL)


def test_matrix_mac(ctx, mm):
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: ctrls must be one of CTRL_NULL | CTRL_RA | CTRL_RELU, not 260",
             **{**mm, "ctrls": CTRL_RA | CTRL_RELU})
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: res.shape must be (8, 40) (2 x the rows of left: a 16-bit "
             "res is two 8-bit planes, the columns of right), not shape_t2(4, 40)", **{**mm, "ctrls": CTRL_RA})
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: right.shape must be of 20 rows (the columns of left), not "
             "shape_t2(21, 40)", **{**mm, "right": t2(ctx, 64, (21, 40))})
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: bias.shape must be (2, 40) (a 16-bit (1, 40) matrix as two "
             "planes), not shape_t2(1, 40)", **{**mm, "bias": t2(ctx, 384, (1, 40))})
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: left must be aligned (tl_prealloc_align / CTRL_AL), not "
             "TensorLmem(la=0x0, shape=shape_t2(4, 20), fmt=FMT_I8, aligned=False)",
             **{**mm, "left": t2(ctx, 0, (4, 20), aligned=False)})
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: right must be a matrix (shape_t2), not "
             "TensorLmem(la=0x40, shape=shape_t4(20, 3, 1, 16), fmt=FMT_I8, aligned=True)",
             **{**mm, "right": t4(ctx, 64, (20, 3, 1, 16))})
    rejected(ctx, "tpu_matrix_mac", "tpu_matrix_mac: lshift_width must be an integer in [0, 31], not 32",
             **{**mm, "lshift_width": 32})


def test_matrix_mac_2(ctx):
    ok = dict(res=t4(ctx, 16384, (1, 256, 1, 256)), left=t4(ctx, 0, (1, 256, 1, 256)),
              right=t4(ctx, 8192, (256, 16, 1, 16)))
    rejected(ctx, "tpu_matrix_mac_2", "tpu_matrix_mac_2: left.shape must be (1, 256, 1, 256), not "
             "shape_t4(1, 128, 1, 256)", **{**ok, "left": t4(ctx, 0, (1, 128, 1, 256))})
    rejected(ctx, "tpu_matrix_mac_2", "tpu_matrix_mac_2: right.shape must be (256, 16, 1, 16), not "
             "shape_t4(16, 16, 1, 256)", **{**ok, "right": t4(ctx, 8192, (16, 16, 1, 256))})
    rejected(ctx, "tpu_matrix_mac_2", "tpu_matrix_mac_2: res.la must be at most 0x7000 (the FC lowering uses "
             "4096 bytes per lane from la), not 29696", **{**ok, "res": t4(ctx, 29696, (1, 256, 1, 256))})
    rejected(ctx, "tpu_matrix_mac_2", "tpu_matrix_mac_2: right must be a TensorLmem (not NULL), not None",
             **{**ok, "right": None})
    ctx.tpu_matrix_mac_2(**ok)   # and a good one


