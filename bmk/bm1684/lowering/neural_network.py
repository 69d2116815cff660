"""Lowering of the FP32 Neural Network functions (seed 003 "FP32 Neural Network Functions"), by
family: relu, `linear` (bias, scale, scale_bias: the op table gives opd1 and opd2), conv2d,
depthwise2d, `pool` (the kind and where the scale comes from) and matmul.

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
- okk_bdc_depthwise2d: pord.depthwise (C class), the conv fields; the compact weight
  [1, C, kh, kw] with short_opd1_str aligned and default strides, as the vendor compiler
  writes its depthwise kernels (the real retinaface network; bm1684_defs.py reads a pord
  kernel unaligned: the engine's own layout for it is compact).
- okk_bdc_avg_pool2d(_v2), okk_bdc_max_pool2d: pord.avgpooling with the scale as the fp32
  constant opd1 (1 / (kh * kw) for avg_pool2d) and tsk_opd_num 2, pord.maxpooling with
  tsk_opd_num 1 (C: the vendor's pooling commands). As the vendor, pooling commands carry
  n and c in res0 only (opd0_n, opd0_c stay 1) and the kernel in opd1_h, opd1_w.
- okk_bdc_matmul: mm.mul (the FC class) as the vendor's FC reader takes it (tpu-mlir
  python/profile_helper/bm1684_defs.py get_bd_mem_record, FC; issue 18 item 1): res0 = the
  output matrix tensor (M, ceil(N / rw), 1, rw), opd0 = the left (n M, c ceil(K / lw), w lw;
  opd0_h left at its default), opd1 = the right, whose shape the reader takes from res0 and K
  (K rows, res0_c channels of res0_w columns), opd2 = the bias matrix (1, ceil(N / rw), 1, rw),
  all in the aligned layout, tsk_opd_num 3 with bias. opd1_w holds the columns of the left's
  last channel, K - (ceil(K / lw) - 1) * lw in [1, lw] (the reader's K = (opd0_c - 1) * opd0_w
  + opd1_w), so K can exceed every shape field. result_add is opt_res_add = 1 on the same
  mm.mul (the reader's `add_result`), not another EU code. opd1_c stays at its default: the
  reader takes the right matrix's channels from res0_c (U: no public vendor FC command shows it).
"""
from bmk.bm1684 import geometry as g
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.types import Padding, dim2
from bmk.checks import as_int, fixed
from bmk.layout import dim4


