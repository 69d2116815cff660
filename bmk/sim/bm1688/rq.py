"""The requantization BM1688's conv, PorD and MM2 fuse into their command (opt_rq).

Sources: tpu-mlir python/debugger/target_1688/opparam.py (sCONV, sPorD, sMM2: opd5, shape
(1, C, 1, 2) int32 compact, or the constants multiplier / shift / yzp in registers 6, 32, 33;
round_mode = opd2_n_str), the TPU1686 requant's arithmetic as bmk/sim/bm1684x/quant.py rq1
executes it (y = x * multiplier shifted by shift, > 0 left, < 0 right rounded by the mode, plus
the output zero point, saturated), and the shared tdl_models streams (cls_sound_babay_cry bm1688:
each channel's second word is 0x000000e2..0x000000e9, an int8 right shift of 23..30 beside a
multiplier of 2**16..2**24: the fixed-point scale of each channel; before each 2x2 average pool
the registers hold multiplier 1 and shift -7 / -8, the pairs BM1684X's build of the same
network carries in its pools).

Per channel c: multiplier = word 0 (int32); word 1 holds the shift in its low byte (int8) and
the output zero point in its high half (int16, bmk's reading: the symmetric networks shared
carry 0 there, and bits 8..15 are 0 in all of them; a non-zero value there is refused).
Constants (opt_opd5_const): multiplier = tgcr_opd5, shift = tgcr_rq_shift's low byte (int8),
output zero point = tgcr_rq_yzp's low 16 bits (int16).

A float input's opt_rq is the firmware's rescale (TPU1686 atomic_conv_check: do_rescale,
rescale_is_const, rescale_addr, for float convs): one fp32 scale per output channel, a compact
(1, C, 1, 1) tensor at tgcr_opd5 (tpu-mlir WeightReorder/BM1684X/Conv2D.cpp packs it for BM1690's
fp8 convs: the scale, then the fp32 bias, per channel), or the fp32 constant whose bits are
tgcr_opd5 (opt_opd5_const). tpu-mlir's fp8 lowering (Conv lowering for F8E4M3: the bias divided
by the input and weight scales) puts the bias inside: y = (sum + bias) * scale.
"""
import numpy as np

from bmk import dtypes, numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x.operands import const_bits, read, tensor
from bmk.sim.bm1684x.quant import shifted
from bmk.sim.bm1688.registers import register

# word 1 of a channel's parameters: the shift's byte, the unused byte, the zero point's half
SHIFT_BITS, ZP_FROM = 8, 16


def parameters(m, f, c, kind):
    """(multiplier, shift, zero point), each broadcastable over (N, C, H, W)."""
    if f.get("opt_opd5_const", 0):
        mult = int(numerics.sign_extend(register(f, "opd5", kind) & 0xFFFFFFFF, 32))
        shift = int(numerics.sign_extend(register(f, "rq_shift", kind) & 0xFF, 8))
        zp = int(numerics.sign_extend(register(f, "rq_yzp", kind) & 0xFFFF, 16))
        return mult, shift, zp
    addr = register(f, "opd5", kind)
    words = read(m, tensor(m, f, "opd5", (1, c, 1, 2), dtypes.UINT32, "compact", addr=addr)).reshape(c, 2)
    unused = (words[:, 1] >> SHIFT_BITS) & ((1 << (ZP_FROM - SHIFT_BITS)) - 1)
    if unused.any():
        raise SimulationError(f"{kind}: requant parameters at opd5 (tgcr_opd5 = {addr:#x}) must hold 0 in bits "
                              f"{SHIFT_BITS}..{ZP_FROM - 1} of each channel's second word, not "
                              f"{int(words[unused != 0][0, 1]):#x} (bmk does not know what they mean)")
    mult = numerics.sign_extend(words[:, 0], 32).reshape(1, c, 1, 1)
    shift = numerics.sign_extend(words[:, 1] & 0xFF, 8).reshape(1, c, 1, 1)
    zp = numerics.sign_extend(words[:, 1] >> ZP_FROM, 16).reshape(1, c, 1, 1)
    return mult, shift, zp


def requantize(m, f, acc, c, kind):
    """Exact integer sums (int64, channel on axis 1) -> requantized values (before saturation)."""
    mult, shift, zp = parameters(m, f, c, kind)
    return shifted(np.asarray(acc, np.int64) * mult, shift, numerics.as_mode(f.get("opd2_n_str", 0))) + zp


def float_scale(m, f, c, kind):
    """A float input's rescale (opt_rq): fp32 per channel, broadcastable over (N, C, H, W)."""
    if f.get("opt_opd5_const", 0):
        return const_bits(register(f, "opd5", kind), dtypes.FP32)
    addr = register(f, "opd5", kind)
    return read(m, tensor(m, f, "opd5", (1, c, 1, 1), dtypes.FP32, "compact", addr=addr))


def rescale(m, f, acc, kind):
    """A float result's sums with opt_rq times the rescale (float_scale); without, unchanged."""
    return acc * float_scale(m, f, acc.shape[1], kind) if f.get("opt_rq", 0) else acc
