"""Where two strided layouts share bytes, computed on address intervals (issue 24 item 3).

A layout is (base, dims, byte strides): the bytes base + sum(i_k * strides_k), 0 <= i_k <
dims_k (memory.AccessLog). The race detector needs the first and last byte two layouts both
touch inside a window. Enumerating every offset costs the bytes the layouts span (up to 2^26
each, ~1.7 s a pair); this module works on intervals instead:

1. normal form: dims of one element or stride 0 dropped, negative strides flipped, the rest
   sorted by stride; the innermost dims whose copies touch or overlap the run inside them
   become one contiguous run of `run` bytes. The layout is then base + {sum i_k s_k} + [0, run).
2. residues: every byte of a layout is base + [0, run) modulo g, the gcd of both layouts'
   outer strides; when those residue ranges of the two layouts are disjoint, no byte is common
   (the interleaved planes or batches of two tensors sharing a lane range).
3. refinement: each layout starts as one block (its bounding interval); the side whose
   blocks are longer is split along its outermost remaining dim into the children that meet
   the window, and each side keeps only the blocks that meet a block of the other. At the
   innermost level the blocks are the runs themselves, and the common range is exact.

The cost follows the blocks that meet the other layout, never the bytes spanned. Past
MAX_BLOCKS blocks on a side the refinement stops and the common range of the blocks reached so
far is reported: a superset (a race the detector reports may then be a near miss, never a
missed one).
"""
import math

import numpy as np

MAX_BLOCKS = 1 << 16


def normal_form(layout):
    """(base, run, ((dim, stride), ...) outer dims by increasing stride), or None when the
    layout touches no byte (a zero dim)."""
    base, dims, strides = layout
    base = int(base)
    outer = []
    for d, s in zip(dims, strides):
        d, s = int(d), int(s)
        if d <= 0:
            return None
        if d == 1 or s == 0:
            continue
        if s < 0:
            base += (d - 1) * s
            s = -s
        outer.append((d, s))
    outer.sort(key=lambda ds: ds[1])
    run = 1
    while outer and outer[0][1] <= run:       # copies of the run touch or overlap: still one run
        d, s = outer.pop(0)
        run += (d - 1) * s
    merged = []
    for d, s in outer:                        # (d1, s1), (d2, d1 * s1): one dim of d1 * d2
        if merged and s == merged[-1][0] * merged[-1][1]:
            merged[-1] = (merged[-1][0] * d, merged[-1][1])
        else:
            merged.append((d, s))
    return base, run, tuple(merged)


def _residues_disjoint(a, b):
    """True when the two normal forms' bytes differ modulo the gcd of all outer strides."""
    g = 0
    for _, s in a[2] + b[2]:
        g = math.gcd(g, s)
    if g <= 1 or a[1] >= g or b[1] >= g:
        return False
    ra, rb = a[0] % g, b[0] % g
    # cyclic intervals [ra, ra + run_a) and [rb, rb + run_b) modulo g
    return (rb - ra) % g >= a[1] and (ra - rb) % g >= b[1]


def _meets(starts, extent, other, other_extent):
    """Mask of the blocks [s, s + extent) that meet some block [o, o + other_extent) (other sorted)."""
    first = np.searchsorted(other, starts - other_extent, "right")
    last = np.searchsorted(other, starts + extent, "left")
    return first < last


class _Side:
    """One layout during refinement: block starts (sorted, unique) at `level` (the dims
    outer[:level] not split yet), each block `extent` bytes long."""

    __slots__ = ("starts", "level", "extent", "outer")

    def __init__(self, form):
        base, run, outer = form
        self.outer = outer
        self.level = len(outer)
        self.extent = run + sum((d - 1) * s for d, s in outer)
        self.starts = np.array([base], np.int64)

    def split_count(self, lo, hi):
        """Per block, the children of the next split that meet [lo, hi): (first index, count)."""
        d, s = self.outer[self.level - 1]
        inner = self.extent - (d - 1) * s
        a = self.starts
        first = np.maximum(-((a + inner - 1 - lo) // s), 0)          # smallest i: a + i*s + inner > lo
        last = np.minimum((hi - 1 - a) // s, d - 1)                  # largest i: a + i*s < hi
        return first, np.maximum(last - first + 1, 0)

    def split(self, first, count):
        d, s = self.outer[self.level - 1]
        total = int(count.sum())
        owner = np.repeat(np.arange(len(self.starts)), count)
        offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
        self.starts = np.unique(self.starts[owner] + (first[owner] + offsets) * s)
        self.extent -= (d - 1) * s
        self.level -= 1


def common_range(la, lb, lo, hi):
    """[first, last + 1) of the bytes both layouts touch inside [lo, hi), or None when they
    share none there (exact up to MAX_BLOCKS blocks a side, a superset beyond)."""
    a, b = normal_form(la), normal_form(lb)
    if a is None or b is None or lo >= hi:
        return None
    if _residues_disjoint(a, b):
        return None
    sa, sb = _Side(a), _Side(b)
    while True:
        for one, other in ((sa, sb), (sb, sa)):
            s = one.starts
            keep = (s < hi) & (s + one.extent > lo) & _meets(s, one.extent, other.starts, other.extent)
            one.starts = s[keep]
            if not len(one.starts):
                return None
        todo = [x for x in (sa, sb) if x.level]
        if not todo:
            break
        side = max(todo, key=lambda x: x.extent)
        other = sb if side is sa else sa
        w_lo = max(lo, int(other.starts[0]))
        w_hi = min(hi, int(other.starts[-1]) + other.extent)
        first, count = side.split_count(w_lo, w_hi)
        if int(count.sum()) > MAX_BLOCKS:
            break                   # the blocks reached so far: a superset of the common bytes
        side.split(first, count)
    return _runs_common(sa.starts, sa.extent, sb.starts, sb.extent, lo, hi)


def _runs_common(sa, ea, sb, eb, lo, hi):
    """[first, last + 1) common to runs [sa, sa + ea) and [sb, sb + eb) (sb sorted) in [lo, hi)."""
    alo, ahi = np.maximum(sa, lo), np.minimum(sa + ea, hi)
    keep = alo < ahi
    alo, ahi = alo[keep], ahi[keep]
    j = np.searchsorted(sb, alo - eb, "right")          # first B run ending after alo
    ok = j < len(sb)
    jj = np.minimum(j, len(sb) - 1)
    ok &= sb[jj] < ahi
    if not ok.any():
        return None
    first = int(np.maximum(alo, sb[jj])[ok].min())
    k = np.searchsorted(sb, ahi, "left") - 1            # last B run starting before ahi
    okk = k >= 0
    kk = np.maximum(k, 0)
    okk &= sb[kk] + eb > alo
    last = int(np.minimum(ahi, sb[kk] + eb)[okk].max())
    return first, last
