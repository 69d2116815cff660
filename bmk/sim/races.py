"""Race detection between the engines of a run (any number of engines and of lanes).

Ordering: each engine runs in order; an instruction that waits for id k of another engine
starts after that instruction ended. The simulator keeps a vector clock per instruction x:
`known[x][E]` = the last position on engine E that surely ended before x starts, through
direct and transitive waits (x waits for t => x knows everything t knew, and t itself). This
is the whole happens-before relation; for each pair of engines (A, B) this module gets, for
every instruction of A, its clock entry for B and vice versa.

Instructions a (engine A, position p) and b (engine B, position q) may overlap in time iff
neither is known to precede the other: q > known[a] and known[b] < p. Because `known` never
decreases along an engine, the b's concurrent with a form one window of positions
(known[a], first q with known[b] >= p), and the window only moves forward as p grows. For
each a we test its accesses against the accesses of its window with numpy (one vectorized
comparison per access), so serial and pipelined programs cost time linear in their length.
Lane masks are npu_num-bit integers, stored as ceil(npu_num / 64) uint64 words. Bounding
boxes that meet are then checked byte-exactly (interleaved tensors, e.g. the batches or
planes of two tensors sharing a lane range, do not race) on address intervals
(bmk/sim/intervals.py): the cost follows the runs of the two layouts that meet, never the
bytes they span; past a bound on those runs the meeting blocks' span is reported.
"""
import bisect

import numpy as np

from bmk.sim.intervals import common_range
from bmk.sim.memory import LMEM
from bmk.sim.report import Race

_WORD = (1 << 64) - 1
SMALL_WINDOW = 48       # B accesses a window may have to be tested in Python rather than numpy


def _words(mask, nwords):
    return [(mask >> (64 * k)) & _WORD for k in range(nwords)]


def _pack(indices, accesses, space_ids, nwords):
    """Flatten the accesses of instructions `indices` (engine order) into numpy columns."""
    starts = np.zeros(len(indices) + 1, np.int64)
    rows, masks, layouts = [], [], []
    for i, idx in enumerate(indices):
        acc = accesses[idx]
        for a in acc:
            rows.append((idx, space_ids.setdefault(a[0], len(space_ids)), a[2], a[3], a[4]))
            masks.append(_words(a[1], nwords))
            layouts.append(a[5])
        starts[i + 1] = starts[i] + len(acc)
    cols = np.array(rows, np.int64).reshape(-1, 5)
    return starts, cols, np.array(masks, np.uint64).reshape(-1, nwords), layouts


def common_bytes(la, lb, lo, hi):
    """[first, last + 1) of the bytes both layouts touch inside [lo, hi), or None (a layout
    of None: the whole [lo, hi))."""
    if la is None or lb is None:
        return lo, hi
    return common_range(la, lb, lo, hi)


def _nwords(seq_a, seq_b, accesses):
    top = 1
    for idx in (*seq_a, *seq_b):
        for a in accesses[idx]:
            top = max(top, a[1].bit_length())
    return -(-top // 64)


def find_races(seq_a, seq_b, known, accesses, limit=1000, npu_num=None):
    """Races between engine A's instructions seq_a and engine B's seq_b (buffer indices).

    known[idx] = last position on the other engine known to end before idx starts (-1: none).
    npu_num sizes the lane masks (default: the widest mask logged). Returns (races, truncated).
    """
    if not seq_a or not seq_b:
        return [], False
    nwords = -(-npu_num // 64) if npu_num else _nwords(seq_a, seq_b, accesses)
    known_list = [known[idx] for idx in seq_b]
    space_ids = {}
    starts, cols, b_masks, layouts = _pack(seq_b, accesses, space_ids, nwords)
    b_idx, b_space, b_lo, b_hi, b_w = cols.T if len(cols) else [np.zeros(0, np.int64)] * 5
    flat = [(idx, *acc) for idx in seq_b for acc in accesses[idx]]    # B's accesses, for small windows
    races, seen = [], set()
    for p, a in enumerate(seq_a):
        acc = accesses[a]
        if not acc:
            continue
        q_lo = known[a] + 1
        q_hi = bisect.bisect_left(known_list, p)     # known never decreases along B: sorted
        if q_lo >= q_hi:
            continue
        s, e = int(starts[q_lo]), int(starts[q_hi])
        if s == e:
            continue
        for space, mask, lo, hi, w, layout in acc:
            if e - s <= SMALL_WINDOW:       # a few accesses: tested one by one, cheaper than numpy's passes
                hits = [j for j in range(s, e) if _meets(flat[j], space, mask, lo, hi, w)]
            else:
                sel = slice(s, e)
                sid = space_ids.get(space, -1)
                mw = np.array(_words(mask, nwords), np.uint64)
                lanes_meet = ((b_masks[sel] & mw) != 0).any(axis=1) if nwords > 1 else (b_masks[sel, 0] & mw[0]) != 0
                hit = ((b_space[sel] == sid) & lanes_meet & (b_lo[sel] < hi) & (lo < b_hi[sel]) & ((b_w[sel] != 0) | w))
                hits = (np.flatnonzero(hit) + s).tolist()
            for j in hits:
                other, _, b_mask, b_lo_j, b_hi_j, b_w_j, b_layout = flat[j]
                key = (min(a, other), max(a, other))
                if key in seen:
                    continue
                where = common_bytes(layout, b_layout, max(lo, b_lo_j), min(hi, b_hi_j))
                if where is None:
                    continue
                seen.add(key)
                if len(races) >= limit:
                    return races, True
                common = b_mask & mask
                lanes = tuple(i for i in range(common.bit_length()) if common >> i & 1) if space == LMEM else ()
                mine, theirs = ("write" if w else "read"), ("write" if b_w_j else "read")
                kinds = (mine, theirs) if a < other else (theirs, mine)
                races.append(Race(key[0], key[1], space, *where, lanes, kinds))
    races.sort(key=lambda r: (r.first, r.second))
    return races, False


def _meets(b, space, mask, lo, hi, w):
    """Whether B's access b (instruction, space, mask, lo, hi, write, layout) may share bytes with
    this one: the same space, a common lane, meeting offset bounds, one of them a write."""
    return b[1] == space and b[2] & mask and b[3] < hi and lo < b[4] and (w or b[5])
