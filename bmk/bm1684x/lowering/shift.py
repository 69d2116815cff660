"""Lowering of the shifts (seed 001) to one AR command: arith.ashift (eu 21) for
arithmetic_shift, arith.logicShift (eu 6) for logical_shift (isa-facts/bm1684x-lowering.md).

Fields: tsk_opd_num 2; res0 = dst (dst_dtype), opd0 = src (src_dtype), opd1 = the shift
tensor (shift_dtype, signed) or for _C the constant C (opd1_const 1, opd1_prec int8 and
opd1_sign 1: C is a `char`; opd1_addr = its 8 bits, lowering.common.const_bits); the rounding mode in
opd2_n_str (the facts: TPU-MLIR reads it there). A positive shift is a left shift, a
negative one a right shift by -shift rounded by the mode (seed formula). No class has a
res0_sign: the result's signedness is the source's, which the checks make equal.
"""
from bmk.bm1684x.constants import DT_INT8
from bmk.bm1684x.lowering.common import TIU, ar, const, tensor


def _tensor(kind, p):
    return ((TIU, ar(kind, p.shape, tensor("res0", p.dst_addr, p.dst_stride, p.dst_dtype),
                     tensor("opd0", p.src_addr, p.src_stride, p.src_dtype),
                     tensor("opd1", p.shift_addr, p.shift_stride, p.shift_dtype),
                     opd2_n_str=p.rounding_mode)),)


def _const(kind, p):
    return ((TIU, ar(kind, p.shape, tensor("res0", p.dst_addr, p.dst_stride, p.dst_dtype),
                     tensor("opd0", p.src_addr, p.src_stride, p.src_dtype), const("opd1", p.C, DT_INT8),
                     opd2_n_str=p.rounding_mode)),)


def bdc_arithmetic_shift(chip, p):
    """tpu_bdc_arithmetic_shift: dst = src << shift (shift > 0), else src >> -shift, rounded."""
    return _tensor("arith.ashift", p)


def bdc_arithmetic_shift_C(chip, p):  # noqa: N802
    """tpu_bdc_arithmetic_shift_C: the same with a constant shift C."""
    return _const("arith.ashift", p)


def bdc_logical_shift(chip, p):
    """tpu_bdc_logical_shift: unsigned dst = src << shift (shift > 0), else src >> -shift."""
    return _tensor("arith.logicShift", p)


def bdc_logical_shift_C(chip, p):  # noqa: N802
    """tpu_bdc_logical_shift_C: the same with a constant shift C."""
    return _const("arith.logicShift", p)
