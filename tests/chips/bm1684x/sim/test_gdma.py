"""GDMA tensor copies in every direction (S2L, L2S, L2L, S2S: the direction comes from the
addresses' memory spaces) and every whole-byte dtype, fills, transposes, broadcasts, linear
copies in both classes, against numpy."""
import numpy as np
import pytest

import bmk
from bmk.sim.bm1684x import GDMA_BYTES_PER_CYCLE, GDMA_STARTUP
from tests.chips.bm1684x.sim.helpers import (CHIP, FLOATS, GLOBAL_BASE, INTS, LANE, LOCAL_BASE, aligned, from_storage, get,
                                       rand, rec, run, to_storage)

DTYPES = INTS + FLOATS
FMT = {"int8": "int8", "uint8": "int8", "int16": "int16", "uint16": "int16", "int32": "int32",
       "uint32": "int32", "fp16": "fp16", "fp32": "fp32", "bf16": "bf16"}


def fmt(dt):
    return CHIP.engine("gdma").cls("DMA_tensor").field("src_data_format").enum_value(FMT[dt.name])


def addr_fields(side, addr):
    return {f"{side}_start_addr_l32": addr & 0xFFFFFFFF, f"{side}_start_addr_h8": addr >> 32}


def dma(src, src_shape, src_st, dst, dst_shape, dst_st, dt, kind="dma.tensor", **extra):
    f = dict(stride_enable=1, src_data_format=fmt(dt), localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF,
             **addr_fields("src", src), **addr_fields("dst", dst),
             **{f"src_{d}size": v for d, v in zip("nchw", src_shape)},
             **{f"dst_{d}size": v for d, v in zip("nchw", dst_shape)},
             **{f"src_{d}stride": v for d, v in zip("nchw", src_st)},
             **{f"dst_{d}stride": v for d, v in zip("nchw", dst_st)})
    f.update(extra)
    return rec("gdma", "DMA_tensor", kind, **f)


def continuous(shape):
    n, c, h, w = shape
    return (c * h * w, h * w, w, 1)


def gput(sim, addr, values, dt, strides):
    """A strided global array, element by element in numpy (independent of the simulator's views)."""
    e = dt.itemsize
    raw = to_storage(values, dt).reshape(-1).view(np.uint8).reshape(-1, e)
    idx = np.indices(np.shape(values)).reshape(4, -1).T @ np.array(strides)
    for k, off in enumerate(idx):
        sim.gmem_write(addr + int(off) * e, raw[k].tobytes())


def gget(sim, addr, shape, dt, strides):
    e = dt.itemsize
    idx = np.indices(shape).reshape(4, -1).T @ np.array(strides)
    raw = b"".join(sim.gmem_read(addr + int(off) * e, e) for off in idx)
    return from_storage(np.frombuffer(raw, dt.numpy).reshape(shape), dt)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_s2l_l2l_l2s_s2s_round_trip(dt):
    """global (strided) -> local (aligned, starting on NPU 60: two groups) -> local (free, NPU 5)
    -> global (continuous) -> global (another stride): every copy is exact."""
    rng = np.random.default_rng(hash(dt.name) % 2**32)
    shape = (2, 9, 3, 4)
    x = rand(rng, shape, dt)
    g0, g1, g2 = GLOBAL_BASE + 0x1000, GLOBAL_BASE + 0x40000, GLOBAL_BASE + 0x10000000
    g0_st = (600, 60, 16, 1)
    l0, l1 = 60 * LANE + 0x200, 5 * LANE + 0x1000
    l0_st = aligned(60, shape, dt)
    l1_st = (200, 20, 5, 1)
    g2_st = (1000, 100, 20, 2)
    sim = bmk.Simulator("bm1684x")
    gput(sim, g0, x, dt, g0_st)
    prog = [dma(g0, shape, g0_st, LOCAL_BASE + l0, shape, l0_st, dt),
            dma(LOCAL_BASE + l0, shape, l0_st, LOCAL_BASE + l1, shape, l1_st, dt),
            dma(LOCAL_BASE + l1, shape, l1_st, g1, shape, continuous(shape), dt),
            dma(g1, shape, continuous(shape), g2, shape, g2_st, dt)]
    sim, report = run(prog, sim)
    np.testing.assert_array_equal(get(sim, l0, shape, dt), x)
    np.testing.assert_array_equal(get(sim, l1, shape, dt, l1_st), x)
    np.testing.assert_array_equal(gget(sim, g1, shape, dt, continuous(shape)), x)
    np.testing.assert_array_equal(gget(sim, g2, shape, dt, g2_st), x)
    assert [i.kind for i in report.instructions] == ["dma.tensor"] * 4
    assert report.races == ()


