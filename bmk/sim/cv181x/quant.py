"""CV18xx per-channel quantization (opt_chl_quan 1): the `*_qm` and `pt_*` operations of cvikernel.

Where it is set (sophgo/cvikernel src/cv181x):
- tiu_convolution.c, tiu_pt_convolution.c, tiu_depthwise_convolution.c,
  tiu_pt_depthwise_convolution.c: `chl_quan_param` given -> opt_chl_quan 1, opd2 = that tensor,
  shape (1, C, 1, 1), opt_res_shift 0 ("useless"); has_bias -> tsk_opd_num 3;
- tiu_mul_qm.c: opt_chl_quan 1, quan_m = the multiplier, opt_res_shift = rshift_bits;
- tiu_matrix_multiplication_qm.c: opt_chl_quan 1 (ps32_mode 0 or 1), quan_m, opt_res_shift,
  a 32-bit bias matrix (shape n 4: four 8-bit planes, one row apart) when tsk_opd_num is 3.

The per-channel record (tpu-mlir lib/Dialect/Tpu/Interfaces/CV18xx/Conv2D.cpp packWeight): per
output channel, little-endian, int32 bias (only when the layer has one), uint32 multiplier, uint8
right shift: 9 bytes per channel with a bias, 5 without, loaded as (1, C, 1, size) so that a lane's
records are `size` bytes apart (the shared cvimodels' TDMA loads: dst_c_stride == size).

Arithmetic (tpu_compiler lib/Dialect/TPU/QuantizationArithmetic.cpp, "Simulate HW behavior":
applyMultiplierAndRShiftAndSaturateInt8 with qdm): the 32-bit sum (plus the bias) goes through
gemmlowp's SaturatingRoundingDoublingHighMul with the multiplier (x * m / 2^31 to nearest; a tie
goes up: 1.5 -> 2, -1.5 -> -1), then RoundingDivideByPOT by the shift (to nearest, ties away from
zero), then saturates to the result type. bmk saturates the sum to int32 first (the accumulator's
width) and applies ReLU (opt_relu) to the sum: the multiplier is positive, so the order does not
change the result.
"""
import numpy as np

from bmk.errors import SimulationError
from bmk.sim.bm1880 import tiu
from bmk.sim.bm1880.common import const8, npu_local, operand, read, write

_I32 = (-(1 << 31), (1 << 31) - 1)


def srdhm(x, m):
    """gemmlowp SaturatingRoundingDoublingHighMul(x, m) on int64 arrays of int32 values: (x * m +
    nudge) / 2^31 truncated toward zero, nudge 2^30 (or 1 - 2^30 when x * m < 0); INT32_MIN^2
    saturates to INT32_MAX (tpu_compiler QuantizationArithmetic.cpp)."""
    x = np.asarray(x, np.int64)
    m = np.asarray(m, np.int64)
    ab = x * m
    # where ab < 0 (sign bits all ones) both steps take 2^31 - 1 off: the nudge 1 - 2^30 is 2^30
    # less that, and a division toward zero is the floor of s + 2^31 - 1
    low = (ab >> 63) & ((1 << 31) - 1)
    s = ab + (1 << 30)
    s -= low
    q = s + ((s >> 63) & ((1 << 31) - 1))
    q >>= 31
    if (m == _I32[0]).any():
        q = np.where((x == _I32[0]) & (m == _I32[0]), _I32[1], q)
    return q


def rdivpot(x, e):
    """gemmlowp RoundingDivideByPOT(x, e): x / 2^e rounded half away from zero (e >= 0)."""
    x = np.asarray(x, np.int64)
    e = np.asarray(e, np.int64)
    pos = e > 0                 # the source's fixup and nudge are 0 for a zero exponent
    nudge = np.where(pos, np.left_shift(1, np.maximum(e - 1, 0)), 0)
    return (x - ((x < 0) & pos) + nudge) >> e


def qdm(acc, multiplier, shift):
    """The per-channel requantization: rdivpot(srdhm(sat32(acc), multiplier), shift)."""
    acc = np.clip(np.asarray(acc, np.int64), *_I32)
    m = np.asarray(multiplier, np.int64)
    m = np.where(m >= 1 << 31, m - (1 << 32), m)           # the uint32 field read as int32, as the source casts it
    return rdivpot(srdhm(acc, m), shift)


