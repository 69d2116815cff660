"""Local-memory hazards of a run (issue 22 item 5): reads of bytes never written, and dead
writes onto a live tensor. `Simulator.run(..., checks=True)` (the default wherever race
detection runs: `Simulator.run`, bmk-run of a program) feeds every instruction's access log
(memory.AccessLog) here, in the order the instructions ran; `strict=True` / `bmk-run --strict`
make a warning a failure. m.run and model runs check nothing unless asked (no cost there).

State (bmk/sim/lanemap.py: segments of lane offsets, one value per segment and lane, so a
tensor's state costs the segments it covers, not its bytes; issue 34 item 4):
- owner: who wrote the bytes last. 0: nothing since the Simulator was made or reset; BEFORE:
  the host (lmem_write*), an earlier run, or anything after a run without checks; base + i:
  instruction i of this run.
- seen: once an instruction read the bytes' current value.
- lost: for bytes whose last write went over a value another instruction of this run had
  written, that instruction (kept only where a dead write happened; below base: none); the
  map's lost_rows flags the segments that may hold one, where reads look for them.
And per byte, `prev`: the bytes as they were, to tell which bytes a write changed (lane-major
like Lmem.data, so a write copies its bytes there without a gather; zero pages until touched;
behind data where a replay left bytes to copy, below).

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
   never counted as read. Not a read: a tensor copied onto itself in its own type over bytes
   nothing wrote (memory.AccessLog.copies; each BM1688 group begins with one), which leaves
   them never written. The bm1684 and bm1684x vendor models' runs read none; BM1688 matmuls
   read the whole last channel of a right matrix the compiler padded to whole channels (the
   hardware computes those result columns; nothing stores them): true reports.
2. overwritten (the dead write): instruction B changes bytes holding values an earlier
   instruction A of this run wrote and nobody read yet (A's write there is dead), and B also
   writes bytes A did not own: B is another tensor straddling A's (a wrapped channel slot, a
   wrong offset). A B inside A (a load into a zero-filled padded buffer) updates A's tensor; a B
   that read A's bytes first (an in-place operation, a buffer reused after its last read) is
   no hazard. Reported when a later instruction C reads, in one operand, bytes B took from A
   together with bytes still holding A's value or with none of B's other bytes (those it took
   from no one, or from another instruction): C reads A's tensor as if it were unchanged. Once
   per (B, A) pair.
Races (two engines at once) are the race detector's business; here order is the run's.

Replay (issue 34 item 4: a model checked on input after input): the checks of a run depend on
the data only through one question, which bytes of an unread value a write changed. A run that
could be kept (_Recording) is replayed when the same program runs again from the same state:
each instruction's log must be the kept one (the same entry objects) and the kept questions
are asked again; its warnings and end state are then the kept run's. Not every question: the
answer about a write whose values no later instruction of the run reads changes no warning,
and the kept one stands (_Question.skip). A question asks first, for each cell a write changed
last time, a byte it changed then (LmemCheck._again): where they all changed again, only the
other cells are compared. On the first difference (another log, another answer, an error) the
checks of the instructions before it are made from the kept logs and answers, and the run
goes on checked one instruction at a time. tests/sim/test_lmemcheck_replay.py holds replays to
that.

A replay copies into prev only the bytes of its writes that a later question it asks compares
(_Recording.plan_replay, _Lag): prev is read only by questions, which compare bytes this run
wrote, and by imprecise writes (never in a kept run). The bytes it does not copy are left in
`_lag`, where data holds what prev should (nothing writes local memory unseen: the host's
writes copy their own bytes, an unchecked run makes the next checked one copy everything);
they are copied (_sync) before a run that is not a replay, and before one that is, of a
program whose footprints depend on the data (memory.AccessLog.sized: its instructions may
write other bytes on the next run; such a run also asks every question), and after the
instruction where a replay stops. A replay that left bytes to copy or skipped a question
refuses an instruction logging other bytes than the kept run's (a kind whose footprint
depends on the data and does not say so): its checks could not be exact.
"""
import mmap
import weakref
from bisect import bisect_left, bisect_right, insort
from collections import deque
from operator import is_

import numpy as np

from bmk.errors import SimulationError
from bmk.sim.intervals import normal_form
from bmk.sim.lanemap import LaneMap, runs
from bmk.sim.report import OVERWRITTEN, UNINITIALIZED, MemoryWarning

BEFORE = 1          # written before this run (host, an earlier or unchecked run)
FIRST = 2           # owner of instruction i of a run: base + i, base >= FIRST
MAX_WARNINGS = 1000
MAX_CACHED = 1 << 14     # entries whose pieces are kept (emptied when full, like memory.MAX_CACHED_VIEWS)
_OWNER_MAX = (1 << 31) - 1
MAX_RECORDINGS = 1 << 12     # runs kept for replay (emptied when full; a model runs a program per group)
MAX_RECORDED_CELLS = 1 << 21     # map cells (segments x lanes) past which a run is not kept
MAX_KEPT_CELLS = 1 << 23         # map cells the kept runs may hold in all (rows they changed, 9 bytes a cell;
                                 # their questions' cells, 2 bytes and up); a run asking more is not kept
SMALL_PIECE = 1 << 16            # bytes of a piece whose dead-write questions compare all of it (_changed);
                                 # a kept question about a larger one keeps its witnesses (_changed_now)


def _zeros(n, dtype):
    """n zeros in their own anonymous mapping: pages of 4 KiB zeroed when first touched (numpy
    asks large arrays for 2 MiB pages, which a run touching a few tensors pays in full)."""
    dtype = np.dtype(dtype)
    return np.frombuffer(mmap.mmap(-1, n * dtype.itemsize), dtype)


_SPARE_PREV = {}        # size -> prev arrays of LmemChecks gone (_prev)
MAX_SPARE_PREV = 2      # kept per size


def _prev(owner, size):
    """A prev array of `size` bytes for the LmemCheck `owner`, given back when owner is gone: a
    new Simulator's first checked run then copies its writes into pages touched already, not
    fresh ones (a page fault per 4 KiB: a third of a racy stream's checked run on a new
    Simulator). Its bytes are an earlier run's, as after LmemCheck.renew: prev is only read
    where an owner is not 0."""
    try:
        prev = _SPARE_PREV.get(size, []).pop()
    except IndexError:
        prev = _zeros(size, np.uint8)
    weakref.finalize(owner, _give_back, prev)
    return prev


