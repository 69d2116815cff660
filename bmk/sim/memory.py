"""The chip's memories, one per space of its memory map, and strided tensor views of them.

Spaces (`ChipSpec.memory`): `MemorySpace(name, base, size, lane_bytes)` rows, local,
static, l2sram, dtcm, global; base/size are device (DMA) addresses. The local space is lanes
(`Lmem`: npu_num lanes of lane_bytes, one flat lane-major array); every other space is sparse
(`Gmem`: zero pages allocated on first write). Access logs and race reports name the local
memory "lmem" and the global memory "gmem" (as they always have); other spaces by their name.

Views: a 4-D (N, C, H, W) array of a `dtype` (numpy; default uint8) built with numpy strides
over the backing store (no per-element Python work). Strides count elements; numpy byte
strides are strides * itemsize. Every view records the bytes it touches in an `AccessLog`,
which the race detector reads; a view outside memory raises SimulationError before anything
is touched. A view of a sparse space that crosses its pages is a few strided pieces, one per
page (`PiecewiseView`, memoized like any view): what it costs follows the elements it touches,
never the bytes its strides span.

Local address A = lane A // lane_bytes, offset A % lane_bytes (one flat array, lane-major, so A
is also the flat index). Element (n, c, h, w) of a tensor at A with strides (Sn, Sc, Sh, Sw)
lives in lane (L0 + c) % npu_num at byte offset off + e * (n*Sn + ((L0 + c) // npu_num)*Sc +
h*Sh + w*Sw), with L0 = A // lane_bytes, off = A % lane_bytes and e = itemsize.

N-packed views (`pack` = 4 for bm1684 int8 "4N", 2 for int16 "2N"; isa-facts bm1684-memory.md):
`pack` consecutive batches share one 32-bit word, byte i*e of the word of group g holding
batch pack*g + i; the strides then count 32-bit words (the seed leaves the unit open; this is
our choice). Element (n, c, h, w) is at off + 4 * ((n // pack)*Sn + slot*Sc + h*Sh + w*Sw) +
e * (n % pack). A partial last group (N not a multiple of pack) is read and written only in
its first N % pack batches.
"""
import numpy as np

from bmk.errors import SimulationError

LMEM, GMEM = "lmem", "gmem"
WORD_BYTES = 4
# The most elements one view may have, and all the views of one instruction together. A few
# bytes of descriptor can name a huge shape over zero or overlapping strides; bounding the
# views bounds the memory and time of any instruction (numpy loops cannot be interrupted by
# Ctrl-C while they run), and a view over the bound is refused when it is made, before its
# bytes are read. 2^25 is the largest local memory (bm1684: 64 lanes x 512 KiB) in bytes, ~7x
# the largest operand of the vendor's yolov5s streams (4.9M elements); an instruction's views
# together may hold two such operands.
MAX_VIEW_ELEMENTS = 1 << 25
MAX_INSTRUCTION_ELEMENTS = 1 << 26
# A gmem view whose span crosses pages is cut into pieces, each a strided view inside one page
# (pages never move once allocated, so the pieces are memoized like any view): its cost per
# instruction grows with the pieces and elements it touches, never with the bytes it spans.
# A view needing more pieces than this (e.g. every row on its own page) is gathered instead,
# element by element (vectorized), within the bounds below.
MAX_PIECES = 1 << 10
# ... a gathered view may have at most this many bytes (gathering costs 8-byte offsets per
# byte) and touch at most this many pages (each a lazily zeroed 16 MiB allocation).
MAX_GATHERED_ELEMENTS = 1 << 24
MAX_GATHERED_PAGES = 256
PAGE_BITS = 24           # Gmem pages are 16 MiB
# Views are memoized per memory (a program touches the same few tensors again and again):
# a hit costs one dict lookup instead of the layout arithmetic and numpy view construction.
# The memo is emptied when it holds this many views.
MAX_CACHED_VIEWS = 1 << 14
# The ranges views made for writing a Gmem keeps for its clear(), past which it keeps them merged
MAX_VIEW_RANGES = 1 << 14


