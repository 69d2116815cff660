"""GDMA functions (seed 003): every direction and width, set_C, matrices, through bytes and the simulator."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.errors import ArgumentError
from tests.chips.bm1684.helpers import GMEM, LANE, get, npu_addr, run, unchanged_after
from tests.vectors import vendor

rng = np.random.default_rng(1)
NP = {32: np.uint32, 16: np.int16, 8: np.int8}
PACK = {32: 1, 16: 2, 8: 4}


def values(bits, shape):
    info = np.iinfo(NP[bits])
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(NP[bits])


def gmem_put(sim, addr, x):
    sim.gmem_write(addr, np.ascontiguousarray(x))


def gmem_get(sim, addr, x_like, stride=None):
    x_like = np.asarray(x_like)
    if stride is None:
        return np.frombuffer(sim.gmem_read(addr, x_like.nbytes), x_like.dtype).reshape(x_like.shape)
    e = x_like.itemsize
    n, c, h, w = x_like.shape
    extent = ((n - 1) * stride[0] + (c - 1) * stride[1] + (h - 1) * stride[2] + (w - 1) * stride[3] + 1) * e
    flat = np.frombuffer(sim.gmem_read(addr, extent), x_like.dtype)
    return np.lib.stride_tricks.as_strided(flat, x_like.shape, [s * e for s in stride])


@pytest.mark.parametrize("bits", [32, 16, 8])
@pytest.mark.parametrize("start_npu", [0, 50])
def test_round_trip_S2L_L2L_L2S(bits, start_npu):
    """A system tensor loaded (continuous -> aligned, 4N/2N for 8/16-bit), copied locally,
    stored back with free strides; shape crosses the 64-NPU boundary from start_npu."""
    shape = (5, 30, 3, 7)
    x = values(bits, shape)
    a, b = npu_addr(start_npu, 0), npu_addr(start_npu, 128 * 1024)
    out_stride = (30 * 3 * 8, 3 * 8, 8, 1)            # padded rows in system memory
    ctx = bm1684.Context()
    getattr(ctx, f"gdma_{bits}bit_cpy_S2L")(a, GMEM, shape, None, None)
    getattr(ctx, f"gdma_{bits}bit_cpy_L2L")(b, a, shape, None, None)
    getattr(ctx, f"gdma_{bits}bit_cpy_L2S")(GMEM + 0x100000, b, shape, out_stride, None)
    sim = bmk.Simulator("bm1684")
    gmem_put(sim, GMEM, x)
    run(ctx, sim)
    assert np.array_equal(get(sim, b, shape, dtype=NP[bits], pack=PACK[bits]), x)
    assert np.array_equal(gmem_get(sim, GMEM + 0x100000, x, out_stride), x)


@pytest.mark.parametrize("bits", [32, 16, 8])
def test_S2S_with_strides(bits):
    shape = (2, 3, 4, 5)
    x = values(bits, (2, 3, 4, 9))[..., :5]        # a strided window of a wider tensor
    src_stride = (3 * 4 * 9, 4 * 9, 9, 1)
    ctx = bm1684.Context()
    getattr(ctx, f"gdma_{bits}bit_cpy_S2S")(GMEM + 0x8000, GMEM, shape, None, src_stride)
    sim = bmk.Simulator("bm1684")
    gmem_put(sim, GMEM, values(bits, 0)[()] if False else np.ascontiguousarray(np.concatenate(
        [x, np.zeros((2, 3, 4, 4), NP[bits])], axis=3)))
    run(ctx, sim)
    assert np.array_equal(gmem_get(sim, GMEM + 0x8000, x), x)


@pytest.mark.parametrize("bits, C, expect", [(32, 1.25, np.float32(1.25).view(np.uint32)), (32, -1, 0xFFFFFFFF),
                                             (16, -32768, 0x8000), (16, 65535, 0xFFFF), (8, -128, 0x80), (8, 255, 0xFF)])
def test_set_C_system_and_local(bits, C, expect):
    shape = (6, 65, 2, 3)
    dst = npu_addr(1, 512)
    ctx = bm1684.Context()
    getattr(ctx, f"gdma_{bits}bit_set_C_local")(dst, C, shape, None)
    getattr(ctx, f"gdma_{bits}bit_set_C_system")(GMEM, C, shape, None)
    sim = run(ctx)
    unsigned = {32: np.uint32, 16: np.uint16, 8: np.uint8}[bits]
    assert np.all(get(sim, dst, shape, dtype=unsigned, pack=PACK[bits]) == expect)
    assert np.all(gmem_get(sim, GMEM, np.zeros(shape, unsigned)) == expect)


@pytest.mark.parametrize("cols, cpc", [(10, 4), (12, 4), (3, 16), (200, 3)])
def test_matrix_S2L_L2S(cols, cpc):
    rows, row_stride = 7, cols + 5
    m = rng.standard_normal((rows, row_stride)).astype(np.float32)
    dst = npu_addr(62, 1024)
    ctx = bm1684.Context()
    ctx.gdma_32bit_matrix_S2L(dst, GMEM, rows, cols, cpc, row_stride)
    ctx.gdma_32bit_matrix_L2S(GMEM + 0x10000, dst, rows, cols, cpc, cols)
    sim = bmk.Simulator("bm1684")
    gmem_put(sim, GMEM, m)
    run(ctx, sim)
    # The Matrix Layout (bm1684-memory.md): element (x, y) is (n = x, c = y // w, h = 0, w = y % w).
    chans = -(-cols // cpc)
    local = get(sim, dst, (rows, chans, 1, cpc))
    padded = np.zeros((rows, chans * cpc), np.float32)
    padded[:, :cols] = m[:, :cols]
    full = cols // cpc * cpc
    assert np.array_equal(local.reshape(rows, -1)[:, :cols], padded[:, :cols])
    assert np.array_equal(local.reshape(rows, -1)[:, :full], m[:, :full])
    out = np.frombuffer(sim.gmem_read(GMEM + 0x10000, rows * cols * 4), np.float32).reshape(rows, cols)
    assert np.array_equal(out, m[:, :cols])


@pytest.mark.parametrize("direction", ["S2L", "L2S"])
def test_matrix_system_side_fields(direction):
    """The system-side matrix is (1, 1, rows, cols) with the row stride as its h stride, as the
    vendor's GDMA reader takes it (tpu-mlir profile_helper/bm1684_defs.py get_gdma_mem_record,
    matrix: rows = *_hsize, cols = *_wsize, row_stride = *_hstride); the local side is the
    Matrix Layout (rows, ceil(cols / cols_per_channel), 1, cols_per_channel) (issue 18 item 2)."""
    rows, cols, cpc, row_stride = 7, 10, 4, 15
    ctx = bm1684.Context()
    if direction == "S2L":
        ctx.gdma_32bit_matrix_S2L(npu_addr(3, 1024), GMEM, rows, cols, cpc, row_stride)
    else:
        ctx.gdma_32bit_matrix_L2S(GMEM, npu_addr(3, 1024), rows, cols, cpc, row_stride)
    f, = (r.fields for r in bmk.decode("bm1684", ctx.acquire_streams()) if r.engine == "gdma")
    system, local = ("src", "dst") if direction == "S2L" else ("dst", "src")
    assert tuple(f[f"{system}_{d}size"] for d in "nchw") == (1, 1, rows, cols)
    assert (f[f"{system}_hstride"], f[f"{system}_wstride"]) == (row_stride, 1)
    assert tuple(f[f"{local}_{d}size"] for d in "nchw") == (rows, 3, 1, cpc)
    assert (f[f"{local}_cstride"], f[f"{local}_wstride"]) == (32, 1)          # ALIGN(1 * 4, 32) words


def test_vendor_s2l_rebuilt_with_equal_fields():
    """The first GDMA command of the real yolov5s stream (an fp32 S2L of the (1, 3, 110, 640)
    input slice with system strides (1228800, 409600, 640, 1)) rebuilt through the API. Fields
    that differ: cmd_id and eng0_sync_id (ids are assigned by the context; a lone call has
    id 1 and no wait) and the addresses (our local and system addresses are the arguments)."""
    vendor_rec = next(r for r in bmk.decode("bm1684", vendor.streams("bm1684")) if r.engine == "gdma")
    vf = vendor_rec.fields
    fmt = bmk.isa.load_chip("bm1684").engine("gdma").format
    src = fmt.compose("src_addr", vf)
    dst = fmt.compose("dst_addr", vf) - 0x08000000
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(dst, src, (vf["src_nsize"], vf["src_csize"], vf["src_hsize"], vf["src_wsize"]), None,
                           (vf["src_nstride"], vf["src_cstride"], vf["src_hstride"], vf["src_wstride"]))
    ours = [r for r in bmk.decode("bm1684", ctx.acquire_streams()) if r.engine == "gdma"][0].fields
    differ = {k for k in vf if vf[k] != ours[k]}
    assert differ <= {"cmd_id", "eng0_sync_id"}, {k: (vf[k], ours[k]) for k in differ}


def test_vendor_constant_fill_rebuilt_with_equal_fields():
    """Every constant fill of the real retinaface network (158 dma.constant to local memory:
    direction L2L, the source fields left 0) rebuilt with gdma_32bit_set_C_local: every field
    equal but the ids."""
    from tests.chips.bm1684.sim.real import records
    from tests.models import files
    fmt = bmk.isa.load_chip("bm1684").engine("gdma").format
    fills = [r.fields for r in records(files.RETINAFACE) if r.kind == "dma.constant"]
    assert len(fills) == 158
    for vf in fills:
        ctx = bm1684.Context()
        ctx.gdma_32bit_set_C_local(fmt.compose("dst_addr", vf) - 0x08000000, vf["constant_value"],
                                   tuple(vf[f"dst_{d}size"] for d in "nchw"),
                                   tuple(vf[f"dst_{d}stride"] for d in "nchw"))
        ours, = (r.fields for r in bmk.decode("bm1684", ctx.acquire_streams()) if r.engine == "gdma")
        differ = {k for k in vf if vf[k] != ours[k]}
        assert differ <= {"cmd_id", "eng0_sync_id"}, {k: (vf[k], ours[k]) for k in differ}


@pytest.mark.parametrize("call, args, match", [
    ("gdma_32bit_cpy_S2L", (0, GMEM, (1, 1, 1, 1), (1, 1, 1, 2), None), r"dst_stride.w must be 1"),
    ("gdma_8bit_cpy_L2S", (GMEM, 0, (1, 1, 1, 1), None, (4, 4, 2, 3)), r"src_stride.w must be 1"),
    ("gdma_32bit_cpy_S2L", (2, GMEM, (1, 1, 1, 1), None, None), r"dst_addr must be divisible by 4"),
    ("gdma_32bit_cpy_S2L", (0, 0x1000, (1, 1, 1, 1), None, None), r"src_addr must be a system address"),
    ("gdma_16bit_cpy_L2S", (0, GMEM, (1, 1, 1, 1), None, None), r"dst_addr must be a system address"),
    ("gdma_32bit_cpy_L2L", (0, 64 * LANE, (1, 1, 1, 1), None, None), r"src_addr must be a local address"),
    ("gdma_32bit_cpy_S2L", (0, GMEM, (1, 1, 1, 65536), None, None), r"shape.w must be an integer in \[1, 65535\]"),
    ("gdma_32bit_cpy_S2L", (LANE - 64, GMEM, (1, 1, 4, 8), None, None), r"dst_addr must be such that the tensor fits"),
    ("gdma_32bit_cpy_S2S", (0x2FFFFFFF0 + 0x10, GMEM, (1, 1, 1, 8), None, None), r"dst_addr must be"),
    ("gdma_8bit_set_C_local", (0, 256, (1, 1, 1, 1), None), r"C must be an integer in \[-128, 255\]"),
    ("gdma_16bit_set_C_system", (GMEM, -32769, (1, 1, 1, 1), None), r"C must be an integer in \[-32768, 65535\]"),
    ("gdma_32bit_set_C_system", (GMEM, "1", (1, 1, 1, 1), None), r"C must be an integer"),
    ("gdma_32bit_matrix_S2L", (0, GMEM, 2, 10, 4, 9), r"row_stride must be an integer in \[10, "),
    ("gdma_32bit_matrix_L2S", (GMEM, 0, 2, 10, 0, 10), r"cols_per_channel must be an integer in \[1, 65535\]"),
    ("gdma_32bit_matrix_S2L", (0, GMEM, 0, 10, 4, 10), r"rows must be an integer in \[1, 65535\]"),
])
def test_remarks(call, args, match):
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(0, GMEM, (1, 2, 3, 4))
    unchanged_after(ctx, getattr(ctx, call), *args, match=f"{call}: {match}", error=ArgumentError)


def test_keywords_and_defaults_match_positional():
    a, b = bm1684.Context(), bm1684.Context()
    a.gdma_16bit_cpy_S2L(dst_addr=4096, src_addr=GMEM, shape=bm1684.dim4(1, 2, 3, 4))
    b.gdma_16bit_cpy_S2L(4096, GMEM, (1, 2, 3, 4), None, None)
    assert a.acquire_cmdbuf() == b.acquire_cmdbuf()