def _give_back(prev):
    spare = _SPARE_PREV.setdefault(prev.size, [])
    if len(spare) < MAX_SPARE_PREV:
        spare.append(prev)


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


def _set(values):
    """The distinct values of an integer array as a set: a small one (a tensor's cells on the
    LaneMap) through a list, faster than numpy's passes for tens of values."""
    return set(values.ravel().tolist()) if values.size <= 256 else set(_distinct(values))


# Reductions over a tensor's cells (tens to thousands of values): the ufuncs' reduce called
# directly, without ndarray.min's Python wrapper, which costs as much as the pass itself here.
def _min(cells):
    return np.minimum.reduce(cells, axis=None)


def _max(cells):
    return np.maximum.reduce(cells, axis=None)


def _all(cells):
    return np.logical_and.reduce(cells, axis=None)


def _any(cells):
    return np.logical_or.reduce(cells, axis=None)


def _word(lo, hi, lane, cuts):
    """The widest of 8, 4, 2 and 1 bytes that lo, hi, the lane size and every cut are multiples of."""
    g = int(np.bitwise_or.reduce(cuts, initial=0)) | lo | hi | lane
    return 8 if not g % 8 else 4 if not g % 4 else 2 if not g % 2 else 1


def _pairs(a, b):
    """_distinct_pairs, for small arrays through a set of tuples."""
    return sorted(set(zip(a.ravel().tolist(), b.ravel().tolist()))) if a.size <= 256 else _distinct_pairs(a, b)


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


class _Piece:
    """One piece of an entry's footprint (LmemCheck.pieces) on the LaneMap: lanes [a, b), the
    runs [starts, ends) of offsets it covers on each, their ends as breakpoints (points), its
    views of prev and of Lmem.data (the bytes a write copies), and, for the map's `version`, its
    segments: rows (a slice or index array of the state arrays) and ids (their indices), and,
    when rows is a slice, its cells' views of owner, seen and lost (own, sv, lv; else None).
    written: the LmemCheck's `cleared` count when a read found every owner of it set.
    parts: None, or for the channel slots of a tensor that cover every lane (LmemCheck._pieces),
    one piece per slot: the piece is their union, for what is the same on every slot (marking
    bytes read or written), and the parts are taken one by one where a rule may warn, so a
    warning names the slot it found, as it would without the union.
    first: the lane offset of its views' first byte; order: (version, where each of its
    segments starts among its bytes in its views' order, or None: _segment_starts)."""

    __slots__ = ("a", "b", "exact", "starts", "ends", "points", "prev", "now", "version", "rows", "ids",
                 "own", "sv", "lv", "written", "parts", "first", "order")


class _Question:
    """A kept run's dead-write question (LmemCheck._changed_now): the write's piece, the cells
    asked about, the answer, the witnesses (_changed_seen: None, or (at, shown)) and, once a
    replay asked it, what it compares again (LmemCheck._again). skip: no later instruction of
    the run reads the writer's values, so no answer changes what the run reports
    (_Recording.plan_replay): a replay takes the kept one."""

    __slots__ = ("piece", "cells", "answer", "witnesses", "again", "skip")

    def __init__(self, piece, cells, answer, witnesses):
        self.piece, self.cells, self.answer, self.witnesses = piece, cells, answer, witnesses
        self.again = None
        self.skip = False


class _Lag:
    """A kept run's write whose bytes a replay copies into prev only where a later question of
    the run compares them (_Recording.plan_replay): now / prev, views of that box of its bytes
    (None: none), the rest left to copy (LmemCheck._lag)."""

    __slots__ = ("piece", "now", "prev")

    def __init__(self, piece, box):
        self.piece = piece
        self.now = self.prev = None
        if box is None:
            return
        l0, l1, o0, o1 = box
        lanes = slice(l0 - piece.a, l1 - piece.a)
        if piece.now.ndim == 2:         # one run a lane: the box's offsets too
            at = (lanes, slice(o0 - piece.first, o1 - piece.first))
        else:
            at = lanes
        self.now, self.prev = piece.now[at], piece.prev[at]


