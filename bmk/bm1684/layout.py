"""OKKernel Common and Utils functions (seed 003 "Common Functions", "Utils Functions") as
module functions, and the layout facts the checks, lowering and simulator share.

Layouts (isa-facts bm1684-memory.md): a local tensor at local_addr_t A starts on NPU
A // local_mem_size_per_npu() at offset A % local_mem_size_per_npu(); channel c lives on NPU
(start + c) % 64. Strides count elements. 8-bit local tensors are stored 4N and 16-bit ones
2N (four / two batches per 32-bit word, as the fixed-point remarks say): their strides count
32-bit words, so the 8- and 16-bit aligned strides are the 32-bit ones of the same shape
(each word holds one element of 4 or 2 consecutive batches; n strides step from one group
of batches to the next). System tensors are plain, strides in elements of their type.
"""
import functools

from bmk import layout
from bmk.bm1684.types import dim4
from bmk.errors import ArgumentError, must
from bmk.isa import load_chip
from bmk.util import is_int

WORD_BYTES = 4     # the 32-bit word of 4N / 2N storage and of the 128-byte alignment unit


@functools.cache
def chip():
    return load_chip("bm1684")


def _param(name):
    return chip().param(name)


# -- Common Functions ---------------------------------------------------------------------------
@functools.cache
def npu_num():
    """okk_npu_num (seed 003 Common): number of NPUs."""
    return _param("npu_num")


@functools.cache
def local_mem_size_per_npu():
    """okk_local_mem_size_per_npu (seed 003 Common): bytes of local memory per NPU."""
    return _param("lmem_size")


def l2_sram_size():
    """okk_l2_sram_size (seed 003 Common): bytes of L2 SRAM (the memory map's l2sram space)."""
    return chip().space("l2sram").size


def dtcm_size():
    """okk_dtcm_size (seed 003 Common): bytes of DTCM."""
    return chip().space("dtcm").size


# -- Utils Functions ----------------------------------------------------------------------------
def _int_arg(call, name, value, lo, hi):
    if not is_int(value) or not lo <= value <= hi:
        raise ArgumentError(must(call, name, f"an integer in [{lo}, {hi}]", value))
    return int(value)


def _shape_arg(call, shape, name="shape"):
    try:
        values = tuple(shape)
    except TypeError:
        values = ()
    if len(values) != 4:
        raise ArgumentError(must(call, name, "a dim4 (n, c, h, w)", shape))
    return dim4(*(_int_arg(call, f"{name}.{d}", v, 1, 2**31 - 1) for d, v in zip(dim4._fields, values)))


def start_npu_index(addr):
    """okk_start_npu_index (seed 003 Utils): the NPU where a tensor at local address addr starts."""
    addr = _int_arg("start_npu_index", "addr", addr, 0, npu_num() * local_mem_size_per_npu() - 1)
    return addr // local_mem_size_per_npu()


def channle_num_per_npu(start_idx, num_channels):
    """okk_channle_num_per_npu (seed 003 Utils; the seed's spelling): channel slots per NPU,
    DIV_UP(start_idx + num_channels, npu_num)."""
    start_idx = _int_arg("channle_num_per_npu", "start_idx", start_idx, 0, npu_num() - 1)
    num_channels = _int_arg("channle_num_per_npu", "num_channels", num_channels, 1, 2**31 - 1)
    return layout.slots(num_channels, npu_num(), start_idx)


channel_num_per_npu = channle_num_per_npu


def _aligned(call, start_idx, shape):
    start_idx = _int_arg(call, "start_idx", start_idx, 0, npu_num() - 1)
    shape = _shape_arg(call, shape)
    return dim4(*layout.aligned_stride(shape, WORD_BYTES, _param("channel_align_bytes"), npu_num(), start_idx))


@functools.cache
def _align_words():
    return _param("channel_align_bytes") // WORD_BYTES


def aligned_words(start_idx, shape):
    """The 32-bit aligned strides of a checked shape from a checked start NPU (the checks' and
    lowering's path: no argument checks, arithmetic only, so call templates can trace it);
    the same values as aligned_stride_for_32bit."""
    cs = layout.align_up(shape[2] * shape[3], _align_words())
    return dim4(cs * layout.slots(shape[1], npu_num(), start_idx), cs, shape[3], 1)


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
    start_idx = _int_arg("compact_stride", "start_idx", start_idx, 0, npu_num() - 1)
    return dim4(*layout.compact_stride(_shape_arg("compact_stride", shape), npu_num(), start_idx))


def continuous_stride(shape):
    """okk_continuous_stride (seed 003 Utils): (C*H*W, H*W, W, 1), the system-memory layout."""
    return dim4(*layout.continuous_stride(_shape_arg("continuous_stride", shape)))
