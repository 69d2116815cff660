"""Checks of the element-wise functions (seed 4.19-4.40)."""
from bmk.bm1880.checks.common import SHIFT_MAX, Check


# -- element-wise -----------------------------------------------------------------------------
def _res(c, p, a_name, a):
    """res_low always; res_high NULL for an 8-bit result, else the high plane."""
    c.tensor("res_low", p.res_low)
    c.same_shape("res_low", p.res_low, a_name, a)
    if p.res_high is not None:
        c.tensor("res_high", p.res_high)
        c.pair("res_high", p.res_high, "res_low", p.res_low)


def _a16(c, p):
    """a_high/a_low: a 16-bit input, both planes required."""
    c.tensor("a_low", p.a_low)
    c.tensor("a_high", p.a_high)
    c.pair("a_high", p.a_high, "a_low", p.a_low)


def _b16(c, p):
    c.tensor("b_low", p.b_low)
    c.tensor("b_high", p.b_high)
    c.pair("b_high", p.b_high, "b_low", p.b_low)
    c.same_shape("b_low", p.b_low, "a_low", p.a_low)


def tpu_mul(ctx, p):
    c = Check(ctx, "tpu_mul")
    c.tensor("a", p.a)
    c.tensor("b", p.b)
    c.same_shape("b", p.b, "a", p.a)
    _res(c, p, "a", p.a)
    c.int_range("rshift_width", p.rshift_width, 0, SHIFT_MAX)


def tpu_mul_const(ctx, p):
    c = Check(ctx, "tpu_mul_const")
    c.tensor("a", p.a)
    _res(c, p, "a", p.a)
    c.flag("b_is_signed", p.b_is_signed)
    c.const("b", p.b, p.b_is_signed, 8)
    c.int_range("rshift_width", p.rshift_width, 0, SHIFT_MAX)


def _mac(c, p):
    c.tensor("a", p.a)
    c.tensor("res_low", p.res_low)
    if p.res_high is None:
        c.fail("res_high", "a TensorLmem (mac reads a 16-bit res: res_high must not be NULL)", None)
    _res(c, p, "a", p.a)
    c.flag("res_is_int8", p.res_is_int8)
    c.int_range("lshift_width", p.lshift_width, 0, SHIFT_MAX)
    c.int_range("rshift_width", p.rshift_width, 0, SHIFT_MAX)


def tpu_mac(ctx, p):
    c = Check(ctx, "tpu_mac")
    _mac(c, p)
    c.tensor("b", p.b)
    c.same_shape("b", p.b, "a", p.a)


def tpu_mac_const(ctx, p):
    c = Check(ctx, "tpu_mac_const")
    _mac(c, p)
    c.flag("b_is_signed", p.b_is_signed)
    c.const("b", p.b, p.b_is_signed, 8)


def tpu_add(ctx, p):
    c = Check(ctx, "tpu_add")
    _a16(c, p)
    _b16(c, p)
    _res(c, p, "a_low", p.a_low)


def tpu_add_const(ctx, p):
    c = Check(ctx, "tpu_add_const")
    _a16(c, p)
    _res(c, p, "a_low", p.a_low)
    c.flag("b_is_signed", p.b_is_signed)
    c.const("b", p.b, p.b_is_signed, 16)


def tpu_sub(ctx, p):
    c = Check(ctx, "tpu_sub")
    _a16(c, p)
    _b16(c, p)
    _res(c, p, "a_low", p.a_low)
    c.fmt("res_low", p.res_low, 4, "FMT_I8 (the difference is signed)")


def _max_min(ctx, call, res_name, p):
    c = Check(ctx, call)
    c.tensor("a", p.a)
    res = c.tensor(res_name, getattr(p, res_name))
    c.same_shape(res_name, res, "a", p.a)
    return c


def tpu_max(ctx, p):
    c = _max_min(ctx, "tpu_max", "max", p)
    c.tensor("b", p.b)
    c.same_shape("b", p.b, "a", p.a)
    c.same_sign("b", p.b, "a", p.a)


def tpu_min(ctx, p):
    c = _max_min(ctx, "tpu_min", "min", p)
    c.tensor("b", p.b)
    c.same_shape("b", p.b, "a", p.a)
    c.same_sign("b", p.b, "a", p.a)


def tpu_min_const(ctx, p):
    c = _max_min(ctx, "tpu_min_const", "min", p)
    c.flag("b_is_signed", p.b_is_signed)
    c.const("b", p.b, p.b_is_signed, 8)


def tpu_arith_shift(ctx, p):
    c = Check(ctx, "tpu_arith_shift")
    _a16(c, p)
    c.fmt("a_low", p.a_low, 4, "FMT_I8 (a is 16-bit signed)")
    c.tensor("bits", p.bits)
    c.same_shape("bits", p.bits, "a_low", p.a_low)
    c.fmt("bits", p.bits, 4, "FMT_I8 (bits is signed)")
    if p.res_high is None:
        c.fail("res_high", "a TensorLmem (the result is 16-bit)", None)
    _res(c, p, "a_low", p.a_low)


def _logic8(ctx, call, p):
    c = Check(ctx, call)
    for name in ("res", "a", "b"):
        c.tensor(name, getattr(p, name))
    c.same_shape("b", p.b, "a", p.a)
    c.same_shape("res", p.res, "a", p.a)


def _logic16(ctx, call, p):
    c = Check(ctx, call)
    _a16(c, p)
    _b16(c, p)
    if p.res_high is None:
        c.fail("res_high", "a TensorLmem (the result is 16-bit)", None)
    _res(c, p, "a_low", p.a_low)


def tpu_and_int8(ctx, p):
    _logic8(ctx, "tpu_and_int8", p)


def tpu_and_int16(ctx, p):
    _logic16(ctx, "tpu_and_int16", p)


def tpu_or_int8(ctx, p):
    _logic8(ctx, "tpu_or_int8", p)


def tpu_or_int16(ctx, p):
    _logic16(ctx, "tpu_or_int16", p)


def tpu_xor_int8(ctx, p):
    _logic8(ctx, "tpu_xor_int8", p)


def tpu_xor_int16(ctx, p):
    _logic16(ctx, "tpu_xor_int16", p)


def tpu_copy(ctx, p):
    c = Check(ctx, "tpu_copy")
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    c.same_shape("dst", p.dst, "src", p.src)


def tpu_copy_with_stride(ctx, p):
    c = Check(ctx, "tpu_copy_with_stride")
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    c.same_shape("dst", p.dst, "src", p.src)
    for name in ("dst_stride", "src_stride"):
        s = getattr(p, name)
        if s is None or s.dim != 4:
            c.fail(name, "a stride_t4", s)
        for dim in ("n", "c", "h", "w"):
            c.int_range(f"{name}.{dim}", getattr(s, dim), 0, 0xFFFF)


def tpu_relu(ctx, p):
    c = Check(ctx, "tpu_relu")
    c.tensor("ifmap", p.ifmap)
    c.tensor("ofmap", p.ofmap)
    c.same_shape("ofmap", p.ofmap, "ifmap", p.ifmap)
