"""Checks of the comparisons (seed 001: greater, less, equal, greater_equal, less_equal,
not_equal and their _C forms).

Remarks: operands start on the same NPU; shape in [1, 65535]; NULL stride = aligned layout;
src_dtype at least as wide as dst_dtype; true_val in the range of dst_dtype, C in that of
src_dtype. dtypes: any 8/16/32-bit integer or float type (the seed names none). dst is each
source in place (same dtype size and layout) or apart (issue 32.14).
"""
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES


def _dtypes(c, p):
    dst_dtype = c.dtype("dst_dtype", p.dst_dtype, WHOLE_BYTE_DTYPES)
    src_dtype = c.dtype("src_dtype", p.src_dtype, WHOLE_BYTE_DTYPES)
    c.wider_or_equal("src_dtype", src_dtype, "dst_dtype", dst_dtype)
    c.scalar("true_val", p.true_val, dst_dtype)
    return dst_dtype, src_dtype


def tensors(c, p):
    shape = c.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(c, p)
    dst = c.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src0 = c.local("src0_addr", p.src0_addr, shape, p.src0_stride, src_dtype)
    src1 = c.local("src1_addr", p.src1_addr, shape, p.src1_stride, src_dtype)
    c.same_npu(src0, dst)
    c.same_npu(src1, dst)
    c.in_place_or_apart(dst.view, src0.view, src1.view)


def const(c, p):
    shape = c.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(c, p)
    c.scalar("C", p.C, src_dtype)
    dst = c.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src = c.local("src_addr", p.src_addr, shape, p.src_stride, src_dtype)
    c.same_npu(src, dst)
    c.in_place_or_apart(dst.view, src.view)
