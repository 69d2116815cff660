"""Sliding windows shared by CONV and PorD: the extended input (pads and inserted zeros), the
kernel's dilation, strides, and the output size they imply.

Fields (tpu-mlir python/debugger/target_1684x/opparam.py `sCONV_t_converter`,
`sPorD_t_converter` attributes; the TPU1686 firmware's conv gen_cmd formulas, tpu-mlir
third_party/ppl/runtime/checker/src/atomic_conv.c and atomic_pooling_depthwise.c):
  kernel       (opd1_h, opd1_w)
  stride       (res_op_y_str, res_op_x_str)
  in_zero      (opd0_y_ins0, opd0_x_ins0): values inserted between input rows / columns
  ke_zero      (opd1_y_ins0, opd1_x_ins0): the kernel's dilation minus 1
  pad          (opd0_up_pad, opd0_dn_pad, opd0_lf_pad, opd0_rt_pad)
  pad_mode     0: the pad value (opd3); other codes are refused by `check_pad_mode` (the CONV
               and PorD kinds' static CHECKS, before any run; their meanings, e.g. reflect or
               replicate, are not public for BM1684X)
  ih_ext = (ih - 1) * (ins_h + 1) + 1 + up + dn, kh_ext = (kh - 1) * dh + 1,
  oh = (ih_ext - kh_ext) / stride_h + 1 (the firmware's formulas); the result's res0_h/w must
  equal them (a command whose sizes disagree is refused).
Pad and insert values come from opd3: a constant (opd3_const) holds the pad value in its low
element and, for 8- and 16-bit data, the insert value in the next one (bmk's reading of
opparam's (1, C, 1, 2) pad tensor; the golden stream's maxpool constant 0x...8080 is -128
twice); for 32-bit data the one value serves both. Otherwise opd3 is a compact (1, C, 1, 2)
tensor of the input's type: (pad, insert) per channel.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import const_bits, read, tensor

# The most multiply-accumulate steps one command may ask for (bounded time: a few seconds of
# numpy; the largest of the golden yolov5s stream asks for 2**28); kernels and outputs past it
# are refused before any work.
MAX_MACS = 1 << 31


def check_pad_mode(kind, f):
    """pad_mode 0 only (a static check: the fields alone decide)."""
    if f.get("pad_mode", 0):
        raise F.refuse(kind, "pad_mode", f["pad_mode"], "must be 0 (constant padding; other modes are not public)")


def geometry(f, kind, in_hw, out_hw):
    """(pads (up, dn, lf, rt), ins (h, w), dilation (h, w), stride (h, w), kernel (h, w));
    pad_mode was checked by check_pad_mode."""
    pads = tuple(f.get(f"opd0_{p}_pad", 0) for p in ("up", "dn", "lf", "rt"))
    ins = (f.get("opd0_y_ins0", 0), f.get("opd0_x_ins0", 0))
    dil = (f.get("opd1_y_ins0", 0) + 1, f.get("opd1_x_ins0", 0) + 1)
    stride = (f.get("res_op_y_str", 0), f.get("res_op_x_str", 0))
    kernel = (f.get("opd1_h", 0), f.get("opd1_w", 0))
    if min(stride) < 1 or min(kernel) < 1:
        raise SimulationError(f"strides (res_op_y_str, res_op_x_str) and the kernel (opd1_h, opd1_w) must "
                              f"be >= 1, not {stride}, {kernel}")
    for axis in (0, 1):
        ext = (in_hw[axis] - 1) * (ins[axis] + 1) + 1 + pads[2 * axis] + pads[2 * axis + 1]
        k_ext = (kernel[axis] - 1) * dil[axis] + 1
        out = (ext - k_ext) // stride[axis] + 1 if ext >= k_ext else 0
        if out != out_hw[axis]:
            name = "res0_h" if axis == 0 else "res0_w"
            raise SimulationError(f"{name} must be {out} (input {in_hw[axis]}, pads, inserts, kernel "
                                  f"{kernel[axis]} dilated {dil[axis]}, stride {stride[axis]}), not {out_hw[axis]}")
    return pads, ins, dil, stride, kernel


def pad_values(m, f, c, dtype):
    """(pad, insert) per channel: arrays (1, C, 1, 1) of the input's values."""
    if f.get("opd3_const", 0):
        bits = f.get("opd3_addr", 0)
        width = dtype.bits
        pad = const_bits(bits, dtype)
        ins = const_bits(bits >> width, dtype) if width <= 16 else pad
        return np.full((1, c, 1, 1), pad), np.full((1, c, 1, 1), ins)
    pi = read(m, tensor(m, f, "opd3", (1, c, 1, 2), dtype, "compact"))
    return pi[..., :1], pi[..., 1:]


def extended(x, pads, ins, pad, insert, dtype=None):
    """The input with inserted values between rows/columns and pads around it (per channel), in
    `dtype` (default: the three's common type). Each element is written once: the pads only
    around, the inserted values only between."""
    n, c, h, w = x.shape
    up, dn, lf, rt = pads
    hi, wi = (h - 1) * (ins[0] + 1) + 1, (w - 1) * (ins[1] + 1) + 1
    out = np.empty((n, c, hi + up + dn, wi + lf + rt), dtype or np.result_type(x, pad, insert))
    out[:, :, :up] = pad
    out[:, :, up + hi:] = pad
    out[:, :, up:up + hi, :lf] = pad
    out[:, :, up:up + hi, lf + wi:] = pad
    if ins[0] or ins[1]:
        out[:, :, up:up + hi, lf:lf + wi] = insert
    out[:, :, up:up + hi:ins[0] + 1, lf:lf + wi:ins[1] + 1] = x
    return out


def taps(ext, dil, stride, kernel, out_hw):
    """(ky, kx, the input window seen by tap (ky, kx): (n, c, oh, ow)) for every kernel tap."""
    oh, ow = out_hw
    for ky in range(kernel[0]):
        for kx in range(kernel[1]):
            y0, x0 = ky * dil[0], kx * dil[1]
            yield ky, kx, ext[:, :, y0:y0 + (oh - 1) * stride[0] + 1:stride[0], x0:x0 + (ow - 1) * stride[1] + 1:stride[1]]


def exact_work(in_dt, data, weights, terms):
    """The float type the window products and sums of `terms` taps are worked in: integer data
    in the one that sums them exactly (numerics.exact_sum_type), float data in float64."""
    return np.float64 if in_dt.is_float else numerics.exact_sum_type(data, weights, terms)


def check_work(kind, macs):
    if macs > MAX_MACS:
        raise SimulationError(f"the command asks for {macs} multiply-accumulate steps, more than the "
                              f"simulator's bound of {MAX_MACS}")
