"""Lowering of the FP32 Neural Network functions (seed 003 "FP32 Neural Network Functions").

One TIU command per function (isa-facts bm1684-lowering.md section 4; C = seen in the vendor's
yolov5s stream, P = plausible, U = our choice):
- okk_bdc_relu: arith.max of src and the constant 0.0 (opd1 const), as the vendor's own
  max-with-constant commands (P).
- okk_bdc_bias / _scale / _scale_bias: md_linear.mac, res0 = opd0 * opd1 + opd2 (P), with the
  per-channel tensors as `offset` operands (short_X_str offset: one element per channel,
  the [1, C, 1, 1] compact layout; the vendor's per-channel conv bias uses the same code).
  bias: opd1 = const 1.0; scale: opd2 = const -0.0 (x * s + -0.0 == x * s, also for -0.0).
- okk_bdc_conv2d: conv (C), the vendor's fields: opd0 the input (n, IC, h, w), res0 the
  output, opd1 the 2IC weight with opd1_h/w = kernel and free strides in fp32 pairs (n = pair
  step, c = output-channel slot, h, w; the vendor's (1, kh*kw*ceil(IC/2), kw*ceil(IC/2),
  ceil(IC/2)) is one such kernel_stride; NULL: the compact stride of the 2IC shape, geometry.py),
  opd2 the per-channel bias with tsk_opd_num 3, opt_res_add for result_add, paddings
  opd0_{up,dn,lf,rt}_pad, stride res_op_{y,x}_str, dilation as opd1_{y,x}_ins0 = dilation - 1
  (zeros inserted between kernel taps; P).
- okk_bdc_depthwise2d: pord.depthwise (C class), the conv fields with the compact weight
  [1, C, kh, kw] as free strides.
- okk_bdc_avg_pool2d(_v2), okk_bdc_max_pool2d: pord.avgpooling with the scale as the fp32
  constant opd1 (1 / (kh * kw) for avg_pool2d) and tsk_opd_num 2, pord.maxpooling with
  tsk_opd_num 1 (C: the vendor's pooling commands). As the vendor, pooling commands carry
  n and c in res0 only (opd0_n, opd0_c stay 1) and the kernel in opd1_h, opd1_w.
- okk_bdc_matmul (U: the FC fields are not public): mm.mul, or mm.mac when result_add
  (lowering.md: "mac when the result is added"). res0 = the output matrix tensor
  (M, ceil(N / rw), 1, rw), opd0 = the left (M, ceil(K / lw), 1, lw), opd1 = the right
  (opd1_c = ceil(N / rw), opd1_w = rw; its K rows follow from opd0), opd2 = the bias matrix
  (1, ceil(N / rw), 1, rw), all in the aligned layout, tsk_opd_num 3 with bias. The columns
  of the left's last channel (K - (ceil(K / lw) - 1) * lw, in [1, lw]) go in opd0_h, which the
  matrix layout leaves free (matrices have h = 1): K itself can exceed every shape field.
"""
from bmk.bm1684 import geometry as g
from bmk.bm1684 import layout
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.types import Padding, dim2, dim4
from bmk.layout import compact_stride
from bmk.templates import as_int, fixed


def _elementwise(r, kind, opd1, opd2):
    """res0 = dst, opd0 = src; opd1 / opd2: ("tensor", addr) per-channel or ("const", value)."""
    shape = lo.shape4(r.shape)
    f = {"tsk_opd_num": 3}
    lo.tensor(f, "res0", r.dst_addr, lo.stride4(r.dst_stride), shape=shape)
    lo.tensor(f, "opd0", r.src_addr, lo.stride4(r.src_stride))
    for slot, (what, value) in (("opd1", opd1), ("opd2", opd2)):
        if what == "const":
            lo.const(f, slot, lo.fp32_bits(value))
        else:
            _per_channel(f, slot, value)
    return (lo.tiu(kind, **f),)


def _per_channel(f, slot, addr):
    f[f"{slot}_addr"] = lo.local_base() + as_int(addr)
    f[f"opt_{slot}_prec"] = lo.code(lo.TIU, f"opt_{slot}_prec", "fp32")
    f[f"short_{slot}_str"] = lo.code(lo.TIU, f"short_{slot}_str", "offset")


def bdc_relu(chip, r):
    f = {"tsk_opd_num": 2}
    lo.tensor(f, "res0", r.dst_addr, lo.stride4(r.dst_stride), shape=lo.shape4(r.shape))
    lo.tensor(f, "opd0", r.src_addr, lo.stride4(r.src_stride))
    lo.const(f, "opd1", lo.fp32_bits(0.0))
    return (lo.tiu("arith.max", **f),)


def bdc_bias(chip, r):
    return _elementwise(r, "md_linear.mac", ("const", 1.0), ("tensor", r.bias_addr))


def bdc_scale(chip, r):
    return _elementwise(r, "md_linear.mac", ("tensor", r.scale_addr), ("const", -0.0))


def bdc_scale_bias(chip, r):
    return _elementwise(r, "md_linear.mac", ("tensor", r.scale_addr), ("tensor", r.bias_addr))


# -- windows -----------------------------------------------------------------------------------
def _padding(value):
    return g.NO_PADDING if value is None else Padding(*map(int, value))


