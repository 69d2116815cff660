"""Checks of the data-movement functions (seed 4.12-4.18)."""
from bmk.bm1880.constants import CTRL_NULL, CTRL_TP
from bmk.bm1880.checks.common import Check
from bmk.bm1880.lowering.dma import gmem_tensor_side
from bmk.tensor import TensorGmem, TensorLmem


# -- data movement ----------------------------------------------------------------------------
def _load_store(ctx, call, p, with_stride):
    c = Check(ctx, call)
    t = p.t
    if not isinstance(t, TensorLmem):
        c.fail("t", "a TensorLmem (not NULL)", t)
    c.live("t", t)
    c.gaddr("gaddr", p.gaddr)
    c.ctrls("ctrls", p.ctrls, [("CTRL_NULL", CTRL_NULL), ("CTRL_TP", CTRL_TP)])
    if with_stride:
        s = p.stride
        if s is None:
            c.fail("stride", "a stride_t", s)
        if s.dim != t.shape.dim:
            c.fail("stride", "a stride_t2 for a matrix" if t.is_matrix else "a stride_t4 for a tensor", s)
        if t.is_matrix:
            c.int_range("stride.row", s.row, 1, 0xFFFFFFFF)
            c.int_range("stride.col", s.col, 1, 1)
        else:
            c.int_range("stride.w", s.w, 1, 1)   # TDMA has no gmem w stride
            c.int_range("stride.h", s.h, 0, 0xFFFF)
            c.int_range("stride.c", s.c, 0, 0xFFFFFFFF)
            c.int_range("stride.n", s.n, 0, 0xFFFFFFFF)
    _gmem_side_fits(c, t, p.gaddr, p.stride if with_stride else None, p.ctrls)


def _gmem_side_fits(c, t, gaddr, stride, ctrls):
    """The gmem side of a load/store (its shape under CTRL_TP, given or default strides) ends inside gmem."""
    if t.is_matrix:
        rows, cols = (t.shape.col, t.shape.row) if ctrls & CTRL_TP else (t.shape.row, t.shape.col)
        c.gmem_extent("gaddr", gaddr, (rows, cols), (cols if stride is None else stride.row, 1))
    else:
        dims, s = gmem_tensor_side(t, stride, ctrls)
        c.gmem_extent("gaddr", gaddr, dims, (s.n, s.c, s.h, s.w))


def gdma_load(ctx, p):
    _load_store(ctx, "gdma_load", p, False)


def gdma_store(ctx, p):
    _load_store(ctx, "gdma_store", p, False)


def gdma_load_stride(ctx, p):
    _load_store(ctx, "gdma_load_stride", p, True)


def gdma_store_stride(ctx, p):
    _load_store(ctx, "gdma_store_stride", p, True)


def gdma_copy_gmem(ctx, p):
    c = Check(ctx, "gdma_copy_gmem")
    for name in ("dst", "src"):
        g = getattr(p, name)
        if not isinstance(g, TensorGmem):
            c.fail(name, "a TensorGmem (not NULL)", g)
        c.gaddr(f"{name}.addr", g.addr)
        stride = g.effective_stride
        if stride.dim != g.shape.dim:
            c.fail(f"{name}.stride", "a stride_t2 for a matrix" if g.shape.dim == 2 else "a stride_t4 for a tensor",
                   stride)
        if g.shape.dim == 2:
            for dim, value in zip(("row", "col"), g.shape.dims()):
                c.int_range(f"{name}.shape.{dim}", value, 1, 0xFFFF)
            c.int_range(f"{name}.stride.row", stride.row, 0, 0xFFFFFFFF)
            c.int_range(f"{name}.stride.col", stride.col, 1, 1)
            c.gmem_extent(f"{name}.addr", g.addr, g.shape.dims(), (stride.row, 1))
            continue
        for dim, value in zip("nchw", g.shape.dims()):
            c.int_range(f"{name}.shape.{dim}", value, 1, 0xFFFF)
        for dim, value, hi in zip("nch", stride.dims(), (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFF)):
            c.int_range(f"{name}.stride.{dim}", value, 0, hi)
        if stride.w != 1:
            c.fail(f"{name}.stride.w", "1 (TDMA has no gmem w stride)", stride.w)
        c.gmem_extent(f"{name}.addr", g.addr, g.shape.dims(), stride.dims())
    if p.dst.shape.dim != p.src.shape.dim:
        c.fail("dst", "a matrix like src" if p.src.shape.dim == 2 else "a tensor like src", p.dst)
    if p.dst.shape.count != p.src.shape.count:
        c.fail("dst.shape", f"as many elements as src ({p.src.shape.count})", p.dst.shape)
    if p.src.shape.dim == 2:
        c.ctrls("ctrls", p.ctrls, [("CTRL_NULL (matrices are not transposed by gdma_copy_gmem)", CTRL_NULL)])
    else:
        c.ctrls("ctrls", p.ctrls, [("CTRL_NULL", CTRL_NULL), ("CTRL_TP", CTRL_TP)])


def gdma_copy_lmem(ctx, p):
    c = Check(ctx, "gdma_copy_lmem")
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    if p.dst.shape.count != p.src.shape.count:
        c.fail("dst.shape", f"as many elements as src ({p.src.shape.count})", p.dst.shape)


def gdma_lrn_shift(ctx, p):
    c = Check(ctx, "gdma_lrn_shift")
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    c.same_shape("dst", p.dst, "src", p.src)
    c.flag("right_shift", p.right_shift)
    c.int_range("lrn_step", p.lrn_step, 1, p.src.shape.c - 1)


