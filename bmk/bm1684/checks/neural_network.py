"""Checks of the FP32 Neural Network functions (seed 003 "FP32 Neural Network Functions"), by
family: `elementwise` (relu, bias, scale, scale_bias: the op table names the per-channel
tensors), `conv2d`, `depthwise2d`, `pool` (avg_pool2d, _v2, max_pool2d) and `matmul`.

Every remark of the seed is a rule here (addresses, NPUs, shape and window ranges, layouts);
"preferred to be divisible by 128" is advice, not a rule. Implied rules: output_c is a channel
count ([1, 4095]), kernels are at least 1 and fit the padded input (output_h, output_w >= 1),
and every tensor fits its NPU's local memory. The pooling remarks repeat the shapes of a
weight and a bias tensor that the pooling functions do not have; they are not checked.
A `bias_addr` that the call does not use (using_bias false) is not checked (API.md).
"""
from bmk.bm1684 import geometry as g
from bmk.bm1684.checks.common import MATRIX_ALIGN, SHAPE_MAX
from bmk.bm1684.types import Padding, dim2
from bmk.layout import ceil_div, dim4

WINDOW_MAX = 2047                                 # input h/w, padded input and output h/w
WINDOW_SHAPE_MAX = dim4(65535, 4095, WINDOW_MAX, WINDOW_MAX)
PAD_MAX = STRIDE_MAX = DILATION_MAX = 15
MATRIX_COLS_PER_CHANNEL_MAX = 128


# -- element-wise functions --------------------------------------------------------------------
def elementwise(c, p, per_channel=()):
    """Remarks: fp32 dst and src; same start NPU; addresses divisible by 4; shape ranges; NULL
    stride = 128-byte aligned layout; the per-channel tensors (`per_channel`: their address
    arguments) [1, C, 1, 1] compact, on the same NPU, divisible by 4; dst is src in place or
    apart, and apart from the per-channel tensors (issue 32.14)."""
    dst = c.address("dst_addr", p.dst_addr)
    src = c.address("src_addr", p.src_addr)
    chans = {name: c.address(name, getattr(p, name)) for name in per_channel}
    shape = c.shape(p.shape)
    dst_stride = c.stride("dst_stride", p.dst_stride)
    src_stride = c.stride("src_stride", p.src_stride)
    c.same_start_npu("dst_addr", dst, src_addr=src, **chans)
    c.fits("dst_addr", dst, shape, dst_stride)
    c.fits("src_addr", src, shape, src_stride)
    for name, addr in chans.items():
        c.fits_compact(name, addr, g.per_channel_shape(shape.c))
    per_chan = g.per_channel_shape(shape.c)
    c.in_place_or_apart(c.view("dst_addr", dst, shape, dst_stride), c.view("src_addr", src, shape, src_stride),
                        *(c.view(name, addr, per_chan, c.compact(addr, per_chan)) for name, addr in chans.items()))


# -- window arguments --------------------------------------------------------------------------
def _fields(c, name, value, kind, fields):
    try:
        values = tuple(value)
    except TypeError:
        values = None
    if values is None or len(values) != len(fields):
        c.fail(name, f"a {kind} ({', '.join(fields)}) or None", value)
    return values


def padding(c, value):
    """None (no paddings) or a Padding whose four sides are in [0, 15]."""
    if value is None:
        return g.NO_PADDING
    values = _fields(c, "padding", value, "Padding", Padding._fields)
    return Padding(*(c.integer(f"padding->{f}", v, 0, PAD_MAX) for f, v in zip(Padding._fields, values)))


def pair(c, name, value, hi):
    """None (one) or a dim2 whose h and w are in [1, hi] (stride, dilation)."""
    if value is None:
        return g.ONE
    values = _fields(c, name, value, "dim2", dim2._fields)
    return dim2(*(c.integer(f"{name}->{f}", v, 1, hi) for f, v in zip(dim2._fields, values)))


