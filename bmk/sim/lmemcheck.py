"""Local-memory hazards of a run (issue 22 item 5): reads of bytes never written, and dead
writes onto a live tensor. `Simulator.run(..., checks=True)` (the default wherever race
detection runs: `Simulator.run`, bmk-run of a program) feeds every instruction's access log
(memory.AccessLog) here, in the order the instructions ran; `strict=True` / `bmk-run --strict`
make a warning a failure. m.run and model runs check nothing unless asked (no cost there).

State, one entry per byte of local memory (`Lmem.data`, lane-major; zero pages until touched):
- owner: who wrote the byte last. 0: nothing since the Simulator was made or reset; BEFORE:
  the host (lmem_write*), an earlier run, or anything after a run without checks; base + i:
  instruction i of this run.
- seen: 1 once an instruction read the byte's current value.
- lost: for a byte whose last write went over a value another instruction of this run had
  written, that instruction (kept only where a dead write happened; below base: none).
- prev: the bytes as they were, to tell which bytes a write changed.
owner, seen and lost are offset-major (`_view`); prev is lane-major like Lmem.data, so a write
copies its bytes there without a gather (issue 34 item 4). All are zero pages until touched.

Footprints: a local view's entry knows its start lane and channel count (memory.LaneLayout), so
its bytes are exact: each channel slot on the lanes that hold a channel in it (a tensor of 67
channels from lane 10 has no slot-0 bytes on lanes 0..9); a storage unit (a 4N word) counts
whole. An entry without them (int4 nibble access, a bounding range) is imprecise: its reads
are not checked, and its writes take only the bytes they changed or that nothing had written
(never a false report from it, at worst a missed one).

Rules, per instruction i (its reads are checked against memory as it was before i, then its
writes recorded):
1. uninitialized: i reads a byte whose owner is 0. Any byte, not only a whole operand: the
   footprints are exact, so an aligned layout's channel padding or a compact layout's gaps are
   never counted as read; the vendor models' runs read none.
2. overwritten (the dead write): instruction B changes bytes holding values an earlier
   instruction A of this run wrote and nobody read yet (A's write there is dead), and B also
   writes bytes A did not own: B is another tensor straddling A's (a wrapped channel slot, a
   wrong offset). A B inside A (a load into a zero-filled padded buffer) updates A's tensor; a B
   that read A's bytes first (an in-place operation, a buffer reused after its last read) is
   no hazard. Reported when a later instruction C reads, in one operand, bytes B took from A
   together with bytes still holding A's value or with none of B's other bytes: C reads A's
   tensor as if it were unchanged. Once per (B, A) pair.
Races (two engines at once) are the race detector's business; here order is the run's.
"""
import mmap

import numpy as np

from bmk.sim.report import OVERWRITTEN, UNINITIALIZED, MemoryWarning

BEFORE = 1          # written before this run (host, an earlier or unchecked run)
FIRST = 2           # owner of instruction i of a run: base + i, base >= FIRST
MAX_WARNINGS = 1000
MAX_CACHED = 1 << 14     # entries whose views are kept (emptied when full, like memory.MAX_CACHED_VIEWS)
_OWNER_MAX = (1 << 31) - 1


def _zeros(n, dtype):
    """n zeros in their own anonymous mapping: pages of 4 KiB zeroed when first touched (numpy
    asks large arrays for 2 MiB pages, which a run touching a few tensors pays in full)."""
    dtype = np.dtype(dtype)
    return np.frombuffer(mmap.mmap(-1, n * dtype.itemsize), dtype)


def _distinct(values):
    """The distinct values of an integer array, sorted, as a list (np.unique). Owners are few and
    close together (this run's instructions, BEFORE, 0): counted in a table over their range, a
    pass over the bytes; np.unique sorts them, seconds for a tensor of millions (issue 32 item 7).
    Values spread wider than the array (owners of many earlier runs) still go to np.unique."""
    if not values.size:
        return []
    lo, hi = int(values.min()), int(values.max())
    if lo == hi:
        return [lo]
    if hi - lo > max(values.size, 1 << 16):
        return np.unique(values).tolist()
    return (np.flatnonzero(np.bincount((values.ravel() - lo).astype(np.intp), minlength=hi - lo + 1)) + lo).tolist()


