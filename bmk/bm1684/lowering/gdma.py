"""Lowering of the GDMA functions (seed 003 "GDMA Functions"): one dma descriptor each; the op
table gives each row its sides (`dst`, `src`: LOCAL or SYSTEM) and element width (`bits`).

Fields, as the vendor fills its S2L/L2S/L2L copies (tests/golden/bm1684, 158 of them):
direction S2L/L2S/S2S/L2L; special_func normal; src/dst_data_format float32 for 32-bit,
int16 for 16-bit, int8 for 8-bit (isa-facts: format 3/1/0); stride_enable 1; chw_copy 0;
sizes in src_*size and dst_*size (both the shape); strides always explicit, in elements, the
remark's NULL layout computed here (local: 128-byte aligned; system: continuous); addresses
as device addresses split over *_start_addr_l32 / _h8 by the spec's `composed` rows (local:
local.base + local_addr_t).
The constant fills (set_C), as the vendor compiler's (the real retinaface network's 158
dma.constant): special_func constant, the constant's k-bit pattern in constant_value's low
bits, direction L2L for a local destination, the source fields left 0 (src_wstride too, whose
reset value is 1); a system destination takes S2S (bmk's choice: no vendor fill of system
memory is known).
The matrix copies (S2L / L2S), as the vendor's GDMA reader takes them (tpu-mlir
python/profile_helper/bm1684_defs.py get_gdma_mem_record: rows = *_hsize, cols = *_wsize,
row_stride = *_hstride on the system side; the local side's w = cols_per_channel and its n, c
strides; issue 18 item 2): sys_mem_type matrix; the system side is (1, 1, rows, cols) with h
stride row_stride (n and c strides: the whole matrix); the local side is the Matrix Layout
(rows, DIV_UP(cols, cols_per_channel), 1, cols_per_channel) in the aligned layout, its last
channel holding the cols % cols_per_channel remaining columns.
Our choice where the facts are silent (isa-facts bm1684-memory.md "Open"): 8- and 16-bit local
tensors are 4N / 2N and their local strides count storage words (the layout of the
fixed-point functions, which read what these copies load); system strides count elements.
"""
from bmk.bm1684 import geometry as g
from bmk.bm1684.lowering import common as lo
from bmk.checks import as_int
from bmk.layout import continuous_stride, dim4

FORMAT = {32: "float32", 16: "int16", 8: "int8"}      # the data_format member of each element width
LOCAL, SYSTEM = "local", "system"


def _side(chip, f, prefix, space, addr, shape, stride):
    """Address, sizes and strides of one side; NULL strides resolved to the remark's layout."""
    addr = as_int(addr)
    if space == LOCAL:
        if stride is None:
            stride = g.aligned_words(chip, g.start_npu(chip, addr), shape)
        addr = lo.local(chip, addr)
    elif stride is None:
        stride = continuous_stride(shape)
    f.update(chip.split(lo.GDMA, f"{prefix}_addr", addr))
    f[f"{prefix}_nsize"], f[f"{prefix}_csize"], f[f"{prefix}_hsize"], f[f"{prefix}_wsize"] = shape
    f[f"{prefix}_nstride"], f[f"{prefix}_cstride"], f[f"{prefix}_hstride"], f[f"{prefix}_wstride"] = stride
    return f


def _dma(chip, dst, src, special_func, k, f):
    """The descriptor: direction, special function, data formats, explicit strides, then f."""
    direction = f"{'S' if src == SYSTEM else 'L'}2{'S' if dst == SYSTEM else 'L'}"
    fmt = chip.code(lo.GDMA, "src_data_format", FORMAT[k])
    return lo.GDMA, {"direction": chip.code(lo.GDMA, "direction", direction),
                     "special_func": chip.code(lo.GDMA, "special_func", special_func),
                     "src_data_format": fmt, "dst_data_format": fmt, "stride_enable": 1, "chw_copy": 0, **f}


def copy(chip, p, dst, src, bits):
    """dst = src, elements of `bits` bits."""
    shape = lo.shape4(p.shape)
    f = _side(chip, {}, "dst", dst, p.dst_addr, shape, lo.stride4(p.dst_stride))
    _side(chip, f, "src", src, p.src_addr, shape, lo.stride4(p.src_stride))
    return (_dma(chip, dst, src, "normal", bits, f),)


def set_C(chip, p, dst, bits):      # noqa: N802 (the seed's name)
    """dst = C: the constant function; the source fields describe nothing (left 0, src_wstride
    too), the direction is the destination's L2L / S2S."""
    shape = lo.shape4(p.shape)
    f = _side(chip, {"constant_value": lo.bits(p.C, bits)}, "dst", dst, p.dst_addr, shape, lo.stride4(p.dst_stride))
    f["src_wstride"] = 0
    return (_dma(chip, dst, dst, "constant", bits, f),)


def matrix(chip, p, dst, src, bits):
    """dst(x, y) = src(x, y): the system matrix and the local Matrix Layout."""
    rows, cols, cpc, row_stride = as_int(p.rows), as_int(p.cols), as_int(p.cols_per_channel), as_int(p.row_stride)
    sides = {LOCAL: (g.matrix_shape(rows, cols, cpc), None),
             SYSTEM: (dim4(1, 1, rows, cols), dim4(rows * row_stride, rows * row_stride, row_stride, 1))}
    f = _side(chip, {"sys_mem_type": chip.code(lo.GDMA, "sys_mem_type", "matrix")}, "dst", dst, p.dst_addr,
              *sides[dst])
    _side(chip, f, "src", src, p.src_addr, *sides[src])
    return (_dma(chip, dst, src, "normal", bits, f),)