def records(m, f, channels):
    """(bias or 0, multiplier, shift) arrays (1, C, 1, 1) from the opd2 per-channel records."""
    has_bias = f["tsk_opd_num"] == 3
    size = 9 if has_bias else 5
    addr = f["opd2_addr"]
    lane = m.lmem.lane_size
    groups = -(-(addr // lane % m.npu_num + channels) // m.npu_num)
    view = m.lmem.tensor("opd2 (per-channel records)", addr, (1, channels, 1, size),
                         (groups * size, size, size, 1), m.log)
    raw = np.ascontiguousarray(view.read()).reshape(channels, size)
    words = raw[:, :size - 1].copy().view("<u4").astype(np.int64)          # bias?, multiplier
    shift = raw[:, size - 1].astype(np.int64)
    bias = words[:, 0].astype(np.uint32).view(np.int32).astype(np.int64) if has_bias else np.zeros(channels, np.int64)
    mult = words[:, -1]
    if np.any(shift > 31):
        raise SimulationError(f"opd2 per-channel shifts must be in [0, 31], not {int(shift.max())}")
    r = (1, channels, 1, 1)
    return bias.reshape(r), mult.reshape(r), shift.reshape(r)


def _finish(m, f, res, acc, mult, shift):
    if f["opt_relu"]:
        acc = np.maximum(acc, 0)
    write(m, res, qdm(acc, mult, shift))


def conv(m, f):
    """cvikernel tiu_convolution with chl_quan_param: conv sums + bias, per-channel requantized;
    weights and records on the output channels' NPUs (bm1880 common.npu_local)."""
    f = npu_local(m, f)
    res, acc = tiu.conv_acc(m, f)
    bias, mult, shift = records(m, f, res.shape[1])
    _finish(m, f, res, acc + bias, mult, shift)


def depthwise(m, f):
    """cvikernel tiu_depthwise_convolution with chl_quan_param: sums + bias, per-channel requantized."""
    res, acc = tiu.depthwise_acc(m, f)
    bias, mult, shift = records(m, f, res.shape[1])
    _finish(m, f, res, acc + bias, mult, shift)


def mul(m, f):
    """cvikernel tiu_mul_qm: res = qdm(a * b, quan_m, opt_right_shift), relu."""
    res = operand(m, f, "res0")
    a = read(m, operand(m, f, "opd0"), dtype=np.int64)
    if f["opt_opd1_const"]:
        b = const8(f)
    else:
        b_op = operand(m, f, "opd1")
        tiu.same_shape(res, b_op)
        b = read(m, b_op, dtype=np.int64)
    _finish(m, f, res, a * b, f["quan_m"], f["opt_right_shift"])


def matrix_mac(m, f):
    """cvikernel tiu_matrix_multiplication_qm: left @ right + 32-bit bias (four 8-bit planes one
    row apart), relu, qdm(quan_m, opt_right_shift); an int8 result."""
    if f["opt_res_add"]:
        raise SimulationError(f"opt_res_add must be 0 with opt_chl_quan 1, not {f['opt_res_add']!r}")
    res, acc = tiu.matrix_acc(m, f)
    if f["tsk_opd_num"] == 3:
        bias = tiu.matrix_bias(m, f, res)
        row = bias.strides[0]
        view = m.lmem.tensor
        b = np.zeros(acc.shape[1], np.uint32)
        for k in range(4):
            plane = view(f"opd2 plane {k}", bias.addr + k * row, bias.shape, bias.strides, m.log).read()
            b |= plane.reshape(-1).astype(np.uint32) << np.uint32(8 * k)
        acc = acc + b.view(np.int32).astype(np.int64)[None, :]
    if f["opt_relu"]:
        acc = np.maximum(acc, 0)
    write(m, res, qdm(acc, f["quan_m"], f["opt_right_shift"]).reshape(res.shape))


KINDS = {"conv": conv, "depthwise": depthwise, "mul": mul, "matrix_mac": matrix_mac}