def check_elements(what, shape):
    """The element count of a view of `shape`; SimulationError when more than MAX_VIEW_ELEMENTS."""
    count = 1
    for d in shape:
        count *= int(d)
    if count > MAX_VIEW_ELEMENTS:
        raise SimulationError(f"{what} has {count} elements (shape {tuple(shape)}), more than the simulator's "
                              f"bound of {MAX_VIEW_ELEMENTS} per operand")
    return count




class LaneLayout(tuple):
    """The (base, dims, byte strides) layout of a local view's access-log entry (dims: groups
    of batches, channel slots, h, w[, unit]), knowing its start lane and channel count: the
    lanes of its first and last slot are exact (bmk/sim/lmemcheck.py; the lane mask and
    race detection take every slot on every lane the channels reach)."""

    def __new__(cls, layout, start_lane, channels):
        self = super().__new__(cls, layout)
        self.start_lane, self.channels = start_lane, channels
        return self


def _np_dtype(dtype):
    if dtype is None:
        return np.dtype(np.uint8)
    npd = getattr(dtype, "numpy", None)
    if npd is not None and not callable(npd):
        if dtype.bits % 8:
            raise SimulationError(f"dtype must have a whole-byte itemsize for a memory view, not {dtype!r}")
        return npd
    return np.dtype(dtype)


def _check_pack(what, npd, pack):
    if pack != 1 and npd.itemsize * pack != WORD_BYTES:
        raise SimulationError(f"{what}: pack must make {WORD_BYTES}-byte words ({WORD_BYTES // npd.itemsize} for "
                              f"{npd.itemsize}-byte elements), not {pack!r}")


class AccessLog:
    """Bytes one instruction touched: (space, lane mask, lo, hi, is_write, layout) tuples.

    For lmem, [lo, hi) bounds the offsets touched inside every lane set in the mask (a Python
    int of npu_num bits, any width); for the sparse spaces the mask is 1 and [lo, hi) bounds
    the offsets in the space. layout = (base, dims, byte strides) gives the exact bytes
    (base + sum(i_k * strides_k), i_k < dims_k) for the race detector.
    """

    __slots__ = ("entries", "elements", "copies", "sized")

    def __init__(self):
        self.entries = []
        self.elements = 0       # elements of the instruction's views so far (MAX_INSTRUCTION_ELEMENTS)
        self.copies = False     # the instruction writes the values it read, unchanged (a copy in one type)
        # the instruction's footprint depends on the data (a count of selected elements): set by
        # such a kind, whatever it found, for the local-memory checks (bmk/sim/lmemcheck.py: a run of
        # a program with one never leaves prev behind data)
        self.sized = False

    def add(self, space, mask, lo, hi, write, layout=None):
        self.entries.append((space, mask, lo, hi, write, layout))

    def charge(self, what, count):
        """Count a view of `count` elements against the instruction's bound, before it is used."""
        self.elements += count
        if self.elements > MAX_INSTRUCTION_ELEMENTS:
            raise SimulationError(f"{what} brings the instruction's operands to {self.elements} elements, more "
                                  f"than the simulator's bound of {MAX_INSTRUCTION_ELEMENTS} per instruction")


_ALL = slice(None)


def _array(shape, dtype, page, offset, strides, write):
    """A strided array over a gmem page; read-only unless made for writing (Gmem.clear zeroes
    only what views made for writing, stores and scatters can have changed)."""
    a = np.ndarray(tuple(shape), dtype, page, offset, strides)
    if not write:
        a.flags.writeable = False
    return a


def _merged(ranges):
    """(page, lo, hi) ranges -> the same bytes as sorted ranges, overlapping ones merged."""
    out = []
    for page, lo, hi in sorted(ranges):
        if out and out[-1][0] == page and lo <= out[-1][2]:
            if hi > out[-1][2]:
                out[-1] = (page, out[-1][1], hi)
        else:
            out.append((page, lo, hi))
    return out


def _extent(shape, strides):
    """Offset of the last element from the first (strides are >= 0)."""
    return sum((d - 1) * s for d, s in zip(shape, strides))