def _distinct_pairs(a, b):
    """The distinct (a, b) pairs of two integer arrays of one shape, sorted (np.unique(..., axis=0)
    of their columns), as tuples: one key per pair over the product of the ranges, else np.unique."""
    if not a.size:
        return []
    alo, blo = int(a.min()), int(b.min())
    span = int(b.max()) - blo + 1
    if (int(a.max()) - alo + 1) * span <= max(a.size, 1 << 16):
        keys = _distinct((a.astype(np.int64) - alo) * span + (b.astype(np.int64) - blo))
        return [(k // span + alo, k % span + blo) for k in keys]
    return [tuple(r) for r in np.unique(np.stack([a.ravel(), b.ravel()], 1), axis=0).tolist()]


class LmemCheck:
    """The owner / seen / lost / prev state of one Simulator's local memory (module docstring)."""

    def __init__(self, lmem, host_writes=(), unknown=False):
        """host_writes: the (addr, n) spans and log entries the host wrote since the memory was
        zero (replayed as BEFORE); unknown: instructions ran unchecked, so every byte counts as
        written (never a false report after m.run on the same Simulator)."""
        self.lmem = lmem
        self.owner = _zeros(lmem.size, np.int32)
        self.lost = _zeros(lmem.size, np.int32)
        self.seen = _zeros(lmem.size, np.uint8)
        self.prev = _zeros(lmem.size, np.uint8)
        self._cache = {}                         # id(entry) -> (entry, its pieces' views)
        self._lo, self._hi = lmem.lane_size, 0   # the lane offsets any state was written at, [lo, hi)
        self.renew(host_writes, unknown)

    def renew(self, host_writes=(), unknown=False):
        """As a new LmemCheck of the same memory (after Simulator.reset): the state written so far
        zeroed in place, the views kept. Fresh arrays cost a page fault per 4 KiB touched again
        (most of a model's checks when the Simulator is reset between runs: issue 34 item 4)."""
        lo, hi = self._lo, self._hi
        if lo < hi:
            npu = self.lmem.npu_num
            for arr in (self.owner, self.lost, self.seen):
                arr[lo * npu:hi * npu] = 0
            self.prev.reshape(npu, -1)[:, lo:hi] = 0
        self.base = FIRST
        self.stale = unknown
        self._lost = (0, 0)                     # lane offsets holding lost values of this run, [lo, hi)
        for w in host_writes:
            self.host(w)
        self.warnings, self.clobbers, self.reported = [], set(), set()

    def _touch(self, flat, shape, strides):
        """Widen [_lo, _hi) to the lane offsets of a piece whose state may be written; its [lo, hi)."""
        off = flat % self.lmem.lane_size
        span = [(d - 1) * s for d, s in zip(shape[1:], strides[1:])]
        lo, hi = max(0, off + sum(min(x, 0) for x in span)), off + sum(max(x, 0) for x in span) + 1
        self._lo, self._hi = min(self._lo, lo), max(self._hi, hi)
        return lo, hi

    # -- outside a checked run ------------------------------------------------------------------
    def host(self, what):
        """The host wrote bytes (lmem_write: an (addr, n) span; lmem_write_array/_tensor: a log
        entry): they count as written before the run."""
        if isinstance(what, tuple) and len(what) == 2:
            addr, n = what
            lane = self.lmem.lane_size
            pieces = []
            while n > 0:                # lane by lane
                k = min(n, lane - addr % lane)
                pieces.append((addr, (1, k), (lane, 1), True))
                addr, n = addr + k, n - k
        else:
            pieces = self.pieces(what)
        for flat, shape, strides, _ in pieces:
            self._touch(flat, shape, strides)
            self._view(self.owner, flat, shape, strides)[...] = BEFORE
            self._data(self.prev, flat, shape, strides)[...] = self._data(self.lmem.data, flat, shape, strides)

    # -- a checked run --------------------------------------------------------------------------
    def start(self, n):
        """A run of n instructions begins: what came before is BEFORE."""
        if self.stale:          # instructions ran unchecked: any byte may have been written
            self._lo, self._hi = 0, self.lmem.lane_size
            np.copyto(self.prev, self.lmem.data)
            self.owner.fill(BEFORE)
            self.lost.fill(0)
            self.base, self.stale = FIRST, False
        elif self.base + n >= _OWNER_MAX:
            np.minimum(self.owner, BEFORE, out=self.owner)
            self.lost.fill(0)
            self.base = FIRST
        self._lost = (self.lmem.lane_size, 0)   # lost values below base are never read: none to clear
        self.warnings, self.clobbers, self.reported = [], set(), set()

    def finish(self, n):
        """The run ended: its owners (and lost values) fall below the next run's base."""
        self.base += n
        return tuple(self.warnings)

    def instruction(self, i, entries):
        """Instruction i ran and logged `entries`: check its reads, then record its writes."""
        name = self.lmem.name
        mine = [e for e in entries if e[0] == name]
        if not mine:
            return
        for e in mine:
            if not e[4]:
                self._read(i, e)
        victims, others = set(), set()
        for e in mine:
            if e[4]:
                self._write(i, e, victims, others)
        me = self.base + i
        others.discard(me)
        for a in victims:
            if others - {a}:            # i also wrote bytes a did not own: another tensor straddling a's
                self.clobbers.add((me, a))

    # -- footprints ------------------------------------------------------------------------------
    def pieces(self, entry):
        """(flat offset, shape, strides in bytes, exact) pieces covering an entry's bytes, in
        Lmem.data's lane-major terms; the first dim of each is its lanes (stride lane_size)."""
        _, mask, lo, hi, _, layout = entry
        lane, npu = self.lmem.lane_size, self.lmem.npu_num
        l0 = getattr(layout, "start_lane", None)
        if l0 is not None:
            c = layout.channels
            off, dims, bst = layout
            gn, groups, h, w = dims[:4]
            unit = dims[4] if len(dims) > 4 else 1
            sn, sc, sh, sw = bst[:4]
            out = []
            for g in range(groups):
                a, b = max(l0, g * npu) - g * npu, min(l0 + c, (g + 1) * npu) - g * npu
                if a < b:
                    out.append((a * lane + off + g * sc, (b - a, gn, h, w, unit), (lane, sn, sh, sw, 1), True))
            return out
        out, k = [], 0
        while mask >> k:                 # runs of lanes in the mask, each [lo, hi)
            if mask >> k & 1:
                j = k
                while mask >> j & 1:
                    j += 1
                out.append((k * lane + lo, (j - k, hi - lo), (lane, 1), False))
                k = j
            else:
                k += 1
        return out

    @staticmethod
    def _data(arr, flat, shape, strides, last=False):
        """A piece of a lane-major array (Lmem.data); last: `shape` has the lanes last (_views)."""
        e = arr.itemsize
        st = tuple(s * e for s in strides)
        return np.ndarray(shape, arr.dtype, arr, flat * e, st[1:] + st[:1] if last else st)

    def _view(self, arr, flat, shape, strides, last=False):
        """A piece of a state array. They are offset-major (byte `off` of lane `l` at off *
        npu_num + l): a tensor's bytes at one offset on every lane are neighbours, so a run
        touches few of their pages (lane-major, each lane is another page of each array)."""
        lane, npu, e = self.lmem.lane_size, self.lmem.npu_num, arr.itemsize
        l0, off = divmod(flat, lane)
        st = tuple(e * s * npu for s in strides[1:])             # a piece's first dim is its lanes
        return np.ndarray(shape, arr.dtype, arr, e * (off * npu + l0), st + (e,) if last else (e,) + st)

    def _where(self, flat, strides, hit):
        """(lanes, lo, hi) of the bytes of a piece where `hit` (a bool array of its shape, lanes
        last: _views) holds: the lanes with one, and the first such lane's offset range. Only the
        first lane's hits are listed (every hit as an index row costs tens of bytes: hundreds of MB
        for one uninitialized read of a large tensor, issue 32 item 7)."""
        lane = self.lmem.lane_size
        l0, off0 = divmod(flat, lane)
        inner = strides[:-1]
        span = [(d - 1) * s for d, s in zip(hit.shape, inner)]
        if hit.ndim < 2 or strides[-1] != lane or not 0 <= off0 + sum(min(x, 0) for x in span) \
                or off0 + sum(max(x, 0) for x in span) >= lane:
            idx = np.argwhere(hit)                 # a piece crossing lanes otherwise: byte by byte
            pos = flat + idx @ np.array(strides, np.int64)
            lanes, offs = np.divmod(pos, lane)
            first = lanes.min()
            return (tuple(np.unique(lanes).tolist()), int(offs[lanes == first].min()),
                    int(offs[lanes == first].max()) + 1)
        on = np.flatnonzero(hit.reshape(-1, hit.shape[-1]).any(axis=0))
        at = np.nonzero(hit[..., on[0]])
        offs = off0 + sum((k * s for k, s in zip(at, inner)), np.zeros(len(at[0]), np.int64))
        return tuple((l0 + on).tolist()), int(offs.min()), int(offs.max()) + 1

    def _full(self):
        """The warning list is full: later warnings are counted as reported but not built (their
        byte ranges cost a pass over the operand each: issue 34 item 4)."""
        return len(self.warnings) >= MAX_WARNINGS

    def _views(self, entry):
        """An entry's pieces with their views of the state arrays and of Lmem.data: (flat,
        strides, exact, owner, seen, prev, data, lost). Kept per entry (the simulator memoizes
        views, so the same entry object comes back run after run)."""
        hit = self._cache.get(id(entry))
        if hit is not None and hit[0] is entry:
            return hit[1]
        out = []
        for flat, shape, strides, exact in self.pieces(entry):
            span = self._touch(flat, shape, strides)
            # the lanes last: the state arrays' contiguous axis innermost (numpy loops run faster);
            # made lanes-last directly (np.moveaxis of each view cost a third of a model's checks)
            sh = shape[1:] + shape[:1]
            views = [self._view(self.owner, flat, sh, strides, True),
                     self._view(self.seen, flat, sh, strides, True),
                     self._data(self.prev, flat, sh, strides, True),
                     self._data(self.lmem.data, flat, sh, strides, True),
                     self._view(self.lost, flat, sh, strides, True)]
            out.append((flat, strides[1:] + strides[:1], exact, *views, span))
        if len(self._cache) >= MAX_CACHED:
            self._cache.clear()
        self._cache[id(entry)] = (entry, out)
        return out

    # -- the rules -------------------------------------------------------------------------------
    def _read(self, i, entry):
        pieces = self._views(entry)
        if not pieces or not pieces[0][2]:     # imprecise: not checked, its bounding bytes count as read
            for p in pieces:
                p[4][...] = 1
            return
        unread = ("u", i) not in self.reported
        clobbers = self.clobbers
        taken, sels = {}, []
        for k, (flat, strides, _, own, seen, _, _, lost, _) in enumerate(pieces):
            if unread and own.min() == 0:
                unread = False
                self.reported.add(("u", i))
                if not self._full():
                    self.warnings.append(MemoryWarning(UNINITIALIZED, i, *self._where(flat, strides, own == 0)))
            if clobbers:
                sel = lost >= self.base
                if sel.any():
                    sels.append(sel)
                    for b, a in _distinct_pairs(own[sel], lost[sel]):
                        taken.setdefault((b, a), k)
                else:
                    sels.append(None)
        for p in pieces:
            p[4][...] = 1
        # only pairs a warning may name need the owners the read sees (the pass over its bytes)
        todo = [(b, a, k) for (b, a), k in taken.items() if (b, a) in clobbers and (b, a) not in self.reported]
        if not todo:
            return
        plain = set()
        for (_, _, _, own, _, _, _, _, _), sel in zip(pieces, sels):
            if sel is not None:
                plain.update(_distinct(own[~sel]))
            else:
                lo, hi = int(own.min()), int(own.max())
                plain.update((lo,) if lo == hi else _distinct(own))
        for b, a, k in todo:
            # C reads A's tensor: bytes still A's, or none of B's but those B took from A
            if a in plain or b not in plain:
                self.reported.add((b, a))
                if not self._full():
                    flat, strides, _, own, _, _, _, lost, _ = pieces[k]
                    hit = sels[k] & (own == b) & (lost == a)
                    self.warnings.append(MemoryWarning(OVERWRITTEN, i, *self._where(flat, strides, hit),
                                                       writer=a - self.base, clobber=b - self.base))

    def _write(self, i, entry, victims, others):
        """Record entry's bytes as i's; add to `victims` the owners (this run's instructions)
        of unread values it changed, to `others` every owner its bytes had (only then)."""
        me, base = self.base + i, self.base
        for _, _, exact, own, seen, prev, now, lost, (lo, hi) in self._views(entry):
            mine = None if exact else ((now != prev) | (own == 0))
            dead = None                             # unread values of this run's instructions, changed
            if not seen.min():                      # mostly all read: one pass, no mask built
                dead = seen == 0
                dead &= own >= base
                dead &= own != me
                if dead.any():
                    dead &= now != prev
            if dead is not None and dead.any():
                victims.update(_distinct(own[dead]))
                others.update(_distinct(own if mine is None else own[mine]))
                took = np.where((own >= base) & (own != me), own, 0)
                if mine is None:
                    lost[...] = took
                else:
                    lost[mine] = took[mine]
                self._lost = (min(lo, self._lost[0]), max(hi, self._lost[1]))
            elif lo < self._lost[1] and self._lost[0] < hi and lost.max() >= base:
                if mine is None:
                    lost[...] = 0
                else:
                    lost[mine] = 0
            if mine is None:
                own[...] = me
                seen[...] = 0
                prev[...] = now
            else:
                own[mine] = me
                seen[mine] = 0
                prev[mine] = now[mine]
