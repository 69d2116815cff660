"""The GDMA kinds beyond plain tensor copies (bmk.sim.bm1684x gdma.py, dma_index.py) against
numpy: the tensor special functions (collect, distribute, 4-bank copy and broadcast), the
linear broadcast, matrices both ways (and transposed, long and short classes), the CW
transpose, masked select, nonzero, gather, scatter, the lane mask, dma.sys.nop; the golden
yolov5s stream's broadcast of an image row block to 6 NPUs."""
import numpy as np
import pytest

import bmk
from bmk.errors import SimulationError
from tests.chips.bm1684x.sim.helpers import CHIP, GLOBAL_BASE, INTS, LANE, LOCAL_BASE, aligned, get, put, rand, rec, run
from tests.chips.bm1684x.sim.test_gdma import addr_fields, continuous, dma, fmt, gget, gput

I8, U8, I16, U16, I32, U32 = INTS
BANK = CHIP.param("lmem_bank_size")


def test_broadcast_of_image_rows_like_yolo():
    """src (1, 1, 130, 640) uint8 in global memory (n stride 1228800) -> 6 NPUs from NPU 0,
    dst c stride 0 (every NPU the same offset), as the golden stream's first command."""
    rng = np.random.default_rng(1)
    x = rand(rng, (1, 1, 130, 640), U8)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE + 8146944, x, U8, (1228800, 409600, 640, 1))
    sim, _ = run([dma(GLOBAL_BASE + 8146944, (1, 1, 130, 640), (1228800, 0, 640, 0), LOCAL_BASE, (1, 6, 130, 640),
                      (83200, 0, 640, 0), U8, "dma.tensor.broadcast", dst_csize=6)], sim)
    for c in range(6):
        np.testing.assert_array_equal(get(sim, c * LANE, (1, 1, 130, 640), U8, (83200, 0, 640, 1)), x)


@pytest.mark.parametrize("kind", ["dma.tensor.collect", "dma.tensor.distribute"])
def test_cw_swapping_special_functions(kind):
    rng = np.random.default_rng(2)
    shape = (2, 5, 3, 70)
    x = rand(rng, shape, I16)
    if kind.endswith("collect"):           # local -> global
        sim = bmk.Simulator("bm1684x")
        st = aligned(0, shape, I16)
        put(sim, 0, x, I16, st)
        dst_shape = (2, 70, 3, 5)
        sim, _ = run([dma(LOCAL_BASE, shape, st, GLOBAL_BASE, dst_shape, continuous(dst_shape), I16, kind)], sim)
        np.testing.assert_array_equal(gget(sim, GLOBAL_BASE, dst_shape, I16, continuous(dst_shape)),
                                      x.transpose(0, 3, 2, 1))
    else:                                   # global -> local
        sim = bmk.Simulator("bm1684x")
        gput(sim, GLOBAL_BASE, x, I16, continuous(shape))
        dst_shape = (2, 70, 3, 5)
        st = aligned(3, dst_shape, I16)
        sim, _ = run([dma(GLOBAL_BASE, shape, continuous(shape), LOCAL_BASE + 3 * LANE, dst_shape, st, I16, kind)],
                     sim)
        np.testing.assert_array_equal(get(sim, 3 * LANE, dst_shape, I16, st), x.transpose(0, 3, 2, 1))


@pytest.mark.parametrize("kind", ["dma.tensor.4bank_copy", "dma.tensor.4bank_broadcast"])
def test_four_bank_forms_write_four_copies_one_bank_apart(kind):
    rng = np.random.default_rng(3)
    src_shape = (1, 1 if "broadcast" in kind else 8, 2, 16)
    dst_shape = (1, 8, 2, 16)
    x = rand(rng, src_shape, I8)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, I8, continuous(src_shape))
    st = aligned(0, dst_shape, I8)
    sim, _ = run([dma(GLOBAL_BASE, src_shape, continuous(src_shape), LOCAL_BASE + 0x100, dst_shape, st, I8, kind,
                      dst_csize=8)], sim)
    for k in range(4):
        np.testing.assert_array_equal(get(sim, 0x100 + k * BANK, dst_shape, I8, st), np.broadcast_to(x, dst_shape))


def test_lane_mask_selects_the_npus_written():
    rng = np.random.default_rng(4)
    shape = (1, 70, 2, 8)
    x = rand(rng, shape, I8)
    old = rand(rng, shape, I8)
    st = aligned(0, shape, I8)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, I8, continuous(shape))
    put(sim, 0, old, I8, st)
    mask = 0x0F0F_0000_FFFF_0001
    sim, _ = run([dma(GLOBAL_BASE, shape, continuous(shape), LOCAL_BASE, shape, st, I8,
                      localmem_mask_l32=mask & 0xFFFFFFFF, localmem_mask_h32=mask >> 32)], sim)
    on = np.array([(mask >> (c % 64)) & 1 for c in range(70)], bool).reshape(1, -1, 1, 1)
    np.testing.assert_array_equal(get(sim, 0, shape, I8, st), np.where(on, x, old))


