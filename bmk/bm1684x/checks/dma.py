"""Checks of the data movement functions (API.md section bm1684x; TPU-Kernel header):
gdma_cpy_S2L (system -> local), L2S, L2L, S2S (`dst_local`, `src_local` from the op table).

Rules: shape in [1, 65535]; dtype any 8/16/32-bit type; a local operand follows the local
rules of checks/common.py (NULL stride = aligned layout, 64-byte aligned start, fits its
NPUs' memory); a system operand is a global address (global memory starts at 0x100000000),
a NULL stride means the continuous layout, a given one is a dim4 of elements within the
DMA's `*_stride` fields, and the whole tensor lies inside global memory.
"""
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES


def copy(c, p, dst_local, src_local):
    shape = c.shape("shape", p.shape)
    dtype = c.dtype("dtype", p.dtype, WHOLE_BYTE_DTYPES)
    stride_max = c.stride_max("src_nstride", "gdma", "DMA_tensor")
    for name, addr, stride, is_local in (("dst_addr", p.dst_addr, p.dst_stride, dst_local),
                                         ("src_addr", p.src_addr, p.src_stride, src_local)):
        stride_name = name.replace("_addr", "_stride")
        if is_local:
            c.local(name, addr, shape, stride, dtype, stride_name, stride_max)
        else:
            c.system(name, addr, shape, stride, dtype, stride_name, stride_max)
