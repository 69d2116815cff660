"""Chip-neutral layout arithmetic: strides counted in elements, alignments counted in bytes.

A local tensor (N, C, H, W) starting on NPU s spreads its channels over `npu_num` lanes:
channel c lives on lane (s + c) % npu_num in channel slot (s + c) // npu_num, so a lane holds
ceil((s + C) / npu_num) slots (bm1684 `okk_channle_num_per_npu`, bm1684x TPU-Kernel). Element
(n, c, h, w) is at lane offset off + itemsize * (n*ns + slot*cs + h*hs + w*ws).

bm1880 keeps its own TensorLmem helpers in bmk/tensor.py (there s = 0 and the alignment is
eu_num elements of one byte, which is `aligned_stride(shape, 1, eu_num, npu_num)`).
"""
from typing import NamedTuple

from bmk.errors import ArgumentError


class dim4(NamedTuple):   # noqa: N801 -- the C type's name (OKKernel and TPU-Kernel alike)
    """dim4 {n, c, h, w}: a shape or a stride (strides count elements)."""
    n: int
    c: int
    h: int
    w: int


def ceil_div(a, b):
    return -(-a // b)


def align_up(x, n):
    return ceil_div(x, n) * n


def slots(c, npu_num, start_npu=0):
    """Channel slots per lane of a C-channel tensor starting on lane start_npu."""
    return ceil_div(start_npu + c, npu_num)


def aligned_stride(shape, itemsize, align_bytes, npu_num, start_npu=0):
    """(ns, cs, hs, ws) in elements with each channel slot aligned to align_bytes.

    bm1684 32-bit: aligned_stride(shape, 4, 128, 64); bm1684x: aligned_stride(shape, e, 64, 64).
    """
    n, c, h, w = shape
    if align_bytes % itemsize:
        raise ArgumentError(f"aligned_stride: align_bytes must be a multiple of itemsize {itemsize}, "
                            f"not {align_bytes!r}")
    cs = align_up(h * w, align_bytes // itemsize)
    return (cs * slots(c, npu_num, start_npu), cs, w, 1)


def compact_stride(shape, npu_num, start_npu=0):
    """(ns, cs, hs, ws) in elements, channels packed without alignment."""
    n, c, h, w = shape
    return (h * w * slots(c, npu_num, start_npu), h * w, w, 1)


def continuous_stride(shape):
    """Row-major NCHW strides in elements (the NULL stride of a global tensor)."""
    n, c, h, w = shape
    return (c * h * w, h * w, w, 1)


def element_location(addr, index, stride, itemsize, lane_bytes, npu_num):
    """(lane, byte offset in that lane) of element index=(n, c, h, w) of a local tensor at addr."""
    l0, off = divmod(addr, lane_bytes)
    n, c, h, w = index
    sn, sc, sh, sw = stride
    return (l0 + c) % npu_num, off + itemsize * (n * sn + ((l0 + c) // npu_num) * sc + h * sh + w * sw)


def pack_factor(itemsize, word_bytes=4):
    """Batches sharing one word in N-packed storage: int8 4N -> 4, int16 2N -> 2, 32-bit -> 1."""
    if word_bytes % itemsize:
        raise ArgumentError(f"pack_factor: itemsize must divide the {word_bytes}-byte word, not {itemsize!r}")
    return word_bytes // itemsize


def lane_ranges(npu_num, start, offset, shape, stride, unit, pack=1):
    """Per NPU, the lane bytes (lo, hi) a local tensor occupies there, or None.

    start/offset: its start NPU and offset; stride: (n, c, h, w) in units of `unit` bytes, n
    counting groups of `pack` batches (bm1684 4N / 2N storage)."""
    n, c, h, w = shape
    sn, sc, sh, sw = stride
    tail = unit * (((n + pack - 1) // pack - 1) * sn + (h - 1) * sh + (w - 1) * sw + 1)
    out = []
    for lane in range(npu_num):
        first = 0 if lane >= start else 1            # NPUs below the start NPU begin at slot 1
        if first * npu_num + lane - start >= c:
            out.append(None)                         # no channel reaches this NPU
            continue
        last = (start + c - 1 - lane) // npu_num     # the last slot holding a channel here
        out.append((offset + unit * first * sc, offset + unit * last * sc + tail))
    return tuple(out)


def lanes_text(lanes):
    """NPU indices as messages show them: 'NPU 3', 'NPUs 0-7', 'NPUs 1,5'."""
    if len(lanes) > 1 and list(lanes) == list(range(lanes[0], lanes[-1] + 1)):
        return f"NPUs {lanes[0]}-{lanes[-1]}"
    return ("NPU " if len(lanes) == 1 else "NPUs ") + ",".join(map(str, lanes))