def general(cls, kind, src, dst, n, dt, **extra):
    f = dict(src_data_format=fmt(dt), src_cstride_move_length_=n, localmem_mask_l32=0xFFFFFFFF,
             localmem_mask_h32=0xFFFFFFFF, **addr_fields("src", src), **addr_fields("dst", dst))
    f.update(extra)
    return rec("gdma", cls, kind, **f)


@pytest.mark.parametrize("cls", ["DMA_general", "sDMA_general"])
def test_general_broadcast_to_npus(cls):
    rng = np.random.default_rng(5)
    x = rand(rng, (1, 1, 1, 50), I32)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, I32, (0, 0, 0, 1))
    sim, _ = run([general(cls, "dma.general.broadcast", GLOBAL_BASE, LOCAL_BASE + 2 * LANE + 0x40, 50, I32,
                          dst_csize=7)], sim)
    for lane in range(2, 9):
        np.testing.assert_array_equal(get(sim, lane * LANE + 0x40, (1, 1, 1, 50), I32, (0, 0, 0, 1)), x)


def matrix(cls, kind, src, dst, dt, **f):
    if cls == "DMA_matrix":
        parts = {f"{s}_start_addr_h32": a & 0xFFFFFFFF for s, a in (("src", src), ("dst", dst))}
        parts.update({f"{s}_start_addr_l8": a >> 32 for s, a in (("src", src), ("dst", dst))})
    else:
        parts = {**addr_fields("src", src), **addr_fields("dst", dst)}
    return rec("gdma", cls, kind, src_data_format=fmt(dt), stride_enable=1, localmem_mask_l32=0xFFFFFFFF,
               localmem_mask_h32=0xFFFFFFFF, **parts, **f)


