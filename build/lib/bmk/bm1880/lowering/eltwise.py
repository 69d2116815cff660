"""Lowering of the element-wise functions (seed 4.19-4.40) to TIU TENSOR_ARITH descriptors."""
from bmk.bm1880.lowering.common import (EU_ADD, EU_AND, EU_COPY, EU_MAC, EU_MAX, EU_MIN, EU_MUL, EU_OR, EU_SHIFT,
                                        EU_SUB, EU_XOR, TIU, const as _const, eltwise as _eltwise, signed as _signed,
                                        strides as _strides)


# -- element-wise (seed 4.19-4.40) --------------------------------------------------------------
def tpu_mul(chip, p):
    """Seed 4.19: res = (a * b) >> rshift_width."""
    f = _eltwise(EU_MUL, 2, p.res_low, p.a, p.b, res_high=p.res_high)
    f.update(opt_shift_typ=_signed(p.res_low), opt_right_shift=p.rshift_width)
    return ((TIU, f),)


def tpu_mul_const(chip, p):
    """Seed 4.20: res = (a * b) >> rshift_width, b an 8-bit constant."""
    f = _const(_eltwise(EU_MUL, 2, p.res_low, p.a, res_high=p.res_high), p.b, p.b_is_signed)
    f.update(opt_shift_typ=_signed(p.res_low), opt_right_shift=p.rshift_width)
    return ((TIU, f),)


def tpu_mac(chip, p):
    """Seed 4.21: res = (a * b + (res << lshift_width)) >> rshift_width."""
    f = _eltwise(EU_MAC, 2, p.res_low, p.a, p.b, res_high=p.res_high, res_int8=p.res_is_int8)
    f.update(opt_res_add=1, opt_left_shift=p.lshift_width, opt_right_shift=p.rshift_width,
             opt_shift_typ=_signed(p.res_low), res0_b_str=p.res_high.la - p.res_low.la)
    return ((TIU, f),)


def tpu_mac_const(chip, p):
    """Seed 4.22: as tpu_mac, b an 8-bit constant."""
    f = _const(_eltwise(EU_MAC, 2, p.res_low, p.a, res_high=p.res_high, res_int8=p.res_is_int8),
               p.b, p.b_is_signed)
    f.update(opt_res_add=1, opt_left_shift=p.lshift_width, opt_right_shift=p.rshift_width,
             opt_shift_typ=_signed(p.res_low), res0_b_str=p.res_high.la - p.res_low.la)
    return ((TIU, f),)


def tpu_add(chip, p):
    """Seed 4.23: res = a + b, a and b 16-bit."""
    f = _eltwise(EU_ADD, 2, p.res_low, p.a_low, p.b_low, res_high=p.res_high, a_high=p.a_high, b_high=p.b_high)
    f.update(opt_right_shift=0, opt_shift_typ=_signed(p.res_low))
    return ((TIU, f),)


def tpu_add_const(chip, p):
    """Seed 4.24: res = a + b, b a 16-bit constant (opd1_addr holds its 16 bits)."""
    f = _eltwise(EU_ADD, 2, p.res_low, p.a_low, res_high=p.res_high, a_high=p.a_high)
    _const(f, p.b, p.b_is_signed, width=16)
    f.update(opt_opd1_int8=0, opt_right_shift=0, opt_shift_typ=_signed(p.res_low))
    return ((TIU, f),)


def tpu_sub(chip, p):
    """Seed 4.25: res = a - b (the result is always signed)."""
    f = _eltwise(EU_SUB, 2, p.res_low, p.a_low, p.b_low, res_high=p.res_high, a_high=p.a_high, b_high=p.b_high)
    f.update(opt_right_shift=0, opt_shift_typ=_signed(p.res_low), opt_res0_sign=1)
    return ((TIU, f),)


def tpu_max(chip, p):
    """Seed 4.26: res = max(a, b)."""
    f = _eltwise(EU_MAX, 2, p.max, p.a, p.b)
    f.update(opt_right_shift=0)
    return ((TIU, f),)


def tpu_min(chip, p):
    """Seed 4.27: res = min(a, b)."""
    f = _eltwise(EU_MIN, 2, p.min, p.a, p.b)
    f.update(opt_right_shift=0)
    return ((TIU, f),)


def tpu_min_const(chip, p):
    """Seed 4.28: res = min(a, b), b an 8-bit constant."""
    f = _const(_eltwise(EU_MIN, 2, p.min, p.a), p.b, p.b_is_signed)
    f.update(opt_right_shift=0)
    return ((TIU, f),)


def tpu_relu(chip, p):
    """Seed 4.40: res = max(0, a), encoded as max with the constant 0."""
    f = _const(_eltwise(EU_MAX, 2, p.ofmap, p.ifmap), 0, p.ifmap.signed)
    f.update(opt_right_shift=0)
    return ((TIU, f),)


def tpu_arith_shift(chip, p):
    """Seed 4.29: res = a >> bits (a 16-bit signed, bits int8 in [-16, 16])."""
    f = _eltwise(EU_SHIFT, 2, p.res_low, p.a_low, p.bits, res_high=p.res_high, a_high=p.a_high)
    f.update(opt_right_shift=0, opt_rshift_typ=0, opt_res0_sign=1, opt_opd0_sign=1, opt_opd1_sign=1)
    return ((TIU, f),)


def _logic8(eu, p):
    f = _eltwise(eu, 2, p.res, p.a, p.b)
    f.update(opt_right_shift=0, opt_shift_typ=0, opt_res0_sign=0, opt_opd0_sign=0, opt_opd1_sign=0)
    return ((TIU, f),)


def _logic16(eu, p):
    f = _eltwise(eu, 2, p.res_low, p.a_low, p.b_low, res_high=p.res_high, a_high=p.a_high, b_high=p.b_high)
    f.update(opt_right_shift=0, opt_shift_typ=0, opt_res0_sign=0, opt_opd0_sign=0, opt_opd1_sign=0)
    return ((TIU, f),)


def tpu_and_int8(chip, p):
    """Seed 4.30: res = a & b (8-bit)."""
    return _logic8(EU_AND, p)


def tpu_and_int16(chip, p):
    """Seed 4.31: res = a & b (16-bit)."""
    return _logic16(EU_AND, p)


def tpu_or_int8(chip, p):
    """Seed 4.32: res = a | b (8-bit)."""
    return _logic8(EU_OR, p)


def tpu_or_int16(chip, p):
    """Seed 4.33: res = a | b (16-bit)."""
    return _logic16(EU_OR, p)


def tpu_xor_int8(chip, p):
    """Seed 4.34: res = a ^ b (8-bit)."""
    return _logic8(EU_XOR, p)


def tpu_xor_int16(chip, p):
    """Seed 4.35: res = a ^ b (16-bit)."""
    return _logic16(EU_XOR, p)


def tpu_copy(chip, p):
    """Seed 4.36: dst = src inside lmem (TIU copy)."""
    f = _eltwise(EU_COPY, 1, p.dst, p.src)
    f.update(opt_right_shift=0, opt_shift_typ=0, opt_res0_sign=0, opt_opd0_sign=0)
    return ((TIU, f),)


def tpu_copy_with_stride(chip, p):
    """Seed 4.37: as tpu_copy with the given dst/src strides (w stride included)."""
    f = _eltwise(EU_COPY, 1, p.dst, p.src)
    f.update(opt_right_shift=0, opt_shift_typ=0, opt_res0_sign=0, opt_opd0_sign=0)
    _strides(f, "res0", p.dst_stride, with_w=True)
    _strides(f, "opd0", p.src_stride, with_w=True)
    return ((TIU, f),)