class TensorView:
    """A strided 4-D view of one memory; `read()` copies out, `write()` stores in.

    Parts are (view, channel slice of the logical tensor); for an N-packed tensor the views
    are (groups, pack, c, h, w) and `n` is the logical batch count.
    """

    __slots__ = ("shape", "_parts", "_pack")

    def __init__(self, shape, parts, pack=1):
        self.shape = shape
        self._parts = parts
        self._pack = pack

    @property
    def array(self):
        """The memory itself as one strided numpy array of `shape` (a result can be computed
        straight into it), or None when the view is several pieces or N-packed."""
        if self._pack == 1 and len(self._parts) == 1 and self._parts[0][1] == _ALL:
            return self._parts[0][0]
        return None

    def read(self):
        if len(self._parts) == 1:
            v = self._parts[0][0]
        else:
            v = np.concatenate([v for v, _ in self._parts], axis=1 if self._pack == 1 else 2)
        if self._pack == 1:
            return v
        return v.reshape((-1,) + self.shape[1:])[:self.shape[0]]

    def write(self, values):
        shape = values.shape if isinstance(values, np.ndarray) else np.shape(values)
        if shape != self.shape:
            values = np.broadcast_to(values, self.shape)
        pack = self._pack
        parts = self._parts
        if pack == 1 and len(parts) == 1 and parts[0][1] == _ALL:     # one part: the whole tensor at once
            parts[0][0][...] = values
            parts = ()
        for view, sl in parts:
            if pack == 1:
                view[...] = values[:, sl]
                continue
            v = values[:, sl]
            full, rem = divmod(self.shape[0], pack)
            if full:
                view[:full] = v[:full * pack].reshape((full, pack) + v.shape[1:])
            if rem:
                view[full, :rem] = v[full * pack:]


class PiecewiseView:
    """A gmem view crossing pages: pieces (index into the logical array, strided view of one
    page); `read()` assembles a copy, `write()` stores each piece. Its cost is the elements
    and the (at most MAX_PIECES) pieces, whatever the span."""

    __slots__ = ("shape", "_dtype", "_parts")

    def __init__(self, shape, dtype, parts):
        self.shape, self._dtype, self._parts = shape, dtype, parts

    def read(self):
        out = np.empty(self.shape, self._dtype)
        for idx, view in self._parts:
            out[idx] = view
        return out

    def write(self, values):
        values = np.broadcast_to(values, self.shape)
        for idx, view in self._parts:
            view[...] = values[idx]


def _pieces(addr, shape, bst, e, page_size):
    """[(index, page, offset in the page, shape, byte strides)] of views, each inside one page,
    that together are the view (addr, shape, byte strides bst, element bytes e); None when
    that takes more than MAX_PIECES pieces or an element straddles two pages.

    A block that crosses a page is cut along its first dimension of more than one element and
    a non-zero stride into runs of consecutive indices whose sub-blocks lie in one page; an
    index whose sub-block crosses a page is cut again along the next dimension."""
    out = []
    todo = [(addr, (0,) * len(shape), tuple(shape))]
    while todo:
        base, first, dims = todo.pop()
        span = _extent(dims, bst) + e
        p, o = divmod(base, page_size)
        if o + span <= page_size:
            out.append((tuple(slice(f, f + d) for f, d in zip(first, dims)), p, o, dims, bst))
            if len(out) > MAX_PIECES:
                return None
            continue
        k = next((k for k, (d, s) in enumerate(zip(dims, bst)) if d > 1 and s > 0), None)
        if k is None:               # one element (or zero strides) across a page boundary
            return None
        inner = _extent(dims[k + 1:], bst[k + 1:]) + e
        offs = base + np.arange(dims[k], dtype=np.int64) * bst[k]
        lo_page, hi_page = offs // page_size, (offs + inner - 1) // page_size
        crossing = lo_page != hi_page
        # runs: maximal stretches of indices on one page that do not cross
        key = np.where(crossing, -1 - np.arange(dims[k]), lo_page)
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        if len(starts) + len(out) > MAX_PIECES:
            return None
        ends = np.concatenate((starts[1:], [dims[k]]))
        for a, b in zip(starts.tolist(), ends.tolist()):
            sub = dims[:k] + (b - a,) + dims[k + 1:]
            at = first[:k] + (first[k] + a,) + first[k + 1:]
            todo.append((int(offs[a]), at, sub))     # a crossing index (a run of 1) is cut further
    return out


