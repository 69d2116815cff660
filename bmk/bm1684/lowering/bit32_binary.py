"""Lowering of the 32-Bit Binary functions (seed 003 "32-Bit Binary Functions", seed 004), by
family: `logic` (and, or, xor), `logic_const`, `shift` and `shift_const`; the op table gives
the kind, whether a shift is arithmetic and the constant's slot.

One ar_op command each, every operand int32 precision (isa-facts bm1684-lowering.md: "ar_op 3,
prec 4"): arith.and / or / xor on the bit patterns; arith.shift for the shifts, the amount in
opd1 (positive: left, negative: right). Arithmetic versus logical is the sign of the shifted
operand opd0 (signed: arithmetic, unsigned: logical), the result's sign (opt_opd2_sign, see
bmk/sim/bm1684/arith.py) follows it; opt_shift_typ keeps the vendor's ar value 0 for both (the
semantics read the sign only). The amount opd1 is signed. Constants are int32 bit patterns in
opdX_addr: opd1 for the _C forms, opd0 for the C_ forms (C shifted by the tensor).
"""
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.lowering.fp32_binary import binary, const_binary

UNSIGNED = (0, 0, 0)        # the (opd0, opd1, result) signs of the bitwise functions


def logic(chip, p, kind):
    return binary(chip, kind, p, prec="int32", signed=UNSIGNED)


def logic_const(chip, p, kind):
    return const_binary(chip, kind, p, "opd1", lo.bits(p.C, 32), prec="int32", signed=UNSIGNED)


def shift(chip, p, arithmetic):
    return binary(chip, "arith.shift", p, prec="int32", signed=(arithmetic, 1, arithmetic))


def shift_const(chip, p, arithmetic, slot):
    return const_binary(chip, "arith.shift", p, slot, lo.bits(p.C, 32), prec="int32",
                        signed=(arithmetic, 1, arithmetic))
