"""Checks of the comparisons (seed 001: greater, less, equal, greater_equal, less_equal,
not_equal and their _C forms).

Remarks: operands start on the same NPU; shape in [1, 65535]; NULL stride = aligned layout;
src_dtype at least as wide as dst_dtype; true_val in the range of dst_dtype, C in that of
src_dtype. dtypes: any 8/16/32-bit integer or float type (the seed names none).
"""
from bmk.bm1684x.checks.common import Check
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES


def _dtypes(ck, p):
    dst_dtype = ck.dtype("dst_dtype", p.dst_dtype, WHOLE_BYTE_DTYPES)
    src_dtype = ck.dtype("src_dtype", p.src_dtype, WHOLE_BYTE_DTYPES)
    ck.wider_or_equal("src_dtype", src_dtype, "dst_dtype", dst_dtype)
    ck.scalar("true_val", p.true_val, dst_dtype)
    return dst_dtype, src_dtype


def tensors(call, p):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(ck, p)
    dst = ck.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src0 = ck.local("src0_addr", p.src0_addr, shape, p.src0_stride, src_dtype)
    src1 = ck.local("src1_addr", p.src1_addr, shape, p.src1_stride, src_dtype)
    ck.same_npu(src0, dst)
    ck.same_npu(src1, dst)


def const(call, p):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dst_dtype, src_dtype = _dtypes(ck, p)
    ck.scalar("C", p.C, src_dtype)
    dst = ck.local("dst_addr", p.dst_addr, shape, p.dst_stride, dst_dtype)
    src = ck.local("src_addr", p.src_addr, shape, p.src_stride, src_dtype)
    ck.same_npu(src, dst)


def bdc_greater(ctx, p):
    tensors("bdc_greater", p)


def bdc_greater_C(ctx, p):  # noqa: N802
    const("bdc_greater_C", p)


def bdc_less(ctx, p):
    tensors("bdc_less", p)


def bdc_less_C(ctx, p):  # noqa: N802
    const("bdc_less_C", p)


def bdc_equal(ctx, p):
    tensors("bdc_equal", p)


def bdc_equal_C(ctx, p):  # noqa: N802
    const("bdc_equal_C", p)


def bdc_greater_equal(ctx, p):
    tensors("bdc_greater_equal", p)


def bdc_greater_equal_C(ctx, p):  # noqa: N802
    const("bdc_greater_equal_C", p)


def bdc_less_equal(ctx, p):
    tensors("bdc_less_equal", p)


def bdc_less_equal_C(ctx, p):  # noqa: N802
    const("bdc_less_equal_C", p)


def bdc_not_equal(ctx, p):
    tensors("bdc_not_equal", p)


def bdc_not_equal_C(ctx, p):  # noqa: N802
    const("bdc_not_equal_C", p)
