"""Checks of the FP32 Neural Network functions (seed 003 "FP32 Neural Network Functions").

Every remark of the seed is a rule here (addresses, NPUs, shape and window ranges, layouts);
"preferred to be divisible by 128" is advice, not a rule. Implied rules: output_c is a channel
count ([1, 4095]), kernels are at least 1 and fit the padded input (output_h, output_w >= 1),
and every tensor fits its NPU's local memory. The pooling remarks repeat the shapes of a
weight and a bias tensor that the pooling functions do not have; they are not checked.
A `bias_addr` that the call does not use (using_bias false) is not checked (API.md).
"""
from bmk.bm1684 import geometry as g
from bmk.bm1684.checks import common as c
from bmk.bm1684.types import Padding, dim2, dim4
from bmk.errors import ArgumentError, must
from bmk.templates import as_int

WINDOW_MAX = 2047                                 # input h/w, padded input and output h/w
WINDOW_SHAPE_MAX = dim4(65535, 4095, WINDOW_MAX, WINDOW_MAX)
PAD_MAX = STRIDE_MAX = DILATION_MAX = 15


# -- element-wise functions --------------------------------------------------------------------
def _elementwise(call, r, **per_channel):
    """dst/src fp32 tensors (and per-channel [1, C, 1, 1] compact tensors) on the same NPU."""
    dst = c.local_addr(call, "dst_addr", r.dst_addr)
    src = c.local_addr(call, "src_addr", r.src_addr)
    chans = {name: c.local_addr(call, name, addr) for name, addr in per_channel.items()}
    shape = c.shape(call, r.shape)
    dst_stride = c.stride(call, "dst_stride", r.dst_stride)
    src_stride = c.stride(call, "src_stride", r.src_stride)
    c.same_npu(call, dst_addr=dst, src_addr=src, **chans)
    c.fits_local(call, "dst_addr", dst, shape, dst_stride)
    c.fits_local(call, "src_addr", src, shape, src_stride)
    for name, addr in chans.items():
        _fits_compact(call, name, addr, g.per_channel_shape(shape.c))


def _fits_compact(call, name, addr, shape, itemsize=4):
    stride = dim4(*c.chip_layout.compact_stride(shape, c.layout.npu_num(), c.npu(addr)))
    c.fits_local(call, name, addr, shape, stride, itemsize=itemsize)


def bdc_relu(ctx, r, call="bdc_relu"):
    """Remarks: fp32; same start NPU; addresses divisible by 4; shape ranges; NULL stride =
    128-byte aligned layout."""
    _elementwise(call, r)


def bdc_bias(ctx, r, call="bdc_bias"):
    """Remarks: as relu, and the [1, C, 1, 1] compact bias tensor on the same NPU, divisible by 4."""
    _elementwise(call, r, bias_addr=r.bias_addr)


def bdc_scale(ctx, r, call="bdc_scale"):
    """Remarks: as relu, and the [1, C, 1, 1] compact scale tensor on the same NPU, divisible by 4."""
    _elementwise(call, r, scale_addr=r.scale_addr)


def bdc_scale_bias(ctx, r, call="bdc_scale_bias"):
    """Remarks: as relu, and the compact scale and bias tensors on the same NPU, divisible by 4."""
    _elementwise(call, r, scale_addr=r.scale_addr, bias_addr=r.bias_addr)


# -- window arguments --------------------------------------------------------------------------
def _tuple(call, name, value, kind, fields):
    try:
        values = tuple(value)
    except TypeError:
        values = None
    if values is None or len(values) != len(fields):
        raise ArgumentError(must(call, name, f"a {kind} ({', '.join(fields)}) or None", value))
    return values


def padding(call, value):
    """None (no paddings) or a Padding whose four sides are in [0, 15]."""
    if value is None:
        return g.NO_PADDING
    values = _tuple(call, "padding", value, "Padding", Padding._fields)
    return Padding(*(c.integer(call, f"padding->{f}", v, 0, PAD_MAX) for f, v in zip(Padding._fields, values)))


def pair(call, name, value, hi):
    """None (one) or a dim2 whose h and w are in [1, hi] (stride, dilation)."""
    if value is None:
        return g.ONE
    values = _tuple(call, name, value, "dim2", dim2._fields)
    return dim2(*(c.integer(call, f"{name}->{f}", v, 1, hi) for f, v in zip(dim2._fields, values)))


