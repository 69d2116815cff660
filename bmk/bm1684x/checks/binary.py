"""Checks of the element-wise binary functions (seed 001: and, or, xor, min, max and their _C
forms). Remarks: the operands start on the same NPU; shape in [1, 65535]; NULL stride =
aligned layout, else free; C in the range of dtype.

dtype: the seed leaves it open; bmk takes the integer types for the bitwise functions (AND,
OR, XOR of floats is not a formula of the seed) and every 8/16/32-bit type for min/max.
"""
from bmk.bm1684x.checks.common import Check
from bmk.bm1684x.constants import INTEGER_DTYPES, WHOLE_BYTE_DTYPES


def _tensors(call, p, allowed):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dtype = ck.dtype("dtype", p.dtype, allowed)
    dst = ck.local("dst_addr", p.dst_addr, shape, p.dst_stride, dtype)
    src0 = ck.local("src0_addr", p.src0_addr, shape, p.src0_stride, dtype)
    src1 = ck.local("src1_addr", p.src1_addr, shape, p.src1_stride, dtype)
    ck.same_npu(src0, dst)
    ck.same_npu(src1, dst)


def _const(call, p, allowed):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dtype = ck.dtype("dtype", p.dtype, allowed)
    dst = ck.local("dst_addr", p.dst_addr, shape, p.dst_stride, dtype)
    src = ck.local("src_addr", p.src_addr, shape, p.src_stride, dtype)
    ck.same_npu(src, dst)
    ck.scalar("C", p.C, dtype)


def bdc_and(ctx, p):
    _tensors("bdc_and", p, INTEGER_DTYPES)


def bdc_and_C(ctx, p):  # noqa: N802
    _const("bdc_and_C", p, INTEGER_DTYPES)


def bdc_or(ctx, p):
    _tensors("bdc_or", p, INTEGER_DTYPES)


def bdc_or_C(ctx, p):  # noqa: N802
    _const("bdc_or_C", p, INTEGER_DTYPES)


def bdc_xor(ctx, p):
    _tensors("bdc_xor", p, INTEGER_DTYPES)


def bdc_xor_C(ctx, p):  # noqa: N802
    _const("bdc_xor_C", p, INTEGER_DTYPES)


def bdc_min(ctx, p):
    _tensors("bdc_min", p, WHOLE_BYTE_DTYPES)


def bdc_min_C(ctx, p):  # noqa: N802
    _const("bdc_min_C", p, WHOLE_BYTE_DTYPES)


def bdc_max(ctx, p):
    _tensors("bdc_max", p, WHOLE_BYTE_DTYPES)


def bdc_max_C(ctx, p):  # noqa: N802
    _const("bdc_max_C", p, WHOLE_BYTE_DTYPES)