def window(c, shape, kernel_h, kernel_w, pad, stride, dilation=g.ONE):
    """The remarks shared by conv2d, depthwise2d and the pooling functions; returns (kh, kw, oh, ow)."""
    kh = c.integer("kernel_h", kernel_h, 1, WINDOW_MAX)
    kw = c.integer("kernel_w", kernel_w, 1, WINDOW_MAX)
    for side, size, p0, p1 in (("h", shape.h, pad.top, pad.bottom), ("w", shape.w, pad.left, pad.right)):
        if size + p0 + p1 > WINDOW_MAX:
            names = "padding->top + padding->bottom" if side == "h" else "padding->left + padding->right"
            c.fail(f"input_shape->{side} + {names}", f"at most {WINDOW_MAX}", size + p0 + p1)
    oh, ow = g.output_hw(shape.h, shape.w, kh, kw, pad, stride, dilation)
    for side, out, k, d in (("h", oh, kh, dilation.h), ("w", ow, kw, dilation.w)):
        if out < 1:
            c.fail(f"kernel_{side}", f"a kernel whose extent (kernel_{side} - 1) * dilation->{side} + 1 = "
                                     f"{(k - 1) * d + 1} fits the padded input (output_{side} >= 1)", k)
    # output_h, output_w <= 2047 (a remark) follow: output <= padded input - extent + 1 <= 2047.
    return kh, kw, oh, ow


def _window_shape(c, value):
    return c.shape(value, "input_shape", WINDOW_SHAPE_MAX)


# -- convolution and pooling -------------------------------------------------------------------
def conv2d(c, p):
    """Remarks: output (aligned) divisible by 128, input/weight/bias by 4; output, weight and
    bias on the same NPU; input n/c/h/w ranges, h/w in [1, 2047]; padded input and output
    h/w at most 2047; padding [0, 15], stride and dilation [1, 15]; 2IC weight; compact bias."""
    out = c.address("output_addr", p.output_addr, align=MATRIX_ALIGN)
    inp = c.address("input_addr", p.input_addr)
    weight = c.address("weight_addr", p.weight_addr)
    using_bias = c.flag("using_bias", p.using_bias)
    c.flag("result_add", p.result_add)
    bias = c.address("bias_addr", p.bias_addr) if using_bias else None
    shape = _window_shape(c, p.input_shape)
    oc = c.integer("output_c", p.output_c, 1, SHAPE_MAX.c)
    input_stride = c.stride("input_stride", p.input_stride)
    kernel_stride = c.stride("kernel_stride", p.kernel_stride)
    pad = padding(c, p.padding)
    stride = pair(c, "stride", p.stride, STRIDE_MAX)
    dilation = pair(c, "dilation", p.dilation, DILATION_MAX)
    kh, kw, oh, ow = window(c, shape, p.kernel_h, p.kernel_w, pad, stride, dilation)
    c.same_start_npu("output_addr", out, weight_addr=weight, **({"bias_addr": bias} if using_bias else {}))
    c.fits("output_addr", out, dim4(shape.n, oc, oh, ow), None)
    c.fits("input_addr", inp, shape, input_stride)
    wshape, pair_bytes = g.conv_weight_shape(shape.c, oc, kh, kw), g.PAIR_WORDS * g.word_bytes(c.chip)
    if kernel_stride is None:
        c.fits_compact("weight_addr", weight, wshape, pair_bytes)
    else:
        c.fits("weight_addr", weight, wshape, kernel_stride, pair_bytes)
    if using_bias:
        c.fits_compact("bias_addr", bias, g.per_channel_shape(oc))


