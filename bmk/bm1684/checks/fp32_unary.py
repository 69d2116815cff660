"""Checks of the FP32 Unary functions (seed 003 "FP32 Unary Functions"), by family: rsqrt,
sqrt and lookup_exp take checks/converting.aligned_pair, reciprocal and neg
checks/memory.copy (their signatures and remarks are those); here taylor_exp and the
functions with a work tensor (exp, sigmoid, tanh and their _tunable forms).

The input-range remarks of exp / sigmoid / tanh ("the elements of the source tensor are in
[-103.0, 88.0]") and lookup_exp ("[-103, 88]") are about the data: not checkable at the call
(the exp sequence clamps to that range, as the vendor does; the lookup uses the low 8 bits).
num_series is in [1, 64]: the taylor table's length (specs/bm1684 `taylor_table_len`).
"""
from bmk.bm1684.checks.converting import aligned_pair


def num_series(c, p):
    return c.integer("num_series", p.num_series, 1, c.chip.param("taylor_table_len"))


def taylor(c, p):
    """Remarks: those of okk_bdc_rsqrt (aligned_pair); num_series in [1, 64]."""
    aligned_pair(c, p)
    num_series(c, p)


def with_work(c, p, tunable):
    """Remarks of exp / sigmoid / tanh: aligned fp32 dst, src and work on the same start NPU,
    shape ranges, dst_addr = work_addr and src_addr = work_addr not allowed, and no overlap of
    work with dst or src at all (the sequence writes work between reading src and writing dst:
    work = dst + 4 gave a relative error of 580, issue 22.8); the _tunable forms: num_series
    in [1, 64]."""
    dst, src, shape = aligned_pair(c, p)
    work = c.address("work_addr", p.work_addr)
    c.same_start_npu("dst_addr", dst, work_addr=work)
    c.distinct("dst_addr", dst, "work_addr", work)
    c.distinct("src_addr", src, "work_addr", work)
    c.fits("work_addr", work, shape, None)
    w = c.span(work, shape, None)
    c.disjoint("work_addr", work, w, "dst_addr", c.span(dst, shape, None), "the sequence writes work and dst apart")
    c.disjoint("work_addr", work, w, "src_addr", c.span(src, shape, None), "the sequence writes work while src is read")
    if tunable:
        num_series(c, p)