class Lmem:
    """The local space: npu_num lanes of lane_size bytes."""

    def __init__(self, npu_num, lmem_size, name=LMEM):
        self.npu_num, self.lane_size = npu_num, lmem_size
        self.size = npu_num * lmem_size
        self.name = name
        self.data = np.zeros(self.size, np.uint8)
        self._views = {}

    def check_range(self, what, addr, n):
        if addr < 0 or addr + n > self.size:
            raise SimulationError(f"{what} must be inside lmem [0, 0x{self.size:x}), "
                                  f"not [0x{addr:x}, 0x{addr + n:x})")

    def clear(self):
        """Every byte 0 again, in place (memoized views stay valid)."""
        self.data.fill(0)

    def write_bytes(self, addr, data):
        data = np.frombuffer(bytes(data), np.uint8)
        self.check_range("lmem_write range", addr, len(data))
        self.data[addr:addr + len(data)] = data

    def read_bytes(self, addr, n):
        self.check_range("lmem_read range", addr, n)
        return self.data[addr:addr + n].tobytes()

    def lane_mask(self, l0, c):
        """The lanes of channels 0..c-1 of a tensor starting on lane l0, as an npu_num-bit int."""
        npu = self.npu_num
        if c >= npu:
            return (1 << npu) - 1
        first = (1 << c) - 1
        return ((first << l0) | (first >> (npu - l0))) & ((1 << npu) - 1)

    def tensor(self, what, addr, shape, strides, log=None, write=False, dtype=None, pack=1):
        """The TensorView of a local tensor; `what` names it in errors (e.g. 'opd0').

        strides count elements of `dtype` (default uint8), or 32-bit words when pack > 1.
        """
        try:
            key = (addr, shape, strides, write, dtype, pack)
            hit = self._views.get(key)
        except TypeError:           # unhashable arguments (lists): not memoized
            key = hit = None
        if hit is None:
            hit = self._tensor(what, addr, shape, strides, write, dtype, pack)
            if key is not None:
                if len(self._views) >= MAX_CACHED_VIEWS:
                    self._views.clear()
                self._views[key] = hit
        if log is not None:
            log.charge(what, hit[2])
            log.entries.append(hit[1])
        return hit[0]

    def _tensor(self, what, addr, shape, strides, write, dtype, pack):
        """(TensorView, access-log entry, element count) of a local tensor; the views see
        self.data, which never moves, so all can be reused for the same arguments."""
        npu, lane = self.npu_num, self.lane_size
        n, c, h, w = shape
        if min(shape) < 1:
            raise SimulationError(f"{what} shape must be positive, not {tuple(shape)!r}")
        count = check_elements(what, shape)
        if not 0 <= addr < self.size:
            raise SimulationError(f"{what} address must be inside lmem [0, 0x{self.size:x}), not 0x{addr:x}")
        npd = _np_dtype(dtype)
        e = npd.itemsize
        _check_pack(what, npd, pack)
        unit = WORD_BYTES if pack > 1 else e
        l0, off = divmod(addr, lane)
        groups = -(-(l0 + c) // npu)
        gn = -(-n // pack)
        sn, sc, sh, sw = strides
        last = off + unit * ((gn - 1) * sn + (groups - 1) * sc + (h - 1) * sh + (w - 1) * sw) + unit - 1
        if last >= lane:
            raise SimulationError(f"{what} must fit in its lmem lane (offset < 0x{lane:x}), but it spans "
                                  f"lane offsets [0x{off:x}, 0x{last:x}] (address 0x{addr:x}, shape "
                                  f"{tuple(shape)}, strides {tuple(strides)})")
        dims, bst = (gn, groups, h, w), (sn * unit, sc * unit, sh * unit, sw * unit)
        if unit > 1:
            dims, bst = dims + (unit,), bst + (1,)
        entry = (self.name, self.lane_mask(l0, c), off, last + 1, write, LaneLayout((off, dims, bst), l0, c))
        if pack == 1:
            view = np.ndarray((n, groups, npu, h, w), npd, self.data, off, (sn * e, sc * e, lane, sh * e, sw * e))
            lane_axis = 2
        else:
            view = np.ndarray((gn, pack, groups, npu, h, w), npd, self.data, off,
                              (sn * unit, e, sc * unit, lane, sh * unit, sw * unit))
            lane_axis = 3
        lead = (slice(None),) * (lane_axis - 1)
        if groups == 1:
            return (TensorView((n, c, h, w), [(view[lead + (0, slice(l0, l0 + c))], slice(None))], pack=pack),
                    entry, count)
        parts = []
        for g in range(groups):
            lo_c = max(l0, g * npu)
            hi_c = min(l0 + c, (g + 1) * npu)
            if lo_c < hi_c:
                parts.append((view[lead + (g, slice(lo_c - g * npu, hi_c - g * npu))], slice(lo_c - l0, hi_c - l0)))
        return TensorView((n, c, h, w), parts, pack=pack), entry, count

    def lanes_of(self, addr, c):
        """Lane of each channel 0..c-1 of a tensor at addr."""
        l0 = addr // self.lane_size
        return (l0 + np.arange(c)) % self.npu_num

    def group_of(self, addr, c):
        l0 = addr // self.lane_size
        return (l0 + np.arange(c)) // self.npu_num


class Gmem:
    """A sparse space (global, l2sram, static, dtcm): lazily allocated zero pages; unwritten
    bytes read as zero. Addresses are offsets from the space's base."""

    PAGE = 1 << PAGE_BITS

    def __init__(self, size, name=GMEM, track_writes=False):
        self.size = size
        self.name = name
        if size < self.PAGE:        # a small space (static, l2sram, dtcm): one page of its size, not 16 MiB
            self.PAGE = 1 << max(size - 1, 1).bit_length()    # to allocate and to zero at every reset
        self.pages = {}
        self._views = {}        # views inside one page (pages never move once allocated)
        # What clear() zeroes, as (page, lo, hi) byte ranges, not whole pages (a model's few KB
        # in a 16 MiB page, and no page fault on pages nothing wrote): the ranges of every view
        # made for writing (kept: a plan writes through its views run after run) and those
        # stored or scattered since the last clear. Views made for reading are read-only.
        self._view_ranges, self._stored = set(), set()
        self._view_plan = []        # _view_ranges merged (None: to be merged again)
        # with track_writes, the [lo, hi) ranges ever written (host stores, tables, views made
        # for writing), kept across clear(): what a read of bytes nothing put there is told by
        self.written = set() if track_writes else None

    def _page(self, i):
        page = self.pages.get(i)
        if page is None:
            page = self.pages[i] = np.zeros(self.PAGE, np.uint8)   # calloc: untouched pages cost nothing
        return page

    def clear(self):
        """Every byte 0 again, in place (memoized views stay valid): the ranges anything could
        have written since the last clear."""
        if self._view_plan is None:
            self._view_plan = _merged(self._view_ranges)
            if len(self._view_ranges) > MAX_VIEW_RANGES:      # a long-lived simulator: keep them merged
                self._view_ranges = set(self._view_plan)
        for page, lo, hi in self._view_plan + _merged(self._stored):
            self.pages[page][lo:hi] = 0
        self._stored = set()

    def _written_by_views(self, ranges):
        """(page, lo, hi) ranges of a view made for writing: zeroed at every clear from now on."""
        for r in ranges:
            if r not in self._view_ranges:
                self._view_ranges.add(r)
                self._view_plan = None

    def check_range(self, what, addr, n):
        if addr < 0 or n < 0 or addr + n > self.size:
            raise SimulationError(f"{what} must be inside {self.name} [0, 0x{self.size:x}), "
                                  f"not [0x{addr:x}, 0x{addr + n:x})")

    def chunks(self, addr, n, size=None):
        """The n bytes from addr as consecutive read-only pieces of at most `size` bytes
        (default a page): views of the pages, and of one shared zero page where nothing was
        written. Reading a range this way costs no memory beyond what is already held."""
        size = self.PAGE if size is None else max(1, int(size))
        pos = 0
        while pos < n:
            i, o = divmod(addr + pos, self.PAGE)
            k = min(n - pos, self.PAGE - o, size)
            page = self.pages.get(i)
            piece = _ZERO_PAGE[:k] if page is None else page[o:o + k]
            piece.flags.writeable = False
            yield piece
            pos += k

    def load(self, addr, n):
        """n bytes from addr, as a fresh array."""
        out = np.zeros(n, np.uint8)
        pos = 0
        while pos < n:
            i, o = divmod(addr + pos, self.PAGE)
            k = min(n - pos, self.PAGE - o)
            page = self.pages.get(i)
            if page is not None:
                out[pos:pos + k] = page[o:o + k]
            pos += k
        return out

    def holds(self, lo, hi):
        """Whether every byte of [lo, hi) lies in a range ever written (True when not tracked)."""
        if self.written is None:
            return True
        for a, b in sorted(self.written):
            if a <= lo < b:
                lo = b
            if lo >= hi:
                return True
        return lo >= hi

    def store(self, addr, data):
        data = np.asarray(data, np.uint8).reshape(-1)
        pos, n = 0, len(data)
        if self.written is not None:
            self.written.add((addr, addr + n))
        while pos < n:
            i, o = divmod(addr + pos, self.PAGE)
            k = min(n - pos, self.PAGE - o)
            self._page(i)[o:o + k] = data[pos:pos + k]
            self._stored.add((i, o, o + k))
            pos += k

    def gather(self, offsets):
        """The bytes at `offsets` (an int64 array of offsets in the space), as uint8; unwritten
        bytes read 0. Costs one pass per page touched (a space holds size / PAGE pages)."""
        out = np.zeros(len(offsets), np.uint8)
        for p, sel in _by_page(offsets, self.PAGE):
            page = self.pages.get(p)
            if page is not None:
                out[sel] = page[offsets[sel] - p * self.PAGE]
        return out

    def scatter(self, offsets, data):
        """Store bytes `data` (uint8) at `offsets` (int64, in the space); later ones win."""
        data = np.asarray(data, np.uint8).reshape(-1)
        for p, sel in _by_page(offsets, self.PAGE):
            self._scatter_page(p, offsets[sel] - p * self.PAGE, data[sel])

    def _scatter_page(self, p, within, data):
        """Store bytes at offsets `within` page p (marked for the next clear)."""
        if within.size:
            self._page(p)[within] = data
            self._stored.add((p, int(within.min()), int(within.max()) + 1))

    def tensor(self, what, addr, shape, strides, log=None, write=False, dtype=None):
        """A (N, C, H, W) view at offset addr; strides count elements of dtype (default uint8)."""
        try:
            key = (addr, shape, strides, write, dtype)
            hit = self._views.get(key)
        except TypeError:           # unhashable arguments (lists): not memoized
            key = hit = None
        if hit is not None:
            if log is not None:
                log.charge(what, hit[2])
                log.entries.append(hit[1])
            return hit[0]
        if min(shape) < 1:
            raise SimulationError(f"{what} shape must be positive, not {tuple(shape)!r}")
        count = check_elements(what, shape)
        if log is not None:
            log.charge(what, count)
        npd = _np_dtype(dtype)
        e = npd.itemsize
        bst = tuple(s * e for s in strides)
        span = _extent(shape, bst) + e
        if addr < 0 or addr + span > self.size:
            raise SimulationError(f"{what} must be inside {self.name} [0, 0x{self.size:x}), but it spans "
                                  f"[0x{addr:x}, 0x{addr + span:x})")
        dims, lst = tuple(shape), bst
        if e > 1:
            dims, lst = dims + (e,), bst + (1,)
        entry = (self.name, 1, addr, addr + span, write, (addr, dims, lst))
        if log is not None:
            log.entries.append(entry)
        if write and self.written is not None:
            self.written.add((addr, addr + span))
        i, o = divmod(addr, self.PAGE)
        if o + span <= self.PAGE:      # inside one page: a plain strided view of it
            if write:
                self._written_by_views([(i, o, o + span)])
            view = TensorView(tuple(shape), [(_array(shape, npd, self._page(i), o, bst, write), slice(None))])
            if key is not None:
                if len(self._views) >= MAX_CACHED_VIEWS:
                    self._views.clear()
                self._views[key] = (view, entry, count)
            return view
        pieces = _pieces(addr, tuple(shape), bst, e, self.PAGE)
        if pieces is None:              # a gathered copy: not memoized (it holds the bytes)
            return self._gathered(tuple(shape), npd, addr, bst)
        if write:
            self._written_by_views([(p, o, o + _extent(sub, sst) + e) for _, p, o, sub, sst in pieces])
        parts = [(idx, _array(sub, npd, self._page(p), o, sst, write)) for idx, p, o, sub, sst in pieces]
        view = PiecewiseView(tuple(shape), npd, parts)
        if key is not None:
            if len(self._views) >= MAX_CACHED_VIEWS:
                self._views.clear()
            self._views[key] = (view, entry, count)
        return view

    def _gathered(self, shape, npd, addr, bst):
        """A view of only the bytes a sparse tensor touches: gathered now, scattered back on write."""
        e = npd.itemsize
        count = int(np.prod(shape, dtype=np.int64)) * e
        if count > MAX_GATHERED_ELEMENTS:
            raise SimulationError(f"tensor at 0x{addr:x} (shape {shape}, byte strides {bst}) needs more than "
                                  f"{MAX_PIECES} page-sized pieces of {self.name} and has {count} bytes, more than "
                                  f"the simulator's bound of {MAX_GATHERED_ELEMENTS} for such sparse tensors")
        offsets = np.full((1,) * len(shape) + (e,), addr, np.int64)
        for axis, (d, st) in enumerate(zip(shape + (e,), bst + (1,))):
            step = np.arange(d, dtype=np.int64) * st
            offsets = offsets + step.reshape((1,) * axis + (d,) + (1,) * (len(shape) - axis))
        offsets = offsets.reshape(-1)
        pages, within = np.divmod(offsets, self.PAGE)
        if offsets.size < 2 or (offsets[1:] >= offsets[:-1]).all():    # the usual case: already in order
            order, ordered = None, pages
        else:
            order = np.argsort(pages, kind="stable")
            ordered = pages[order]
        starts = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1))
        if len(starts) > MAX_GATHERED_PAGES:
            raise SimulationError(f"tensor at 0x{addr:x} (shape {shape}, byte strides {bst}) touches "
                                  f"{len(starts)} pages of {self.name}, more than the simulator's bound of "
                                  f"{MAX_GATHERED_PAGES}")
        groups = [(int(ordered[lo]), slice(lo, hi) if order is None else order[lo:hi])
                  for lo, hi in zip(starts, list(starts[1:]) + [offsets.size])]
        return GatheredView(self, shape, npd, groups, within)


