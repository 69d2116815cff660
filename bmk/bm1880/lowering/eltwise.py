"""Lowering of the element-wise functions (seed 4.19-4.40) to TIU TENSOR_ARITH descriptors, by
family; the op table gives each its instruction kind (mul, mac, add, sub, max, min, and, or,
xor, copy, arith_shift) and parameters."""
from bmk.bm1880.lowering.common import TIU, const, eltwise, signed, strides


def product(chip, p, kind, const_b, accumulate):
    """mul, mul_const, mac, mac_const (seed 4.19-4.22): res = (a * b [+ (res << lshift_width)])
    >> rshift_width; b an 8-bit constant with `const_b`."""
    extra = dict(res_int8=p.res_is_int8) if accumulate else {}
    f = eltwise(chip, kind, 2, p.res_low, p.a, None if const_b else p.b, res_high=p.res_high, **extra)
    if const_b:
        const(f, p.b, p.b_is_signed)
    f.update(opt_shift_typ=signed(p.res_low), opt_right_shift=p.rshift_width)
    if accumulate:
        f.update(opt_res_add=1, opt_left_shift=p.lshift_width, res0_b_str=p.res_high.la - p.res_low.la)
    return ((TIU, f),)


def wide(chip, p, kind, const_b, signed_result=False):
    """add, add_const (seed 4.23-4.24: a 16-bit constant, opd1_addr holds its 16 bits), sub
    (4.25: the result is always signed)."""
    f = eltwise(chip, kind, 2, p.res_low, p.a_low, None if const_b else p.b_low, res_high=p.res_high,
                a_high=p.a_high, b_high=None if const_b else p.b_high)
    if const_b:
        const(f, p.b, p.b_is_signed, width=16)
        f["opt_opd1_int8"] = 0
    f.update(opt_right_shift=0, opt_shift_typ=signed(p.res_low))
    if signed_result:
        f["opt_res0_sign"] = 1
    return ((TIU, f),)


def extreme(chip, p, kind, res, const_b):
    """max, min, min_const (seed 4.26-4.28): the result is the record's field `res`."""
    f = eltwise(chip, kind, 2, getattr(p, res), p.a, None if const_b else p.b)
    if const_b:
        const(f, p.b, p.b_is_signed)
    f.update(opt_right_shift=0)
    return ((TIU, f),)


def relu(chip, p):
    """Seed 4.40: res = max(0, a), encoded as max with the constant 0."""
    f = const(eltwise(chip, "max", 2, p.ofmap, p.ifmap), 0, p.ifmap.signed)
    f.update(opt_right_shift=0)
    return ((TIU, f),)


def arith_shift(chip, p):
    """Seed 4.29: res = a >> bits (a 16-bit signed, bits int8 in [-16, 16])."""
    f = eltwise(chip, "arith_shift", 2, p.res_low, p.a_low, p.bits, res_high=p.res_high, a_high=p.a_high)
    f.update(opt_right_shift=0, opt_rshift_typ=0, opt_res0_sign=1, opt_opd0_sign=1, opt_opd1_sign=1)
    return ((TIU, f),)


def logic(chip, p, kind, wide):
    """and, or, xor (seed 4.30-4.35): res = a OP b, 8-bit or (`wide`) 16-bit, all unsigned."""
    if wide:
        f = eltwise(chip, kind, 2, p.res_low, p.a_low, p.b_low, res_high=p.res_high, a_high=p.a_high,
                    b_high=p.b_high)
    else:
        f = eltwise(chip, kind, 2, p.res, p.a, p.b)
    f.update(opt_right_shift=0, opt_shift_typ=0, opt_res0_sign=0, opt_opd0_sign=0, opt_opd1_sign=0)
    return ((TIU, f),)


def copy(chip, p, strided):
    """copy (seed 4.36): dst = src inside lmem; copy_with_stride (4.37): with the given dst/src
    strides (w stride included)."""
    f = eltwise(chip, "copy", 1, p.dst, p.src)
    f.update(opt_right_shift=0, opt_shift_typ=0, opt_res0_sign=0, opt_opd0_sign=0)
    if strided:
        strides(f, "res0", p.dst_stride, with_w=True)
        strides(f, "opd0", p.src_stride, with_w=True)
    return ((TIU, f),)
