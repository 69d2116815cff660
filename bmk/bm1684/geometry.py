"""Shapes and strides of bm1684 tensors, computed from the chip given (its spec's params), shared
by the checks, the lowering, the module functions (layout.py), tests and the demo.

- Local tensors (isa-facts bm1684-memory.md): a local_addr_t A starts on NPU A // lane bytes;
  channel c lives on NPU (start + c) % npu_num. Strides count elements; 8-bit tensors are
  stored 4N and 16-bit ones 2N, whose strides count the storage word (`storage_word_bytes`),
  so their aligned strides are the 32-bit ones of the same shape: `aligned_words`.
- Output size of a window (conv2d, depthwise2d, pooling; the seed's remark):
  out = (in + pad0 + pad1 - ((kernel - 1) * dilation + 1)) // stride + 1.
- 2IC-mode conv2d weight (isa-facts bm1684-memory.md "2IC-mode"): a (ceil(IC/2), OC, kh, kw)
  tensor whose elements are fp32 pairs (8 bytes): pair (p, oc, i, j) holds the weights of input
  channels 2p and 2p + 1 (low word first; the second word of the last pair is unused when IC is
  odd). OC is spread over the NPUs like any channel; kernel_stride counts pairs. NULL
  kernel_stride (the seed says nothing): the compact stride of that shape, as the public
  OKKernel conv2d usage computes it.
- Matrix layout (bm1684-memory.md "Matrix Layout"; okk_bdc_matmul, the GDMA matrix functions):
  a rows x cols fp32 matrix with cols_per_channel = w is the (rows, ceil(cols / w), 1, w) tensor
  in the 128-byte aligned layout; element (x, y) is (n = x, c = y // w, h = 0, w = y % w).
Everything here computes with its integer arguments only (the call-template rule, bmk/checks.py).
"""
from typing import NamedTuple

from bmk import layout
from bmk.bm1684.types import Padding, dim2
from bmk.layout import ceil_div, dim4

PAIR_WORDS = 2          # one 2IC weight element: the fp32 words of two input channels
NO_PADDING = Padding(0, 0, 0, 0)
ONE = dim2(1, 1)


# -- local tensors -------------------------------------------------------------------------------
class Facts(NamedTuple):
    """The chip facts every local-tensor computation reads, looked up once per chip."""
    npu_num: int
    lane_bytes: int
    local_base: int         # device address of local_addr_t 0
    word_bytes: int         # the local storage word: a 32-bit element, 4 int8 (4N) / 2 int16 (2N) batches
    align_words: int        # the aligned layout's channel alignment (channel_align_bytes), in words


_FACTS = ("bm1684.geometry", "facts")


def facts(chip):
    return chip.derived(_FACTS, _facts, chip)


def _facts(chip):
    local, word = chip.space("local"), chip.param("storage_word_bytes")
    return Facts(chip.param("npu_num"), local.lane_bytes, local.base, word, chip.param("channel_align_bytes") // word)


def word_bytes(chip):
    return facts(chip).word_bytes


def start_npu(chip, addr):
    """The NPU a local address starts on."""
    return addr // facts(chip).lane_bytes


def aligned_words(chip, start, shape):
    """The 128-byte aligned strides, in storage words, of a shape starting on NPU `start`
    (okk_128_byte_aligned_stride_for_32bit: c = ALIGN(H*W, 32), n = c * channel slots)."""
    k = facts(chip)
    cs = layout.align_up(shape[2] * shape[3], k.align_words)
    return dim4(cs * layout.slots(shape[1], k.npu_num, start), cs, shape[3], 1)


def compact(chip, start, shape):
    """The compact strides (c = H*W) of a shape starting on NPU `start`."""
    return dim4(*layout.compact_stride(shape, facts(chip).npu_num, start))


def aligned_or_compact(chip, addr, shape, aligned):
    """The 32-bit strides of a local tensor at addr: 128-byte aligned or compact."""
    start = start_npu(chip, addr)
    return aligned_words(chip, start, shape) if aligned else compact(chip, start, shape)


def int8_1n(chip, addr, shape, aligned):
    """(n, c, h, w) byte strides of a 1N int8 local tensor (okk_bdc_int8_to_fp32's source and
    work): channels start on 128 bytes (aligned) or on a storage word (the approximate compact
    layout: C stride ALIGN(H*W, 4))."""
    n, c, h, w = shape
    k = facts(chip)
    cs = layout.align_up(h * w, k.align_words * k.word_bytes if aligned else k.word_bytes)
    return dim4(cs * layout.slots(c, k.npu_num, start_npu(chip, addr)), cs, w, 1)


# -- windows, weights, matrices ----------------------------------------------------------------
def window_out(size, pad0, pad1, kernel, stride=1, dilation=1):
    """Output length of a window of `kernel` taps (spaced `dilation`) sliding by `stride`."""
    return (size + pad0 + pad1 - ((kernel - 1) * dilation + 1)) // stride + 1


def output_hw(h, w, kernel_h, kernel_w, padding=NO_PADDING, stride=ONE, dilation=ONE):
    """(output_h, output_w) of a conv / pooling window over an h x w input."""
    return (window_out(h, padding.top, padding.bottom, kernel_h, stride.h, dilation.h),
            window_out(w, padding.left, padding.right, kernel_w, stride.w, dilation.w))


def conv_weight_shape(ic, oc, kernel_h, kernel_w):
    """The 2IC weight tensor's shape, in fp32 pairs: (ceil(IC/2), OC, kh, kw)."""
    return dim4(ceil_div(ic, PAIR_WORDS), oc, kernel_h, kernel_w)


def conv_weight_stride(chip, weight_addr, ic, oc, kernel_h, kernel_w):
    """The NULL kernel_stride: compact stride of the 2IC weight shape, counted in pairs."""
    return compact(chip, start_npu(chip, weight_addr), conv_weight_shape(ic, oc, kernel_h, kernel_w))


def per_channel_shape(c):
    """Shape of a per-channel tensor (bias, scale): [1, c, 1, 1] (Compact Layout)."""
    return dim4(1, c, 1, 1)


def matrix_shape(rows, cols, cols_per_channel):
    """The tensor shape of a rows x cols matrix in the matrix layout."""
    return dim4(rows, ceil_div(cols, cols_per_channel), 1, cols_per_channel)
