"""Checks of the FP32 Binary functions (seed 003 "FP32 Binary Functions").

Remarks of every function, in order: addresses divisible by 4; shape n, h, w in [1, 65535]
and c in [1, 4095]; strides NULL (128-byte aligned layout) or a dim4; the tensors start at the
same NPU; each tensor fits its NPU's memory. C is a C float: a real number that fp32 can hold
(a finite value that would round to infinity is refused; inf and NaN pass as themselves);
select_val an x32 (an int or the fp32 bits of a float).
"""
import math

import numpy as np

from bmk.bm1684.checks import common as c
from bmk.errors import ArgumentError, must

TT = (("dst_addr", "dst_stride"), ("src0_addr", "src0_stride"), ("src1_addr", "src1_stride"))
TC = (("dst_addr", "dst_stride"), ("src_addr", "src_stride"))


def fp32_C(call, value):
    """A C float argument whose fp32 rounding does not overflow."""
    x = c.fp32(call, "C", value)
    with np.errstate(over="ignore"):
        overflows = math.isfinite(x) and not np.isfinite(np.float32(x))
    if overflows:
        raise ArgumentError(must(call, "C", "a float within the fp32 range (|C| <= 3.4028235e38)", value))
    return x


def operands(call, r, names=TT, *, same_npu=True):
    """The address/stride remarks of the tensors `names` ((addr field, stride field), ...) of r
    (32-bit elements) and the shape remark; returns the checked shape."""
    addrs = {a: c.local_addr(call, a, getattr(r, a)) for a, _ in names}
    shape = c.shape(call, r.shape)
    strides = {s: c.stride(call, s, getattr(r, s)) for _, s in names}
    if same_npu:
        c.same_npu(call, **addrs)
    for a, s in names:
        c.fits_local(call, a, addrs[a], shape, strides[s])
    return shape


def binary(call, r):
    operands(call, r, TT)


def binary_C(call, r):
    operands(call, r, TC)
    fp32_C(call, r.C)


def select(call, r):
    operands(call, r, TT)
    c.bits(call, "select_val", r.select_val, 32)


def select_C(call, r):
    operands(call, r, TC)
    fp32_C(call, r.C)
    c.bits(call, "select_val", r.select_val, 32)


def bdc_add(ctx, r): binary("bdc_add", r)                                                    # noqa: E704
def bdc_sub(ctx, r): binary("bdc_sub", r)                                                    # noqa: E704
def bdc_mul(ctx, r): binary("bdc_mul", r)                                                    # noqa: E704
def bdc_div(ctx, r): binary("bdc_div", r)                                                    # noqa: E704
def bdc_mac(ctx, r): binary("bdc_mac", r)                                                    # noqa: E704
def bdc_max(ctx, r): binary("bdc_max", r)                                                    # noqa: E704
def bdc_min(ctx, r): binary("bdc_min", r)                                                    # noqa: E704
def bdc_add_C(ctx, r): binary_C("bdc_add_C", r)                                              # noqa: E704
def bdc_sub_C(ctx, r): binary_C("bdc_sub_C", r)                                              # noqa: E704
def bdc_C_sub(ctx, r): binary_C("bdc_C_sub", r)                                              # noqa: E704
def bdc_mul_C(ctx, r): binary_C("bdc_mul_C", r)                                              # noqa: E704
def bdc_div_C(ctx, r): binary_C("bdc_div_C", r)                                              # noqa: E704
def bdc_C_div(ctx, r): binary_C("bdc_C_div", r)                                              # noqa: E704
def bdc_mac_C(ctx, r): binary_C("bdc_mac_C", r)                                              # noqa: E704
def bdc_max_C(ctx, r): binary_C("bdc_max_C", r)                                              # noqa: E704
def bdc_min_C(ctx, r): binary_C("bdc_min_C", r)                                              # noqa: E704
def bdc_greater_select_value(ctx, r): select("bdc_greater_select_value", r)                  # noqa: E704
def bdc_equal_select_value(ctx, r): select("bdc_equal_select_value", r)                      # noqa: E704
def bdc_greater_C_select_value(ctx, r): select_C("bdc_greater_C_select_value", r)            # noqa: E704
def bdc_C_greater_select_value(ctx, r): select_C("bdc_C_greater_select_value", r)            # noqa: E704
def bdc_equal_C_select_value(ctx, r): select_C("bdc_equal_C_select_value", r)                # noqa: E704
