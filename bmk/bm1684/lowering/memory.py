"""Lowering of the Memory functions (seed 003 "Memory Functions").

okk_bdc_32bit_cpy is one ar copy with one operand (the vendor's own copies: tsk_opd_num 1,
eu copy, fp32 precisions); okk_bdc_32bit_set_C is the same copy from a constant opd0
(isa-facts bm1684-lowering.md: "ar_op copy with const opd0"). 32-bit data moves bit for bit,
so the fp32 precision of a copy carries int32 patterns unchanged.
"""
from bmk.bm1684.lowering import common as lo


def bdc_32bit_cpy(chip, r):
    f = {"tsk_opd_num": 1}
    lo.tensor(f, "res0", r.dst_addr, lo.stride4(r.dst_stride), shape=lo.shape4(r.shape))
    lo.tensor(f, "opd0", r.src_addr, lo.stride4(r.src_stride))
    return (lo.tiu("arith.copy", **f),)


def bdc_32bit_set_C(chip, r):
    f = {"tsk_opd_num": 1}
    lo.tensor(f, "res0", r.dst_addr, lo.stride4(r.dst_stride), shape=lo.shape4(r.shape))
    lo.const(f, "opd0", lo.bits(r.C, 32))
    return (lo.tiu("arith.copy", **f),)
