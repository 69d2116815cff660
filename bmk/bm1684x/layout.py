"""BM1684X local and global memory as TPU-Kernel sees it (API.md section bm1684x,
isa-facts/bm1684x-memory.md): the chip queries and the stride helpers (module functions).

A `local_addr_t` is npu * local_mem_size_per_npu() + offset; a tensor of C channels starting
on NPU s puts channel c on NPU (s + c) % 64 in channel slot (s + c) // 64. Strides count
elements. The aligned layout (a NULL local stride) is cs = ALIGN(H*W, eu_num(dtype)),
ns = ceil((s + C) / 64) * cs: the start NPU counts, for TIU and GDMA alike (the memory
notes' caveat: the vendor's gdma helpers assume s = 0; bmk uses one rule everywhere).
Every fact comes from the chip's spec (specs/bm1684x), read when a function is called.
"""
from bmk import layout
from bmk.bm1684x.checks.common import Check
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES, dtype_of
from bmk.isa import load_chip
from bmk.layout import dim4

CHIP = "bm1684x"


def _check(call):
    return Check(load_chip(CHIP), call)


def npu_num():
    """tpu_npu_num(): the NPUs (lanes) of BM1684X."""
    return load_chip(CHIP).param("npu_num")


def local_mem_size_per_npu():
    """tpu_local_mem_size_per_npu(): bytes of local memory in each NPU."""
    return load_chip(CHIP).space("local").lane_bytes


def start_npu_index(addr):
    """tpu_npu_index(addr): the NPU a local address starts on (addr // local_mem_size_per_npu())."""
    c = _check("start_npu_index")
    return c.start_npu(c.local_address("addr", addr))


def aligned_stride(start_idx, shape, dtype):
    """tpu_aligned_stride: the 64-byte aligned layout's strides (elements) of `shape` starting
    on NPU `start_idx`."""
    c = _check("aligned_stride")
    s = c.shape("shape", shape)
    code = c.dtype("dtype", dtype, WHOLE_BYTE_DTYPES)
    return dim4(*layout.aligned_stride(s, dtype_of(code).itemsize, c.chip.param("channel_align_bytes"),
                                       c.npu_num, c.npu_index("start_idx", start_idx)))


def compact_stride(start_idx, shape):
    """tpu_compact_stride: channels packed without alignment (cs = H*W)."""
    c = _check("compact_stride")
    s = c.shape("shape", shape)
    return dim4(*layout.compact_stride(s, c.npu_num, c.npu_index("start_idx", start_idx)))


def continuous_stride(shape):
    """tpu_continuous_stride: row-major NCHW strides (the NULL stride of a global tensor)."""
    return dim4(*layout.continuous_stride(_check("continuous_stride").shape("shape", shape)))
