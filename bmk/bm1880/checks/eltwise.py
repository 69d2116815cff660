"""Checks of the element-wise functions (seed 4.19-4.40), by family; the op table gives each
its parameters. A 16-bit operand is two planes (`pair`), a shift fits its opt_*_shift field,
a constant the C type of its seed struct field (s8/u8, or 16 bits for add_const). Every result
plane is each source plane exactly (in place) or apart from it (`results_apart`, issue 32.14;
mac's res, read and written, is no source of this rule)."""
from bmk.bm1880.tensor import FMT_I8

TIU = "tiu"


def _res(c, p, a_name, a):
    """res_low always; res_high NULL for an 8-bit result, else the high plane."""
    c.tensor("res_low", p.res_low)
    c.same_shape("res_low", p.res_low, a_name, a)
    if p.res_high is not None:
        c.tensor("res_high", p.res_high)
        c.pair("res_high", p.res_high, "res_low", p.res_low, "res0_b_str")


def _a16(c, p):
    """a_high/a_low: a 16-bit input, both planes required."""
    c.tensor("a_low", p.a_low)
    c.tensor("a_high", p.a_high)
    c.pair("a_high", p.a_high, "a_low", p.a_low, "opd0_b_str")


def _b16(c, p):
    c.tensor("b_low", p.b_low)
    c.tensor("b_high", p.b_high)
    c.pair("b_high", p.b_high, "b_low", p.b_low, "opd1_b_str")
    c.same_shape("b_low", p.b_low, "a_low", p.a_low)


def _b(c, p):
    c.tensor("b", p.b)
    c.same_shape("b", p.b, "a", p.a)


def _const(c, p, bits):
    c.flag("b_is_signed", p.b_is_signed)
    c.const("b", p.b, p.b_is_signed, bits)


def _16_bit_res(c, p):
    if p.res_high is None:
        c.fail("res_high", "a TensorLmem (the result is 16-bit)", None)


def product(c, p, const_b, accumulate):
    """mul, mul_const, mac, mac_const (seed 4.19-4.22): res = (a * b [+ res << lshift_width])
    >> rshift_width; mac reads a 16-bit res."""
    c.tensor("a", p.a)
    if not const_b:
        _b(c, p)
    if accumulate:
        c.tensor("res_low", p.res_low)
        if p.res_high is None:
            c.fail("res_high", "a TensorLmem (mac reads a 16-bit res: res_high must not be NULL)", None)
    _res(c, p, "a", p.a)
    if accumulate:
        c.flag("res_is_int8", p.res_is_int8)
        c.in_field("lshift_width", p.lshift_width, TIU, "opt_left_shift")
    c.in_field("rshift_width", p.rshift_width, TIU, "opt_right_shift")
    if const_b:
        _const(c, p, 8)
    c.results_apart(p, ("res_low", "res_high"), ("a",) if const_b else ("a", "b"))


def wide(c, p, const_b, signed_result=False):
    """add, add_const, sub (seed 4.23-4.25): 16-bit a (and b); sub's result is signed."""
    _a16(c, p)
    if not const_b:
        _b16(c, p)
    _res(c, p, "a_low", p.a_low)
    if const_b:
        _const(c, p, 16)
    if signed_result:
        c.fmt("res_low", p.res_low, FMT_I8, "the difference is signed")
    c.results_apart(p, ("res_low", "res_high"), ("a_low", "a_high") + (() if const_b else ("b_low", "b_high")))


def extreme(c, p, res, const_b):
    """max, min, min_const (seed 4.26-4.28): the result is the record's field `res`."""
    c.tensor("a", p.a)
    c.tensor(res, getattr(p, res))
    c.same_shape(res, getattr(p, res), "a", p.a)
    if const_b:
        _const(c, p, 8)
    else:
        _b(c, p)
        c.same_sign("b", p.b, "a", p.a)
    c.results_apart(p, (res,), ("a",) if const_b else ("a", "b"))


def arith_shift(c, p):
    """Seed 4.29: a 16-bit signed, bits int8, a 16-bit result."""
    _a16(c, p)
    c.fmt("a_low", p.a_low, FMT_I8, "a is 16-bit signed")
    c.tensor("bits", p.bits)
    c.same_shape("bits", p.bits, "a_low", p.a_low)
    c.fmt("bits", p.bits, FMT_I8, "bits is signed")
    _16_bit_res(c, p)
    _res(c, p, "a_low", p.a_low)
    c.results_apart(p, ("res_low", "res_high"), ("a_low", "a_high", "bits"))


def logic(c, p, wide):
    """and, or, xor (seed 4.30-4.35) on 8-bit tensors or (`wide`) 16-bit ones."""
    if wide:
        _a16(c, p)
        _b16(c, p)
        _16_bit_res(c, p)
        _res(c, p, "a_low", p.a_low)
        c.results_apart(p, ("res_low", "res_high"), ("a_low", "a_high", "b_low", "b_high"))
        return
    for name in ("res", "a", "b"):
        c.tensor(name, getattr(p, name))
    c.same_shape("b", p.b, "a", p.a)
    c.same_shape("res", p.res, "a", p.a)
    c.results_apart(p, ("res",), ("a", "b"))


def copy(c, p, strided):
    """copy, copy_with_stride (seed 4.36-4.37): the given strides fit the res0 (dst) and opd0
    (src) stride fields."""
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    c.same_shape("dst", p.dst, "src", p.src)
    if not strided:
        c.results_apart(p, ("dst",), ("src",))
        return
    for name, slot in (("dst_stride", "res0"), ("src_stride", "opd0")):
        s = getattr(p, name)
        if s is None or s.dim != 4:
            c.fail(name, "a stride_t4", s)
        for dim in "nchw":
            c.in_field(f"{name}.{dim}", getattr(s, dim), TIU, f"{slot}_{dim}_str")
    c.in_place_or_apart(c.view("dst", p.dst, p.dst_stride), c.view("src", p.src, p.src_stride))


def relu(c, p):
    """Seed 4.40."""
    c.tensor("ifmap", p.ifmap)
    c.tensor("ofmap", p.ofmap)
    c.same_shape("ofmap", p.ofmap, "ifmap", p.ifmap)
    c.results_apart(p, ("ofmap",), ("ifmap",))
