"""Host images of the OKKernel layouts (issue 22 item 6): what to write to global memory for a
layout, and the logical array back from what a kernel stored. README "Layouts and stride units".

- 2IC-mode conv2d weight (geometry.py, isa-facts bm1684-memory.md "2IC-mode"): the logical
  (IC, OC, kh, kw) fp32 weight (PyTorch's (OC, IC, kh, kw) with cout_first=True) as fp32 pairs
  of input channels (2p, 2p + 1): a (ceil(IC/2), OC, kh, kw, 2) array, the second word of the
  last pair 0 when IC is odd. Loaded as the 32-bit tensor `conv_weight_image_shape` =
  (ceil(IC/2), OC, kh, 2 * kw) into the compact layout at the weight's address: its strides are
  the pair strides doubled, which is what okk_bdc_conv2d's NULL kernel_stride reads.
- 4N / 2N (bmk/images.py): int8/uint8 arrays 4N, int16/uint16 2N, 32-bit ones as they are
  (pack 1). The image's words follow the continuous (C, H, W) order of each batch group: a
  32-bit copy of the tensor (ceil(N / pack), C, H, W) (gdma_32bit_cpy_S2L) puts them where
  gdma_8bit_cpy_S2L / gdma_16bit_cpy_S2L put a 1N system tensor, the 4N / 2N local layout the
  fixed-point functions read; a bmodel's 4N / 2N global tensors are this image too.
- Matrix layout (geometry.matrix_shape; okk_bdc_matmul, gdma_32bit_matrix_*): a rows x cols
  matrix with cols_per_channel = w is the (rows, ceil(cols / w), 1, w) tensor.
The storage word is the spec's `storage_word_bytes` (specs/bm1684/chip.toml).
"""
import numpy as np

from bmk import images
from bmk.bm1684 import geometry as g
from bmk.errors import ArgumentError, must
from bmk.isa import load_chip
from bmk.layout import ceil_div, dim4

CHIP = "bm1684"


def _word_bytes():
    return g.word_bytes(load_chip(CHIP))


def conv_weight_image_shape(ic, oc, kernel_h, kernel_w):
    """dim4(ceil(IC/2), OC, kh, 2 * kw): the 32-bit tensor that loads a conv_weight_image (with
    compact_stride at the weight's address)."""
    for name, value in (("ic", ic), ("oc", oc), ("kernel_h", kernel_h), ("kernel_w", kernel_w)):
        images.count("conv_weight_image_shape", name, value)
    pairs = g.conv_weight_shape(ic, oc, kernel_h, kernel_w)
    return dim4(pairs.n, pairs.c, pairs.h, g.PAIR_WORDS * pairs.w)


def conv_weight_image(weight, cout_first=False):
    """A logical fp32 conv2d weight (IC, OC, kh, kw) -- or (OC, IC, kh, kw) with cout_first=True
    -- -> its 2IC-mode image (ceil(IC/2), OC, kh, kw, 2) float32 (module docstring)."""
    w = images.numeric_array("conv_weight_image", "weight", weight, 4).astype(np.float32)
    if cout_first:
        w = w.transpose(1, 0, 2, 3)
    ic = w.shape[0]
    pairs = ceil_div(ic, g.PAIR_WORDS)
    padded = np.zeros((pairs * g.PAIR_WORDS,) + w.shape[1:], np.float32)
    padded[:ic] = w
    # (pair, word, oc, i, j) -> (pair, oc, i, j, word): the two input channels side by side
    return np.ascontiguousarray(padded.reshape((pairs, g.PAIR_WORDS) + w.shape[1:]).transpose(0, 2, 3, 4, 1))


def conv_weight_from_image(image, ic, cout_first=False):
    """A 2IC-mode image (ceil(IC/2), OC, kh, kw, 2) -> the logical (IC, OC, kh, kw) weight
    ((OC, IC, kh, kw) with cout_first=True); `ic` the input channels (the image cannot say
    whether the last pair's second word is one)."""
    call = "conv_weight_from_image"
    img = images.numeric_array(call, "image", image, 5).astype(np.float32)
    if img.shape[-1] != g.PAIR_WORDS:
        raise ArgumentError(must(call, "image", "a (ceil(IC/2), OC, kh, kw, 2) array", img.shape))
    ic = images.count(call, "ic", ic)
    if ceil_div(ic, g.PAIR_WORDS) != img.shape[0]:
        raise ArgumentError(must(call, "ic", f"{2 * img.shape[0] - 1} or {2 * img.shape[0]} (the image holds "
                                 f"{img.shape[0]} pairs)", ic))
    w = img.transpose(0, 4, 1, 2, 3).reshape((-1,) + img.shape[1:4])[:ic]
    return np.ascontiguousarray(w.transpose(1, 0, 2, 3) if cout_first else w)


def pack_batches(values):
    """(N, C, H, W) int8/uint8 -> its 4N image, int16/uint16 -> its 2N image: (ceil(N / pack), C,
    H, W, pack) of the same dtype, batch pack * g + i in slot i of group g's words, a partial last
    group's other slots 0; 32-bit arrays -> (N, C, H, W, 1). Write it to global memory and copy
    it as the 32-bit tensor (ceil(N / pack), C, H, W)."""
    return images.pack_batches(values, _word_bytes())


def unpack_batches(image, n):
    """A 4N / 2N image (ceil(N / pack), C, H, W, pack) -> the (N, C, H, W) array of `n` batches."""
    return images.unpack_batches(image, n, _word_bytes())


def matrix_image(matrix, cols_per_channel):
    """A rows x cols matrix -> the (rows, ceil(cols / w), 1, w) tensor of the matrix layout, the
    last channel's columns past cols 0."""
    return images.channels_image(matrix, cols_per_channel, "matrix_image")


def matrix_from_image(tensor, cols):
    """The (rows, ceil(cols / w), 1, w) tensor of the matrix layout -> the rows x cols matrix."""
    return images.from_channels_image(tensor, cols, "matrix_from_image")
