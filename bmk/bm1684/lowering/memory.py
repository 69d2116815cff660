"""Lowering of the Memory functions (seed 003 "Memory Functions").

okk_bdc_32bit_cpy is one ar copy with one operand (the vendor's own copies: tsk_opd_num 1,
eu copy, fp32 precisions); okk_bdc_32bit_set_C is the same copy from a constant opd0
(isa-facts bm1684-lowering.md: "ar_op copy with const opd0"). 32-bit data moves bit for bit,
so the fp32 precision of a copy carries int32 patterns unchanged.
"""
from bmk.bm1684.lowering import common as lo


def copy(chip, p):
    f = {"tsk_opd_num": 1}
    lo.tensor(chip, f, "res0", p.dst_addr, lo.stride4(p.dst_stride), shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", p.src_addr, lo.stride4(p.src_stride))
    return (lo.tiu(chip, "arith.copy", **f),)


def set_C(chip, p):       # noqa: N802 (the seed's name)
    f = {"tsk_opd_num": 1}
    lo.tensor(chip, f, "res0", p.dst_addr, lo.stride4(p.dst_stride), shape=lo.shape4(p.shape))
    lo.const(chip, f, "opd0", lo.bits(p.C, 32))
    return (lo.tiu(chip, "arith.copy", **f),)
