"""Checks of the GDMA functions (seed 003 "GDMA Functions"): copies, set_C and the matrix
copies; the op table gives each row its sides (`dst`, `src`: LOCAL or SYSTEM) and element
width (`bits`).

Remarks: the data type is 32-, 16- or 8-bit; a NULL stride means the 128-byte aligned
layout (local) or the continuous layout (system); dst_stride->w and src_stride->w are only
allowed to be one. The descriptor holds every size in 16 bits, so n, c, h, w are in
[1, 65535]. Our rules where the seed is silent (the layout conventions of geometry.py): a
local tensor starts on a storage word (4N/2N words, 32-bit elements), and every tensor fits
its memory. The matrix functions: rows, cols, cols_per_channel in [1, 65535], row_stride >=
cols (the elements of each row are continuous), the local matrix (rows, DIV_UP(cols,
cols_per_channel), 1, cols_per_channel) fits its NPU's memory.
"""
from bmk.bm1684.geometry import matrix_shape, word_bytes
from bmk.layout import dim4

LOCAL, SYSTEM = "local", "system"
SIZE_MAX = dim4(65535, 65535, 65535, 65535)


def _side(c, name, space, addr, shape, stride, bits):
    if space == LOCAL:
        addr = c.address(name, addr)
        c.fits(name, addr, shape, stride, pack=8 * word_bytes(c.chip) // bits)
    else:
        addr = c.system(name, addr)
        c.fits_system(name, addr, shape, stride, bits // 8)


def copy(c, p, dst, src, bits):
    shape = c.shape(p.shape, hi=SIZE_MAX)
    dst_stride = c.stride("dst_stride", p.dst_stride, "gdma", w_one=True)
    src_stride = c.stride("src_stride", p.src_stride, "gdma", w_one=True)
    _side(c, "dst_addr", dst, p.dst_addr, shape, dst_stride, bits)
    _side(c, "src_addr", src, p.src_addr, shape, src_stride, bits)


def set_C(c, p, dst, bits):       # noqa: N802 (the seed's name)
    shape = c.shape(p.shape, hi=SIZE_MAX)
    dst_stride = c.stride("dst_stride", p.dst_stride, "gdma", w_one=True)
    c.bits("C", p.C, bits)
    _side(c, "dst_addr", dst, p.dst_addr, shape, dst_stride, bits)


def matrix(c, p, dst, src, bits):
    rows = c.integer("rows", p.rows, 1, SIZE_MAX.n)
    cols = c.integer("cols", p.cols, 1, SIZE_MAX.w)
    cpc = c.integer("cols_per_channel", p.cols_per_channel, 1, SIZE_MAX.w)
    row_stride = c.integer("row_stride", p.row_stride, cols, c.chip.limit("gdma", "src_hstride"))
    for name, space in (("dst_addr", dst), ("src_addr", src)):
        addr = getattr(p, name)
        if space == LOCAL:
            addr = c.address(name, addr)
            c.fits(name, addr, matrix_shape(rows, cols, cpc), None)
        else:
            addr = c.system(name, addr)
            c.fits_system(name, addr, dim4(1, 1, rows, cols), dim4(0, 0, row_stride, 1), bits // 8)
