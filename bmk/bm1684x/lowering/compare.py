"""Lowering of the comparisons (seed 001) to AR select commands (isa-facts/bm1684x-lowering.md,
"AR 3 select with true_val as const opd2").

One command each for greater, less, equal (+_C): arith.selectGreat / selectLess /
selectEqual with tsk_opd_num 3, opd0 = src0 (or src), opd1 = src1 (or the constant C:
opd1_const 1, in src_dtype), opd2 = true_val (opd2_const 1, opd2_prec/sign = dst_dtype, its
bits in opd2_addr), res0 = dst in dst_dtype: dst = true_val where `opd0 OP opd1`, else 0.

greater_equal, less_equal, not_equal (+_C) have no single code (the facts: "an opposite
select followed by a select"). Each is two commands, as the vendor's TPU-Kernel emits them
(issue 18's reading of the BM1690 firmware kernel/tpu_kernel.c, whose short AR commands are
BM1684X's from bit 64 on: family evidence); the op table gives the opposite select and
`invert=True`:
  1. the opposite select: selectLess for >=, selectGreat for <=, selectEqual for !=, so
     dst = true_val where the requested relation is false, else 0;
  2. dst = dst XOR true_val: arith.xor, two operands, opd0 = dst, opd1 the constant true_val,
     in dst_dtype (a float dtype as the signed integer of its width: its bits), which turns
     true_val into 0 and 0 into true_val.
Step 2 reads only dst, so dst may be src0, src1 or src (in place). equal is commutative: when
only src1 has a free layout it goes first (`commutative=True`, as for min/max, lowering/binary.py).
"""
from bmk.bm1684x.constants import bitwise
from bmk.bm1684x.lowering.binary import free_first
from bmk.bm1684x.lowering.common import TIU, ar, const, tensor
from bmk.checks import fixed

GREATER, LESS, EQUAL = "arith.selectGreat", "arith.selectLess", "arith.selectEqual"


def _select(chip, kind, p, opd0, opd1):
    return (TIU, ar(chip, kind, p.shape, tensor(chip, "res0", p.dst_addr, p.dst_stride, p.dst_dtype), opd0, opd1,
                    const("opd2", p.true_val, p.dst_dtype)))


def invert(chip, shape, dst_addr, dst_stride, dst_dtype, true_val):
    """dst = dst XOR true_val: true_val where dst == 0, 0 where dst == true_val (step 2 above)."""
    as_int = bitwise(int(fixed(dst_dtype)))
    return (TIU, ar(chip, "arith.xor", shape, tensor(chip, "res0", dst_addr, dst_stride, as_int),
                    tensor(chip, "opd0", dst_addr, dst_stride, as_int), const("opd1", true_val, dst_dtype, as_int)))


def _then(chip, p, first, invert_after):
    if not invert_after:
        return (first,)
    return (first, invert(chip, p.shape, p.dst_addr, p.dst_stride, p.dst_dtype, p.true_val))


def tensors(chip, p, kind, invert=False, commutative=False):
    """dst = true_val if src0 OP src1 else 0."""
    a, b = (p.src0_addr, p.src0_stride), (p.src1_addr, p.src1_stride)
    if commutative:
        a, b = free_first(a, b)
    return _then(chip, p, _select(chip, kind, p, tensor(chip, "opd0", *a, p.src_dtype),
                                  tensor(chip, "opd1", *b, p.src_dtype)), invert)


def with_const(chip, p, kind, invert=False):
    """dst = true_val if src OP C else 0."""
    return _then(chip, p, _select(chip, kind, p, tensor(chip, "opd0", p.src_addr, p.src_stride, p.src_dtype),
                                  const("opd1", p.C, p.src_dtype)), invert)
