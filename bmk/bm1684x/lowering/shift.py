"""Lowering of the shifts (seed 001) to one AR command of the kind the op table gives:
arith.ashift for arithmetic_shift, arith.logicShift for logical_shift
(isa-facts/bm1684x-lowering.md).

Fields: tsk_opd_num 2; res0 = dst (dst_dtype), opd0 = src (src_dtype), opd1 = the shift
tensor (shift_dtype, signed) or for _C the constant C (opd1_const 1, opd1_prec int8 and
opd1_sign 1: C is a `char`; opd1_addr = its 8 bits, lowering.common.const_bits); the rounding
mode in opd2_n_str (the facts: TPU-MLIR reads it there). A positive shift is a left shift, a
negative one a right shift by -shift rounded by the mode (seed formula). No class has a
res0_sign: the result's signedness is the source's, which the checks make equal.
"""
from bmk.bm1684x.constants import DT_INT8
from bmk.bm1684x.lowering.common import TIU, ar, const, tensor


def tensor_shift(chip, p, kind):
    """dst = src shifted by the shift tensor."""
    return ((TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, p.dst_dtype),
                     tensor(chip, "opd0", p.src_addr, p.src_stride, p.src_dtype),
                     tensor(chip, "opd1", p.shift_addr, p.shift_stride, p.shift_dtype),
                     opd2_n_str=p.rounding_mode)),)


def const_shift(chip, p, kind):
    """dst = src shifted by the constant C."""
    return ((TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, p.dst_dtype),
                     tensor(chip, "opd0", p.src_addr, p.src_stride, p.src_dtype), const("opd1", p.C, DT_INT8),
                     opd2_n_str=p.rounding_mode)),)
