"""Checks of the 32-Bit Binary functions (seed 003 "32-Bit Binary Functions", seed 004).

Remarks: addresses divisible by 4, shape ranges, strides, same start NPU, tensors fit (as the
FP32 binary functions); C of and/or/xor an x32; C of arithmetic_shift_C / logical_shift_C an
int in [-32, 32]; C of C_arithmetic_shift an int, of C_logical_shift an unsigned int. The
elements of a shift-amount tensor must be in [-32, 32]: data, not arguments, so the call
cannot check them (the simulator shifts any amount: see bmk/sim/bm1684/arith.py).
"""
from bmk.bm1684.checks import common as c
from bmk.bm1684.checks.fp32_binary import TC, TT, operands


def binary(call, r):
    operands(call, r, TT)


def logic_C(call, r):
    operands(call, r, TC)
    c.bits(call, "C", r.C, 32)


def shift_C(call, r):
    operands(call, r, TC)
    c.integer(call, "C", r.C, -32, 32)


def C_shift(call, r, lo, hi):
    operands(call, r, TC)
    c.integer(call, "C", r.C, lo, hi)


def bdc_32bit_and(ctx, r): binary("bdc_32bit_and", r)                                        # noqa: E704
def bdc_32bit_or(ctx, r): binary("bdc_32bit_or", r)                                          # noqa: E704
def bdc_32bit_xor(ctx, r): binary("bdc_32bit_xor", r)                                        # noqa: E704
def bdc_32bit_and_C(ctx, r): logic_C("bdc_32bit_and_C", r)                                   # noqa: E704
def bdc_32bit_or_C(ctx, r): logic_C("bdc_32bit_or_C", r)                                     # noqa: E704
def bdc_32bit_xor_C(ctx, r): logic_C("bdc_32bit_xor_C", r)                                   # noqa: E704
def bdc_32bit_arithmetic_shift(ctx, r): binary("bdc_32bit_arithmetic_shift", r)              # noqa: E704
def bdc_32bit_logical_shift(ctx, r): binary("bdc_32bit_logical_shift", r)                    # noqa: E704
def bdc_32bit_arithmetic_shift_C(ctx, r): shift_C("bdc_32bit_arithmetic_shift_C", r)         # noqa: E704
def bdc_32bit_logical_shift_C(ctx, r): shift_C("bdc_32bit_logical_shift_C", r)               # noqa: E704
def bdc_32bit_C_arithmetic_shift(ctx, r): C_shift("bdc_32bit_C_arithmetic_shift", r, -2**31, 2**31 - 1)  # noqa: E704
def bdc_32bit_C_logical_shift(ctx, r): C_shift("bdc_32bit_C_logical_shift", r, 0, 2**32 - 1)  # noqa: E704
