"""Transfers the seed allows and the v2 encoder never emits (issue 12, item 3): gdma_copy_gmem
of matrices (moved as rows: the tensor (R, 1, 1, Cm) with n-stride = row stride) and of
tensors with CTRL_TP (N/C transposition, tdma.copy_gmem_tp), gdma_store(_stride) of a matrix
with CTRL_TP (row/column transposition, seed 4.15). Results against numpy."""
import numpy as np
import pytest

from bmk.bm1880 import CTRL_NULL, CTRL_TP, TensorGmem, shape_t2, stride_t2
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip

from .helpers import I8, U8, new, rand, run
from .test_dma import gread

CHIP = load_chip("bm1880")


def kinds(ctx):
    return [CHIP.engine(r.engine).format.instruction_of(r.fields).name for r in decode_cmdbuf(CHIP, ctx.acquire_cmdbuf())]


@pytest.mark.parametrize("dst_shape, dst_stride", [((3, 2, 4, 5), None), ((1, 6, 4, 5), None),
                                                   ((3, 2, 4, 5), (100, 30, 6, 1))])
def test_copy_gmem_nc_transpose(dst_shape, dst_stride):
    rng = np.random.default_rng(310)
    ctx, sim = new()
    data = rand(rng, (2, 3, 4, 5), U8)
    sim.gmem_write(0x1000, data)
    ctx.gdma_copy_gmem(TensorGmem(0x9000, dst_shape, dst_stride), TensorGmem(0x1000, (2, 3, 4, 5)), CTRL_TP)
    assert kinds(ctx) == ["copy_gmem_tp"]
    run(ctx, sim)
    stride = dst_stride or (np.prod(dst_shape[1:]), dst_shape[2] * dst_shape[3], dst_shape[3], 1)
    got = gread(sim, 0x9000, dst_shape, stride)
    np.testing.assert_array_equal(got, data.transpose(1, 0, 2, 3).reshape(dst_shape))


def test_copy_gmem_matrices():
    rng = np.random.default_rng(311)
    ctx, sim = new()
    data = rand(rng, (6, 10), I8)
    wide = np.zeros((6, 16), np.int8)
    wide[:, :10] = data
    sim.gmem_write(0x1000, wide)
    ctx.gdma_copy_gmem(TensorGmem(0x8000, shape_t2(4, 15), stride_t2(20, 1)),
                       TensorGmem(0x1000, shape_t2(6, 10), stride_t2(16, 1)), CTRL_NULL)
    ctx.gdma_copy_gmem(TensorGmem(0x9000, shape_t2(6, 10)), TensorGmem(0x1000, shape_t2(6, 10), stride_t2(16, 1)),
                       CTRL_NULL)
    run(ctx, sim)
    np.testing.assert_array_equal(gread(sim, 0x8000, (4, 15), (20, 1), np.int8), data.reshape(4, 15))
    assert sim.gmem_read(0x9000, 60) == data.tobytes()


@pytest.mark.parametrize("rows, cols", [(5, 12), (3, 40), (16, 600)])
def test_store_matrix_transposed(rows, cols):
    rng = np.random.default_rng(312)
    ctx, sim = new()
    m = ctx.tl_prealloc_align(0, shape_t2(rows, cols), I8)
    data = rand(rng, (rows, cols), I8)
    sim.gmem_write(0x4000, data)
    ctx.gdma_load(m, 0x4000, CTRL_NULL)
    ctx.gdma_store(m, 0x20000, CTRL_TP)
    ctx.gdma_store_stride(m, 0x60000, stride_t2(rows + 3, 1), CTRL_TP)
    assert kinds(ctx) == ["load", "store_tp", "store_tp"]
    run(ctx, sim)
    assert sim.gmem_read(0x20000, data.size) == np.ascontiguousarray(data.T).tobytes()
    np.testing.assert_array_equal(gread(sim, 0x60000, (cols, rows), (rows + 3, 1), np.int8), data.T)
