"""Host images of the TPU-Kernel layouts (issue 22 item 6). README "Layouts and stride units".

- Vector layout (isa-facts bm1684x-memory.md "vector layout"; the vc functions' src0 / src1): a
  vector of length L with len_per_channel = w elements a channel is the tensor (1, ceil(L / w),
  1, w): element i at channel i // w, position i % w, the last channel's positions past L 0.
- Matrix layout (bm1684x-memory.md "matrix layout"; the vc functions' dst): a rows x cols matrix
  with w columns a channel is the tensor (rows, ceil(cols / w), 1, w); a vc dst has rows =
  src0_len, cols = src1_len, w = src1_len_per_channel.
Both are bmk/images.py's channel images, copied with gdma_cpy_S2L / _L2S of that shape.
"""
from bmk import images


def vector_image(vector, len_per_channel):
    """A 1-D vector -> the (1, ceil(L / w), 1, w) tensor of the vector layout."""
    return images.channels_image(vector, len_per_channel, "vector_image")


def vector_from_image(tensor, length):
    """The (1, ceil(L / w), 1, w) tensor of the vector layout -> the vector of `length` elements."""
    return images.from_channels_image(tensor, length, "vector_from_image")[0]


def matrix_image(matrix, cols_per_channel):
    """A rows x cols matrix -> the (rows, ceil(cols / w), 1, w) tensor of the matrix layout."""
    return images.channels_image(matrix, cols_per_channel, "matrix_image")


def matrix_from_image(tensor, cols):
    """The (rows, ceil(cols / w), 1, w) tensor of the matrix layout -> the rows x cols matrix."""
    return images.from_channels_image(tensor, cols, "matrix_from_image")
