"""Ordering between engines: serial, parallel groups, streams, explicit dependencies.

The shape of cvikernel's conductor (see isa-facts/bm1880-notes.md, "Sync ids"):
- every descriptor is added in emission order; it gets "follower" links from the last
  descriptor of each engine that the current mode says it must follow;
- a link between descriptors of the same engine is dropped (engine order is implicit),
  and per (before, other engine) only the earliest follower is kept;
- at acquisition each descriptor gets ++counter of its engine as its id (first id 1), ids
  are written into its followers' wait fields (last writer wins), and an engine marked
  `inherit_wait` keeps waiting for the previous descriptor's id when it has no wait of its
  own. Ids are as wide as each engine's own-id field: a descriptor that takes its engine's
  largest id (`max_id`, from the spec) ends a chunk, counters restart and links across
  chunks are dropped.
The three modes differ only in where the "last descriptor per engine" comes from.

Recording is cheap and small: one byte per descriptor (its engine's code), one entry per mode
change and per explicit link. The links a mode implies are derived at acquisition, with numpy,
from the engine sequence and the mode segments (`links`); `assign` then runs three passes:
`number` (ids and chunks), `write_waits` (kept links -> wait ids) and `inherit_waits` (the
TDMA rule).
"""
import enum

import numpy as np

from bmk.errors import ScheduleError, must
from bmk.util import is_int

# Only for a bare Scheduler (tests, tools without a spec); a Program passes the id widths of
# its chip's spec to `assign`.
DEFAULT_MAX_ID = 0xFFFF