def window(call, shape, kernel_h, kernel_w, pad, stride, dilation=g.ONE):
    """The remarks shared by conv2d, depthwise2d and the pooling functions; returns (oh, ow)."""
    kh = c.integer(call, "kernel_h", kernel_h, 1, WINDOW_MAX)
    kw = c.integer(call, "kernel_w", kernel_w, 1, WINDOW_MAX)
    for side, size, p0, p1 in (("h", shape.h, pad.top, pad.bottom), ("w", shape.w, pad.left, pad.right)):
        if size + p0 + p1 > WINDOW_MAX:
            names = "padding->top + padding->bottom" if side == "h" else "padding->left + padding->right"
            raise ArgumentError(must(call, f"input_shape->{side} + {names}", f"at most {WINDOW_MAX}",
                                     size + p0 + p1))
    oh, ow = g.output_hw(shape.h, shape.w, kh, kw, pad, stride, dilation)
    for side, out, k, d in (("h", oh, kh, dilation.h), ("w", ow, kw, dilation.w)):
        if out < 1:
            raise ArgumentError(must(call, f"kernel_{side}", f"a kernel whose extent (kernel_{side} - 1) * "
                                     f"dilation->{side} + 1 = {(k - 1) * d + 1} fits the padded input "
                                     f"(output_{side} >= 1)", k))
    # output_h, output_w <= 2047 (a remark) follow: output <= padded input - extent + 1 <= 2047.
    return oh, ow


def _window_shape(call, value):
    return c.shape(call, value, "input_shape", WINDOW_SHAPE_MAX)


# -- convolution and pooling -------------------------------------------------------------------
def bdc_conv2d(ctx, r, call="bdc_conv2d"):
    """Remarks: output (aligned) divisible by 128, input/weight/bias by 4; output, weight and
    bias on the same NPU; input n/c/h/w ranges, h/w in [1, 2047]; padded input and output
    h/w at most 2047; padding [0, 15], stride and dilation [1, 15]; 2IC weight; compact bias."""
    out = c.local_addr(call, "output_addr", r.output_addr, align=128)
    inp = c.local_addr(call, "input_addr", r.input_addr)
    weight = c.local_addr(call, "weight_addr", r.weight_addr)
    using_bias = c.flag(call, "using_bias", r.using_bias)
    c.flag(call, "result_add", r.result_add)
    bias = c.local_addr(call, "bias_addr", r.bias_addr) if using_bias else None
    shape = _window_shape(call, r.input_shape)
    oc = c.integer(call, "output_c", r.output_c, 1, c.SHAPE_MAX.c)
    input_stride = c.stride(call, "input_stride", r.input_stride)
    kernel_stride = c.stride(call, "kernel_stride", r.kernel_stride)
    pad = padding(call, r.padding)
    stride = pair(call, "stride", r.stride, STRIDE_MAX)
    dilation = pair(call, "dilation", r.dilation, DILATION_MAX)
    oh, ow = window(call, shape, r.kernel_h, r.kernel_w, pad, stride, dilation)
    kh, kw = as_int(r.kernel_h), as_int(r.kernel_w)
    c.same_npu(call, output_addr=out, weight_addr=weight, **({"bias_addr": bias} if using_bias else {}))
    c.fits_local(call, "output_addr", out, dim4(shape.n, oc, oh, ow), None)
    c.fits_local(call, "input_addr", inp, shape, input_stride)
    wshape = g.conv_weight_shape(shape.c, oc, kh, kw)
    if kernel_stride is None:
        _fits_compact(call, "weight_addr", weight, wshape, g.PAIR_BYTES)
    else:
        c.fits_local(call, "weight_addr", weight, wshape, kernel_stride, itemsize=g.PAIR_BYTES)
    if using_bias:
        _fits_compact(call, "bias_addr", bias, g.per_channel_shape(oc))


def bdc_depthwise2d(ctx, r, call="bdc_depthwise2d"):
    """Remarks: output and input (aligned) divisible by 128, weight and bias (compact) by 4; all
    on the same NPU; the window remarks of conv2d."""
    out = c.local_addr(call, "output_addr", r.output_addr, align=128)
    inp = c.local_addr(call, "input_addr", r.input_addr, align=128)
    weight = c.local_addr(call, "weight_addr", r.weight_addr)
    using_bias = c.flag(call, "using_bias", r.using_bias)
    bias = c.local_addr(call, "bias_addr", r.bias_addr) if using_bias else None
    shape = _window_shape(call, r.input_shape)
    pad = padding(call, r.padding)
    stride = pair(call, "stride", r.stride, STRIDE_MAX)
    dilation = pair(call, "dilation", r.dilation, DILATION_MAX)
    oh, ow = window(call, shape, r.kernel_h, r.kernel_w, pad, stride, dilation)
    c.same_npu(call, output_addr=out, input_addr=inp, weight_addr=weight,
               **({"bias_addr": bias} if using_bias else {}))
    c.fits_local(call, "output_addr", out, dim4(shape.n, shape.c, oh, ow), None)
    c.fits_local(call, "input_addr", inp, shape, None)
    _fits_compact(call, "weight_addr", weight, dim4(1, shape.c, as_int(r.kernel_h), as_int(r.kernel_w)))
    if using_bias:
        _fits_compact(call, "bias_addr", bias, g.per_channel_shape(shape.c))