def put_local_matrix(sim, addr, mat, per, dt):
    rows, cols = mat.shape
    chans = -(-cols // per)
    full = np.zeros((rows, chans * per), np.int64)
    full[:, :cols] = mat
    put(sim, addr, full.reshape(rows, chans, 1, per), dt)
    return aligned(addr // LANE, (rows, chans, 1, per), dt)


def matrix_sides(cls, st, per, H, W):
    """The size and stride fields of a matrix copy local -> global and global -> local (local
    strides st, per columns a channel; global (H, W), row stride 40)."""
    if cls == "DMA_matrix":
        return (dict(src_nstride=st[0], src_cstride=st[1], src_wsize=per, dst_hstride=40, dst_hsize=H, dst_wsize=W),
                dict(dst_nstride=st[0], dst_cstride=st[1], dst_wsize=per, src_hstride=40, src_hsize=H, src_wsize=W))
    both = dict(dst_nstride_src_nstride=st[0], dst_cstride_src_cstride=st[1], dst_wsize_src_wsize=per,
                src_hstride_dst_hstride=40, src_hsize_dst_hsize=H, src_wsize_dst_wsize=W)
    return both, both


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("cls", ["DMA_matrix", "sDMA_matrix"])
def test_matrix_both_ways(cls, transpose):
    """global (H, W) row stride 40 <-> local (H, W) (transposed: (W, H)) with 16 columns per
    channel; the global->local copy brings back what the local->global one wrote."""
    rng = np.random.default_rng(6)
    H, W, per = 5, 37, 16
    kind = "dma.matrix.transpose" if transpose else "dma.matrix"
    local = rand(rng, (W, H) if transpose else (H, W), I8)
    rows, cols = local.shape
    sim = bmk.Simulator("bm1684x")
    st = put_local_matrix(sim, 0x200, local, per, I8)
    out, back = matrix_sides(cls, st, per, H, W)
    sim, _ = run([matrix(cls, kind, LOCAL_BASE + 0x200, GLOBAL_BASE, I8, **out)], sim)
    want = local.T if transpose else local
    np.testing.assert_array_equal(gget(sim, GLOBAL_BASE, (1, 1, H, W), I8, (0, 0, 40, 1))[0, 0], want)
    sim, _ = run([matrix(cls, kind, GLOBAL_BASE, LOCAL_BASE + 0x8200, I8, **back)], sim)
    got = get(sim, 0x8200, (rows, -(-cols // per), 1, per), I8).reshape(rows, -1)[:, :cols]
    np.testing.assert_array_equal(got, local)


def test_cw_transpose_class():
    rng = np.random.default_rng(7)
    shape = (1, 4, 3, 9)
    x = rand(rng, shape, U16)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, U16, continuous(shape))
    dst_shape = (1, 9, 3, 4)
    st = aligned(0, dst_shape, U16)
    f = dict(src_data_format=fmt(U16), stride_enable=1, localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF,
             **addr_fields("src", GLOBAL_BASE), **addr_fields("dst", LOCAL_BASE),
             **{f"src_{d}size": v for d, v in zip("nchw", shape)},
             **{f"src_{d}stride": v for d, v in zip("nch", continuous(shape))},
             **{f"dst_{d}stride": v for d, v in zip("nch", st)})
    sim, _ = run([rec("gdma", "DMA_cw_transpose", "dma.cw_transpose", **f)], sim)
    np.testing.assert_array_equal(get(sim, 0, dst_shape, U16, st), x.transpose(0, 3, 2, 1))


@pytest.mark.parametrize("cls", ["DMA_masked_select", "sDMA_masked_select"])
def test_masked_select_writes_the_selected_elements_contiguously(cls):
    rng = np.random.default_rng(8)
    shape = (2, 3, 4, 5)
    x = rand(rng, shape, I32)
    mask = rng.integers(0, 2, shape)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, I32, continuous(shape))
    gput(sim, GLOBAL_BASE + 0x1000, mask, U8, continuous(shape))
    sim.gmem_write(GLOBAL_BASE + 0x2000, np.full(200, -1, np.int32))
    f = dict(src_data_format=fmt(I32), mask_data_format=fmt(U8), **addr_fields("src", GLOBAL_BASE),
             **addr_fields("dst", GLOBAL_BASE + 0x2000), mask_start_addr_l32=0x1000, mask_start_addr_h8=1,
             **{f"src_{d}size": v for d, v in zip("nchw", shape)})
    if cls == "DMA_masked_select":
        f.update(localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF)
    sim, _ = run([rec("gdma", cls, "dma.masked_select", **f)], sim)
    sel = x.reshape(-1)[mask.reshape(-1) != 0]
    got = np.frombuffer(sim.gmem_read(GLOBAL_BASE + 0x2000, 4 * 200), np.int32)
    np.testing.assert_array_equal(got[:len(sel)], sel)
    assert (got[len(sel):] == -1).all()


@pytest.mark.parametrize("cls", ["DMA_nonzero", "sDMA_nonzero"])
def test_nonzero_writes_flat_indices_plus_the_base(cls):
    rng = np.random.default_rng(9)
    shape = (1, 70, 1, 3)                  # local: aligned, two channel groups
    x = rng.integers(-1, 2, shape) * (rng.random(shape) < 0.4)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    f = dict(src_data_format=fmt(I8), index_data_format=fmt(I32), dst_nstride_base_i_=1000,
             **addr_fields("src", LOCAL_BASE), **addr_fields("dst", GLOBAL_BASE),
             **{f"src_{d}size": v for d, v in zip("nchw", shape)})
    if cls == "DMA_nonzero":
        f.update(localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF)
    sim, _ = run([rec("gdma", cls, "dma.nonzero", **f)], sim)
    idx = np.flatnonzero(x.reshape(-1)) + 1000
    np.testing.assert_array_equal(np.frombuffer(sim.gmem_read(GLOBAL_BASE, 4 * len(idx)), np.int32), idx)


def gather_fields(kind, src, dst, index, c, h, w, ic, rows, **extra):
    f = dict(src_data_format=fmt(I16), localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF, stride_enable=1,
             **addr_fields("src", src), **addr_fields("dst", dst), index_start_addr_l32=index & 0xFFFFFFFF,
             index_start_addr_h8=index >> 32, src_csize=c, src_hsize=h, src_wsize=w, src_cstride=h * w,
             src_hstride=w, index_csize=ic, index_hsize=rows, index_cstride=rows, index_hstride=1)
    f.update(extra)
    return rec("gdma", f"DMA_{kind.split('.')[1]}", kind, **f)


def test_gather_rows_with_the_constant_past_the_end():
    rng = np.random.default_rng(10)
    c, h, w, rows = 3, 6, 5, 4
    x = rand(rng, (1, c, h, w), I16)
    idx = np.array([[5, 0, 9, 2], [1, 1, 6, 3], [0, 4, 2, 5]])
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, I16, continuous(x.shape))
    gput(sim, GLOBAL_BASE + 0x1000, idx.reshape(1, c, rows, 1), U32, (0, rows, 1, 1))
    sim, _ = run([gather_fields("dma.gather", GLOBAL_BASE, GLOBAL_BASE + 0x2000, GLOBAL_BASE + 0x1000, c, h, w, c,
                                rows, dst_hsize=rows, dst_cstride=rows * w, dst_hstride=w, constant_value=0x7777)], sim)
    want = np.full((1, c, rows, w), 0x7777)
    for k in range(c):
        for i in range(rows):
            if idx[k, i] < h:
                want[0, k, i] = x[0, k, idx[k, i]]
    np.testing.assert_array_equal(gget(sim, GLOBAL_BASE + 0x2000, want.shape, I16, continuous(want.shape)), want)


def test_scatter_rows_and_refuses_indices_past_the_end():
    rng = np.random.default_rng(11)
    c, h, w, dh = 2, 3, 4, 6
    x = rand(rng, (1, c, h, w), I16)
    idx = np.array([[5, 0, 2], [1, 4, 3]])
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x, I16, continuous(x.shape))
    gput(sim, GLOBAL_BASE + 0x1000, idx.reshape(1, c, h, 1), U32, (0, h, 1, 1))
    sim.gmem_write(GLOBAL_BASE + 0x2000, np.zeros(c * dh * w, np.int16))
    f = dict(dst_hsize=dh, dst_cstride=dh * w, dst_hstride=w)
    sim, _ = run([gather_fields("dma.scatter", GLOBAL_BASE, GLOBAL_BASE + 0x2000, GLOBAL_BASE + 0x1000, c, h, w, c,
                                h, **f)], sim)
    want = np.zeros((1, c, dh, w), np.int64)
    for k in range(c):
        want[0, k, idx[k]] = x[0, k]
    np.testing.assert_array_equal(gget(sim, GLOBAL_BASE + 0x2000, want.shape, I16, continuous(want.shape)), want)
    gput(sim, GLOBAL_BASE + 0x1000, np.full((1, c, h, 1), 6), U32, (0, h, 1, 1))
    with pytest.raises(SimulationError, match="indices must be below dst_hsize 6"):
        run([gather_fields("dma.scatter", GLOBAL_BASE, GLOBAL_BASE + 0x2000, GLOBAL_BASE + 0x1000, c, h, w, c, h,
                           **f)], sim)


def test_sys_nop_changes_nothing():
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(GLOBAL_BASE, b"xyz")
    sim, report = run([rec("gdma", "sDMA_sys", "dma.sys.nop")], sim)
    assert sim.gmem_read(GLOBAL_BASE, 3) == b"xyz" and report.instructions[0].kind == "dma.sys.nop"


def test_compressed_and_unstrided_copies_are_refused():
    f = dict(stride_enable=0)
    with pytest.raises(SimulationError, match="stride_enable must be 1"):
        run([dma(GLOBAL_BASE, (1, 1, 1, 4), (4, 4, 4, 1), LOCAL_BASE, (1, 1, 1, 4), (4, 4, 4, 1), I8, **f)])
    with pytest.raises(SimulationError, match="decompress_enable must be 0"):
        run([dma(GLOBAL_BASE, (1, 1, 1, 4), (4, 4, 4, 1), LOCAL_BASE, (1, 1, 1, 4), (4, 4, 4, 1), I8,
                 decompress_enable=1)])


@pytest.mark.parametrize("cls", ["DMA_matrix", "sDMA_matrix"])
def test_a_matrix_touches_only_its_elements_in_local_memory(cls):
    """W = 37 columns at 16 per channel leave 11 bytes a row of the third channel outside the
    matrix: the copy into local memory neither reads them (it used to read its whole
    destination, so the local-memory checks said it read bytes never written) nor writes them,
    and the copy back reads only the matrix (no warning in a run that wrote nothing else)."""
    rng = np.random.default_rng(16)
    H, W, per = 5, 37, 16
    x = rand(rng, (H, W), I8)
    sim = bmk.Simulator("bm1684x")
    gput(sim, GLOBAL_BASE, x.reshape(1, 1, H, W), I8, (0, 0, 40, 1))
    st = aligned(0, (H, 3, 1, per), I8)
    store, load = matrix_sides(cls, st, per, H, W)
    sim.lmem_write(2 * LANE + 0x400, bytes([0x5A]) * 0x200)        # the third channel's lane, around the matrix
    sim, report = run([matrix(cls, "dma.matrix", GLOBAL_BASE, LOCAL_BASE + 0x400, I8, **load),
                       matrix(cls, "dma.matrix", LOCAL_BASE + 0x400, GLOBAL_BASE + 0x1000, I8, **store)], sim)
    assert report.warnings == ()
    third = get(sim, 2 * LANE + 0x400, (H, 1, 1, per), I8, st)[:, 0, 0]
    np.testing.assert_array_equal(third[:, :W - 2 * per], x[:, 2 * per:])
    assert (third[:, W - 2 * per:] == 0x5A).all()
    np.testing.assert_array_equal(gget(sim, GLOBAL_BASE + 0x1000, (1, 1, H, W), I8, (0, 0, 40, 1))[0, 0], x)
