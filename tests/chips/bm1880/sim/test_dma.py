"""DMA forms (seed 4.12-4.18) through encode -> bytes -> simulator."""
import numpy as np
import pytest

from bmk.bm1880 import CTRL_NULL, CTRL_TP, TensorGmem, shape_t2, shape_t4, stride_t2, stride_t4

from .helpers import I8, U8, get, new, put, rand, run


def gread(sim, addr, shape, strides, dtype=np.uint8):
    """Elements of a strided gmem tensor (strides in bytes)."""
    span = sum((d - 1) * s for d, s in zip(shape, strides)) + 1
    raw = np.frombuffer(sim.gmem_read(addr, span), np.uint8)
    return np.lib.stride_tricks.as_strided(raw, shape, strides).astype(dtype)


@pytest.mark.parametrize("shape,fmt,aligned", [((1, 32, 8, 8), I8, False), ((2, 40, 3, 5), U8, True),
                                                ((3, 7, 1, 33), I8, True)])
def test_load_store(shape, fmt, aligned):
    rng = np.random.default_rng(300)
    ctx, sim = new()
    t = (ctx.tl_prealloc_align if aligned else ctx.tl_prealloc)(256, shape_t4(*shape), fmt)
    data = rand(rng, shape, fmt)
    sim.gmem_write(0x1000, data)
    ctx.gdma_load(t, 0x1000, CTRL_NULL)
    ctx.gdma_store(t, 0x10000000, CTRL_NULL)
    run(ctx, sim)
    np.testing.assert_array_equal(sim.lmem_read_tensor(t), data)
    assert sim.gmem_read(0x10000000, data.size) == data.tobytes()


def test_load_store_stride():
    rng = np.random.default_rng(301)
    ctx, sim = new()
    shape = (2, 36, 5, 6)
    t = ctx.tl_prealloc(0, shape_t4(*shape), I8)
    src_st, dst_st = (4096, 64, 8, 1), (3000, 80, 13, 1)
    big = rand(rng, 2 * 4096, I8)
    sim.gmem_write(0x8000, big)
    ctx.gdma_load_stride(t, 0x8000, stride_t4(*src_st), CTRL_NULL)
    ctx.gdma_store_stride(t, 0x40000, stride_t4(*dst_st), CTRL_NULL)
    run(ctx, sim)
    expect = gread(sim, 0x8000, shape, src_st, np.int8)
    np.testing.assert_array_equal(sim.lmem_read_tensor(t), expect)
    np.testing.assert_array_equal(gread(sim, 0x40000, shape, dst_st, np.int8), expect)
    # bytes between the strided rows are untouched (still zero)
    assert sim.gmem_read(0x40000 + 6, 7) == bytes(7)


def test_tensor_nc_transpose():
    rng = np.random.default_rng(302)
    ctx, sim = new()
    t = ctx.tl_prealloc(64, shape_t4(4, 35, 3, 3), I8)
    t2 = ctx.tl_prealloc_align(4096, shape_t4(4, 35, 3, 3), I8)
    g = rand(rng, (35, 4, 3, 3), I8)            # gmem side is (C, N, H, W)
    sim.gmem_write(0x5000, g)
    ctx.gdma_load(t, 0x5000, CTRL_TP)
    ctx.gdma_copy_lmem(t2, t)
    ctx.gdma_store(t2, 0x9000, CTRL_TP)
    ctx.gdma_store_stride(t2, 0xD000, stride_t4(640, 20, 3, 1), CTRL_TP)
    run(ctx, sim)
    np.testing.assert_array_equal(sim.lmem_read_tensor(t), g.transpose(1, 0, 2, 3))
    assert sim.gmem_read(0x9000, g.size) == g.tobytes()
    np.testing.assert_array_equal(gread(sim, 0xD000, (35, 4, 3, 3), (640, 20, 3, 1), np.int8), g)


@pytest.mark.parametrize("rows,cols,fmt", [(12, 70, I8), (5, 9, U8), (40, 600, U8)])
def test_matrix_load_store(rows, cols, fmt):
    rng = np.random.default_rng(303)
    ctx, sim = new()
    m = ctx.tl_prealloc_align(0, shape_t2(rows, cols), fmt)
    mt = ctx.tl_prealloc_align(8192, shape_t2(cols, rows), fmt)
    m2 = ctx.tl_prealloc(20480, shape_t2(rows, cols), fmt)
    data = rand(rng, (rows, cols), fmt)
    sim.gmem_write(0x4000, data)
    wide = np.zeros((rows, cols + 30), data.dtype)
    wide[:, :cols] = data
    sim.gmem_write(0x40000, wide)
    ctx.gdma_load(m, 0x4000, CTRL_NULL)
    ctx.gdma_load(mt, 0x4000, CTRL_TP)
    ctx.gdma_store(m, 0x20000, CTRL_NULL)
    ctx.gdma_load_stride(m2, 0x40000, stride_t2(cols + 30, 1), CTRL_NULL)
    ctx.gdma_store_stride(m2, 0x60000, stride_t2(cols + 5, 1), CTRL_NULL)
    run(ctx, sim)
    np.testing.assert_array_equal(sim.lmem_read_tensor(m), data)
    np.testing.assert_array_equal(sim.lmem_read_tensor(mt), data.T)
    np.testing.assert_array_equal(sim.lmem_read_tensor(m2), data)
    assert sim.gmem_read(0x20000, data.size) == data.tobytes()
    np.testing.assert_array_equal(gread(sim, 0x60000, (rows, cols), (cols + 5, 1), data.dtype), data)


