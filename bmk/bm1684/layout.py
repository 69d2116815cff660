"""OKKernel Common and Utils functions (seed 003 "Common Functions", "Utils Functions") as
module functions of BM1684; each reads the chip's spec (specs/bm1684) when it is called.

Layouts (isa-facts bm1684-memory.md; the arithmetic: geometry.py): a local tensor at
local_addr_t A starts on NPU A // local_mem_size_per_npu() at offset A %
local_mem_size_per_npu(); channel c lives on NPU (start + c) % 64. Strides count elements.
8-bit local tensors are stored 4N and 16-bit ones 2N (four / two batches per 32-bit word, as
the fixed-point remarks say): their strides count 32-bit words, so the 8- and 16-bit aligned
strides are the 32-bit ones of the same shape (each word holds one element of 4 or 2
consecutive batches; n strides step from one group of batches to the next). System tensors
are plain, strides in elements of their type.
"""
from bmk import layout
from bmk.bm1684 import geometry as g
from bmk.bm1684.checks.common import Check
from bmk.dtypes import INT32
from bmk.isa import load_chip
from bmk.layout import dim4

CHIP = "bm1684"
INT_MAX = INT32.max          # a C int: the arguments of the Utils functions


def _check(call):
    return Check(load_chip(CHIP), call)


# -- Common Functions ---------------------------------------------------------------------------
def npu_num():
    """okk_npu_num (seed 003 Common): number of NPUs."""
    return load_chip(CHIP).param("npu_num")


def local_mem_size_per_npu():
    """okk_local_mem_size_per_npu (seed 003 Common): bytes of local memory per NPU."""
    return load_chip(CHIP).space("local").lane_bytes


def l2_sram_size():
    """okk_l2_sram_size (seed 003 Common): bytes of L2 SRAM (the memory map's l2sram space)."""
    return load_chip(CHIP).space("l2sram").size


def dtcm_size():
    """okk_dtcm_size (seed 003 Common): bytes of DTCM."""
    return load_chip(CHIP).space("dtcm").size


# -- Utils Functions ----------------------------------------------------------------------------
def start_npu_index(addr):
    """okk_start_npu_index (seed 003 Utils): the NPU where a tensor at local address addr starts."""
    c = _check("start_npu_index")
    return c.start_npu(c.local_address("addr", addr))


def channle_num_per_npu(start_idx, num_channels):
    """okk_channle_num_per_npu (seed 003 Utils; the seed's spelling): channel slots per NPU,
    DIV_UP(start_idx + num_channels, npu_num)."""
    c = _check("channle_num_per_npu")
    start = c.npu_index("start_idx", start_idx)
    return layout.slots(c.integer("num_channels", num_channels, 1, INT_MAX), c.npu_num, start)


channel_num_per_npu = channle_num_per_npu


def _aligned(call, start_idx, shape):
    c = _check(call)
    start = c.npu_index("start_idx", start_idx)
    return g.aligned_words(c.chip, start, c.shape(shape, hi=(INT_MAX,) * 4))


def aligned_stride_for_32bit(start_idx, shape):
    """okk_128_byte_aligned_stride_for_32bit (seed 003 Utils): (n, c, h, w) strides in elements
    with w = 1, h = W, c = ALIGN(H*W, 32), n = c * channle_num_per_npu(start_idx, C)."""
    return _aligned("aligned_stride_for_32bit", start_idx, shape)


def aligned_stride_for_16bit(start_idx, shape):
    """okk_128_byte_aligned_stride_for_16bit (seed 003 Utils): a 2N tensor's strides, in 32-bit
    words (see the module docstring): the 32-bit aligned strides of the same shape."""
    return _aligned("aligned_stride_for_16bit", start_idx, shape)


def aligned_stride_for_8bit(start_idx, shape):
    """okk_128_byte_aligned_stride_for_8bit (seed 003 Utils): a 4N tensor's strides, in 32-bit
    words (see the module docstring): the 32-bit aligned strides of the same shape."""
    return _aligned("aligned_stride_for_8bit", start_idx, shape)


def compact_stride(start_idx, shape):
    """okk_compact_stride (seed 003 Utils): w = 1, h = W, c = H*W, n = c * channel slots."""
    c = _check("compact_stride")
    start = c.npu_index("start_idx", start_idx)
    return g.compact(c.chip, start, c.shape(shape, hi=(INT_MAX,) * 4))


def continuous_stride(shape):
    """okk_continuous_stride (seed 003 Utils): (C*H*W, H*W, W, 1), the system-memory layout."""
    return dim4(*layout.continuous_stride(_check("continuous_stride").shape(shape, hi=(INT_MAX,) * 4)))
