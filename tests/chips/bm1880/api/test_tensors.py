"""Default strides (seed 2.4) and matrix layouts (seed 2.3) of lmem and gmem tensors."""
import pytest

from bmk import bm1880
from bmk.bm1880 import FMT_I8


@pytest.fixture
def ctx():
    return bm1880.register()


@pytest.mark.parametrize("shape, aligned, stride", [
    ((1, 32, 5, 5), False, (25, 25, 5, 1)),
    ((1, 32, 5, 5), True, (32, 32, 5, 1)),
    ((2, 64, 3, 3), False, (18, 9, 3, 1)),      # n stride = c stride * ceil(C / npu_num)
    ((2, 70, 3, 3), True, (48, 16, 3, 1)),
])
def test_lmem_tensor_strides(ctx, shape, aligned, stride):
    make = ctx.tl_prealloc_align if aligned else ctx.tl_prealloc
    t = make(0, bm1880.shape_t4(*shape), FMT_I8)
    assert (t.stride.n, t.stride.c, t.stride.h, t.stride.w) == stride


@pytest.mark.parametrize("rows, cols, layout", [
    (12, 70, (12, 5, 1, 16)),     # W = 16 * ceil(70 / 512), C' = ceil(70 / 16)
    (70, 12, (70, 1, 1, 12)),     # narrow: W = cols
    (4, 1000, (4, 32, 1, 32)),
])
def test_matrix_layout(ctx, rows, cols, layout):
    m = ctx.tl_prealloc_align(0, bm1880.shape_t2(rows, cols), FMT_I8)
    assert m.is_matrix and (m.shape.row, m.shape.col) == (rows, cols)
    assert (m.layout.n, m.layout.c, m.layout.h, m.layout.w) == layout


def test_gmem_default_strides():
    g = bm1880.TensorGmem(addr=0, shape=(2, 3, 4, 5))
    assert g.effective_stride.dims() == (60, 20, 5, 1)
    m = bm1880.TensorGmem(addr=0, shape=bm1880.shape_t2(7, 9))
    assert m.effective_stride.dims() == (9, 1)
    s = bm1880.TensorGmem(addr=0, shape=(1, 2, 3, 4), stride=(100, 50, 10, 1))
    assert s.effective_stride.dims() == (100, 50, 10, 1)


def test_chip_info():
    info = bm1880.chip_info()
    assert (info.version, info.npu_num, info.eu_num, info.lmem_size, info.lmem_banks, info.lmem_bank_size) == \
        (1880, 32, 16, 32768, 8, 4096)