def test_copy_gmem():
    rng = np.random.default_rng(304)
    ctx, sim = new()
    data = rand(rng, (1, 8, 16, 16), U8)
    sim.gmem_write(0x1000, data)
    src = TensorGmem(addr=0x1000, shape=shape_t4(1, 8, 16, 16), stride=None)
    dst = TensorGmem(addr=0x9000, shape=shape_t4(1, 8, 16, 16), stride=None)
    dst2 = TensorGmem(addr=0x20000, shape=shape_t4(1, 8, 8, 32), stride=stride_t4(4096, 300, 33, 1))
    dst3 = TensorGmem(addr=0x30000, shape=shape_t4(2, 4, 16, 16), stride=None)
    ctx.gdma_copy_gmem(dst, src, CTRL_NULL)
    ctx.gdma_copy_gmem(dst2, src, CTRL_NULL)
    ctx.gdma_copy_gmem(dst3, src, CTRL_NULL)
    run(ctx, sim)
    assert sim.gmem_read(0x9000, data.size) == data.tobytes()
    np.testing.assert_array_equal(gread(sim, 0x20000, (1, 8, 8, 32), (4096, 300, 33, 1)), data.reshape(1, 8, 8, 32))
    assert sim.gmem_read(0x30000, data.size) == data.tobytes()


def test_copy_lmem_reshape():
    rng = np.random.default_rng(305)
    ctx, sim = new()
    s = ctx.tl_prealloc(0, shape_t4(1, 32, 8, 8), I8)
    d = ctx.tl_prealloc_align(2048, shape_t4(1, 32, 4, 16), I8)
    v = rand(rng, (1, 32, 8, 8), I8)
    put(sim, s, v)
    ctx.gdma_copy_lmem(d, s)
    run(ctx, sim)
    np.testing.assert_array_equal(sim.lmem_read_tensor(d), v.reshape(1, 32, 4, 16))


@pytest.mark.parametrize("right,step,c", [(r, s, c) for r in (True, False) for s, c in ((1, 32), (2, 32), (3, 20))]
                         + [(True, 5, 45), (False, 5, 45), (False, 3, 70), (True, 7, 64)])
def test_lrn_shift(right, step, c):
    rng = np.random.default_rng(306)
    ctx, sim = new()
    s = ctx.tl_prealloc_align(0, shape_t4(1, c, 4, 4), I8)
    d = ctx.tl_prealloc_align(1024, shape_t4(1, c, 4, 4), I8)
    v = rand(rng, (1, c, 4, 4), I8)
    put(sim, s, v), put(sim, d, rand(rng, (1, c, 4, 4), I8))
    ctx.gdma_lrn_shift(d, s, right_shift=right, lrn_step=step)
    run(ctx, sim)
    ref = np.zeros_like(v)
    if right:
        ref[:, step:] = v[:, :c - step]
    else:
        ref[:, :c - step] = v[:, step:]
    np.testing.assert_array_equal(get(sim, d), ref)


def test_gmem_tensor_across_a_page_boundary():
    rng = np.random.default_rng(307)
    ctx, sim = new()
    t = ctx.tl_prealloc(0, shape_t4(2, 32, 8, 8), U8)
    data = rand(rng, (2, 32, 8, 8), U8)
    addr = (1 << 24) - 1000                     # gmem pages are 16 MiB; the tensor spans two
    sim.gmem_write(addr, data)
    ctx.gdma_load(t, addr, CTRL_NULL)
    ctx.gdma_store(t, addr + 0x100000 - 1000, CTRL_NULL)
    ctx.gdma_store_stride(t, (2 << 24) - 3000, stride_t4(5000, 100, 9, 1), CTRL_NULL)
    run(ctx, sim)
    np.testing.assert_array_equal(sim.lmem_read_tensor(t), data)
    assert sim.gmem_read(addr + 0x100000 - 1000, data.size) == data.tobytes()
    np.testing.assert_array_equal(gread(sim, (2 << 24) - 3000, data.shape, (5000, 100, 9, 1)), data)
