"""Checks of the GDMA functions (seed 003 "GDMA Functions").

Remarks: the data type is 32-, 16- or 8-bit; a NULL stride means the 128-byte aligned
layout (local) or the continuous layout (system); dst_stride->w and src_stride->w are only
allowed to be one. The descriptor holds every size in 16 bits, so n, c, h, w are in
[1, 65535]. Our rules where the seed is silent (the layout conventions of layout.py): a local
tensor starts on a 32-bit word (4N/2N words, 32-bit elements), and every tensor fits its
memory. The matrix functions: rows, cols, cols_per_channel in [1, 65535], row_stride >= cols
(the elements of each row are continuous), the local matrix (rows, DIV_UP(cols,
cols_per_channel), 1, cols_per_channel) fits its NPU's memory.
"""
from bmk.bm1684.checks import common as c
from bmk.bm1684.types import dim4

LOCAL, SYSTEM = "local", "system"
GDMA_SHAPE_MAX = dim4(65535, 65535, 65535, 65535)


def _side(call, name, space, addr, shape, stride, bits):
    if space == LOCAL:
        addr = c.local_addr(call, name, addr, align=4)
        c.fits_local(call, name, addr, shape, stride, itemsize=4, pack=32 // bits)
    else:
        addr = c.system_addr(call, name, addr)
        c.fits_system(call, name, addr, shape, stride, itemsize=bits // 8)


def _copy(call, r, dst_space, src_space, bits):
    shape = c.shape(call, r.shape, limits=GDMA_SHAPE_MAX)
    dst_stride = c.stride(call, "dst_stride", r.dst_stride, w_one=True)
    src_stride = c.stride(call, "src_stride", r.src_stride, w_one=True)
    _side(call, "dst_addr", dst_space, r.dst_addr, shape, dst_stride, bits)
    _side(call, "src_addr", src_space, r.src_addr, shape, src_stride, bits)


def _set_C(call, r, dst_space, bits):
    shape = c.shape(call, r.shape, limits=GDMA_SHAPE_MAX)
    dst_stride = c.stride(call, "dst_stride", r.dst_stride, w_one=True)
    c.bits(call, "C", r.C, bits)
    _side(call, "dst_addr", dst_space, r.dst_addr, shape, dst_stride, bits)


def _matrix(call, r, dst_space, src_space):
    rows = c.integer(call, "rows", r.rows, 1, 65535)
    cols = c.integer(call, "cols", r.cols, 1, 65535)
    cpc = c.integer(call, "cols_per_channel", r.cols_per_channel, 1, 65535)
    row_stride = c.integer(call, "row_stride", r.row_stride, cols, 2**32 - 1)
    local_shape = dim4(rows, -(-cols // cpc), 1, cpc)
    for name, space in (("dst_addr", dst_space), ("src_addr", src_space)):
        addr = getattr(r, name)
        if space == LOCAL:
            addr = c.local_addr(call, name, addr, align=4)
            c.fits_local(call, name, addr, local_shape, None)
        else:
            addr = c.system_addr(call, name, addr)
            c.fits_system(call, name, addr, dim4(rows, 1, 1, cols), dim4(row_stride, cols, cols, 1))


def gdma_32bit_cpy_S2L(ctx, r):
    _copy("gdma_32bit_cpy_S2L", r, LOCAL, SYSTEM, 32)


def gdma_32bit_cpy_L2S(ctx, r):
    _copy("gdma_32bit_cpy_L2S", r, SYSTEM, LOCAL, 32)


def gdma_32bit_cpy_L2L(ctx, r):
    _copy("gdma_32bit_cpy_L2L", r, LOCAL, LOCAL, 32)


def gdma_32bit_cpy_S2S(ctx, r):
    _copy("gdma_32bit_cpy_S2S", r, SYSTEM, SYSTEM, 32)


def gdma_16bit_cpy_S2L(ctx, r):
    _copy("gdma_16bit_cpy_S2L", r, LOCAL, SYSTEM, 16)


def gdma_16bit_cpy_L2S(ctx, r):
    _copy("gdma_16bit_cpy_L2S", r, SYSTEM, LOCAL, 16)


def gdma_16bit_cpy_L2L(ctx, r):
    _copy("gdma_16bit_cpy_L2L", r, LOCAL, LOCAL, 16)


def gdma_16bit_cpy_S2S(ctx, r):
    _copy("gdma_16bit_cpy_S2S", r, SYSTEM, SYSTEM, 16)


def gdma_8bit_cpy_S2L(ctx, r):
    _copy("gdma_8bit_cpy_S2L", r, LOCAL, SYSTEM, 8)


def gdma_8bit_cpy_L2S(ctx, r):
    _copy("gdma_8bit_cpy_L2S", r, SYSTEM, LOCAL, 8)


def gdma_8bit_cpy_L2L(ctx, r):
    _copy("gdma_8bit_cpy_L2L", r, LOCAL, LOCAL, 8)


def gdma_8bit_cpy_S2S(ctx, r):
    _copy("gdma_8bit_cpy_S2S", r, SYSTEM, SYSTEM, 8)


def gdma_32bit_set_C_system(ctx, r):
    _set_C("gdma_32bit_set_C_system", r, SYSTEM, 32)


def gdma_32bit_set_C_local(ctx, r):
    _set_C("gdma_32bit_set_C_local", r, LOCAL, 32)


def gdma_16bit_set_C_system(ctx, r):
    _set_C("gdma_16bit_set_C_system", r, SYSTEM, 16)


def gdma_16bit_set_C_local(ctx, r):
    _set_C("gdma_16bit_set_C_local", r, LOCAL, 16)


def gdma_8bit_set_C_system(ctx, r):
    _set_C("gdma_8bit_set_C_system", r, SYSTEM, 8)


def gdma_8bit_set_C_local(ctx, r):
    _set_C("gdma_8bit_set_C_local", r, LOCAL, 8)


def gdma_32bit_matrix_S2L(ctx, r):
    _matrix("gdma_32bit_matrix_S2L", r, LOCAL, SYSTEM)


def gdma_32bit_matrix_L2S(ctx, r):
    _matrix("gdma_32bit_matrix_L2S", r, SYSTEM, LOCAL)
