"""Checks of the 32-Bit Binary functions (seed 003 "32-Bit Binary Functions", seed 004), by
family: `tensors` (and, or, xor, the tensor shifts: the FP32 binary remarks), `logic_const`
(C an x32), `shift_const` (C of arithmetic_shift_C / logical_shift_C an int in [-32, 32]) and
`const_shift` (C of C_arithmetic_shift an int, of C_logical_shift an unsigned int: the op
table gives the C type). The elements of a shift-amount tensor must be in [-32, 32]: data, not
arguments, so the call cannot check them (the simulator shifts any amount:
bmk/sim/bm1684/arith.py).
"""
from bmk.bm1684.checks.fp32_binary import TC, TT, operands

SHIFT_MAX = 32          # the seed's shift range [-32, 32]


def tensors(c, p):
    operands(c, p, TT)


def logic_const(c, p):
    operands(c, p, TC)
    c.bits("C", p.C, 32)


def shift_const(c, p):
    operands(c, p, TC)
    c.integer("C", p.C, -SHIFT_MAX, SHIFT_MAX)


def const_shift(c, p, dtype):
    """C shifted by the tensor: C in the range of its C type `dtype` (int or unsigned int)."""
    operands(c, p, TC)
    c.integer("C", p.C, dtype.min, dtype.max)
