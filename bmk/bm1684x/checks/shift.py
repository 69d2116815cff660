"""Checks of the shifts (seed 001: arithmetic_shift, logical_shift and their _C forms).

Remarks: operands start on the same NPU; shape in [1, 65535]; NULL stride = aligned layout;
arithmetic: dst_dtype and src_dtype in {INT32, UINT32, INT16, UINT16, INT8, UINT8}, both
signed or both unsigned; logical: both in {UINT32, UINT16, UINT8}; shift_dtype in {INT32,
INT16, INT8} and no wider than src_dtype; C in [-32, 31]; rounding_mode a rounding_mode_t.
dst is each source in place or apart (issue 32.14). (The range [-32, 31] of a shift
*tensor's* elements is data, which a call cannot see.)
The op table gives `allowed` (the dst/src dtypes) and `same_sign` (arithmetic shifts).
"""
from bmk.bm1684x.constants import (DT_INT8, DT_INT16, DT_INT32, DT_UINT8, DT_UINT16, DT_UINT32, dtype_name,
                                   dtype_of)

LOGICAL_DTYPES = (DT_UINT32, DT_UINT16, DT_UINT8)
SHIFT_DTYPES = (DT_INT32, DT_INT16, DT_INT8)
SHIFT_MIN, SHIFT_MAX = -32, 31


def _dtypes(c, p, allowed, same_sign):
    dst_dtype = c.dtype("dst_dtype", p.dst_dtype, allowed)
    src_dtype = c.dtype("src_dtype", p.src_dtype, allowed)
    if same_sign and dtype_of(dst_dtype).signed != dtype_of(src_dtype).signed:
        c.fail("dst_dtype", f"signed like src_dtype ({dtype_name(src_dtype)}): both signed or both unsigned",
               dtype_name(dst_dtype))
    return dst_dtype, src_dtype


def tensor(c, p, allowed, same_sign):
    shape = c.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(c, p, allowed, same_sign)
    shift_dtype = c.dtype("shift_dtype", p.shift_dtype, SHIFT_DTYPES)
    c.wider_or_equal("src_dtype", src_dtype, "shift_dtype", shift_dtype)
    c.rounding_mode("rounding_mode", p.rounding_mode)
    dst = c.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src = c.local("src_addr", p.src_addr, shape, p.src_stride, src_dtype)
    shift = c.local("shift_addr", p.shift_addr, shape, p.shift_stride, shift_dtype)
    c.same_npu(src, dst)
    c.same_npu(shift, dst)
    c.in_place_or_apart(dst.view, src.view, shift.view)


def const(c, p, allowed, same_sign):
    shape = c.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(c, p, allowed, same_sign)
    c.integer("C", p.C, SHIFT_MIN, SHIFT_MAX)
    c.rounding_mode("rounding_mode", p.rounding_mode)
    dst = c.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src = c.local("src_addr", p.src_addr, shape, p.src_stride, src_dtype)
    c.same_npu(src, dst)
    c.in_place_or_apart(dst.view, src.view)
