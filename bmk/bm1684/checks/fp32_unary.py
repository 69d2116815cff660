"""Checks of the FP32 Unary functions (seed 003 "FP32 Unary Functions").

The input-range remarks of exp / sigmoid / tanh ("the elements of the source tensor are in
[-103.0, 88.0]") and lookup_exp ("[-103, 88]") are about the data: not checkable at the call
(the exp sequence clamps to that range, as the vendor does; the lookup uses the low 8 bits).
Addresses of these 32-bit tensors must be divisible by 4 also where the remark only names the
aligned layout (checks/converting.py).
"""
from bmk.bm1684.checks import common as c
from bmk.bm1684.checks.converting import aligned_pair
from bmk.bm1684.checks.memory import bdc_32bit_cpy

NUM_SERIES = (1, 64)     # "num_series is in [1, 64]"


def bdc_rsqrt(ctx, r, call="bdc_rsqrt"):
    """Remarks: aligned layout; fp32; same start NPU; shape ranges."""
    aligned_pair(call, r)


def bdc_sqrt(ctx, r, call="bdc_sqrt"):
    """Remarks: as okk_bdc_rsqrt."""
    aligned_pair(call, r)


def bdc_lookup_exp(ctx, r, call="bdc_lookup_exp"):
    """Remarks: aligned layout; int32 source in [-103, 88] (data), fp32 destination; same start
    NPU; shape ranges."""
    aligned_pair(call, r)


def bdc_taylor_exp(ctx, r, call="bdc_taylor_exp"):
    """Remarks: as okk_bdc_rsqrt; num_series in [1, 64]."""
    aligned_pair(call, r)
    c.integer(call, "num_series", r.num_series, *NUM_SERIES)


def with_work(call, r):
    """Remarks of exp / sigmoid / tanh: aligned fp32 dst, src and work on the same start NPU,
    shape ranges, dst_addr = work_addr and src_addr = work_addr not allowed."""
    dst, src, shape = aligned_pair(call, r)
    work = c.local_addr(call, "work_addr", r.work_addr)
    c.same_npu(call, dst_addr=dst, work_addr=work)
    c.distinct(call, "dst_addr", dst, "work_addr", work)
    c.distinct(call, "src_addr", src, "work_addr", work)
    c.fits_local(call, "work_addr", work, shape, None)


def with_work_series(call, r):
    with_work(call, r)
    c.integer(call, "num_series", r.num_series, *NUM_SERIES)


def bdc_exp(ctx, r, call="bdc_exp"):
    with_work(call, r)


def bdc_exp_tunable(ctx, r, call="bdc_exp_tunable"):
    with_work_series(call, r)


def bdc_sigmoid(ctx, r, call="bdc_sigmoid"):
    with_work(call, r)


def bdc_sigmoid_tunable(ctx, r, call="bdc_sigmoid_tunable"):
    with_work_series(call, r)


def bdc_tanh(ctx, r, call="bdc_tanh"):
    with_work(call, r)


def bdc_tanh_tunable(ctx, r, call="bdc_tanh_tunable"):
    with_work_series(call, r)


def bdc_reciprocal(ctx, r, call="bdc_reciprocal"):
    """Remarks: fp32; same start NPU; addresses divisible by 4; shape ranges; NULL stride =
    aligned layout (the checks of okk_bdc_32bit_cpy, same signature and remarks)."""
    bdc_32bit_cpy(ctx, r, call)


def bdc_neg(ctx, r, call="bdc_neg"):
    """Remarks: as okk_bdc_reciprocal."""
    bdc_32bit_cpy(ctx, r, call)