def depthwise2d(c, p):
    """Remarks: output and input (aligned) divisible by 128, weight and bias (compact) by 4; all
    on the same NPU; the window remarks of conv2d."""
    out = c.address("output_addr", p.output_addr, align=MATRIX_ALIGN)
    inp = c.address("input_addr", p.input_addr, align=MATRIX_ALIGN)
    weight = c.address("weight_addr", p.weight_addr)
    using_bias = c.flag("using_bias", p.using_bias)
    bias = c.address("bias_addr", p.bias_addr) if using_bias else None
    shape = _window_shape(c, p.input_shape)
    pad = padding(c, p.padding)
    stride = pair(c, "stride", p.stride, STRIDE_MAX)
    dilation = pair(c, "dilation", p.dilation, DILATION_MAX)
    kh, kw, oh, ow = window(c, shape, p.kernel_h, p.kernel_w, pad, stride, dilation)
    c.same_start_npu("output_addr", out, input_addr=inp, weight_addr=weight,
                     **({"bias_addr": bias} if using_bias else {}))
    c.fits("output_addr", out, dim4(shape.n, shape.c, oh, ow), None)
    c.fits("input_addr", inp, shape, None)
    c.fits_compact("weight_addr", weight, dim4(1, shape.c, kh, kw))
    if using_bias:
        c.fits_compact("bias_addr", bias, g.per_channel_shape(shape.c))


def pool(c, p, scaled=False):
    """Remarks of avg_pool2d and max_pool2d: output and input (aligned) divisible by 128 on the
    same NPU; input ranges; padded input and output h/w at most 2047; padding [0, 15]; stride
    [1, 15]; avg_pool2d_v2 (`scaled`): scale a float."""
    if scaled:
        c.fp32("scale", p.scale)
    out = c.address("output_addr", p.output_addr, align=MATRIX_ALIGN)
    inp = c.address("input_addr", p.input_addr, align=MATRIX_ALIGN)
    shape = _window_shape(c, p.input_shape)
    pad = padding(c, p.padding)
    stride = pair(c, "stride", p.stride, STRIDE_MAX)
    _, _, oh, ow = window(c, shape, p.kernel_h, p.kernel_w, pad, stride)
    c.same_start_npu("output_addr", out, input_addr=inp)
    c.fits("output_addr", out, dim4(shape.n, shape.c, oh, ow), None)
    c.fits("input_addr", inp, shape, None)


# -- matrix multiplication ---------------------------------------------------------------------
def matmul(c, p):
    """Remarks: matrices in the matrix layout, divisible by 128; output, right and bias on the
    same NPU; left_rows [1, 65535]; cols per channel in [1, min(128, cols)]; at most 4095
    channels per matrix; the bias a 1 x right_cols matrix."""
    out = c.address("output_addr", p.output_addr, align=MATRIX_ALIGN)
    left = c.address("left_addr", p.left_addr, align=MATRIX_ALIGN)
    right = c.address("right_addr", p.right_addr, align=MATRIX_ALIGN)
    using_bias = c.flag("using_bias", p.using_bias)
    c.flag("result_add", p.result_add)
    bias = c.address("bias_addr", p.bias_addr, align=MATRIX_ALIGN) if using_bias else None
    rows = c.integer("left_rows", p.left_rows, 1, SHAPE_MAX.n)
    chans = SHAPE_MAX.c
    k = c.integer("left_cols", p.left_cols, 1, chans * MATRIX_COLS_PER_CHANNEL_MAX)
    n = c.integer("right_cols", p.right_cols, 1, chans * MATRIX_COLS_PER_CHANNEL_MAX)
    lw = c.integer("left_cols_per_channel", p.left_cols_per_channel, 1, min(MATRIX_COLS_PER_CHANNEL_MAX, k))
    rw = c.integer("right_cols_per_channel", p.right_cols_per_channel, 1, min(MATRIX_COLS_PER_CHANNEL_MAX, n))
    for name, cols, w in (("left", k, lw), ("right", n, rw)):
        if ceil_div(cols, w) > chans:
            c.fail(f"ceil({name}_cols / {name}_cols_per_channel)", f"at most {chans}", ceil_div(cols, w))
    c.same_start_npu("output_addr", out, right_addr=right, **({"bias_addr": bias} if using_bias else {}))
    c.fits("output_addr", out, g.matrix_shape(rows, n, rw), None)
    c.fits("left_addr", left, g.matrix_shape(rows, k, lw), None)
    c.fits("right_addr", right, g.matrix_shape(k, n, rw), None)
    if using_bias:
        c.fits("bias_addr", bias, g.matrix_shape(1, n, rw), None)