def test_reshape_fill_transpose_broadcast():
    dt = INTS[2]
    rng = np.random.default_rng(5)
    x = rand(rng, (2, 3, 4, 5), dt)
    sim = bmk.Simulator("bm1684x")
    g = GLOBAL_BASE + 0x2000
    gput(sim, g, x, dt, continuous(x.shape))
    out = GLOBAL_BASE + 0x9000
    prog = [dma(g, (2, 3, 4, 5), continuous((2, 3, 4, 5)), out, (4, 5, 3, 2), continuous((4, 5, 3, 2)), dt),
            dma(g, (2, 3, 4, 5), continuous((2, 3, 4, 5)), LOCAL_BASE, (1, 1, 1, 1), (0, 0, 0, 0), dt,
                kind="dma.tensor.transpose", dst_nstride=aligned(0, (3, 2, 4, 5), dt)[0],
                dst_cstride=aligned(0, (3, 2, 4, 5), dt)[1], dst_hstride=5),
            dma(g, (2, 1, 4, 5), continuous((2, 3, 4, 5)), LOCAL_BASE + 0x4000, (2, 70, 4, 5),
                aligned(0, (2, 70, 4, 5), dt), dt, kind="dma.tensor.broadcast"),
            dma(0, (1, 1, 1, 1), (0, 0, 0, 0), LOCAL_BASE + 10 * LANE + 0x8000, (2, 3, 4, 5),
                aligned(10, (2, 3, 4, 5), dt), dt, fill_constant_en=1, constant_value=0xFFFF8001)]
    sim, _ = run(prog, sim)
    np.testing.assert_array_equal(gget(sim, out, (4, 5, 3, 2), dt, continuous((4, 5, 3, 2))), x.reshape(4, 5, 3, 2))
    np.testing.assert_array_equal(get(sim, 0, (3, 2, 4, 5), dt), x.transpose(1, 0, 2, 3))
    np.testing.assert_array_equal(get(sim, 0x4000, (2, 70, 4, 5), dt), np.broadcast_to(x[:, :1], (2, 70, 4, 5)))
    np.testing.assert_array_equal(get(sim, 10 * LANE + 0x8000, (2, 3, 4, 5), dt), np.full((2, 3, 4, 5), -32767))


@pytest.mark.parametrize("cls", ["DMA_general", "sDMA_general"])
def test_general_linear_copy_both_classes(cls):
    dt = INTS[4]
    data = np.arange(-500, 500, dtype=np.int32)
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(GLOBAL_BASE + 0x100, data)
    f = dict(src_data_format=fmt(dt), src_cstride_move_length_=1000, localmem_mask_l32=0xFFFFFFFF,
             localmem_mask_h32=0xFFFFFFFF, **addr_fields("src", GLOBAL_BASE + 0x100),
             **addr_fields("dst", LOCAL_BASE + 7 * LANE + 0x40))
    g = dict(f, **addr_fields("src", LOCAL_BASE + 7 * LANE + 0x40), **addr_fields("dst", GLOBAL_BASE + 0x8000))
    sim, report = run([rec("gdma", cls, "dma.general", **f), rec("gdma", cls, "dma.general", **g)], sim)
    assert np.frombuffer(sim.lmem_read(7 * LANE + 0x40, 4000), np.int32).tolist() == data.tolist()
    assert np.frombuffer(sim.gmem_read(GLOBAL_BASE + 0x8000, 4000), np.int32).tolist() == data.tolist()
    assert report.instructions[0].end - report.instructions[0].start == GDMA_STARTUP + -(-4000 // GDMA_BYTES_PER_CYCLE)


def test_l2sram_and_huge_strides_stay_bounded():
    """A copy into L2 SRAM, and one whose strides spread 4 elements over gigabytes of global
    memory (the sparse path): exact, without touching memory in between."""
    dt = INTS[0]
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(GLOBAL_BASE, bytes([1, 2, 3, 4]))
    l2 = CHIP.space("l2sram").base
    far = (1, 1, 2, 0x7FFFFFFF)
    prog = [dma(GLOBAL_BASE, (1, 1, 1, 4), (0, 0, 0, 1), l2 + 0x10, (1, 1, 1, 4), (0, 0, 0, 1), dt),
            dma(l2 + 0x10, (1, 1, 2, 2), (0, 0, 2, 1), GLOBAL_BASE + 0x100, (1, 1, 2, 2), far, dt)]
    sim, _ = run(prog, sim)
    assert sim.memories["l2sram"].load(0x10, 4).tolist() == [1, 2, 3, 4]
    got = [sim.gmem_read(GLOBAL_BASE + 0x100 + o, 1)[0] for o in (0, 0x7FFFFFFF, 2, 0x7FFFFFFF + 2)]
    assert got == [1, 2, 3, 4]
    assert len(sim.gmem.pages) <= 4


def test_tile_of_a_huge_tensor_moves_channel_by_channel():
    """A (1, 64, 4, 8) int32 tile whose channels are 16 MiB apart in global memory (a 1 GiB
    span): S2L then L2S with the same strides, exact, touching only the tile's pages."""
    dt = INTS[4]
    shape, far = (1, 64, 4, 8), (64 << 22, 1 << 22, 8, 1)
    x = rand(np.random.default_rng(4), shape, dt)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, dt, far)
    out = GLOBAL_BASE + 0x4000
    st = aligned(0, shape, dt)
    sim, report = run([dma(GLOBAL_BASE, shape, far, LOCAL_BASE, shape, st, dt),
                       dma(LOCAL_BASE, shape, st, out, shape, far, dt)], sim)
    np.testing.assert_array_equal(get(sim, 0, shape, dt), x)
    np.testing.assert_array_equal(gget(sim, out, shape, dt, far), x)
    assert len(sim.gmem.pages) == 64
