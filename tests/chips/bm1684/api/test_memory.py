"""Memory functions (seed 003): okk_bdc_32bit_cpy, okk_bdc_32bit_set_C, through bytes and the simulator."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.errors import ArgumentError
from tests.chips.bm1684.helpers import LANE, get, npu_addr, put, run, unchanged_after

rng = np.random.default_rng(0)


@pytest.mark.parametrize("start_npu", [0, 37])
def test_32bit_cpy_across_the_npu_boundary(start_npu):
    shape = (2, 70, 3, 5)                           # 70 channels from NPU 37 wrap past NPU 63
    src, dst = npu_addr(start_npu, 4096), npu_addr(start_npu, 65536)
    x = rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32)
    ctx = bm1684.Context()
    ctx.bdc_32bit_cpy(dst, src, shape, None, None)
    sim = bmk.Simulator("bm1684")
    put(sim, src, x, dtype="int32")
    run(ctx, sim)
    assert np.array_equal(get(sim, dst, shape, dtype="int32"), x)


def test_32bit_cpy_free_strides():
    shape = (1, 3, 4, 5)
    src_stride, dst_stride = (60, 20, 5, 1), (200, 64, 8, 1)
    x = rng.standard_normal(shape).astype(np.float32)
    ctx = bm1684.Context()
    ctx.bdc_32bit_cpy(npu_addr(2, 1024), npu_addr(2, 0), shape, dst_stride, src_stride)
    rec, = bmk.decode("bm1684", ctx.acquire_streams())
    assert (rec.fields["res0_n_str"], rec.fields["res0_c_str"], rec.fields["res0_h_str"]) == (200, 64, 8)
    sim = bmk.Simulator("bm1684")
    put(sim, npu_addr(2, 0), x, src_stride)
    run(ctx, sim)
    assert np.array_equal(get(sim, npu_addr(2, 1024), shape, dst_stride), x)


@pytest.mark.parametrize("C, expect", [(1.5, np.float32(1.5)), (-1, np.int32(-1)), (0xFFFFFFFF, np.int32(-1)),
                                       (np.int64(-2**31), np.int32(-2**31))])
def test_32bit_set_C(C, expect):
    shape = (3, 65, 2, 2)
    dst = npu_addr(63, 256)
    ctx = bm1684.Context()
    ctx.bdc_32bit_set_C(dst, C, shape, None)
    sim = run(ctx)
    out = get(sim, dst, shape, dtype=np.asarray(expect).dtype)
    assert np.all(out == expect)


def test_module_functions():
    assert bm1684.npu_num() == 64 and bm1684.local_mem_size_per_npu() == 512 * 1024
    assert bm1684.start_npu_index(3 * LANE + 4) == 3
    assert bm1684.channle_num_per_npu(60, 10) == 2 == bm1684.channel_num_per_npu(0, 65)
    assert bm1684.aligned_stride_for_32bit(0, (2, 3, 5, 7)) == (64, 64, 7, 1)      # bm1684-memory.md
    assert bm1684.compact_stride(60, bm1684.dim4(1, 10, 2, 3)) == (12, 6, 3, 1)
    assert bm1684.continuous_stride((2, 3, 4, 5)) == (60, 20, 5, 1)
    assert bm1684.aligned_stride_for_8bit(1, (8, 3, 5, 7)) == bm1684.aligned_stride_for_32bit(1, (8, 3, 5, 7))
    assert bm1684.l2_sram_size() > 0 and bm1684.dtcm_size() == 512 * 1024
    with pytest.raises(ArgumentError, match=r"start_npu_index: addr must be a local address in \[0, 0x2000000\)"):
        bm1684.start_npu_index(64 * LANE)
    with pytest.raises(ArgumentError, match="compact_stride: shape must be a dim4"):
        bm1684.compact_stride(0, (1, 2, 3))


@pytest.mark.parametrize("args, match", [
    ((2, 0, (1, 1, 1, 1)), "dst_addr must be divisible by 4"),
    ((0, LANE, (1, 1, 1, 1)), "src_addr must be an address on NPU [0-9]+, where dst_addr starts"),
    ((0, 4096, (1, 4096, 1, 1)), r"shape.c must be an integer in \[1, 4095\]"),
    ((0, 4096, (65536, 1, 1, 1)), r"shape.n must be an integer in \[1, 65535\]"),
    ((0, 4096, (1, 1, 0, 1)), r"shape.h must be an integer in \[1, 65535\]"),
    ((LANE - 4, 0, (1, 1, 2, 1)), "dst_addr must be such that the tensor fits its NPUs"),
    ((64 * LANE, 0, (1, 1, 1, 1)), "dst_addr must be a local address"),
    ((0, 4096, (1, 1, 1)), "shape must be a dim4"),
])
def test_32bit_cpy_remarks(args, match):
    ctx = bm1684.Context()
    ctx.bdc_32bit_cpy(0, 4096, (1, 2, 3, 4), None, None)
    unchanged_after(ctx, ctx.bdc_32bit_cpy, *args, None, None, match="bdc_32bit_cpy: " + match)


def test_numpy_integers_are_integers():
    ctx = bm1684.Context()
    ctx.bdc_32bit_cpy(np.int64(0), np.uint32(4096), (np.int32(1), 2, 3, np.int8(4)), None, None)
    other = bm1684.Context()
    other.bdc_32bit_cpy(0, 4096, (1, 2, 3, 4))
    assert ctx.acquire_cmdbuf() == other.acquire_cmdbuf()


def test_parallel_mode_rules():
    ctx = bm1684.Context()
    assert not ctx.is_parallel_state()
    ctx.parallel_start()
    assert ctx.is_parallel_state()
    with pytest.raises(bmk.BmkError, match="parallel_start: the parallel mode must be inactive"):
        ctx.parallel_start()
    with pytest.raises(bmk.BmkError, match="poll: the parallel mode must be inactive"):
        ctx.poll()
    ctx.parallel_end()
    with pytest.raises(bmk.BmkError, match="parallel_end: the parallel mode must be active"):
        ctx.parallel_end()
    ctx.poll()