def _pair(value):
    return g.ONE if value is None else dim2(*map(int, value))


def _window(f, kernel_h, kernel_w, pad, stride, dilation=g.ONE):
    f["opd1_h"], f["opd1_w"] = kernel_h, kernel_w
    f["opd0_up_pad"], f["opd0_dn_pad"], f["opd0_lf_pad"], f["opd0_rt_pad"] = pad
    f["res_op_y_str"], f["res_op_x_str"] = stride
    f["opd1_y_ins0"], f["opd1_x_ins0"] = dilation.h - 1, dilation.w - 1
    return f


def _output_shape(n, c, h, w, kernel_h, kernel_w, pad, stride, dilation=g.ONE):
    return dim4(n, c, *g.output_hw(h, w, kernel_h, kernel_w, pad, stride, dilation))


def bdc_conv2d(chip, r):
    shape = lo.shape4(r.input_shape)
    oc, kh, kw = as_int(r.output_c), as_int(r.kernel_h), as_int(r.kernel_w)
    pad, stride, dilation = _padding(r.padding), _pair(r.stride), _pair(r.dilation)
    out = _output_shape(shape.n, oc, shape.h, shape.w, kh, kw, pad, stride, dilation)
    f = {"tsk_opd_num": 3 if r.using_bias else 2, "opt_res_add": int(bool(r.result_add))}
    lo.tensor(f, "res0", r.output_addr, None, shape=out)
    lo.tensor(f, "opd0", r.input_addr, lo.stride4(r.input_stride), shape=shape)
    kernel_stride = lo.stride4(r.kernel_stride)
    if kernel_stride is None:
        kernel_stride = g.conv_weight_stride(as_int(r.weight_addr), shape.c, oc, kh, kw)
    lo.tensor(f, "opd1", r.weight_addr, kernel_stride)
    if r.using_bias:
        _per_channel(f, "opd2", r.bias_addr)
    return (lo.tiu("conv", **_window(f, kh, kw, pad, stride, dilation)),)


def bdc_depthwise2d(chip, r):
    shape = lo.shape4(r.input_shape)
    kh, kw = as_int(r.kernel_h), as_int(r.kernel_w)
    pad, stride, dilation = _padding(r.padding), _pair(r.stride), _pair(r.dilation)
    f = {"tsk_opd_num": 3 if r.using_bias else 2}
    lo.tensor(f, "res0", r.output_addr, None,
              shape=_output_shape(shape.n, shape.c, shape.h, shape.w, kh, kw, pad, stride, dilation))
    lo.tensor(f, "opd0", r.input_addr, None)
    f["opd0_h"], f["opd0_w"] = shape.h, shape.w
    start = as_int(r.weight_addr) // layout.local_mem_size_per_npu()
    weight_stride = dim4(*compact_stride(dim4(1, shape.c, kh, kw), layout.npu_num(), start))
    lo.tensor(f, "opd1", r.weight_addr, weight_stride)
    if r.using_bias:
        _per_channel(f, "opd2", r.bias_addr)
    return (lo.tiu("pord.depthwise", **_window(f, kh, kw, pad, stride, dilation)),)


def _pool(r, kind, scale=None):
    shape = lo.shape4(r.input_shape)
    kh, kw = as_int(r.kernel_h), as_int(r.kernel_w)
    pad, stride = _padding(r.padding), _pair(r.stride)
    f = {"tsk_opd_num": 1 if scale is None else 2}
    lo.tensor(f, "res0", r.output_addr, None,
              shape=_output_shape(shape.n, shape.c, shape.h, shape.w, kh, kw, pad, stride))
    lo.tensor(f, "opd0", r.input_addr, None)
    f["opd0_h"], f["opd0_w"] = shape.h, shape.w
    if scale is not None:
        lo.const(f, "opd1", lo.fp32_bits(scale))
    return (lo.tiu(kind, **_window(f, kh, kw, pad, stride)),)


def bdc_avg_pool2d(chip, r):
    return _pool(r, "pord.avgpooling", 1.0 / (fixed(r.kernel_h) * fixed(r.kernel_w)))


def bdc_avg_pool2d_v2(chip, r):
    return _pool(r, "pord.avgpooling", float(r.scale))


def bdc_max_pool2d(chip, r):
    return _pool(r, "pord.maxpooling")


# -- matrix multiplication ---------------------------------------------------------------------
def bdc_matmul(chip, r):
    m, k, n = as_int(r.left_rows), as_int(r.left_cols), as_int(r.right_cols)
    lw, rw = as_int(r.left_cols_per_channel), as_int(r.right_cols_per_channel)
    f = {"tsk_opd_num": 3 if r.using_bias else 2}
    lo.tensor(f, "res0", r.output_addr, None, shape=g.matrix_shape(m, n, rw))
    left = g.matrix_shape(m, k, lw)
    lo.tensor(f, "opd0", r.left_addr, None, shape=left._replace(h=k - (left.c - 1) * lw))
    lo.tensor(f, "opd1", r.right_addr, None)
    f["opd1_c"], f["opd1_w"] = -(-n // rw), rw
    if r.using_bias:
        lo.tensor(f, "opd2", r.bias_addr, None)
    return (lo.tiu("mm.mac" if r.result_add else "mm.mul", **f),)
