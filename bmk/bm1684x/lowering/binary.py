"""Lowering of the element-wise binary functions (seed 001: and, or, xor, min, max, +_C) to one
AR command each (short sAR unless a stride needs the long AR): arith.and / or / xor / min /
max (isa-facts/bm1684x-lowering.md section 5); the op table gives the kind.

Fields: tsk_opd_num 2; res0 = dst, opd0 = src0 (or src), opd1 = src1, or for _C the constant
(opd1_const 1, opd1_addr = C's bits, opd1_prec/sign = dtype); every prec/sign from dtype.
As the vendor's TPU-Kernel does (issue 18's reading of the BM1690 firmware
kernel/tpu_kernel.c, whose short AR commands are BM1684X's bit for bit from bit 64 on; family
evidence):
- `bitwise` (and, or, xor) of a float dtype computes on its bits: the operands and the result
  take the signed integer precision of the same width (constants.bitwise), a constant its
  float bits;
- the operations are commutative, so when only src1 has a free layout (src0's stride is NULL,
  src1's is not) the free-layout operand goes first: opd0 = src1, opd1 = src0.
"""
from bmk.bm1684x.constants import bitwise as bitwise_dtype
from bmk.bm1684x.lowering.common import TIU, ar, const, tensor
from bmk.checks import fixed


def free_first(a, b):
    """(opd0, opd1) of a commutative operation on operands a, b ((addr, stride) each): the one
    with a free layout first when only b has one."""
    return (b, a) if a[1] is None and b[1] is not None else (a, b)


def tensors(chip, p, kind, bitwise=False):
    """dst = src0 OP src1."""
    dtype = bitwise_dtype(int(fixed(p.dtype))) if bitwise else p.dtype
    (a0, s0), (a1, s1) = free_first((p.src0_addr, p.src0_stride), (p.src1_addr, p.src1_stride))
    return ((TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, dtype),
                     tensor(chip, "opd0", a0, s0, dtype), tensor(chip, "opd1", a1, s1, dtype))),)


def with_const(chip, p, kind, bitwise=False):
    """dst = src OP C."""
    dtype = bitwise_dtype(int(fixed(p.dtype))) if bitwise else p.dtype
    return ((TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, dtype),
                     tensor(chip, "opd0", p.src_addr, p.src_stride, dtype), const("opd1", p.C, p.dtype, dtype))),)