def _pool(call, r):
    out = c.local_addr(call, "output_addr", r.output_addr, align=128)
    inp = c.local_addr(call, "input_addr", r.input_addr, align=128)
    shape = _window_shape(call, r.input_shape)
    pad = padding(call, r.padding)
    stride = pair(call, "stride", r.stride, STRIDE_MAX)
    oh, ow = window(call, shape, r.kernel_h, r.kernel_w, pad, stride)
    c.same_npu(call, output_addr=out, input_addr=inp)
    c.fits_local(call, "output_addr", out, dim4(shape.n, shape.c, oh, ow), None)
    c.fits_local(call, "input_addr", inp, shape, None)


def bdc_avg_pool2d(ctx, r, call="bdc_avg_pool2d"):
    """Remarks: output and input (aligned) divisible by 128 on the same NPU; input ranges;
    padded input and output h/w at most 2047; padding [0, 15]; stride [1, 15]."""
    _pool(call, r)


def bdc_avg_pool2d_v2(ctx, r, call="bdc_avg_pool2d_v2"):
    """Remarks: those of okk_bdc_avg_pool2d; scale a float."""
    c.fp32(call, "scale", r.scale)
    _pool(call, r)


def bdc_max_pool2d(ctx, r, call="bdc_max_pool2d"):
    """Remarks: those of okk_bdc_avg_pool2d."""
    _pool(call, r)


# -- matrix multiplication ---------------------------------------------------------------------
MATRIX_COLS_PER_CHANNEL_MAX = 128


def bdc_matmul(ctx, r, call="bdc_matmul"):
    """Remarks: matrices in the matrix layout, divisible by 128; output, right and bias on the
    same NPU; left_rows [1, 65535]; cols per channel in [1, min(128, cols)]; at most 4095
    channels per matrix; the bias a 1 x right_cols matrix."""
    out = c.local_addr(call, "output_addr", r.output_addr, align=128)
    left = c.local_addr(call, "left_addr", r.left_addr, align=128)
    right = c.local_addr(call, "right_addr", r.right_addr, align=128)
    using_bias = c.flag(call, "using_bias", r.using_bias)
    c.flag(call, "result_add", r.result_add)
    bias = c.local_addr(call, "bias_addr", r.bias_addr, align=128) if using_bias else None
    rows = c.integer(call, "left_rows", r.left_rows, 1, c.SHAPE_MAX.n)
    chans = c.SHAPE_MAX.c
    k = c.integer(call, "left_cols", r.left_cols, 1, chans * MATRIX_COLS_PER_CHANNEL_MAX)
    n = c.integer(call, "right_cols", r.right_cols, 1, chans * MATRIX_COLS_PER_CHANNEL_MAX)
    lw = c.integer(call, "left_cols_per_channel", r.left_cols_per_channel, 1, min(MATRIX_COLS_PER_CHANNEL_MAX, k))
    rw = c.integer(call, "right_cols_per_channel", r.right_cols_per_channel, 1,
                   min(MATRIX_COLS_PER_CHANNEL_MAX, n))
    for name, cols, w in (("left", k, lw), ("right", n, rw)):
        if -(-cols // w) > chans:
            raise ArgumentError(must(call, f"ceil({name}_cols / {name}_cols_per_channel)", f"at most {chans}",
                                     -(-cols // w)))
    c.same_npu(call, output_addr=out, right_addr=right, **({"bias_addr": bias} if using_bias else {}))
    c.fits_local(call, "output_addr", out, g.matrix_shape(rows, n, rw), None)
    c.fits_local(call, "left_addr", left, g.matrix_shape(rows, k, lw), None)
    c.fits_local(call, "right_addr", right, g.matrix_shape(k, n, rw), None)
    if using_bias:
        c.fits_local(call, "bias_addr", bias, g.matrix_shape(1, n, rw), None)
