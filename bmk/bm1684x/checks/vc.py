"""Checks of the vector cross functions (seed 001: vc_and, vc_or, vc_xor, vc_min, vc_max,
vc_greater, vc_less, vc_equal, vc_greater_equal, vc_less_equal, vc_not_equal).

Remarks: dst and src1 start on the same NPU; src0_len and src1_len in [1, 65535]; dst is a
matrix (src0_len rows, src1_len columns), src0 and src1 vectors; for the comparisons
src_dtype is at least as wide as dst_dtype and true_val is in dst_dtype's range.
Layouts (isa-facts/bm1684x-memory.md): a vector of length L with w per channel is the aligned
tensor (1, ceil(L/w), 1, w); the matrix is (src0_len, ceil(src1_len/w1), 1, w1) with
w1 = src1_len_per_channel. Each must start 64-byte aligned (the vendor firmware asserts it)
and fit its NPUs' local memory; *_len_per_channel is in [1, 65535] (its field's width).
dst is a vector exactly (the same address and layout: one row, the element-wise case) or
apart from it: the matrix reads each vector element for a whole row or column, so a partial
overlap would read results (issue 32.14). src0 may start on another NPU: only the bytes each
NPU shares count.
"""
from bmk.bm1684x.checks.common import SHAPE_MAX
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES
from bmk.layout import ceil_div, dim4


def vector_shape(length, per_channel):
    return dim4(1, ceil_div(length, per_channel), 1, per_channel)


def matrix_shape(rows, cols, per_channel):
    return dim4(rows, ceil_div(cols, per_channel), 1, per_channel)


def _operands(c, p, dst_dtype, src_dtype):
    len0 = c.integer("src0_len", p.src0_len, 1, SHAPE_MAX)
    len1 = c.integer("src1_len", p.src1_len, 1, SHAPE_MAX)
    w0 = c.integer("src0_len_per_channel", p.src0_len_per_channel, 1, SHAPE_MAX)
    w1 = c.integer("src1_len_per_channel", p.src1_len_per_channel, 1, SHAPE_MAX)
    dst = c.local("dst_addr", p.dst_addr, matrix_shape(len0, len1, w1), None, dst_dtype, "matrix layout")
    src0 = c.local("src0_addr", p.src0_addr, vector_shape(len0, w0), None, src_dtype, "vector layout")
    src1 = c.local("src1_addr", p.src1_addr, vector_shape(len1, w1), None, src_dtype, "vector layout")
    c.same_npu(src1, dst)
    c.in_place_or_apart(dst.view, src0.view, src1.view)


def binary(c, p, allowed):
    dtype = c.dtype("dtype", p.dtype, allowed)
    _operands(c, p, dtype, dtype)


def compare(c, p):
    dst_dtype = c.dtype("dst_dtype", p.dst_dtype, WHOLE_BYTE_DTYPES)
    src_dtype = c.dtype("src_dtype", p.src_dtype, WHOLE_BYTE_DTYPES)
    c.wider_or_equal("src_dtype", src_dtype, "dst_dtype", dst_dtype)
    c.scalar("true_val", p.true_val, dst_dtype)
    _operands(c, p, dst_dtype, src_dtype)
