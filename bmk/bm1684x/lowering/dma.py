"""Lowering of the data movement functions (gdma_cpy_S2L, L2S, L2L, S2S) to one DMA_tensor
descriptor (cmd_type tensor, special function 0: the vendor's plain `dma.tensor`; no short
class exists for it).

Fields, as the vendor's real stream fills them (tests/golden/bm1684x; ids and addresses
aside): nchw_copy 1, stride_enable 1, src_data_format = dtype's precision code (a DMA moves
bits: no sign), src_{n,c,h,w}size = shape, dst sizes left 0 (nchw_copy: the destination
has the source's shape), src/dst {n,c,h,w}stride in elements, localmem_mask_l32/h32 all
ones. Addresses are the DMA's 40-bit view split into *_start_addr_h8 (bits 32..39) and
*_start_addr_l32: a local address is the local window's base (specs/bm1684x memory.local)
plus the local_addr_t; a global address is itself (global memory starts at 0x100000000).
NULL strides: the aligned layout for a local operand (its start NPU counted, see
bm1684x.layout), the continuous layout for a global one.
"""
from bmk import layout
from bmk.bm1684x import layout as mem
from bmk.bm1684x.constants import dtype_of, prec_sign
from bmk.bm1684x.lowering.common import CHIP, GDMA
from bmk.templates import as_int, fixed

_TENSOR = CHIP.engine(GDMA).cls("DMA_tensor")
CMD_TYPE = dict(_TENSOR.field("cmd_type").enum)["DMA_tensor"]
LOCAL_BASE = CHIP.space("local").base
L32 = _TENSOR.field("src_start_addr_l32").width
MASK = _TENSOR.field("localmem_mask_l32").max


def _operand(prefix, addr, stride, shape, itemsize, local):
    addr = as_int(addr)
    if stride is None:
        if local:
            stride = layout.aligned_stride(shape, itemsize, mem.ALIGN_BYTES, mem.NPU_NUM, addr // mem.LANE_BYTES)
        else:
            stride = layout.continuous_stride(shape)
    dma_addr = LOCAL_BASE + addr if local else addr
    n, c, h, w = (as_int(v) for v in stride)
    return {f"{prefix}_start_addr_h8": dma_addr >> L32, f"{prefix}_start_addr_l32": dma_addr & ((1 << L32) - 1),
            f"{prefix}_nstride": n, f"{prefix}_cstride": c, f"{prefix}_hstride": h, f"{prefix}_wstride": w}


def copy(p, dst_local, src_local):
    shape = tuple(int(v) for v in p.shape)
    dtype = int(fixed(p.dtype))
    itemsize = dtype_of(dtype).itemsize
    f = {"cmd_short": 0, "cmd_type": CMD_TYPE, "cmd_special_function": 0, "nchw_copy": 1, "stride_enable": 1,
         "src_data_format": prec_sign(dtype)[0], "localmem_mask_l32": MASK, "localmem_mask_h32": MASK,
         "src_nsize": shape[0], "src_csize": shape[1], "src_hsize": shape[2], "src_wsize": shape[3]}
    f.update(_operand("src", p.src_addr, p.src_stride, shape, itemsize, src_local))
    f.update(_operand("dst", p.dst_addr, p.dst_stride, shape, itemsize, dst_local))
    return ((GDMA, f),)


def gdma_cpy_S2L(chip, p):  # noqa: N802
    """tpu_gdma_cpy_S2L: system (global) tensor -> local tensor."""
    return copy(p, True, False)


def gdma_cpy_L2S(chip, p):  # noqa: N802
    """tpu_gdma_cpy_L2S: local tensor -> system tensor."""
    return copy(p, False, True)


def gdma_cpy_L2L(chip, p):  # noqa: N802
    """tpu_gdma_cpy_L2L: local tensor -> local tensor."""
    return copy(p, True, True)


def gdma_cpy_S2S(chip, p):  # noqa: N802
    """tpu_gdma_cpy_S2S: system tensor -> system tensor."""
    return copy(p, False, False)
