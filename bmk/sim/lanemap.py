"""Per-lane state of local memory as segments of lane offsets (issue 34 item 4), for the checks
of bmk/sim/lmemcheck.py.

Local memory is npu_num lanes of lane_size bytes. Breakpoints 0 = bp[0] < bp[1] < ... <
bp[n] = lane_size cut every lane alike into n segments; a segment row holds one value per lane
of each state array (owner, seen, lost: shape (n, npu_num)), the value of every byte of that
lane in [bp[k], bp[k + 1]). A tensor's bytes on one lane are almost always one run of offsets,
the same on each of its lanes (a piece, lmemcheck.LmemCheck.pieces), so once the map is split at
the run's ends its bytes are the cells rows [i0, i1) x lanes [a, b): reading or writing their
state costs the segments and lanes they cover, never their bytes. Per-byte state (4 + 1 + 4
bytes a byte, written for every byte every instruction wrote) cost more than the unchecked run.

Breakpoints are only added (a tensor's ends, once); a program run again meets the ones it made
before, so the rows of an entry's pieces are kept while the map's `version` stays the same.
Past MAX_SEGMENTS, neighbouring segments with equal state everywhere are merged first.
"""
import numpy as np

from bmk.sim.intervals import normal_form

MAX_SEGMENTS = 1 << 16


class LaneMap:
    """owner / seen / lost per (segment, lane); see the module docstring."""

    def __init__(self, npu_num, lane_size):
        self.npu_num, self.lane_size = npu_num, lane_size
        self.bp = np.array([0, lane_size], np.int64)
        self.owner = np.zeros((1, npu_num), np.int32)
        self.seen = np.zeros((1, npu_num), bool)
        self.lost = np.zeros((1, npu_num), np.int32)
        # per segment: whether any of its lanes may hold a lost value of this run (never false
        # where one does): a read tests its segments, not its cells, for lost values
        self.lost_rows = np.zeros(1, bool)
        self.version = 0

    def clear(self):
        """Every cell 0 (nothing written, nothing read, nothing lost); the breakpoints stay."""
        self.owner[...] = 0
        self.seen[...] = False
        self.lost[...] = 0
        self.lost_rows[...] = False

    def split(self, points):
        """Make every point (an int64 array of offsets) a breakpoint; a new segment copies the
        state of the one it was cut from."""
        new = self._missing(points)
        if not new.size:
            return
        if len(self.bp) + len(new) > MAX_SEGMENTS:
            self.merge()
            new = self._missing(points)         # the merge may have dropped some of them
        # Inserted where they fall (bp stays sorted; no sort or hash of every breakpoint per split):
        # segment i of the old map is i; a new one starts inside the old segment before it.
        new = np.unique(new)
        pos = np.searchsorted(self.bp, new)
        src = np.insert(np.arange(len(self.bp) - 1), pos, pos - 1)
        self.owner, self.seen, self.lost = self.owner[src], self.seen[src], self.lost[src]
        self.lost_rows = self.lost_rows[src]
        self.bp = np.insert(self.bp, pos, new)
        self.version += 1

    def _missing(self, points):
        """The points inside the lanes that are not breakpoints yet."""
        new = points[(points > 0) & (points < self.lane_size)]
        return new[self.bp[np.searchsorted(self.bp, new)] != new] if new.size else new

    def merge(self):
        """Drop the breakpoints between segments whose state is the same on every lane."""
        o, s, lo = self.owner, self.seen, self.lost
        keep = np.ones(len(o), bool)
        keep[1:] = ((o[1:] != o[:-1]) | (s[1:] != s[:-1]) | (lo[1:] != lo[:-1])).any(axis=1)
        if keep.all():
            return
        self.bp = np.append(self.bp[:-1][keep], self.lane_size)
        self.owner, self.seen, self.lost = o[keep], s[keep], lo[keep]
        self.lost_rows = self.lost_rows[keep] | self.lost.any(axis=1)
        self.version += 1

    def states(self):
        """The state arrays, (owner, seen, lost)."""
        return self.owner, self.seen, self.lost

    def per_byte(self, arr):
        """A state array (self.owner, ...) byte by byte, lane-major like Lmem.data (for tests)."""
        return np.repeat(arr, np.diff(self.bp), axis=0).T.ravel()

    def rows(self, starts, ends):
        """The segments of runs [starts, ends) (sorted, disjoint, already breakpoints): a slice
        for one run, else an index array; and the segments' indices (an array, for offsets)."""
        bp = self.bp
        return self._rows(np.searchsorted(bp, starts), np.searchsorted(bp, ends))

    def located(self, starts, ends, points):
        """rows(starts, ends) when every point (starts and ends, concatenated) is a breakpoint
        already, else None (to split first): one search for both questions."""
        bp = self.bp
        at = bp.searchsorted(points)
        if (bp[at] != points).any():
            return None
        k = len(starts)
        return self._rows(at[:k], at[k:])

    @staticmethod
    def _rows(i0, i1):
        if len(i0) == 1:
            a, b = int(i0[0]), int(i1[0])
            return slice(a, b), np.arange(a, b)
        counts = i1 - i0
        idx = np.arange(int(counts.sum())) + np.repeat(i0 - (np.cumsum(counts) - counts), counts)
        return idx, idx


def runs(off, dims, strides):
    """The bytes base + sum(i_k * strides_k) + [0, unit) of one lane as sorted disjoint runs
    (starts, ends: int64 arrays), from their normal form (bmk/sim/intervals.py)."""
    form = normal_form((off, dims, strides))
    if form is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    base, run, outer = form
    starts = np.array([base], np.int64)
    for d, s in outer:
        starts = (starts[:, None] + np.arange(d, dtype=np.int64) * s).ravel()
    if len(starts) == 1:
        return starts, starts + run
    starts = np.sort(starts)
    ends = starts + run
    # a run starts anew where it begins past every earlier run's end
    reach = np.maximum.accumulate(ends)
    first = np.ones(len(starts), bool)
    first[1:] = starts[1:] > reach[:-1]
    last = np.append(first[1:], True)
    return starts[first], reach[last]
