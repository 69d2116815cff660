"""Lowering of the element-wise binary functions (seed 001: and, or, xor, min, max, +_C) to one
AR command each (short sAR unless a stride needs the long AR): arith.and / or / xor / min /
max (eu 7, 8, 9, 5, 4; isa-facts/bm1684x-lowering.md section 5).

Fields: tsk_opd_num 2; res0 = dst, opd0 = src0 (or src), opd1 = src1, or for _C the constant
(opd1_const 1, opd1_addr = C's bits, opd1_prec/sign = dtype); every prec/sign from dtype.
"""
from bmk.bm1684x.lowering.common import TIU, ar, const, tensor


def _tensors(kind, p):
    return ((TIU, ar(kind, p.shape, tensor("res0", p.dst_addr, p.dst_stride, p.dtype),
                     tensor("opd0", p.src0_addr, p.src0_stride, p.dtype),
                     tensor("opd1", p.src1_addr, p.src1_stride, p.dtype))),)


def _const(kind, p):
    return ((TIU, ar(kind, p.shape, tensor("res0", p.dst_addr, p.dst_stride, p.dtype),
                     tensor("opd0", p.src_addr, p.src_stride, p.dtype), const("opd1", p.C, p.dtype))),)


def bdc_and(chip, p):
    """tpu_bdc_and: dst = src0 AND src1."""
    return _tensors("arith.and", p)


def bdc_and_C(chip, p):  # noqa: N802
    """tpu_bdc_and_C: dst = src AND C."""
    return _const("arith.and", p)


def bdc_or(chip, p):
    """tpu_bdc_or: dst = src0 OR src1."""
    return _tensors("arith.or", p)


def bdc_or_C(chip, p):  # noqa: N802
    """tpu_bdc_or_C: dst = src OR C."""
    return _const("arith.or", p)


def bdc_xor(chip, p):
    """tpu_bdc_xor: dst = src0 XOR src1."""
    return _tensors("arith.xor", p)


def bdc_xor_C(chip, p):  # noqa: N802
    """tpu_bdc_xor_C: dst = src XOR C."""
    return _const("arith.xor", p)


def bdc_min(chip, p):
    """tpu_bdc_min: dst = min(src0, src1)."""
    return _tensors("arith.min", p)


def bdc_min_C(chip, p):  # noqa: N802
    """tpu_bdc_min_C: dst = min(src, C)."""
    return _const("arith.min", p)


def bdc_max(chip, p):
    """tpu_bdc_max: dst = max(src0, src1)."""
    return _tensors("arith.max", p)


def bdc_max_C(chip, p):  # noqa: N802
    """tpu_bdc_max_C: dst = max(src, C)."""
    return _const("arith.max", p)
