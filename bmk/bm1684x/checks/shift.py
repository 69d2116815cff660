"""Checks of the shifts (seed 001: arithmetic_shift, logical_shift and their _C forms).

Remarks: operands start on the same NPU; shape in [1, 65535]; NULL stride = aligned layout;
arithmetic: dst_dtype and src_dtype in {INT32, UINT32, INT16, UINT16, INT8, UINT8}, both
signed or both unsigned; logical: both in {UINT32, UINT16, UINT8}; shift_dtype in {INT32,
INT16, INT8} and no wider than src_dtype; C in [-32, 31]; rounding_mode a rounding_mode_t.
(The range [-32, 31] of a shift *tensor's* elements is data, which a call cannot see.)
"""
from bmk.bm1684x.checks.common import Check
from bmk.bm1684x.constants import (DT_INT8, DT_INT16, DT_INT32, DT_UINT8, DT_UINT16, DT_UINT32, INTEGER_DTYPES,
                                   dtype_name, dtype_of)

LOGICAL_DTYPES = (DT_UINT32, DT_UINT16, DT_UINT8)
SHIFT_DTYPES = (DT_INT32, DT_INT16, DT_INT8)
SHIFT_MIN, SHIFT_MAX = -32, 31


def _dtypes(ck, p, allowed, same_sign):
    dst_dtype = ck.dtype("dst_dtype", p.dst_dtype, allowed)
    src_dtype = ck.dtype("src_dtype", p.src_dtype, allowed)
    if same_sign and dtype_of(dst_dtype).signed != dtype_of(src_dtype).signed:
        ck.fail("dst_dtype", f"signed like src_dtype ({dtype_name(src_dtype)}): both signed or both unsigned",
                dtype_name(dst_dtype))
    return dst_dtype, src_dtype


def _tensor(call, p, allowed, same_sign):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(ck, p, allowed, same_sign)
    shift_dtype = ck.dtype("shift_dtype", p.shift_dtype, SHIFT_DTYPES)
    ck.wider_or_equal("src_dtype", src_dtype, "shift_dtype", shift_dtype)
    ck.rounding_mode("rounding_mode", p.rounding_mode)
    dst = ck.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src = ck.local("src_addr", p.src_addr, shape, p.src_stride, src_dtype)
    shift = ck.local("shift_addr", p.shift_addr, shape, p.shift_stride, shift_dtype)
    ck.same_npu(src, dst)
    ck.same_npu(shift, dst)


def _const(call, p, allowed, same_sign):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(ck, p, allowed, same_sign)
    ck.int_range("C", p.C, SHIFT_MIN, SHIFT_MAX)
    ck.rounding_mode("rounding_mode", p.rounding_mode)
    dst = ck.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src = ck.local("src_addr", p.src_addr, shape, p.src_stride, src_dtype)
    ck.same_npu(src, dst)


def bdc_arithmetic_shift(ctx, p):
    _tensor("bdc_arithmetic_shift", p, INTEGER_DTYPES, True)


def bdc_arithmetic_shift_C(ctx, p):  # noqa: N802
    _const("bdc_arithmetic_shift_C", p, INTEGER_DTYPES, True)


def bdc_logical_shift(ctx, p):
    _tensor("bdc_logical_shift", p, LOGICAL_DTYPES, False)


def bdc_logical_shift_C(ctx, p):  # noqa: N802
    _const("bdc_logical_shift_C", p, LOGICAL_DTYPES, False)
