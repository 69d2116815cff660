"""Chip-neutral layout arithmetic: strides counted in elements, alignments counted in bytes.

A local tensor (N, C, H, W) starting on NPU s spreads its channels over `npu_num` lanes:
channel c lives on lane (s + c) % npu_num in channel slot (s + c) // npu_num, so a lane holds
ceil((s + C) / npu_num) slots (bm1684 `okk_channle_num_per_npu`, bm1684x TPU-Kernel). Element
(n, c, h, w) is at lane offset off + itemsize * (n*ns + slot*cs + h*hs + w*ws).

bm1880 keeps its own TensorLmem helpers in bmk/bm1880/tensor.py (there s = 0 and the alignment is
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


class View(NamedTuple):
    """A local tensor as the overlap rule `partial_overlap` sees it: the argument (or operand)
    naming it, its local address (start NPU * lane bytes + offset), its shape (n, c, h, w) and
    strides (n, channel slot, h, w) in elements of `unit` bytes, n counting groups of `pack`
    batches (bm1684 4N / 2N storage: a storage word holds `pack` batches)."""
    name: str
    addr: int
    shape: tuple
    stride: tuple
    unit: int
    pack: int = 1


def partial_overlap(a, b, lane_bytes, npu_num):
    """Where Views a and b overlap partly: (NPUs, lo, hi), the NPUs on which both use lane
    bytes and the first such NPU's common range [lo, hi); None when a is b exactly (the same
    address, element size, packing, shape and strides over every dimension of more than one
    element: in place) or they share no lane byte (per NPU, `lane_ranges`). The rule of issue
    32.14, one implementation for the API checks and the simulators. Arithmetic and
    comparisons only until an overlap is found (a call template traces the usual path)."""
    if _apart(a, b, lane_bytes, npu_num) or _same(a, b, lane_bytes, npu_num):
        return None
    ranges = [lane_ranges(npu_num, t.addr // lane_bytes, t.addr % lane_bytes, t.shape, t.stride, t.unit, t.pack)
              for t in (a, b)]
    common = [k for k, (x, y) in enumerate(zip(*ranges)) if x and y and x[0] < y[1] and y[0] < x[1]]
    if not common:
        return None
    (a0, a1), (b0, b1) = ranges[0][common[0]], ranges[1][common[0]]
    return tuple(common), max(a0, b0), min(a1, b1)


def lane_extent(t, lane, npu_num):
    """[first, end) lane bytes that bound a View's bytes on every NPU (arithmetic only: a
    call template traces it)."""
    n, c, h, w = t.shape
    sn, sc, sh, sw = t.stride
    slots = (t.addr // lane + c + npu_num - 1) // npu_num
    first = t.addr % lane
    return first, first + t.unit * (((n + t.pack - 1) // t.pack - 1) * sn + (slots - 1) * sc + (h - 1) * sh
                                    + (w - 1) * sw + 1)


def _apart(a, b, lane, npu_num):
    """The bounds of a and b share no lane byte (the usual case, decided by a few comparisons)."""
    a0, a1 = lane_extent(a, lane, npu_num)
    b0, b1 = lane_extent(b, lane, npu_num)
    return a1 <= b0 or b1 <= a0


def _same(a, b, lane, npu_num):
    """a and b are one tensor view: the same address, element size, packing and shape, and
    the same stride over every dimension of more than one element (n groups, channel slots
    per NPU, h, w: a stride over a single element does not move)."""
    if a.addr != b.addr or a.unit != b.unit or a.pack != b.pack or tuple(a.shape) != tuple(b.shape):
        return False
    n, ch, h, w = a.shape
    counts = ((n + a.pack - 1) // a.pack, (a.addr // lane + ch + npu_num - 1) // npu_num, h, w)
    return all(k == 1 or sa == sb for k, sa, sb in zip(counts, a.stride, b.stride))
