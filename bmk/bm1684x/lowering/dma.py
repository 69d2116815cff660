"""Lowering of the data movement functions (gdma_cpy_S2L, L2S, L2L, S2S) to one DMA_tensor
descriptor (cmd_type tensor, special function 0: the vendor's plain `dma.tensor`; no short
class exists for it).

Fields, as the vendor's real stream fills them (tests/golden/bm1684x; ids and addresses
aside): stride_enable 1, src_data_format = dtype's precision code (a DMA moves bits: no
sign), src_{n,c,h,w}size = shape, src/dst {n,c,h,w}stride in elements, the local memory
mask every lane. S2L and L2S set nchw_copy 1 and leave the dst sizes 0 (the destination has
the source's shape); L2L and S2S are the general move, nchw_copy 0 with the dst sizes
filled (= shape), as the vendor's TPU-Kernel writes them (issue 18's reading of the BM1690
firmware kernel/tpu_kernel.c: family evidence). Addresses are the DMA's 40-bit view, split by the spec's `composed` rows: a local
address is the local window's base (specs/bm1684x memory.local) plus the local_addr_t; a
global address is itself (global memory starts at 0x100000000).
NULL strides: the aligned layout for a local operand (its start NPU counted, see
bm1684x.layout), the continuous layout for a global one.
"""
from bmk import layout
from bmk.bm1684x.constants import dtype_of, prec_sign
from bmk.bm1684x.lowering.common import GDMA
from bmk.checks import as_int, fixed

CLASS = "DMA_tensor"


def _operand(chip, prefix, addr, stride, shape, itemsize, local):
    addr = as_int(addr)
    if stride is None:
        if local:
            lane = chip.space("local").lane_bytes
            stride = layout.aligned_stride(shape, itemsize, chip.param("channel_align_bytes"),
                                           chip.param("npu_num"), addr // lane)
        else:
            stride = layout.continuous_stride(shape)
    dma_addr = chip.space("local").base + addr if local else addr
    n, c, h, w = (as_int(v) for v in stride)
    return {**chip.split(GDMA, f"{prefix}_addr", dma_addr, CLASS),
            f"{prefix}_nstride": n, f"{prefix}_cstride": c, f"{prefix}_hstride": h, f"{prefix}_wstride": w}


def copy(chip, p, dst_local, src_local):
    """dst = src, a tensor of dtype (the op table gives which sides are local)."""
    shape = tuple(as_int(v) for v in p.shape)
    dtype = int(fixed(p.dtype))
    itemsize = dtype_of(dtype).itemsize
    general = dst_local == src_local
    f = {**chip.kind(GDMA, "dma.tensor", CLASS), "nchw_copy": 0 if general else 1, "stride_enable": 1,
         "src_data_format": prec_sign(dtype)[0], **chip.split(GDMA, "localmem_mask", chip.all_lanes, CLASS),
         "src_nsize": shape[0], "src_csize": shape[1], "src_hsize": shape[2], "src_wsize": shape[3]}
    if general:
        f.update(dst_nsize=shape[0], dst_csize=shape[1], dst_hsize=shape[2], dst_wsize=shape[3])
    f.update(_operand(chip, "src", p.src_addr, p.src_stride, shape, itemsize, src_local))
    f.update(_operand(chip, "dst", p.dst_addr, p.dst_stride, shape, itemsize, dst_local))
    return ((GDMA, f),)
