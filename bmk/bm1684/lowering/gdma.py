"""Lowering of the GDMA functions (seed 003 "GDMA Functions"): one dma descriptor each.

Fields, as the vendor fills its S2L/L2S/L2L copies (tests/golden/bm1684, 158 of them):
direction S2L/L2S/S2S/L2L; special_func normal; src/dst_data_format float32 for 32-bit,
int16 for 16-bit, int8 for 8-bit (isa-facts: format 3/1/0); stride_enable 1; chw_copy 0;
sizes in src_*size and dst_*size (both the shape); strides always explicit, in elements, the
remark's NULL layout computed here (local: 128-byte aligned; system: continuous); addresses
as device addresses split over *_start_addr_l32 / _h8 (local: local.base + local_addr_t).
Our choices where the facts are silent (isa-facts bm1684-memory.md "Open"):
- 8- and 16-bit local tensors are 4N / 2N and their local strides count 32-bit words (the
  layout of the fixed-point functions, which read what these copies load); system strides
  count elements;
- set_C: special_func constant, the constant's k-bit pattern in constant_value's low bits,
  direction S2L for a local destination and S2S for a system one (facts: P), the source
  fields describing nothing (sizes equal to the destination's, address 0);
- matrix S2L / L2S: sys_mem_type matrix; the system side is the rows x cols matrix as
  (rows, 1, 1, cols) with n stride row_stride; the local side is the Matrix Layout
  (rows, DIV_UP(cols, cols_per_channel), 1, cols_per_channel) in the aligned layout, its last
  channel holding the cols % cols_per_channel remaining columns.
"""
import functools

from bmk.bm1684 import layout
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.types import dim4
from bmk.layout import continuous_stride
from bmk.templates import as_int

FORMAT = {32: "float32", 16: "int16", 8: "int8"}
LOCAL, SYSTEM = "local", "system"


@functools.cache
def _direction(dst_space, src_space):
    return lo.code(lo.GDMA, "direction", f"{'S' if src_space == SYSTEM else 'L'}2{'S' if dst_space == SYSTEM else 'L'}")


def _side(f, prefix, space, addr, shape, stride):
    """Address, sizes and strides of one side; NULL strides resolved to the remark's layout."""
    addr = as_int(addr)
    if space == LOCAL:
        if stride is None:
            stride = layout.aligned_words(addr // layout.local_mem_size_per_npu(), shape)
        addr += lo.local_base()
    elif stride is None:
        stride = continuous_stride(shape)      # shape checked: the unchecked helper
    f.update(lo.split(lo.GDMA, f"{prefix}_addr", addr))
    f[f"{prefix}_nsize"], f[f"{prefix}_csize"], f[f"{prefix}_hsize"], f[f"{prefix}_wsize"] = shape
    f[f"{prefix}_nstride"], f[f"{prefix}_cstride"], f[f"{prefix}_hstride"], f[f"{prefix}_wstride"] = stride
    return f


@functools.cache
def _fixed_fields(direction, special_func, bits):
    fmt = lo.code(lo.GDMA, "src_data_format", FORMAT[bits])
    return dict(direction=direction, special_func=lo.code(lo.GDMA, "special_func", special_func),
                src_data_format=fmt, dst_data_format=fmt, stride_enable=1, chw_copy=0)


def _dma(direction, special_func, bits, **fields):
    return lo.GDMA, {**_fixed_fields(direction, special_func, bits), **fields}


def _copy(r, dst_space, src_space, bits):
    shape = lo.shape4(r.shape)
    f = {}
    _side(f, "dst", dst_space, r.dst_addr, shape, lo.stride4(r.dst_stride))
    _side(f, "src", src_space, r.src_addr, shape, lo.stride4(r.src_stride))
    return (_dma(_direction(dst_space, src_space), "normal", bits, **f),)


def _set_C(r, dst_space, bits):
    shape = lo.shape4(r.shape)
    f = {"constant_value": lo.bits(r.C, bits)}
    _side(f, "dst", dst_space, r.dst_addr, shape, lo.stride4(r.dst_stride))
    f["src_nsize"], f["src_csize"], f["src_hsize"], f["src_wsize"] = shape
    return (_dma(_direction(dst_space, SYSTEM), "constant", bits, **f),)


def _matrix(r, dst_space, src_space):
    rows, cols, cpc, row_stride = as_int(r.rows), as_int(r.cols), as_int(r.cols_per_channel), as_int(r.row_stride)
    f = {"sys_mem_type": lo.code(lo.GDMA, "sys_mem_type", "matrix")}
    sides = {LOCAL: (dim4(rows, -(-cols // cpc), 1, cpc), None),
             SYSTEM: (dim4(rows, 1, 1, cols), dim4(row_stride, cols, cols, 1))}
    _side(f, "dst", dst_space, r.dst_addr, *sides[dst_space])
    _side(f, "src", src_space, r.src_addr, *sides[src_space])
    return (_dma(_direction(dst_space, src_space), "normal", 32, **f),)


def gdma_32bit_cpy_S2L(chip, r):
    return _copy(r, LOCAL, SYSTEM, 32)


def gdma_32bit_cpy_L2S(chip, r):
    return _copy(r, SYSTEM, LOCAL, 32)


def gdma_32bit_cpy_L2L(chip, r):
    return _copy(r, LOCAL, LOCAL, 32)


def gdma_32bit_cpy_S2S(chip, r):
    return _copy(r, SYSTEM, SYSTEM, 32)


def gdma_16bit_cpy_S2L(chip, r):
    return _copy(r, LOCAL, SYSTEM, 16)


def gdma_16bit_cpy_L2S(chip, r):
    return _copy(r, SYSTEM, LOCAL, 16)


def gdma_16bit_cpy_L2L(chip, r):
    return _copy(r, LOCAL, LOCAL, 16)


def gdma_16bit_cpy_S2S(chip, r):
    return _copy(r, SYSTEM, SYSTEM, 16)


def gdma_8bit_cpy_S2L(chip, r):
    return _copy(r, LOCAL, SYSTEM, 8)


def gdma_8bit_cpy_L2S(chip, r):
    return _copy(r, SYSTEM, LOCAL, 8)


def gdma_8bit_cpy_L2L(chip, r):
    return _copy(r, LOCAL, LOCAL, 8)


def gdma_8bit_cpy_S2S(chip, r):
    return _copy(r, SYSTEM, SYSTEM, 8)


def gdma_32bit_set_C_system(chip, r):
    return _set_C(r, SYSTEM, 32)


def gdma_32bit_set_C_local(chip, r):
    return _set_C(r, LOCAL, 32)


def gdma_16bit_set_C_system(chip, r):
    return _set_C(r, SYSTEM, 16)


def gdma_16bit_set_C_local(chip, r):
    return _set_C(r, LOCAL, 16)


def gdma_8bit_set_C_system(chip, r):
    return _set_C(r, SYSTEM, 8)


def gdma_8bit_set_C_local(chip, r):
    return _set_C(r, LOCAL, 8)


def gdma_32bit_matrix_S2L(chip, r):
    return _matrix(r, LOCAL, SYSTEM)


def gdma_32bit_matrix_L2S(chip, r):
    return _matrix(r, SYSTEM, LOCAL)
