"""Shapes of the FP32 Neural Network functions (seed 003 "FP32 Neural Network Functions"),
shared by their checks, lowering, tests and the demo.

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
"""
from bmk.bm1684 import layout
from bmk.bm1684.types import Padding, dim2, dim4
from bmk.layout import ceil_div, compact_stride

PAIR_BYTES = 8          # one 2IC weight element: two fp32 words
NO_PADDING = Padding(0, 0, 0, 0)
ONE = dim2(1, 1)


def window_out(size, pad0, pad1, kernel, stride=1, dilation=1):
    """Output length of a window of `kernel` taps (spaced `dilation`) sliding by `stride`."""
    return (size + pad0 + pad1 - ((kernel - 1) * dilation + 1)) // stride + 1


def output_hw(h, w, kernel_h, kernel_w, padding=NO_PADDING, stride=ONE, dilation=ONE):
    """(output_h, output_w) of a conv / pooling window over an h x w input."""
    return (window_out(h, padding.top, padding.bottom, kernel_h, stride.h, dilation.h),
            window_out(w, padding.left, padding.right, kernel_w, stride.w, dilation.w))


def conv_weight_shape(ic, oc, kernel_h, kernel_w):
    """The 2IC weight tensor's shape, in fp32 pairs: (ceil(IC/2), OC, kh, kw)."""
    return dim4(ceil_div(ic, 2), oc, kernel_h, kernel_w)


def conv_weight_stride(weight_addr, ic, oc, kernel_h, kernel_w):
    """The NULL kernel_stride: compact stride of the 2IC weight shape, counted in pairs."""
    # the unchecked helper (arguments checked by the caller): arithmetic only, for call templates
    shape = conv_weight_shape(ic, oc, kernel_h, kernel_w)
    return dim4(*compact_stride(shape, layout.npu_num(), weight_addr // layout.local_mem_size_per_npu()))


def per_channel_shape(c):
    """Shape of a per-channel tensor (bias, scale): [1, c, 1, 1] (Compact Layout)."""
    return dim4(1, c, 1, 1)


def matrix_shape(rows, cols, cols_per_channel):
    """The tensor shape of a rows x cols matrix in the matrix layout."""
    return dim4(rows, ceil_div(cols, cols_per_channel), 1, cols_per_channel)
