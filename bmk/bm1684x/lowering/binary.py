"""Lowering of the element-wise binary functions (seed 001: and, or, xor, min, max, +_C) to one
AR command each (short sAR unless a stride needs the long AR): arith.and / or / xor / min /
max (isa-facts/bm1684x-lowering.md section 5); the op table gives the kind.

Fields: tsk_opd_num 2; res0 = dst, opd0 = src0 (or src), opd1 = src1, or for _C the constant
(opd1_const 1, opd1_addr = C's bits, opd1_prec/sign = dtype); every prec/sign from dtype.
"""
from bmk.bm1684x.lowering.common import TIU, ar, const, tensor


def tensors(chip, p, kind):
    """dst = src0 OP src1."""
    return ((TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, p.dtype),
                     tensor(chip, "opd0", p.src0_addr, p.src0_stride, p.dtype),
                     tensor(chip, "opd1", p.src1_addr, p.src1_stride, p.dtype))),)


def with_const(chip, p, kind):
    """dst = src OP C."""
    return ((TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, p.dtype),
                     tensor(chip, "opd0", p.src_addr, p.src_stride, p.dtype), const("opd1", p.C, p.dtype))),)