class _Recording:
    """A checked run of one program kept for replay (LmemCheck.start): what the checks of its
    instructions depended on, and what they left.

    The checks of a run are a function of the state they start from (the map's owner / seen /
    lost and its breakpoints, base), each instruction's access log, and the answers of one
    question about the data: which bytes of an unread value a write changed (_changed, asked
    for dead writes; prev holds the bytes as they were). A run of the same program from the
    same state, whose instructions log the same entries (the same objects: the simulator
    memoizes views) and whose writes change the same bytes, makes the same checks: its end
    state and warnings are this run's. Replaying it asks only those questions (those whose
    answer a later read could see) and copies into prev only the bytes they compare
    (plan_replay); on the first difference the checks of the instructions before it are made
    (from the recorded logs and answers) and the run goes on checked as usual.
    A run with an imprecise write (_write_bytes: every byte it changed matters) or that cut the
    map (its breakpoints differ from the next run's start) is not kept.

    The state a run starts from is named, not copied (LmemCheck._state): a reset's (the map
    cleared, for its breakpoints), or the end of a kept or replayed run (its recording's name);
    anything else that changes the state (the host's writes, unchecked runs, an error) names
    it anew. The end is kept as the map rows the run changed."""

    __slots__ = ("key", "state", "version", "order", "entries", "copied", "ops", "begun", "end", "name",
                 "warnings", "clobbers", "reported", "lost", "whole", "asked", "sized", "read", "pending",
                 "skips")

    def __init__(self, key, lc):
        m = lc.map
        self.key, self.state, self.version = key, lc._state, m.version
        self.begun = tuple(a.copy() for a in m.states())    # the map as the run found it, for the rows it changes
        self.order, self.entries, self.copied, self.ops = [], [], [], []
        self.whole = True           # every instruction's checks kept (no imprecise write, map not cut)
        self.asked = 0              # cells of the questions kept (ops)
        self.sized = False          # an instruction's footprint depends on the data (memory.AccessLog.sized)
        self.read = set()           # instructions (owners) that asked a question and whose values were read
        self.pending = []           # those that asked one, not known read yet, sorted (LmemCheck._note_read)
        self.skips = False          # a question a replay does not ask (_Question.skip)

    def keep_end(self, lc):
        """The run ended: its outcome (the rows it changed, its warnings) kept."""
        now = lc.map.states()
        changed = np.zeros(len(now[0]), bool)
        for a, b in zip(now, self.begun):
            changed |= (a != b).any(axis=1)
        rows = np.flatnonzero(changed)
        self.end = (rows,) + tuple(a[rows] for a in now)
        self.begun = None
        self.name = object()            # the state it ends in (a name: it keeps nothing alive)
        self.warnings, self.lost = tuple(lc.warnings), lc._lost
        self.clobbers, self.reported = frozenset(lc.clobbers), frozenset(lc.reported)
        m = lc.map
        if self.pending:        # (and the values read that no one overwrote)
            self.read.update(_set(m.owner[m.seen]).intersection(self.pending))
        self.plan_replay(m)

    def plan_replay(self, m):
        """What a replay asks and copies. A question of an instruction whose values no later
        instruction of the run read (self.read) is not asked (_Question.skip): whatever it
        answers, only reads of those values could see it (the lost values and (clobber, writer)
        pairs it makes are the writer's). Of each write a replay copies into prev the box of the
        cells it was the last to write that a later question asked compares (_Lag, with the rest
        of its bytes left to copy), nothing (_Lag), or all of it (the write itself). A run whose
        footprints depend on the data skips nothing and copies every write. m: the map (the run
        did not cut it: its pieces' rows are still theirs)."""
        base, sized = self.key[1], self.sized
        last = np.full(m.owner.shape, -1, np.int32) if self.asked and not sized else None  # cell -> its last write
        keeps, compares = [], []        # per question asked, (its cells' last writers, their lanes, rows)
        self.skips = False
        for pos, ops in enumerate(self.ops):
            for k, op in enumerate(ops):
                if op.__class__ is _Lag:        # (a replay that stopped: its first ops kept again)
                    ops[k] = op = op.piece
                if sized:
                    continue
                if op.__class__ is _Piece:
                    if last is not None:
                        last[op.rows, op.a:op.b] = len(keeps)
                    keeps.append((ops, k))
                    continue
                op.skip = base + self.order[pos] not in self.read
                if op.skip:
                    self.skips = True
                    continue
                p = op.piece
                r, lane = np.nonzero(op.cells)
                rows, lanes = p.ids[r], p.a + lane
                compares.append((last[rows, lanes], lanes, rows))
        if not keeps:
            return
        # per write, the box of the cells it last wrote that a question compares: first and end
        # lane, first and end offset (an empty box where none)
        box = np.array([[m.npu_num], [0], [m.lane_size], [0]]).repeat(len(keeps), axis=1)
        if compares:
            by, lanes, rows = (np.concatenate(a) for a in zip(*compares))
            hit = by >= 0
            by, lanes, rows = by[hit], lanes[hit], rows[hit]
            np.minimum.at(box[0], by, lanes)
            np.maximum.at(box[1], by, lanes + 1)
            np.minimum.at(box[2], by, m.bp[rows])
            np.maximum.at(box[3], by, m.bp[rows + 1])
        for (ops, k), b in zip(keeps, box.T.tolist()):
            lag = _Lag(ops[k], b if b[0] < b[1] else None)
            if lag.now is None or lag.now.shape != lag.piece.now.shape:     # (else: copied whole, as it was)
                ops[k] = lag

    def cells(self):
        """The map cells this recording holds: its end's and its questions'."""
        return self.end[1].size + self.asked

    def answers(self, upto):
        """The answers of the recorded questions of the first `upto` instructions, in order."""
        return [op.answer for ops in self.ops[:upto] for op in ops if op.__class__ is _Question]


