"""The chip's memories: lmem (npu_num lanes of lmem_size bytes) and a sparse gmem.

Both hand out *tensor views*: a 4-D (N, C, H, W) byte array laid out as the seed's section
2.3 says, built with numpy strides over the backing store (no per-element Python work).
Every view records the byte ranges it touches in an `AccessLog`, which the race detector
reads; a view outside memory raises SimulationError before anything is touched.

lmem address A = lane A // lmem_size, offset A % lmem_size (one flat array, lane-major, so
A is also the flat index). Element (n, c, h, w) of a tensor at A with strides (Sn, Sc, Sh, Sw)
lives in lane (L0 + c) % npu_num at offset off + n*Sn + ((L0 + c) // npu_num)*Sc + h*Sh + w*Sw,
with L0 = A // lmem_size and off = A % lmem_size.
"""
import numpy as np

from bmk.errors import SimulationError

LMEM, GMEM = "lmem", "gmem"


class AccessLog:
    """Bytes one instruction touched: (space, lane mask, lo, hi, is_write, layout) tuples.

    For lmem, [lo, hi) bounds the offsets touched inside every lane set in the mask; for gmem
    the mask is 1 and [lo, hi) bounds the gmem addresses. layout = (base, dims, strides)
    gives the exact bytes (base + sum(i_k * strides_k), i_k < dims_k) for the race detector.
    """

    __slots__ = ("entries",)

    def __init__(self):
        self.entries = []

    def add(self, space, mask, lo, hi, write, layout=None):
        self.entries.append((space, mask, lo, hi, write, layout))


def _extent(shape, strides):
    """Offset of the last element from the first (strides are >= 0)."""
    return sum((d - 1) * s for d, s in zip(shape, strides))


class TensorView:
    """A strided 4-D byte view of one memory; `read()` copies out, `write()` stores in."""

    __slots__ = ("shape", "_parts", "_tmp", "_gmem", "_lo")

    def __init__(self, shape, parts, tmp=None, gmem=None, lo=0):
        self.shape = shape
        self._parts = parts        # [(view, channel slice of the logical tensor)]
        self._tmp, self._gmem, self._lo = tmp, gmem, lo

    def read(self):
        if len(self._parts) == 1:
            return self._parts[0][0]
        return np.concatenate([v for v, _ in self._parts], axis=1)

    def write(self, values):
        if np.shape(values) != self.shape:
            values = np.broadcast_to(values, self.shape)
        for view, sl in self._parts:
            view[...] = values[:, sl]
        if self._tmp is not None:
            self._gmem.store(self._lo, self._tmp)


