"""Lowering of the 32-Bit Binary functions (seed 003 "32-Bit Binary Functions", seed 004).

One ar_op command each, every operand int32 precision (isa-facts bm1684-lowering.md: "ar_op 3,
prec 4"): arith.and / or / xor on the bit patterns; arith.shift for the shifts, the amount in
opd1 (positive: left, negative: right). Arithmetic versus logical is the sign of the shifted
operand opd0 (signed: arithmetic, unsigned: logical), the result's sign (opt_opd2_sign, see
bmk/sim/bm1684/arith.py) follows it; opt_shift_typ keeps the vendor's ar value 0 for both (the
semantics read the sign only). The amount opd1 is signed. Constants are int32 bit patterns in
opdX_addr: opd1 for the _C forms, opd0 for the C_ forms (C shifted by the tensor).
"""
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.lowering.fp32_binary import binary, with_const


def _logic(kind):
    return lambda chip, r: binary(kind, r, prec="int32", signed=(0, 0, 0))


def _logic_C(kind):
    return lambda chip, r: with_const(kind, r, "opd1", lo.bits(r.C, 32), prec="int32", signed=(0, 0, 0))


def _shift(arithmetic):
    return lambda chip, r: binary("arith.shift", r, prec="int32", signed=(arithmetic, 1, arithmetic))


def _shift_C(arithmetic, const_slot):
    return lambda chip, r: with_const("arith.shift", r, const_slot, lo.bits(r.C, 32), prec="int32",
                                      signed=(arithmetic, 1, arithmetic))


bdc_32bit_and, bdc_32bit_or, bdc_32bit_xor = _logic("arith.and"), _logic("arith.or"), _logic("arith.xor")
bdc_32bit_and_C, bdc_32bit_or_C = _logic_C("arith.and"), _logic_C("arith.or")
bdc_32bit_xor_C = _logic_C("arith.xor")
bdc_32bit_arithmetic_shift, bdc_32bit_logical_shift = _shift(1), _shift(0)
bdc_32bit_arithmetic_shift_C, bdc_32bit_logical_shift_C = _shift_C(1, "opd1"), _shift_C(0, "opd1")
bdc_32bit_C_arithmetic_shift, bdc_32bit_C_logical_shift = _shift_C(1, "opd0"), _shift_C(0, "opd0")