class GatheredView:
    """A view of only the bytes a sparse tensor touches (Gmem._gathered): `read()` gathers them
    as they are when it is called (a plan may keep the view and read it again after other
    instructions wrote there), `write()` scatters values to them (a later element wins where
    two share a byte)."""

    __slots__ = ("shape", "_mem", "_dtype", "_groups", "_within")

    def __init__(self, mem, shape, dtype, groups, within):
        self.shape, self._mem, self._dtype, self._groups, self._within = shape, mem, dtype, groups, within

    def read(self):
        buf = np.zeros(self._within.size, np.uint8)
        for p, idx in self._groups:
            page = self._mem.pages.get(p)
            if page is not None:
                buf[idx] = page[self._within[idx]]
        return buf.view(self._dtype).reshape(self.shape)

    def write(self, values):
        values = np.broadcast_to(np.asarray(values).astype(self._dtype, copy=False), self.shape)
        buf = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
        for p, idx in self._groups:
            self._mem._scatter_page(p, self._within[idx], buf[idx])


# The bytes of an unwritten page: one shared array (calloc: it costs no memory until written,
# and nothing writes it: chunks() hands out read-only views).
_ZERO_PAGE = np.zeros(Gmem.PAGE, np.uint8)
_ZERO_PAGE.flags.writeable = False


def _by_page(offsets, page_size):
    """(page index, index array of the offsets in it) for every page the offsets touch."""
    pages = offsets // page_size
    order = np.argsort(pages, kind="stable")
    bounds = np.flatnonzero(np.diff(pages[order])) + 1
    for idx in np.split(order, bounds):
        if len(idx):
            yield int(pages[idx[0]]), idx
