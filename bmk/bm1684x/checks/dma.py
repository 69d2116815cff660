"""Checks of the data movement functions (API.md section bm1684x; TPU-Kernel header):
gdma_cpy_S2L (system -> local), L2S, L2L, S2S.

Rules: shape in [1, 65535]; dtype any 8/16/32-bit type; a local operand follows the local
rules of checks/common.py (NULL stride = aligned layout, 64-byte aligned start, fits its
NPUs' memory); a system operand is a global address (global memory starts at 0x100000000),
a NULL stride means the continuous layout, a given one is a dim4 of elements in
[0, 2^32 - 1] (the 32-bit `*_stride` fields), and the whole tensor lies inside global memory.
"""
from bmk.bm1684x import layout as mem
from bmk.bm1684x.checks.common import Check
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES, dtype_of
from bmk.layout import continuous_stride

GLOBAL_STRIDE_MAX = mem.CHIP.engine("gdma").cls("DMA_tensor").field("src_nstride").max   # 32-bit stride fields


def system(ck, name, addr, shape, stride, dtype, stride_name):
    addr = mem.global_address(ck.call, name, addr)
    if stride is None:
        st = continuous_stride(shape)
    else:
        st = mem.as_stride(ck.call, stride_name, stride, GLOBAL_STRIDE_MAX)
    if name == "dst_addr":
        ck.no_broadcast(stride_name, shape, st, local=False)
    end = addr + mem.extent(shape, st, dtype_of(dtype).itemsize)
    if end > mem.GLOBAL.base + mem.GLOBAL.size:
        ck.fail(name, f"such that the tensor fits global memory (it would end at 0x{end:x})", addr)
    return addr


def _copy(call, p, dst_local, src_local):
    ck = Check(call)
    shape = ck.shape("shape", p.shape)
    dtype = ck.dtype("dtype", p.dtype, WHOLE_BYTE_DTYPES)
    for name, addr, stride, is_local in (("dst_addr", p.dst_addr, p.dst_stride, dst_local),
                                         ("src_addr", p.src_addr, p.src_stride, src_local)):
        stride_name = name.replace("_addr", "_stride")
        if is_local:
            ck.local(name, addr, shape, stride, dtype, stride_name, GLOBAL_STRIDE_MAX)
        else:
            system(ck, name, addr, shape, stride, dtype, stride_name)


def gdma_cpy_S2L(ctx, p):  # noqa: N802
    _copy("gdma_cpy_S2L", p, True, False)


def gdma_cpy_L2S(ctx, p):  # noqa: N802
    _copy("gdma_cpy_L2S", p, False, True)


def gdma_cpy_L2L(ctx, p):  # noqa: N802
    _copy("gdma_cpy_L2L", p, True, True)


def gdma_cpy_S2S(ctx, p):  # noqa: N802
    _copy("gdma_cpy_S2S", p, False, False)