class Mode(enum.Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    STREAMS = "streams"


SERIAL, PARALLEL, STREAMS = Mode.SERIAL, Mode.PARALLEL, Mode.STREAMS


class Scheduler:
    """Follower links between descriptors, and the sync ids they turn into."""

    def __init__(self, engines=()):
        self.names = list(engines)                       # engine code -> name
        self.code = {name: i for i, name in enumerate(self.names)}
        self.codes = bytearray()                         # descriptor index -> engine code
        self.segments = [(0, SERIAL, None)]              # (first descriptor, mode, where sources come from)
        self.explicit = []                               # (descriptors at the time, before, after)
        self.mode = SERIAL
        self.epochs = []                                 # per create_streams: {code: last index} then
        self.nr_streams = 0
        self.current = 0
        self._last_seen = (0, {})                        # (descriptors searched, {code: last index})

    def __len__(self):
        return len(self.codes)

    def _code(self, engine):
        c = self.code.get(engine)
        if c is None:
            if len(self.names) > 255:
                raise ScheduleError(f"too many engines: {engine!r} would be the 257th")
            c = self.code[engine] = len(self.names)
            self.names.append(engine)
        return c

    @property
    def engine_of(self):
        """Descriptor index -> engine name."""
        names = self.names
        return [names[c] for c in self.codes]

    def _last_codes(self):
        """{code: last index}: only the descriptors added since the previous call are searched."""
        codes, (seen, last) = self.codes, self._last_seen
        for c in range(len(self.names)):
            i = codes.rfind(c, seen)
            if i >= 0:
                last[c] = i
        self._last_seen = (len(codes), last)
        return dict(last)

    @property
    def last(self):
        """Engine -> its last descriptor (all modes, all streams)."""
        return {self.names[c]: i for c, i in self._last_codes().items()}

    def _segment(self, source):
        start = len(self.codes)
        if self.segments[-1][0] == start:
            self.segments.pop()
        self.segments.append((start, self.mode, source))

    # -- modes ---------------------------------------------------------------------------
    def parallel_enable(self, call="parallel_enable"):
        """Open a parallel group. The seed (002 ch. 3) defines groups only from serial order, so
        a group inside a group or inside streams is an error, not something to guess at."""
        if self.mode is not SERIAL:
            raise ScheduleError(f"{call}: a parallel group opens only in serial mode, not in {self.mode.value} mode "
                                f"({'groups do not nest' if self.mode is PARALLEL else 'destroy_streams first'})")
        self.mode = PARALLEL
        self._segment(self._last_codes())

    def parallel_disable(self, call="parallel_disable"):
        """Close the open parallel group; without one, an error."""
        if self.mode is not PARALLEL:
            opener = "parallel_start" if call == "parallel_end" else "parallel_enable"
            raise ScheduleError(f"{call}: no parallel group is open (mode is {self.mode.value}): "
                                f"call {opener} first")
        self.mode = SERIAL
        self._segment(None)

    def check_create_streams(self, call, nr_streams):
        if not is_int(nr_streams) or nr_streams < 1:
            raise ScheduleError(must(call, "nr_streams", "an integer >= 1", nr_streams))
        if self.mode is not SERIAL:
            raise ScheduleError(f"{call}: streams can be created only in serial mode, not in {self.mode.value} mode")

    def create_streams(self, nr_streams):
        self.check_create_streams("create_streams", nr_streams)
        self.mode, self.current, self.nr_streams = STREAMS, 0, int(nr_streams)
        self.epochs.append(self._last_codes())
        self._segment((len(self.epochs) - 1, 0))

    def set_stream(self, i):
        if self.mode is not STREAMS:
            raise ScheduleError("set_stream: streams must be created first (create_streams), not in "
                                f"{self.mode.value} mode")
        if not is_int(i) or not 0 <= i < self.nr_streams:
            raise ScheduleError(must("set_stream", "i", f"a stream index in [0, {self.nr_streams - 1}]", i))
        self.current = int(i)
        self._segment((len(self.epochs) - 1, self.current))

    def destroy_streams(self):
        if self.mode is not STREAMS:
            raise ScheduleError(f"destroy_streams: no streams to destroy (mode is {self.mode.value})")
        self.mode, self.nr_streams, self.current = SERIAL, 0, 0
        self._segment(None)

    # -- descriptors ---------------------------------------------------------------------
    def add(self, engine):
        """Record a new descriptor on `engine`, linked as the mode says; return its index."""
        self.codes.append(self._code(engine))
        return len(self.codes) - 1

    def extend(self, codes):
        """Record descriptors given as engine codes (bytes; `code` maps names to codes)."""
        self.codes += codes

    def link(self, before, after):
        codes = self.codes
        if codes[before] != codes[after]:
            self.explicit.append((len(codes), before, after))

    def fork(self):
        """A serial-mode copy that shares nothing mutable with this one: descriptors added to it
        (a chip's end commands, at acquisition) leave this scheduler as it was."""
        s = Scheduler(self.names)
        s.codes = bytearray(self.codes)
        s.segments = list(self.segments)
        s.explicit = list(self.explicit)
        s.epochs = list(self.epochs)
        s._last_seen = (self._last_seen[0], dict(self._last_seen[1]))
        s._segment(None)
        return s

    @property
    def followers(self):
        """{before: {engine: follower}}: the kept links (the first made per before and engine)."""
        before, after, _ = self.links()
        out = {}
        for b, a in zip(before.tolist(), after.tolist()):
            out.setdefault(b, {})[self.names[self.codes[a]]] = a
        return out

    def links(self):
        """(before, after) arrays of the kept links."""
        return links(np.frombuffer(bytes(self.codes), np.uint8), len(self.names), self.segments,
                     self.epochs, self.explicit)

    def assign_arrays(self, inherit_wait=(), max_id=DEFAULT_MAX_ID):
        """(codes, own, waits) as arrays: own[i] is descriptor i's id; waits[e][i] the id it waits
        for on engine code e (0: none)."""
        codes = np.frombuffer(bytes(self.codes), np.uint8)
        limits = [max_id.get(name, DEFAULT_MAX_ID) if isinstance(max_id, dict) else max_id for name in self.names]
        own, chunk = number(codes, limits)
        before, after, single = links(codes, len(self.names), self.segments, self.epochs, self.explicit)
        waits = write_waits(codes, len(self.names), before, after, own, chunk, single)
        inherit_waits(codes, waits, chunk, [self.code[e] for e in inherit_wait if e in self.code])
        return codes, own, waits

    def assign(self, inherit_wait=(), max_id=DEFAULT_MAX_ID):
        """Sync ids of every descriptor, in emission order (see the module docstring).

        `max_id` is the largest id of every engine, or {engine: largest id}. Returns (own,
        waits): own[i] is descriptor i's id on its engine; waits[i] is None or {other engine:
        id waited for}."""
        codes, own, waits = self.assign_arrays(inherit_wait, max_id)
        out = [None] * len(codes)
        for e, column in enumerate(waits):
            for i in np.flatnonzero(column).tolist():
                if out[i] is None:
                    out[i] = {}
                out[i][self.names[e]] = int(column[i])
        return own.tolist(), out


# -- the passes of `assign` ------------------------------------------------------------------------
def _index_type(n):
    """Descriptor indices and ids fit 32 bits below 2**31 descriptors: half the memory."""
    return np.int32 if n < 2 ** 31 else np.int64


def _previous(mask):
    """For each position, the last earlier position where mask holds (-1: none)."""
    index = _index_type(len(mask))
    idx = np.where(mask, np.arange(len(mask), dtype=index), index(-1))
    prev = np.empty(len(mask), index)
    prev[:1] = -1
    np.maximum.accumulate(idx[:-1], out=prev[1:])
    return prev


def number(codes, limits):
    """Each descriptor's own id (++counter of its engine, first id 1) and its chunk number: a
    descriptor that takes its engine's largest id (`limits[code]`) ends a chunk, and every
    counter restarts after it."""
    n = len(codes)
    index = _index_type(n)
    own = np.zeros(n, index)
    chunk = np.zeros(n, index)
    bounded = all(limit > 0 for limit in limits)
    start, k = 0, 0
    while start < n:
        # some engine reaches its largest id within sum(limits) descriptors (pigeonhole)
        stop = min(n, start + sum(limits)) if bounded else n
        seg = codes[start:stop]
        ids = np.zeros(len(seg), index)
        end = len(seg)
        for e, limit in enumerate(limits):
            mask = seg == e
            counts = np.cumsum(mask, dtype=index)
            ids[mask] = counts[mask]
            if limit > 0:
                hit = np.flatnonzero(mask & (counts == limit))
                if len(hit):
                    end = min(end, int(hit[0]) + 1)
        own[start:start + end] = ids[:end]
        chunk[start:start + end] = k
        start, k = start + end, k + 1
    return own, chunk


def links(codes, n_engines, segments, epochs, explicit):
    """The kept follower links (before, after, single), derived from the mode segments and the
    explicit links; `single`: no descriptor has two links from one engine.

    A descriptor i on engine E added in a segment gets, for each other engine F, a link from the
    mode's source for F: serial, the last F descriptor before i; parallel, the last F descriptor
    when the group opened; streams, the last F descriptor of i's stream (or, before it has
    one, the last when the streams were created). Links are made in time order (those of a
    descriptor when it is added, an explicit one when add_dependency runs); per (before, engine of
    after) the first made is kept."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), True
    prev = [_previous(codes == f) for f in range(n_engines)]
    bounds = [s[0] for s in segments[1:]] + [n]
    if not explicit and all(mode is SERIAL for _, mode, _ in segments):
        return _serial_links(codes, n_engines, prev)
    sources = [p.copy() for p in prev]
    tag = np.full(n, -1, np.int64)              # streams mode: which (epoch, stream) added it
    tags = {}
    for (start, mode, source), stop in zip(segments, bounds):
        if start >= stop or mode is SERIAL:
            continue
        if mode is PARALLEL:
            for f in range(n_engines):
                sources[f][start:stop] = source.get(f, -1)
        else:
            tag[start:stop] = tags.setdefault(source, len(tags))
    for (epoch, _), g in tags.items():
        mine = tag == g
        for f in range(n_engines):
            p = _previous(mine & (codes == f))[mine]
            sources[f][mine] = np.where(p >= 0, p, epochs[epoch].get(f, -1))
    arange = np.arange(n)
    befores, afters, times = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for f in range(n_engines):
        take = (sources[f] >= 0) & (codes != f)
        afters.append(arange[take])
        befores.append(sources[f][take])
        times.append(2 * arange[take] + 1)       # made while `after` is added
    if explicit:
        t, b, a = np.array(explicit, np.int64).T
        befores.append(b), afters.append(a), times.append(2 * t)   # made once t descriptors exist
    before, after, time = np.concatenate(befores), np.concatenate(afters), np.concatenate(times)
    order = np.argsort(time, kind="stable")
    before, after = before[order], after[order]
    group = before * n_engines + codes[after]
    _, first = np.unique(group, return_index=True)       # first made per (before, engine of after)
    return before[first], after[first], False


def _serial_links(codes, n_engines, prev):
    """`links` when every descriptor was added in serial mode and no link was added by hand: a
    descriptor's link from the last F descriptor is kept when it is the first on its engine
    after that one (sources only grow, so first = where the source changes)."""
    befores, afters = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for f in range(n_engines):
        for e in range(n_engines):
            if e == f:
                continue
            idx = np.flatnonzero(codes == e)
            b = prev[f][idx]
            keep = b >= 0
            keep[1:] &= b[1:] != b[:-1]
            befores.append(b[keep]), afters.append(idx[keep])
    return np.concatenate(befores), np.concatenate(afters), True


def write_waits(codes, n_engines, before, after, own, chunk, single=False):
    """waits[F][i]: the id of the latest F descriptor linked to i within i's chunk (0: none).
    `single`: each descriptor has at most one link from each engine (no latest to pick)."""
    n = len(codes)
    same = chunk[before] == chunk[after]
    before, after = before[same], after[same]
    waits = []
    for f in range(n_engines):
        mine = codes[before] == f
        latest = np.full(n, -1, _index_type(n))
        if single:
            latest[after[mine]] = before[mine]
        else:
            np.maximum.at(latest, after[mine], before[mine])
        waits.append(np.where(latest >= 0, own[latest], 0))
    return waits


def inherit_waits(codes, waits, chunk, engines):
    """On each engine of `engines`, a descriptor without a wait on some other engine keeps
    waiting for what the previous descriptor of its engine (same chunk) waited for."""
    for e in engines:
        at = np.flatnonzero(codes == e)
        if not len(at):
            continue
        for f, column in enumerate(waits):
            if f == e:
                continue
            v = column[at]
            src = np.maximum.accumulate(np.where(v > 0, np.arange(len(at)), -1))
            ok = (src >= 0) & (chunk[at[np.maximum(src, 0)]] == chunk[at])
            column[at] = np.where(ok, v[np.maximum(src, 0)], 0)
