"""Checks of the data-movement functions (seed 4.12-4.18). Shapes and strides of a gmem side
fit the TDMA fields the lowering writes them to (specs/bm1880/tdma.toml; the src_* and dst_*
fields have the same widths); TDMA has no gmem w stride, so that one is 1."""
from bmk.bm1880.constants import CTRL_NULL, CTRL_TP
from bmk.bm1880.lowering.dma import gmem_tensor_side
from bmk.bm1880.tensor import TensorGmem, TensorLmem

TDMA = "tdma"
NULL_OR_TP = [("CTRL_NULL", CTRL_NULL), ("CTRL_TP", CTRL_TP)]


def load_store(c, p, strided):
    """gdma_load, gdma_store (seed 4.14-4.15) and their _stride forms (4.16-4.17: `strided`)."""
    t = p.t
    if not isinstance(t, TensorLmem):
        c.fail("t", "a TensorLmem (not NULL)", t)
    c.live("t", t)
    c.gaddr("gaddr", p.gaddr)
    c.ctrls("ctrls", p.ctrls, NULL_OR_TP)
    s = p.stride if strided else None
    if strided:
        if s is None:
            c.fail("stride", "a stride_t", s)
        if s.dim != t.shape.dim:
            c.fail("stride", "a stride_t2 for a matrix" if t.is_matrix else "a stride_t4 for a tensor", s)
        if t.is_matrix:
            c.in_field("stride.row", s.row, TDMA, "src_c_stride", lo=1)
            c.integer("stride.col", s.col, 1, 1)
        else:
            c.integer("stride.w", s.w, 1, 1)   # TDMA has no gmem w stride
            c.in_field("stride.h", s.h, TDMA, "src_h_stride")
            c.in_field("stride.c", s.c, TDMA, "src_c_stride")
            c.in_field("stride.n", s.n, TDMA, "src_n_stride")
    # The gmem side (its shape under CTRL_TP, given or default strides) ends inside gmem.
    if t.is_matrix:
        rows, cols = (t.shape.col, t.shape.row) if p.ctrls & CTRL_TP else (t.shape.row, t.shape.col)
        c.gmem_extent("gaddr", p.gaddr, (rows, cols), (cols if s is None else s.row, 1))
    else:
        dims, gs = gmem_tensor_side(t, s, p.ctrls)
        c.gmem_extent("gaddr", p.gaddr, dims, (gs.n, gs.c, gs.h, gs.w))


def copy_gmem(c, p):
    """gdma_copy_gmem (seed 4.12)."""
    for name in ("dst", "src"):
        g = getattr(p, name)
        if not isinstance(g, TensorGmem):
            c.fail(name, "a TensorGmem (not NULL)", g)
        c.gaddr(f"{name}.addr", g.addr)
        stride = g.effective_stride
        matrix = g.shape.dim == 2
        if stride.dim != g.shape.dim:
            c.fail(f"{name}.stride", "a stride_t2 for a matrix" if matrix else "a stride_t4 for a tensor", stride)
        # the fields each side's shape goes to (lowering.dma: a matrix moves as (rows, 1, 1, cols))
        fields = {"row": "src_n", "col": "src_w"} if matrix else {d: f"src_{d}" for d in "nchw"}
        for (dim, field), value in zip(fields.items(), g.shape.dims()):
            c.in_field(f"{name}.shape.{dim}", value, TDMA, field, lo=1)
        if matrix:
            c.in_field(f"{name}.stride.row", stride.row, TDMA, "src_n_stride")
            c.integer(f"{name}.stride.col", stride.col, 1, 1)
            c.gmem_extent(f"{name}.addr", g.addr, g.shape.dims(), (stride.row, 1))
            continue
        for dim, value, field in zip("nch", stride.dims(), ("src_n_stride", "src_c_stride", "src_h_stride")):
            c.in_field(f"{name}.stride.{dim}", value, TDMA, field)
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
        c.ctrls("ctrls", p.ctrls, NULL_OR_TP)


def copy_lmem(c, p):
    """gdma_copy_lmem (seed 4.13)."""
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    if p.dst.shape.count != p.src.shape.count:
        c.fail("dst.shape", f"as many elements as src ({p.src.shape.count})", p.dst.shape)


def lrn_shift(c, p):
    """gdma_lrn_shift (seed 4.18)."""
    c.tensor("dst", p.dst)
    c.tensor("src", p.src)
    c.same_shape("dst", p.dst, "src", p.src)
    c.flag("right_shift", p.right_shift)
    c.integer("lrn_step", p.lrn_step, 1, p.src.shape.c - 1)