class LmemCheck:
    """The owner / seen / lost / prev state of one Simulator's local memory (module docstring)."""

    def __init__(self, lmem, host_writes=(), unknown=False):
        """host_writes: the (addr, n) spans and log entries the host wrote since the memory was
        zero (replayed as BEFORE); unknown: instructions ran unchecked, so every byte counts as
        written (never a false report after m.run on the same Simulator)."""
        self.lmem = lmem
        self.map = LaneMap(lmem.npu_num, lmem.lane_size)
        self.prev = _prev(self, lmem.size)
        self._cache = {}                         # id(entry) -> (entry, its _Pieces)
        self.cleared = 0                         # times the state was cleared
        self._recordings = {}                    # (a program's plans, base) -> its last kept run (_Recording)
        self._kept_cells = 0                     # map cells the recordings hold
        self._state = object()                   # names the state (_Recording): no run starts from it yet
        self._making = self._replay = self._ops = None
        self._script = deque()                   # answers to _changed_now's questions, when known
        self._keeping = True                     # writes copy their bytes into prev (not while catching up)
        self._lag = {}                           # id -> a _Piece whose bytes prev may not hold yet (_sync)
        self.renew(host_writes, unknown)

    def renew(self, host_writes=(), unknown=False):
        """As a new LmemCheck of the same memory (after Simulator.reset): the state cleared in
        place, the breakpoints and pieces kept (a program run again finds its segments made).
        prev is left as it is: it is only read where an owner is not 0."""
        self.map.clear()
        self._lag.clear()               # (prev is only read where an owner is not 0: every owner is now)
        self.cleared += 1               # pieces found all written (_Piece.written) are to be checked again
        self.base = FIRST
        self._state = ("cleared", self.map.version)
        self.stale = unknown
        self._lost = False                      # lost values were recorded in this run
        for w in host_writes:
            self.host(w)
        self.warnings, self.clobbers, self.reported = [], set(), set()

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
            pieces = [self._piece(*p) for p in pieces]
        else:
            pieces = [self._piece(*p) for p in self.pieces(what)]
        self._locate(pieces)
        self._state = object()
        for p in pieces:
            self.map.owner[p.rows, p.a:p.b] = BEFORE
            p.prev[...] = p.now

    # -- a checked run --------------------------------------------------------------------------
    def start(self, n, key=None):
        """A run of n instructions begins: what came before is BEFORE. key: the program's plans
        (a tuple), to replay its last kept run when this one starts from the same state
        (_Recording), else to keep this one."""
        m = self.map
        if self.stale:          # instructions ran unchecked: any byte may have been written
            self._state = object()
            np.copyto(self.prev, self.lmem.data)
            self._lag.clear()
            m.owner[...] = BEFORE
            m.lost[...] = 0
            self.base, self.stale = FIRST, False
        elif self.base + n >= _OWNER_MAX:
            self._state = object()
            np.minimum(m.owner, BEFORE, out=m.owner)
            m.lost[...] = 0
            self.base = FIRST
        self._lost = False                      # lost values below base are never read: none to clear
        m.lost_rows[...] = False                # (nor to look for)
        self.warnings, self.clobbers, self.reported = [], set(), set()
        self._making = self._replay = self._ops = None
        self._pos = 0
        if key is not None:
            key = key, self.base         # (a program may run several times in a sequence of runs: a model's groups)
            rec = self._recordings.get(key)
            if rec is not None and rec.state == self._state and rec.version == m.version:
                self._replay = rec
            elif m.owner.size <= MAX_RECORDED_CELLS:
                self._making = _Recording(key, self)
        if self._replay is None or self._replay.sized:
            self._sync()

    def _sync(self):
        """prev made to hold the bytes of every write a replay did not copy (_Lag): data holds them."""
        for p in self._lag.values():
            p.prev[...] = p.now
        self._lag.clear()

    def finish(self, n):
        """The run ended: its owners (and lost values) fall below the next run's base."""
        rec, state = self._replay, object()
        if rec is not None and self._pos != len(rec.order):     # (never: a run runs its program's instructions)
            self._replay = None
            self._catch_up(rec, self._pos)
            rec = None
        if rec is not None:                     # replayed to the end: the recorded run's outcome
            rows, *kept = rec.end
            for arr, k in zip(self.map.states(), kept):     # (lost_rows: cleared by the next start,
                arr[rows] = k                               # read by no one before)
            self.warnings, self._lost = list(rec.warnings), rec.lost
            self.clobbers, self.reported = set(rec.clobbers), set(rec.reported)
            self._replay, state = None, rec.name
        rec = self._making
        if rec is not None and rec.whole and rec.version == self.map.version:
            rec.keep_end(self)
            old = self._recordings.pop(rec.key, None)
            self._kept_cells -= 0 if old is None else old.cells()
            if len(self._recordings) >= MAX_RECORDINGS or self._kept_cells + rec.cells() > MAX_KEPT_CELLS:
                self._recordings.clear()
                self._kept_cells = 0
            self._recordings[rec.key] = rec
            self._kept_cells += rec.cells()
            state = rec.name
        self._making = self._ops = None
        self._state = state
        self.base += n
        return tuple(self.warnings)

    def abort(self):
        """The run stopped at an error: the checks of the instructions that ran, made (a replay's
        are caught up), so the state is what checking them one by one leaves. (But for prev where
        the failing instruction wrote over bytes a replay left to copy: the next run copies them as
        that instruction left them. Its writes are checked by no one either way.)"""
        rec = self._replay
        if rec is not None:
            self._replay = None
            self._catch_up(rec, self._pos)
        self._making = self._ops = None
        self._state = object()

    def instruction(self, i, entries, copies=False, sized=False):
        """Instruction i ran and logged `entries`: check its reads, then record its writes.
        copies: i writes the values it read unchanged (memory.AccessLog.copies); sized: its
        footprint depends on the data (memory.AccessLog.sized)."""
        if self._replay is not None:
            self._replayed(i, entries, copies)
            return
        rec = self._making
        if rec is not None:
            rec.sized = rec.sized or sized
            rec.order.append(i)
            rec.entries.append(entries)
            rec.copied.append(copies)
            self._ops = ops = []
            rec.ops.append(ops)
        self._check(i, entries, copies)

    # -- replay (_Recording) ----------------------------------------------------------------------
    def _replayed(self, i, entries, copies):
        """Instruction i of a replayed run: its log the recorded one, its writes' bytes copied into
        prev and the recorded questions about them asked again, in the recorded order."""
        rec, pos = self._replay, self._pos
        if pos >= len(rec.order) or rec.order[pos] != i or rec.copied[pos] != copies:
            self._diverge(rec, pos, i, entries, copies, [])
            return
        want = rec.entries[pos]
        if len(want) != len(entries) or not all(map(is_, want, entries)):
            want, mine = self._mine(want), self._mine(entries)     # (other memories' entries: not ours)
            if len(want) != len(mine) or not all(map(is_, want, mine)):
                self._diverge(rec, pos, i, entries, copies, [])
                return
        self._pos = pos + 1
        got = []
        ops = rec.ops[pos]
        for op in ops:
            cls = op.__class__
            if cls is _Piece:
                self._keep(op)
                continue
            if cls is _Lag:
                if op.now is not None:
                    op.prev[...] = op.now
                self._lag[id(op.piece)] = op.piece
                continue
            if op.skip:
                got.append(op.answer)
                continue
            now = self._again(op)
            got.append(now)
            if not np.array_equal(now, op.answer):
                self._diverge(rec, pos, i, entries, copies, got)
                return

    def _again(self, q):
        """The recorded question q (_Question) asked again: _changed over its cells. Its witnesses
        (_changed_seen: bytes the write changed when the run was kept, one in each of some cells
        the answer holds for, and those cells; None: none kept) are asked first: where each byte
        changed again, its cell's answer stands and only the other cells are compared (a dead
        write mostly changes what it overwrites: most of its bytes then need no compare). Where
        one did not, every cell is compared and they are dropped. What is compared (the cells,
        their box: _box) is worked out on the first replay and kept in q.again."""
        w = q.witnesses
        if w is not None and not (self.lmem.data[w[0]] != self.prev[w[0]]).all():
            q.witnesses = q.again = w = None
        if q.again is None:
            todo = q.cells if w is None else q.cells & ~w[1]
            if not _any(todo):
                q.again = None, None
            else:
                q.again = todo, self._box(q.piece, todo) if q.piece.now.size > SMALL_PIECE else None
        todo, box = q.again
        if todo is None:                        # every cell witnessed
            return w[1]                         # (its callers change no answer)
        now = self._changed(q.piece, todo) if box is None else self._compared(q.piece, todo, box)[0]
        now &= todo
        if w is not None:
            now |= w[1]
        return now

    def _diverge(self, rec, pos, i, entries, copies, answers):
        """Instruction i (the pos-th of the run) differs from the replayed run (its log, or the
        last of `answers`, this instruction's answers so far): the checks of the instructions
        before it are made, then its own, and the run goes on checked one by one. It is kept in
        the replayed one's place: its first pos instructions are the replayed run's."""
        self._replay = None
        if self._recordings.pop(rec.key, None) is not None:
            self._kept_cells -= rec.cells()
        new = _Recording(rec.key, self)         # (the map and its state's name are still the run's start)
        new.order, new.entries, new.copied = rec.order[:pos], rec.entries[:pos], rec.copied[:pos]
        new.sized = rec.sized                   # (its instructions: the program's)
        new.ops = rec.ops[:pos]
        new.asked = sum(op.cells.size for ops in new.ops for op in ops if op.__class__ is _Question)
        new.pending = sorted({rec.key[1] + i for i, ops in zip(new.order, new.ops) if any(
            op.__class__ is _Question for op in ops)})
        self._making = new                      # (the catch-up notes the values read: new.read)
        self._catch_up(rec, pos)
        if (self._lag or rec.skips) and not self._logged_as_kept(rec, pos, i, entries, copies):
            raise SimulationError(f"local-memory checks: instruction {i} logged other local-memory bytes than when "
                                  "its program's run was kept, and its kind does not say its footprint depends on "
                                  "the data (memory.AccessLog.sized): the checks cannot be exact here; run with "
                                  "checks=False")
        self._script.extend(answers)            # the questions i asked already, answered
        self.instruction(i, entries, copies)
        self._script.clear()
        self._sync()            # (i's questions compared only bytes the kept run's copied: its log is the kept one)

    def _logged_as_kept(self, rec, pos, i, entries, copies):
        """Instruction i's log says what the kept run's pos-th said (the same bytes, maybe not the
        same entry objects)."""
        if pos >= len(rec.order) or rec.order[pos] != i or rec.copied[pos] != copies:
            return False
        want, mine = self._mine(rec.entries[pos]), self._mine(entries)
        return len(want) == len(mine) and all(
            a == b and getattr(a[5], "start_lane", None) == getattr(b[5], "start_lane", None)
            and getattr(a[5], "channels", None) == getattr(b[5], "channels", None) for a, b in zip(want, mine))

    def _catch_up(self, rec, upto):
        """The checks of the recorded run's first `upto` instructions, made now: the state from
        the run's start to where the replay stopped. Their writes' bytes are in prev already
        (copied as they ran, or left to copy in _lag) and the data has moved on since, so nothing
        is copied and the questions take their recorded answers."""
        self._script.extend(rec.answers(upto))
        self._keeping = False
        try:
            for pos in range(upto):
                self._check(rec.order[pos], rec.entries[pos], rec.copied[pos])
        finally:
            self._keeping = True
            self._script.clear()

    def _keep(self, p):
        """A write of piece p was recorded or replayed: its bytes are what prev holds now (and a
        run being kept notes the copy, to make it again when replayed)."""
        if self._keeping:
            p.prev[...] = p.now
        if self._ops is not None:
            self._ops.append(p)

    def _changed_now(self, p, cells):
        """_changed, restricted to `cells`: answered from the script while catching up, else
        asked (and noted by a run being kept, with its witnesses where the piece is large)."""
        witnesses = None
        if self._script:
            got = self._script.popleft()
        elif self._ops is not None and p.now.size > SMALL_PIECE:
            got, witnesses = self._changed_seen(p, cells)
        else:
            got = self._changed(p, cells)
            got &= cells
        if self._ops is not None:
            self._ops.append(_Question(p, cells.copy(), got.copy(), witnesses))
            rec = self._making
            rec.asked += cells.size
            if rec.asked > MAX_KEPT_CELLS:      # its questions alone would hold more than the kept runs may:
                self._making = self._ops = None     # the run goes on unkept (and its ops are let go)
        return got

    # -- the checks of one instruction ------------------------------------------------------------
    def _mine(self, entries):
        """The entries of a log that are of this local memory."""
        name = self.lmem.name
        return [e for e in entries if e[0] == name]

    def _check(self, i, entries, copies):
        mine = self._mine(entries)
        if not mine:
            return
        if copies:
            idle = self._copied_onto_itself(mine)
            mine = [e for e in mine if id(e) not in idle]
        if self._full():
            self._record_only(i, mine)
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

    def _copied_onto_itself(self, entries):
        """ids of a read and a write entry of a copy (its values unchanged) with one footprint over
        bytes nothing wrote: a tensor copied onto itself, which reads nothing that matters and
        writes nothing new, so the bytes stay never written. BM1688 groups begin with one (a
        one-element copy of the last bytes of lane 31 onto themselves, after the register writes
        that set up the next command). A copy of bytes something wrote is checked as usual, and
        so is every kind its semantics do not declare a copy (an in-place max(x, 0) leaves the
        zeros of a fresh local memory unchanged, but not the bytes a chip really holds)."""
        idle = set()
        m = self.map
        for r in entries:
            for w in entries:
                if (r[4] or not w[4] or r[1:4] != w[1:4] or r[5] != w[5]
                        or getattr(r[5], "start_lane", None) != getattr(w[5], "start_lane", None)
                        or getattr(r[5], "channels", None) != getattr(w[5], "channels", None)):
                    continue
                pieces = self._pieces(w)
                if pieces and all(p.exact and _max(m.owner[p.rows, p.a:p.b] if p.own is None else p.own) == 0
                                  for p in pieces):
                    idle.update((id(r), id(w)))
        return idle

    def _record_only(self, i, entries):
        """Instruction i's writes, once the warning list is full: this run can report nothing more,
        so its reads and dead writes are not looked at; what a later run needs is kept (which
        bytes were written, as owners that are not 0, and prev). The rest (seen, lost, owners of
        this run) means nothing once the run ended: its owners then fall below base."""
        me = self.base + i
        for e in entries:
            if e[4]:
                pieces = self._pieces(e)
                for p in pieces:
                    if p.version != self.map.version:
                        self._locate(pieces)
                    if not p.exact:                 # its owners depend on the bytes it changed
                        self._write_bytes(p, me, set(), set())
                        continue
                    if self._making is not None:
                        m = self.map
                        self._note_read(m.owner[p.rows, p.a:p.b] if p.own is None else p.own,
                                        m.seen[p.rows, p.a:p.b] if p.sv is None else p.sv)
                    if p.own is not None:
                        p.own[...] = me
                    else:
                        self.map.owner[p.rows, p.a:p.b] = me
                    self._keep(p)

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
    def _data(arr, flat, shape, strides):
        """A piece of a lane-major array (Lmem.data, prev)."""
        return np.ndarray(shape, arr.dtype, arr, flat, strides)

    def _piece(self, flat, shape, strides, exact):
        """A footprint piece's _Piece (its rows not located yet)."""
        lane = self.lmem.lane_size
        p = _Piece()
        l0, off = divmod(flat, lane)
        p.a, p.b, p.exact = l0, l0 + shape[0], exact
        p.starts, p.ends = runs(off, shape[1:], strides[1:])
        p.points = np.concatenate([p.starts, p.ends])
        if len(p.starts) == 1:      # its bytes on each lane are one run: plain 2-D views copy fastest
            s, e = int(p.starts[0]), int(p.ends[0])
            p.first = s
            p.prev = self._data(self.prev, l0 * lane + s, (shape[0], e - s), (lane, 1))
            p.now = self._data(self.lmem.data, l0 * lane + s, (shape[0], e - s), (lane, 1))
        else:                       # several runs: views over the runs of its normal form, each run innermost
            base, run, outer = normal_form((off, shape[1:], strides[1:]))
            p.first = base
            sh = (shape[0],) + tuple(d for d, _ in reversed(outer)) + (run,)
            st = (lane,) + tuple(s for _, s in reversed(outer)) + (1,)
            p.prev = self._data(self.prev, l0 * lane + base, sh, st)
            p.now = self._data(self.lmem.data, l0 * lane + base, sh, st)
        p.version = p.written = -1
        p.parts = p.order = None
        return p

    def _locate(self, pieces):
        """Make the pieces' run ends breakpoints of the map and find their rows (for its version)."""
        m = self.map
        # pieces located before have their ends cut already (breakpoints stay, but past MAX_SEGMENTS);
        # new ones mostly not: they split first
        found = [None]
        if all(p.version >= 0 for p in pieces):
            found = [m.located(p.starts, p.ends, p.points) for p in pieces]
        if None in found:
            while True:             # splitting for one piece may merge away another's breakpoints: again
                v = m.version
                for p in pieces:
                    m.split(p.points)
                if m.version == v:
                    break
            found = [m.rows(p.starts, p.ends) for p in pieces]
        v = m.version
        for p, (rows, ids) in zip(pieces, found):
            p.rows, p.ids, p.version = rows, ids, v
            if isinstance(p.rows, slice):
                p.own, p.sv, p.lv = m.owner[p.rows, p.a:p.b], m.seen[p.rows, p.a:p.b], m.lost[p.rows, p.a:p.b]
            else:
                p.own = p.sv = p.lv = None

    def _pieces(self, entry):
        """An entry's _Pieces, located on the map as it is now. Kept per entry (the simulator
        memoizes views, so the same entry object comes back run after run)."""
        hit = self._cache.get(id(entry))
        if hit is None or hit[0] is not entry:
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
            hit = self._cache[id(entry)] = (entry, self._united(entry, self.pieces(entry)))
        pieces = hit[1]
        if pieces and pieces[0].version != self.map.version:
            self._locate(pieces)
        return pieces

    def _united(self, entry, raw):
        """The _Pieces of an entry's pieces(), the channel slots that cover every lane as one piece
        (with their own pieces as its parts): a tensor of many channels (a softmax tile of 7,680)
        is then a few numpy operations a check, not a few per slot."""
        pieces = [self._piece(*p) for p in raw]
        npu = self.lmem.npu_num
        full = [k for k, (_, shape, _, _) in enumerate(raw) if shape[0] == npu]
        if len(full) < 2 or getattr(entry[5], "start_lane", None) is None:
            return pieces
        k0, k1 = full[0], full[-1] + 1          # the slots between a first and last partial one
        flat, shape, strides, _ = raw[k0]
        slot_stride = entry[5][2][1]
        whole = self._piece(flat, (npu, k1 - k0) + shape[1:], (strides[0], slot_stride) + strides[1:], True)
        whole.parts = pieces[k0:k1]
        return pieces[:k0] + [whole] + pieces[k1:]

    def _where(self, piece, hit):
        """(lanes, lo, hi) of the bytes of a piece where `hit` (a bool array over its cells, rows
        x lanes) holds: the lanes with one, and the first such lane's offset range."""
        on = np.flatnonzero(hit.any(axis=0))
        ids = piece.ids[np.flatnonzero(hit[:, on[0]])]
        bp = self.map.bp
        return tuple((piece.a + on).tolist()), int(bp[ids[0]]), int(bp[ids[-1] + 1])

    def _full(self):
        """The warning list is full: later warnings are counted as reported but not built (their
        byte ranges cost a pass over the operand each: issue 34 item 4)."""
        return len(self.warnings) >= MAX_WARNINGS

    # -- the rules -------------------------------------------------------------------------------
    def _read(self, i, entry):
        pieces = self._pieces(entry)
        m = self.map
        if not pieces or not pieces[0].exact:     # imprecise: not checked, its bounding bytes count as read
            for p in pieces:
                m.seen[p.rows, p.a:p.b] = True
            return
        clobbers = self.clobbers
        lost_pairs = bool(clobbers and self._lost)   # rule 2 may apply: (no lost value in this run: no pair to find)
        if not lost_pairs:       # the usual read: of pieces found all written before (rule 1 done), nothing lost
            cleared = self.cleared
            for p in pieces:
                if p.written != cleared:
                    break
            else:
                for p in pieces:
                    if p.sv is None:
                        m.seen[p.rows, p.a:p.b] = True
                    else:
                        p.sv[...] = True
                return
        unread = ("u", i) not in self.reported
        if pieces[0].parts is not None or (len(pieces) > 1 and pieces[1].parts is not None):     # (after at most
            pieces = self._read_parts(pieces, unread, lost_pairs)        # one partial slot)
        taken, sels, owns = {}, [], []
        for k, p in enumerate(pieces):
            own = m.owner[p.rows, p.a:p.b] if p.own is None else p.own
            owns.append(own)
            # an owner is never 0 again until the state is cleared: a piece found all written is not
            # looked at again (most reads are of tensors read before)
            if unread and p.written != self.cleared and _min(own) == 0:
                unread = False
                self.reported.add(("u", i))
                if not self._full():
                    self.warnings.append(MemoryWarning(UNINITIALIZED, i, *self._where(p, own == 0)))
            elif unread:
                p.written = self.cleared
            if lost_pairs:
                # (its segments first: most hold no lost value, and a piece has lanes times more cells)
                lost = (m.lost[p.rows, p.a:p.b] if p.lv is None else p.lv) if _any(m.lost_rows[p.rows]) else None
                if lost is not None and _max(lost) >= self.base:
                    sel = lost >= self.base
                    sels.append((sel, lost))
                    for b, a in _pairs(own[sel], lost[sel]):
                        taken.setdefault((b, a), k)
                else:
                    sels.append(None)
        for p in pieces:
            if p.sv is None:
                m.seen[p.rows, p.a:p.b] = True
            else:
                p.sv[...] = True
        # only pairs a warning may name need the owners the read sees
        todo = [(b, a, k) for (b, a), k in taken.items() if (b, a) in clobbers and (b, a) not in self.reported]
        if not todo:
            return
        plain = set()           # owners of the read's bytes that took no value from another
        for own, sel in zip(owns, sels):
            plain.update(_set(own if sel is None else own[~sel[0]]))
        read = plain | {b for b, _ in taken}       # owners of every byte the read sees
        for b, a, k in todo:
            # C reads A's tensor: bytes still A's, or none of B's but those B took from A (B's
            # other bytes: taking no value, or taking another instruction's)
            if a in read or not (b in plain or any(bb == b and aa != a for bb, aa in taken)):
                self.reported.add((b, a))
                if not self._full():
                    sel, lost = sels[k]
                    hit = sel & (owns[k] == b) & (lost == a)
                    self.warnings.append(MemoryWarning(OVERWRITTEN, i, *self._where(pieces[k], hit),
                                                       writer=a - self.base, clobber=b - self.base))

    def _read_parts(self, pieces, unread, lost):
        """The pieces a read checks: a union of slots (_Piece.parts) as itself, or as its parts
        where a rule may warn: bytes never written in it (rule 1) or values lost in this run
        (rule 2)."""
        m = self.map
        out = []
        for p in pieces:
            # (a union none of whose values was lost in this run has no part that rule 2 finds)
            if p.parts is not None and (
                    (lost and _any(m.lost_rows[p.rows])
                     and _max(m.lost[p.rows, p.a:p.b] if p.lv is None else p.lv) >= self.base)
                    or (unread and p.written != self.cleared
                        and _min(m.owner[p.rows, p.a:p.b] if p.own is None else p.own) == 0)):
                out += p.parts
            else:
                out.append(p)
        if any(p.version != m.version for p in out):      # parts not located yet
            self._locate(out)
        return out

    def _write(self, i, entry, victims, others):
        """Record entry's bytes as i's; add to `victims` the owners (this run's instructions)
        of unread values it changed, to `others` every owner its bytes had (only then)."""
        self._write_pieces(self._pieces(entry), self.base + i, victims, others)

    def _write_pieces(self, pieces, me, victims, others):
        m = self.map
        for p in pieces:
            if p.version != m.version:              # an imprecise piece before it split the map
                self._locate(pieces)
            if not p.exact:
                self._write_bytes(p, me, victims, others)
                continue
            if p.parts is not None and not _all(m.seen[p.rows, p.a:p.b] if p.sv is None else p.sv):
                self._write_pieces(p.parts, me, victims, others)     # unread values: dead writes slot by slot
                continue
            if p.own is not None:
                self._record(p, p.own, p.sv, p.lv, me, victims, others)
            elif _all(m.seen[p.rows, p.a:p.b]):     # several runs, every value read: _record's outcome stored
                self._note_read(m.owner[p.rows, p.a:p.b], None)
                m.owner[p.rows, p.a:p.b] = me
                m.seen[p.rows, p.a:p.b] = False
                if self._lost:
                    m.lost[p.rows, p.a:p.b] = 0
            else:                                   # several runs: their cells gathered, then stored back
                cells = [arr[p.rows, p.a:p.b] for arr in m.states()]
                self._record(p, *cells, me, victims, others)
                for arr, c in zip(m.states(), cells):
                    arr[p.rows, p.a:p.b] = c
            self._keep(p)

    def _note_read(self, own, seen):
        """A run being kept learns which instructions that asked a question had their values
        read (_Recording.read), from the cells a write takes: their owners, and which of their
        values were read (seen; None: all). (A question comes at the write that makes the values:
        only the owners pending then are looked for.)"""
        rec = self._making
        if rec is None or not rec.pending:
            return
        if seen is not None:
            if not _any(seen):
                return
            own = own[seen]
        pending = rec.pending
        lo, hi = bisect_left(pending, int(_min(own))), bisect_right(pending, int(_max(own)))
        if lo == hi:
            return
        found = _set(own).intersection(pending[lo:hi]) if hi - lo > 4 else [
            a for a in pending[lo:hi] if _any(own == a)]
        for a in found:
            pending.remove(a)
            rec.read.add(a)

    def _record(self, p, own, seen, lost, me, victims, others):
        """An exact write of piece p by `me` on its cells (own, seen, lost: changed in place)."""
        base = self.base
        self._note_read(own, seen)
        dead = None                             # unread values of this run's instructions, changed
        if not _all(seen):
            dead = ~seen
            dead &= own >= base
            dead &= own != me
            if _any(dead):
                dead &= self._changed_now(p, dead)
                rec = self._making
                if self._ops is not None and me not in rec.read and me not in rec.pending:    # (a question kept)
                    insort(rec.pending, me)
        if dead is not None and _any(dead):
            victims.update(_set(own[dead]))
            others.update(_set(own))
            lost[...] = np.where((own >= base) & (own != me), own, 0)
            self.map.lost_rows[p.rows] = True
            self._lost = True
        elif self._lost:
            lost[...] = 0
        own[...] = me
        seen[...] = False

    def _changed(self, p, cells):
        """Per cell of a piece (rows x lanes), whether the write changed any of its bytes (Lmem.data
        against prev), computed over the rows and lanes where `cells` holds."""
        bp = self.map.bp
        if p.now.size <= SMALL_PIECE:       # a piece of up to 64 KiB: all its bytes at once (less than finding
            # the rows and lanes of the cells below, and than the gaps between its runs)
            at = bp[p.ids] - bp[p.ids[0]] if p.now.ndim == 2 else self._segment_starts(p)
            if at is not None:
                now, was = p.now, p.prev
                word = _word(0, now.shape[-1], 8, at)       # a word at a time where its runs and cuts allow
                if word > 1:
                    now, was, at = now.view(f"u{word}"), was.view(f"u{word}"), at // word
                diff = (now != was).reshape(p.b - p.a, -1)
                if len(at) == 1:
                    return diff.any(axis=1)[None]
                if len(at) == diff.shape[1]:                # a word a segment (a run a row: Yuv2rgb's 4 bytes)
                    return diff.T
                return np.logical_or.reduceat(diff, at, axis=1).T
        return self._compared(p, cells)[0]

    def _box(self, p, cells):
        """How _compared compares a piece's cells: the box of them (its rows with a cell, its lanes
        [l0, l1) with one), as (rws, l0, l1, the box's first lane and offset in lmem (la, lo), the
        cuts of the rows' bytes [start, end) along a lane (the odd ones span the gaps between
        rows), the word they are compared in (8, 4, 2 or 1 bytes: the widest every cut allows),
        and the box's views of Lmem.data and prev (lanes x words)), cuts counted in words."""
        lane, bp = self.lmem.lane_size, self.map.bp
        rws, lns = np.flatnonzero(cells.any(axis=1)), np.flatnonzero(cells.any(axis=0))
        l0, l1 = int(lns[0]), int(lns[-1]) + 1
        ids = p.ids[rws]
        lo = int(bp[ids[0]])
        la, lb = p.a + l0, p.a + l1
        hi = int(bp[ids[-1] + 1])
        cuts = np.stack([bp[ids], bp[ids + 1]], 1).ravel()[:-1] - lo
        now, was = self.lmem.data.reshape(-1, lane)[la:lb, lo:hi], self.prev.reshape(-1, lane)[la:lb, lo:hi]
        word = _word(lo, hi, lane, cuts)
        if word > 1:
            now, was, cuts = now.view(f"u{word}"), was.view(f"u{word}"), cuts // word
        return rws, l0, l1, la, lo, cuts, word, now, was

    def _compared(self, p, cells, box=None):
        """_changed over the box of a piece's cells (_box, or `box`, made for them before), and
        how: out, rws, l0, la, lo, cuts, word (_box) and diff (lanes x words: Lmem.data against
        prev)."""
        rws, l0, l1, la, lo, cuts, word, now, was = self._box(p, cells) if box is None else box
        diff = now != was
        out = np.zeros(cells.shape, bool)
        out[rws, l0:l1] = np.logical_or.reduceat(diff, cuts, axis=1)[:, ::2].T
        return out, rws, l0, la, lo, cuts, word, diff

    def _changed_seen(self, p, cells):
        """_changed & cells, and its witnesses: None, or (the lmem address of a byte the write
        changed in each of some cells where it holds, in address order; those cells), for a
        replay of the run to ask first (_again). A cell's witness is its first, last or middle
        word where that one changed (read off the compare that answers; a cell none of those
        shows changed has none, and is compared on each replay)."""
        got, rws, l0, la, lo, cuts, word, diff = self._compared(p, cells)
        got &= cells
        k, j = np.nonzero(got[rws, l0:l0 + diff.shape[0]])          # (rows among rws, lanes of the box)
        if not len(k):
            return got, None
        start, end = cuts[::2][k], np.append(cuts[1::2], diff.shape[1])[k]
        at = np.full(len(k), -1)
        for w in (start, end - 1, (start + end) // 2):
            hit = (at < 0) & diff[j, w]
            at[hit] = w[hit]
        k, j, at = k[at >= 0], j[at >= 0], at[at >= 0]
        if not len(k):
            return got, None
        shown = np.zeros(cells.shape, bool)
        shown[rws[k], l0 + j] = True
        at = ((la + j) * self.lmem.lane_size + lo + at * word)[:, None] + np.arange(word)    # the words' bytes
        at = np.sort(at[np.arange(len(at)), np.argmax(self.lmem.data[at] != self.prev[at], axis=1)])
        return got, (at.astype(np.int32) if self.lmem.size <= 1 << 31 else at, shown)    # (kept: 4 bytes a cell)

    def _segment_starts(self, p):
        """Where each segment of a piece of several runs starts among a lane's bytes of its views
        (p.now, p.prev: the same on every lane), for the map's version; None when its views do
        not hold the bytes in offset order (runs that overlap)."""
        if p.order is not None and p.order[0] == p.version:
            return p.order[1]
        offsets = np.array(p.first, np.int64)
        for d, st in zip(p.now.shape[1:], p.now.strides[1:]):
            offsets = (offsets[..., None] + np.arange(d, dtype=np.int64) * st)
        offsets = offsets.ravel()
        at = np.searchsorted(offsets, self.map.bp[p.ids]) if (np.diff(offsets) > 0).all() else None
        p.order = (p.version, at)
        return at

    def _write_bytes(self, p, me, victims, others):
        """An imprecise write (one run on each lane): it takes only the bytes it changed or that
        nothing had written, so its state is worked out byte by byte, then painted back."""
        m, lane, base = self.map, self.lmem.lane_size, self.base
        if self._making is not None:        # its outcome depends on every byte it changed: not replayed
            self._making.whole = False
        lo, hi = int(p.starts[0]), int(p.ends[0])
        lengths = np.diff(m.bp[p.ids[0]:p.ids[-1] + 2])
        own, seen, lost = (np.repeat(arr[p.rows, p.a:p.b], lengths, axis=0) for arr in m.states())
        now = self.lmem.data.reshape(-1, lane)[p.a:p.b, lo:hi].T      # offsets x lanes, like the state
        prev = self.prev.reshape(-1, lane)[p.a:p.b, lo:hi].T
        mine = (now != prev) | (own == 0)
        dead, dead_write = None, False
        if not seen.all():
            dead = (~seen) & (own >= base) & (own != me)
            if dead.any():
                dead &= now != prev
        if dead is not None and dead.any():
            victims.update(_distinct(own[dead]))
            others.update(_distinct(own[mine]))
            took = np.where((own >= base) & (own != me), own, 0)
            lost[mine] = took[mine]
            self._lost = True
            dead_write = True
        elif self._lost:
            lost[mine] = 0
        own[mine] = me
        seen[mine] = False
        prev[mine] = now[mine]
        # segments where the bytes' state changes along the run, then one value per segment
        edge = np.flatnonzero(((own[1:] != own[:-1]) | (seen[1:] != seen[:-1]) | (lost[1:] != lost[:-1])).any(axis=1))
        m.split(np.concatenate([[lo, hi], lo + 1 + edge]).astype(np.int64))
        rows, ids = m.rows(p.starts, p.ends)
        at = m.bp[ids] - lo
        m.owner[rows, p.a:p.b], m.seen[rows, p.a:p.b], m.lost[rows, p.a:p.b] = own[at], seen[at], lost[at]
        if dead_write:
            m.lost_rows[rows] = True
