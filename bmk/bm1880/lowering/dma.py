"""Lowering of the data-movement functions (seed 4.12-4.18) to TDMA descriptors: kinds load,
store (with _tp under CTRL_TP), copy_gmem, copy_lmem and fill (specs/bm1880/tdma.toml)."""
from bmk.bm1880.constants import CTRL_TP
from bmk.bm1880.lowering.common import TDMA, gmem_addr, tdma
from bmk.bm1880.tensor import Stride


def _side(chip, f, side, dims, stride, with_n=False):
    """Shape (c, h, w) and strides (n, c, h) of one side of a transfer (src_n only on src)."""
    n, c, h, w = dims
    if with_n:
        f[f"{side}_n"] = n
    f[f"{side}_c"], f[f"{side}_h"], f[f"{side}_w"] = c, h, w
    f[f"{side}_n_stride"], f[f"{side}_h_stride"] = stride.n, stride.h
    f.update(chip.split(TDMA, f"{side}_c_stride", stride.c))


def _lmem_dims(t):
    lay = t.layout
    return (lay.n, lay.c, lay.h, lay.w)


def gmem_tensor_side(t, gstride, ctrls):
    """The gmem side of a tensor transfer: shape (C, N, H, W) under CTRL_TP (N/C transpose)."""
    s = t.shape
    dims = (s.c, s.n, s.h, s.w) if ctrls & CTRL_TP else (s.n, s.c, s.h, s.w)
    if gstride is None:
        gstride = Stride(dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1)
    return dims, gstride


def _gmem_matrix_side(t, gstride, ctrls):
    """The gmem side of a matrix transfer: (rows, cols), or (cols, rows) under CTRL_TP.
    Encoded as n = c = rows, h = 1, w = cols, c-stride = row stride; n/h strides stay 1."""
    rows, cols = (t.shape.col, t.shape.row) if ctrls & CTRL_TP else (t.shape.row, t.shape.col)
    row_stride = cols if gstride is None else gstride.row
    return (rows, rows, 1, cols), Stride(1, row_stride, 1, 1)


def load_store(chip, p, load, strided):
    """gdma_load / gdma_store (seed 4.14-4.15: default gmem strides) and their _stride forms
    (4.16-4.17: the given ones); CTRL_TP transposes N/C (rows/cols): the _tp kinds."""
    t = p.t
    gside = _gmem_matrix_side if t.is_matrix else gmem_tensor_side
    gdims, gstr = gside(t, p.stride if strided else None, p.ctrls)
    kind = ("load" if load else "store") + ("_tp" if p.ctrls & CTRL_TP else "")
    sys_dtype = chip.code(TDMA, "sys_dtype", "matrix" if t.is_matrix else "tensor")
    if load:
        f = tdma(chip, kind, gmem_addr(chip, p.gaddr), t.la, sys_dtype=sys_dtype)
        _side(chip, f, "src", gdims, gstr, with_n=True)
        _side(chip, f, "dst", _lmem_dims(t), t.stride)
    else:
        f = tdma(chip, kind, t.la, gmem_addr(chip, p.gaddr), sys_dtype=sys_dtype)
        _side(chip, f, "src", _lmem_dims(t), t.stride, with_n=True)
        _side(chip, f, "dst", gdims, gstr)
    return ((TDMA, f),)


def _gmem_copy_side(g):
    """(dims, strides) of one side of a gmem-to-gmem copy. A matrix (R, Cm) with row stride S
    is moved as the tensor (R, 1, 1, Cm) with n-stride S (seed 2.4: a matrix is rows of Cm
    elements, S apart), so it takes the tensor fields; TDMA needs no matrix mode for it."""
    if g.shape.dim == 2:
        return (g.shape.row, 1, 1, g.shape.col), Stride(g.effective_stride.row, g.shape.col, g.shape.col, 1)
    return g.shape.dims(), g.effective_stride


def copy_gmem(chip, p):
    """Seed 4.12: gmem -> gmem copy (g2g) of a tensor or a matrix; shapes may differ, counts
    equal. CTRL_TP (tensors): kind copy_gmem_tp, the source moved in the logical order of its
    N/C transpose (C, N, H, W). cvikernel passes trans_fmt 2 into the 1-bit trans_fmt field,
    which encodes as 0, so the field is left at its default."""
    src, dst = p.src, p.dst
    kind = "copy_gmem_tp" if p.ctrls & CTRL_TP else "copy_gmem"
    f = tdma(chip, kind, gmem_addr(chip, src.addr), gmem_addr(chip, dst.addr))
    _side(chip, f, "src", *_gmem_copy_side(src), with_n=True)
    _side(chip, f, "dst", *_gmem_copy_side(dst))
    return ((TDMA, f),)


def copy_lmem(chip, p):
    """Seed 4.13: lmem -> lmem tensor copy (l2l); shapes may differ, counts equal."""
    f = tdma(chip, "copy_lmem", p.src.la, p.dst.la)
    _side(chip, f, "src", _lmem_dims(p.src), p.src.stride, with_n=True)
    _side(chip, f, "dst", _lmem_dims(p.dst), p.dst.stride)
    return ((TDMA, f),)


def _channel_address(chip, t, channel):
    """Lane-qualified lmem address of channel `channel` of t (seed 2.3): channel c lives in
    lane c % npu_num, c // npu_num c-strides after la."""
    npu_num = chip.param("npu_num")
    return (channel % npu_num) * chip.param("lmem_size") + t.la + (channel // npu_num) * t.stride.c


def lrn_shift(chip, p):
    """Seed 4.18: two descriptors: an l2l copy of C - lrn_step channels between lanes
    (lane-qualified addresses: lane * lmem_size + offset), then a zero fill of lrn_step channels."""
    src, dst, step = p.src, p.dst, p.lrn_step
    n, c, h, w = _lmem_dims(src)
    moved = c - step
    if p.right_shift:   # src channel i -> dst channel i + step; dst channels [0, step) = 0
        src_addr, dst_addr, fill_addr = src.la, _channel_address(chip, dst, step), dst.la
    else:               # src channel i -> dst channel i - step; dst channels [C - step, C) = 0
        src_addr, dst_addr, fill_addr = _channel_address(chip, src, step), dst.la, _channel_address(chip, dst, moved)
    sign = int(src.signed)
    copy = tdma(chip, "copy_lmem", src_addr, dst_addr, int8_sign=sign)
    _side(chip, copy, "src", (n, moved, h, w), src.stride, with_n=True)
    _side(chip, copy, "dst", (n, moved, h, w), dst.stride)
    fill = tdma(chip, "fill", src_addr, fill_addr, const_val=0, int8_sign=sign)
    _side(chip, fill, "src", (n, moved, h, w), src.stride, with_n=True)
    _side(chip, fill, "dst", (n, step, h, w), dst.stride)
    return ((TDMA, copy), (TDMA, fill))