class Lmem:
    def __init__(self, npu_num, lmem_size):
        self.npu_num, self.lane_size = npu_num, lmem_size
        self.size = npu_num * lmem_size
        self.data = np.zeros(self.size, np.uint8)

    def check_range(self, what, addr, n):
        if addr < 0 or addr + n > self.size:
            raise SimulationError(f"{what} must be inside lmem [0, 0x{self.size:x}), "
                                  f"not [0x{addr:x}, 0x{addr + n:x})")

    def write_bytes(self, addr, data):
        data = np.frombuffer(bytes(data), np.uint8)
        self.check_range("lmem_write range", addr, len(data))
        self.data[addr:addr + len(data)] = data

    def read_bytes(self, addr, n):
        self.check_range("lmem_read range", addr, n)
        return self.data[addr:addr + n].tobytes()

    def tensor(self, what, addr, shape, strides, log=None, write=False):
        """The TensorView of an lmem tensor; `what` names it in errors (e.g. 'opd0')."""
        npu, lane = self.npu_num, self.lane_size
        n, c, h, w = shape
        if min(shape) < 1:
            raise SimulationError(f"{what} shape must be positive, not {tuple(shape)!r}")
        if not 0 <= addr < self.size:
            raise SimulationError(f"{what} address must be inside lmem [0, 0x{self.size:x}), not 0x{addr:x}")
        l0, off = divmod(addr, lane)
        groups = -(-(l0 + c) // npu)
        sn, sc, sh, sw = strides
        last = off + (n - 1) * sn + (groups - 1) * sc + (h - 1) * sh + (w - 1) * sw
        if last >= lane:
            raise SimulationError(f"{what} must fit in its lmem lane (offset < 0x{lane:x}), but it spans "
                                  f"lane offsets [0x{off:x}, 0x{last:x}] (address 0x{addr:x}, shape "
                                  f"{tuple(shape)}, strides {tuple(strides)})")
        if log is not None:
            if c >= npu:
                mask = (1 << npu) - 1
            else:
                first = (1 << c) - 1
                mask = ((first << l0) | (first >> (npu - l0))) & ((1 << npu) - 1)
            log.add(LMEM, mask, off, last + 1, write, (off, (n, groups, h, w), (sn, sc, sh, sw)))
        view5 = np.ndarray((n, groups, npu, h, w), np.uint8, self.data, off, (sn, sc, lane, sh, sw))
        if groups == 1:
            return TensorView((n, c, h, w), [(view5[:, 0, l0:l0 + c], slice(None))])
        parts = []
        for g in range(groups):
            lo_c = max(l0, g * npu)
            hi_c = min(l0 + c, (g + 1) * npu)
            if lo_c < hi_c:
                parts.append((view5[:, g, lo_c - g * npu:hi_c - g * npu], slice(lo_c - l0, hi_c - l0)))
        return TensorView((n, c, h, w), parts)

    def lanes_of(self, addr, c):
        """Lane of each channel 0..c-1 of a tensor at addr."""
        l0 = addr // self.lane_size
        return (l0 + np.arange(c)) % self.npu_num

    def group_of(self, addr, c):
        l0 = addr // self.lane_size
        return (l0 + np.arange(c)) // self.npu_num


class Gmem:
    """Sparse gmem: lazily allocated zero pages; unwritten bytes read as zero."""

    PAGE = 1 << 24

    def __init__(self, size):
        self.size = size
        self.pages = {}

    def _page(self, i):
        page = self.pages.get(i)
        if page is None:
            page = self.pages[i] = np.zeros(self.PAGE, np.uint8)   # calloc: untouched pages cost nothing
        return page

    def check_range(self, what, addr, n):
        if addr < 0 or n < 0 or addr + n > self.size:
            raise SimulationError(f"{what} must be inside gmem [0, 0x{self.size:x}), "
                                  f"not [0x{addr:x}, 0x{addr + n:x})")

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

    def store(self, addr, data):
        data = np.asarray(data, np.uint8).reshape(-1)
        pos, n = 0, len(data)
        while pos < n:
            i, o = divmod(addr + pos, self.PAGE)
            k = min(n - pos, self.PAGE - o)
            self._page(i)[o:o + k] = data[pos:pos + k]
            pos += k

    def tensor(self, what, addr, shape, strides, log=None, write=False):
        if min(shape) < 1:
            raise SimulationError(f"{what} shape must be positive, not {tuple(shape)!r}")
        span = _extent(shape, strides) + 1
        if addr < 0 or addr + span > self.size:
            raise SimulationError(f"{what} must be inside gmem [0, 0x{self.size:x}), but it spans "
                                  f"[0x{addr:x}, 0x{addr + span:x})")
        if log is not None:
            log.add(GMEM, 1, addr, addr + span, write, (addr, tuple(shape), tuple(strides)))
        i, o = divmod(addr, self.PAGE)
        if o + span <= self.PAGE:
            base, tmp = self._page(i), None
        else:
            base, tmp, o = self.load(addr, span), True, 0
        view = np.ndarray(tuple(shape), np.uint8, base, o, tuple(strides))
        tmp = base if tmp else None
        return TensorView(tuple(shape), [(view, slice(None))], tmp, self, addr)
