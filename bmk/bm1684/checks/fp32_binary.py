"""Checks of the FP32 Binary functions (seed 003 "FP32 Binary Functions"), by family:
`tensors` (src0 OP src1), `const` (src OP C, C OP src), `select` and `select_const`.

Remarks of every function, in order: addresses divisible by 4; shape n, h, w in [1, 65535]
and c in [1, 4095]; strides NULL (128-byte aligned layout) or a dim4; the tensors start at the
same NPU; each tensor fits its NPU's memory; dst is each source in place or apart from it
(the shared rule of issue 32.14). C is a C float: a real number that fp32 can hold
(a finite value that would round to infinity is refused; inf and NaN pass as themselves);
select_val an x32 (an int or the fp32 bits of a float).
"""
from bmk.dtypes import FP32

TT = ("dst", "src0", "src1")        # the tensors of `src0 OP src1` (their *_addr, *_stride)
TC = ("dst", "src")                 # of `src OP C`


def operands(c, p, names):
    """The address / stride remarks of the 32-bit tensors `names` of p and the shape remark;
    returns the checked shape."""
    addrs = {n: c.address(f"{n}_addr", getattr(p, f"{n}_addr")) for n in names}
    shape = c.shape(p.shape)
    strides = {n: c.stride(f"{n}_stride", getattr(p, f"{n}_stride")) for n in names}
    first, *rest = names
    c.same_start_npu(f"{first}_addr", addrs[first], **{f"{n}_addr": addrs[n] for n in rest})
    for n in names:
        c.fits(f"{n}_addr", addrs[n], shape, strides[n])
    views = [c.view(f"{n}_addr", addrs[n], shape, strides[n]) for n in names]
    c.in_place_or_apart(*views)             # names[0] is dst (issue 32.14)
    return shape


def fp32_C(c, value):       # noqa: N802 (the seed's name)
    """A C float argument within the fp32 range, or an inf or NaN (the shared rule)."""
    x = c.fp32("C", value)
    c.float_constant("C", value, FP32)
    return x


def tensors(c, p):
    operands(c, p, TT)


def const(c, p):
    operands(c, p, TC)
    fp32_C(c, p.C)


def select(c, p):
    operands(c, p, TT)
    c.bits("select_val", p.select_val, 32)


def select_const(c, p):
    operands(c, p, TC)
    fp32_C(c, p.C)
    c.bits("select_val", p.select_val, 32)