def relu(chip, p):
    f = lo.tensor(chip, {"tsk_opd_num": 2}, "res0", p.dst_addr, lo.stride4(p.dst_stride), shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", p.src_addr, lo.stride4(p.src_stride))
    lo.const(chip, f, "opd1", lo.fp32_bits(0.0))
    return (lo.tiu(chip, "arith.max", **f),)


def linear(chip, p, opd1, opd2):
    """res0 = dst, opd0 = src; opd1 / opd2: the name of a per-channel tensor's address
    argument, or an fp32 constant."""
    f = lo.tensor(chip, {"tsk_opd_num": 3}, "res0", p.dst_addr, lo.stride4(p.dst_stride), shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", p.src_addr, lo.stride4(p.src_stride))
    for slot, operand in (("opd1", opd1), ("opd2", opd2)):
        if isinstance(operand, str):
            lo.per_channel(chip, f, slot, getattr(p, operand))
        else:
            lo.const(chip, f, slot, lo.fp32_bits(operand))
    return (lo.tiu(chip, "md_linear.mac", **f),)


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


def conv2d(chip, p):
    shape = lo.shape4(p.input_shape)
    oc, kh, kw = as_int(p.output_c), as_int(p.kernel_h), as_int(p.kernel_w)
    pad, stride, dilation = _padding(p.padding), _pair(p.stride), _pair(p.dilation)
    out = _output_shape(shape.n, oc, shape.h, shape.w, kh, kw, pad, stride, dilation)
    f = {"tsk_opd_num": 3 if p.using_bias else 2, "opt_res_add": int(bool(p.result_add))}
    lo.tensor(chip, f, "res0", p.output_addr, None, shape=out)
    lo.tensor(chip, f, "opd0", p.input_addr, lo.stride4(p.input_stride), shape=shape)
    kernel_stride = lo.stride4(p.kernel_stride)
    if kernel_stride is None:
        kernel_stride = g.conv_weight_stride(chip, as_int(p.weight_addr), shape.c, oc, kh, kw)
    lo.tensor(chip, f, "opd1", p.weight_addr, kernel_stride)
    if p.using_bias:
        lo.per_channel(chip, f, "opd2", p.bias_addr)
    return (lo.tiu(chip, "conv", **_window(f, kh, kw, pad, stride, dilation)),)


def depthwise2d(chip, p):
    shape = lo.shape4(p.input_shape)
    kh, kw = as_int(p.kernel_h), as_int(p.kernel_w)
    pad, stride, dilation = _padding(p.padding), _pair(p.stride), _pair(p.dilation)
    f = {"tsk_opd_num": 3 if p.using_bias else 2}
    lo.tensor(chip, f, "res0", p.output_addr, None,
              shape=_output_shape(shape.n, shape.c, shape.h, shape.w, kh, kw, pad, stride, dilation))
    lo.tensor(chip, f, "opd0", p.input_addr, None)
    f["opd0_h"], f["opd0_w"] = shape.h, shape.w
    lo.tensor(chip, f, "opd1", p.weight_addr, None)       # aligned: a pord kernel's own (compact) layout
    if p.using_bias:
        lo.per_channel(chip, f, "opd2", p.bias_addr)
    return (lo.tiu(chip, "pord.depthwise", **_window(f, kh, kw, pad, stride, dilation)),)


def pool(chip, p, kind, scale=None):
    """A pooling command; scale: None (max), "kernel" (1 / (kh * kw)) or "argument" (p.scale)."""
    shape = lo.shape4(p.input_shape)
    kh, kw = as_int(p.kernel_h), as_int(p.kernel_w)
    pad, stride = _padding(p.padding), _pair(p.stride)
    f = {"tsk_opd_num": 1 if scale is None else 2}
    lo.tensor(chip, f, "res0", p.output_addr, None,
              shape=_output_shape(shape.n, shape.c, shape.h, shape.w, kh, kw, pad, stride))
    lo.tensor(chip, f, "opd0", p.input_addr, None)
    f["opd0_h"], f["opd0_w"] = shape.h, shape.w
    if scale == "kernel":
        lo.const(chip, f, "opd1", lo.fp32_bits(1.0 / (fixed(p.kernel_h) * fixed(p.kernel_w))))
    elif scale == "argument":
        lo.const(chip, f, "opd1", lo.fp32_bits(float(p.scale)))
    return (lo.tiu(chip, kind, **_window(f, kh, kw, pad, stride)),)


# -- matrix multiplication ---------------------------------------------------------------------
def matmul(chip, p):
    m, k, n = as_int(p.left_rows), as_int(p.left_cols), as_int(p.right_cols)
    lw, rw = as_int(p.left_cols_per_channel), as_int(p.right_cols_per_channel)
    f = {"tsk_opd_num": 3 if p.using_bias else 2, "opt_res_add": int(bool(p.result_add))}
    lo.tensor(chip, f, "res0", p.output_addr, None, shape=g.matrix_shape(m, n, rw))
    left = g.matrix_shape(m, k, lw)
    lo.tensor(chip, f, "opd0", p.left_addr, None)
    f["opd0_n"], f["opd0_c"], f["opd0_w"] = left.n, left.c, left.w
    lo.tensor(chip, f, "opd1", p.right_addr, None)
    f["opd1_w"] = k - (left.c - 1) * lw                 # the left's last channel: [1, lw], never 0
    if p.using_bias:
        lo.tensor(chip, f, "opd2", p.bias_addr, None)
    return (lo.tiu(chip, "mm.mul", **f),)
