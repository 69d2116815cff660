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
`assign` runs three named passes: `number` (ids and chunks), `write_waits` (follower links
-> wait fields) and `inherit_waits` (the TDMA rule).
"""
import enum

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

    def __init__(self):
        self.engine_of = []        # descriptor index -> engine name
        self.followers = {}        # descriptor index -> {engine: follower index}
        self.mode = Mode.SERIAL
        self.last = {}             # engine -> last descriptor index (all streams)
        self.snapshot = None       # parallel mode: `last` when the group opened
        self.streams = None        # stream mode: one {engine: index} tracker per stream
        self.current = 0

    def __len__(self):
        return len(self.engine_of)

    # -- modes ---------------------------------------------------------------------------
    def parallel_enable(self, call="parallel_enable"):
        """Open a parallel group. The seed (002 ch. 3) defines groups only from serial order, so
        a group inside a group or inside streams is an error, not something to guess at."""
        if self.mode is not Mode.SERIAL:
            raise ScheduleError(f"{call}: a parallel group opens only in serial mode, not in {self.mode.value} mode "
                                f"({'groups do not nest' if self.mode is PARALLEL else 'destroy_streams first'})")
        self.mode, self.snapshot = Mode.PARALLEL, dict(self.last)

    def parallel_disable(self, call="parallel_disable"):
        """Close the open parallel group; without one, an error."""
        if self.mode is not Mode.PARALLEL:
            raise ScheduleError(f"{call}: no parallel group is open (mode is {self.mode.value}): "
                                "call parallel_enable first")
        self.mode, self.snapshot = Mode.SERIAL, None

    def check_create_streams(self, call, nr_streams):
        if not is_int(nr_streams) or nr_streams < 1:
            raise ScheduleError(must(call, "nr_streams", "an integer >= 1", nr_streams))
        if self.mode is not Mode.SERIAL:
            raise ScheduleError(f"{call}: streams can be created only in serial mode, not in {self.mode.value} mode")

    def create_streams(self, nr_streams):
        self.check_create_streams("create_streams", nr_streams)
        self.mode, self.current = Mode.STREAMS, 0
        self.streams = [dict(self.last) for _ in range(nr_streams)]

    def set_stream(self, i):
        if self.mode is not Mode.STREAMS:
            raise ScheduleError("set_stream: streams must be created first (create_streams), not in "
                                f"{self.mode.value} mode")
        if not is_int(i) or not 0 <= i < len(self.streams):
            raise ScheduleError(must("set_stream", "i", f"a stream index in [0, {len(self.streams) - 1}]", i))
        self.current = i

    def destroy_streams(self):
        if self.mode is not Mode.STREAMS:
            raise ScheduleError(f"destroy_streams: no streams to destroy (mode is {self.mode.value})")
        self.mode, self.streams, self.current = Mode.SERIAL, None, 0

    # -- descriptors ---------------------------------------------------------------------
    def add(self, engine):
        """Record a new descriptor on `engine`, linked as the mode says; return its index."""
        engine_of, followers, mode = self.engine_of, self.followers, self.mode
        index = len(engine_of)
        engine_of.append(engine)
        sources = self.last if mode is SERIAL else (
            self.snapshot if mode is PARALLEL else self.streams[self.current])
        for before in sources.values():      # link(before, index), inlined: this is the hot path
            if engine_of[before] != engine:
                f = followers.get(before)
                if f is None:
                    followers[before] = {engine: index}
                elif engine not in f:
                    f[engine] = index
        if mode is STREAMS:
            sources[engine] = index
        self.last[engine] = index
        return index

    def link(self, before, after):
        engine = self.engine_of[after]
        if self.engine_of[before] == engine:
            return
        followers = self.followers.get(before)
        if followers is None:
            self.followers[before] = {engine: after}
        elif engine not in followers:
            followers[engine] = after

    def fork(self):
        """A serial-mode copy that shares nothing mutable with this one: descriptors added to it
        (a chip's end commands, at acquisition) leave this scheduler as it was."""
        s = Scheduler()
        s.engine_of = list(self.engine_of)
        s.followers = {before: dict(f) for before, f in self.followers.items()}
        s.last = dict(self.last)
        return s

    def assign(self, inherit_wait=(), max_id=DEFAULT_MAX_ID):
        """Sync ids of every descriptor, in emission order (see the module docstring).

        `max_id` is the largest id of every engine, or {engine: largest id}. Returns (own,
        waits): own[i] is descriptor i's id on its engine; waits[i] is None or {other engine:
        id waited for}."""
        own, chunks = number(self.engine_of, max_id)
        waits = write_waits(self.engine_of, self.followers, own, chunks)
        inherit_waits(self.engine_of, waits, chunks, inherit_wait)
        return own, waits


# -- the passes of `assign` ------------------------------------------------------------------------
def number(engine_of, max_id):
    """Each descriptor's own id (++counter of its engine, first id 1), and the chunks
    [(lo, hi), ...]: a descriptor that takes its engine's largest id ends a chunk, and every
    counter restarts after it."""
    n = len(engine_of)
    own = [0] * n
    counters = {}
    chunks, start = [], 0
    limits = max_id if isinstance(max_id, dict) else None
    if limits is not None and len(set(limits.values())) == 1:
        max_id, limits = next(iter(limits.values())), None      # one width: the fast loop
    if limits is None:
        for i, engine in enumerate(engine_of):
            counters[engine] = own[i] = counters.get(engine, 0) + 1
            if own[i] == max_id:
                chunks.append((start, i + 1))
                start, counters = i + 1, {}
    else:
        for i, engine in enumerate(engine_of):
            counters[engine] = own[i] = counters.get(engine, 0) + 1
            if own[i] == limits[engine]:
                chunks.append((start, i + 1))
                start, counters = i + 1, {}
    if start < n:
        chunks.append((start, n))
    return own, chunks


def write_waits(engine_of, followers, own, chunks):
    """Each follower link within a chunk writes its source's id into the follower's wait for the
    source's engine (processed in emission order: the latest source wins)."""
    waits = [None] * len(engine_of)
    get = followers.get
    for lo, hi in chunks:
        for d in range(lo, hi):
            fs = get(d)
            if fs:
                for f in fs.values():
                    if f < hi:
                        if waits[f] is None:
                            waits[f] = {}
                        waits[f][engine_of[d]] = own[d]
    return waits


def inherit_waits(engine_of, waits, chunks, engines):
    """On each engine of `engines`, a descriptor without a wait on some other engine keeps
    waiting for what the previous descriptor of its engine waited for (cvikernel's TDMA rule)."""
    for lo, hi in chunks:
        for engine in engines:
            prev = {}
            for d in range(lo, hi):
                if engine_of[d] != engine:
                    continue
                w = waits[d]
                if prev:
                    if w is None:
                        w = waits[d] = {}
                    for other, value in prev.items():
                        if not w.get(other):
                            w[other] = value
                prev = w or prev
