"""The numpy scheduler against the eager, one-descriptor-at-a-time conductor it replaced.

`Eager` below is that conductor, kept as the reference: links are made as descriptors are added
(serial: from the last descriptor of every engine; parallel: from the snapshot taken when the
group opened; streams: from the stream's own tracker), the first link per (before, engine) is
kept, ids are numbered per engine with chunks at the largest id, waits are written in order
(latest wins) and inherited on `inherit_wait` engines. Random programs of every mode must give
the same ids and waits."""
from hypothesis import given, settings
from hypothesis import strategies as st

from bmk.scheduler import Scheduler


class Eager:
    def __init__(self):
        self.engine_of, self.followers, self.last = [], {}, {}
        self.mode, self.snapshot, self.streams, self.current = "serial", None, None, 0

    def parallel_enable(self):
        if self.mode == "serial":
            self.mode, self.snapshot = "parallel", dict(self.last)

    def parallel_disable(self):
        if self.mode == "parallel":
            self.mode, self.snapshot = "serial", None

    def create_streams(self, n):
        if self.mode == "serial":
            self.mode, self.current, self.streams = "streams", 0, [dict(self.last) for _ in range(n)]

    def set_stream(self, i):
        if self.mode == "streams" and i < len(self.streams):
            self.current = i

    def destroy_streams(self):
        if self.mode == "streams":
            self.mode, self.streams, self.current = "serial", None, 0

    def add(self, engine):
        index = len(self.engine_of)
        self.engine_of.append(engine)
        sources = {"serial": self.last, "parallel": self.snapshot}.get(self.mode) or (
            self.streams[self.current] if self.mode == "streams" else {})
        for before in list(sources.values()):
            self.link(before, index)
        if self.mode == "streams":
            sources[engine] = index
        self.last[engine] = index

    def link(self, before, after):
        engine = self.engine_of[after]
        if self.engine_of[before] != engine:
            self.followers.setdefault(before, {}).setdefault(engine, after)

    def assign(self, inherit, max_id):
        n = len(self.engine_of)
        own, counters, chunks, start = [0] * n, {}, [], 0
        for i, e in enumerate(self.engine_of):
            counters[e] = own[i] = counters.get(e, 0) + 1
            if own[i] == max_id[e]:
                chunks.append((start, i + 1))
                start, counters = i + 1, {}
        if start < n:
            chunks.append((start, n))
        waits = [None] * n
        for lo, hi in chunks:
            for d in range(lo, hi):
                for f in self.followers.get(d, {}).values():
                    if f < hi:
                        waits[f] = waits[f] or {}
                        waits[f][self.engine_of[d]] = own[d]
        for lo, hi in chunks:
            for engine in inherit:
                prev = {}
                for d in range(lo, hi):
                    if self.engine_of[d] != engine:
                        continue
                    w = waits[d]
                    if prev:
                        if w is None:
                            w = waits[d] = {}
                        for other, value in prev.items():
                            if not w.get(other):
                                w[other] = value
                    prev = w or prev
        return own, waits


ENGINES = "ABC"
step = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(ENGINES)),
    st.tuples(st.just("add"), st.sampled_from(ENGINES)),
    st.tuples(st.just("add"), st.sampled_from(ENGINES)),
    st.tuples(st.just("parallel_enable")), st.tuples(st.just("parallel_disable")),
    st.tuples(st.just("create_streams"), st.integers(1, 3)), st.tuples(st.just("set_stream"), st.integers(0, 2)),
    st.tuples(st.just("destroy_streams")),
    st.tuples(st.just("link"), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)),
)


def run(program, sched, eager):
    for op, *args in program:
        if op == "link":
            n = len(eager.engine_of)
            if n < 2:
                continue
            before, after = sorted((args[0] % n, args[1] % n))
            if before == after:
                continue
            sched.link(before, after), eager.link(before, after)
        elif op == "set_stream":
            if eager.mode == "streams" and args[0] < len(eager.streams):
                sched.set_stream(*args), eager.set_stream(*args)
        elif op in ("create_streams", "destroy_streams", "parallel_enable", "parallel_disable"):
            # each only from the mode it leaves (the others raise ScheduleError)
            if eager.mode == {"create_streams": "serial", "parallel_enable": "serial",
                              "destroy_streams": "streams", "parallel_disable": "parallel"}[op]:
                getattr(sched, op)(*args), getattr(eager, op)(*args)
        else:
            getattr(sched, op)(*args), getattr(eager, op)(*args)


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=60), st.dictionaries(st.sampled_from(ENGINES), st.integers(1, 6)),
       st.lists(st.sampled_from(ENGINES), max_size=2, unique=True))
def test_same_ids_and_waits_as_the_eager_conductor(program, widths, inherit):
    sched, eager = Scheduler(), Eager()
    run(program, sched, eager)
    max_id = {e: widths.get(e, 0xFFFF) for e in ENGINES}
    own, waits = sched.assign(inherit, max_id)
    ref_own, ref_waits = eager.assign(inherit, max_id)
    assert own == ref_own
    assert [w or None for w in waits] == [w or None for w in ref_waits]
    assert sched.followers == {b: f for b, f in eager.followers.items() if f}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(ENGINES), max_size=40), st.lists(step, max_size=30))
def test_fork_adds_serially_and_leaves_the_original(first, then):
    sched, eager = Scheduler(), Eager()
    run([("add", e) for e in first] + then, sched, eager)
    before = sched.assign()
    fork = sched.fork()
    eager.parallel_disable(), eager.destroy_streams()      # a fork is serial
    for e in "AB":
        fork.add(e), eager.add(e)
    assert sched.assign() == before
    own, waits = fork.assign()
    assert (own, [w or None for w in waits]) == eager.assign((), {e: 0xFFFF for e in ENGINES})


def test_a_link_by_hand_made_before_an_implied_one_is_the_one_kept():
    program = [("parallel_enable",), ("add", "A"), ("add", "B"), ("parallel_disable",), ("link", 0, 1),
               ("add", "B")]
    sched, eager = Scheduler(), Eager()
    run(program, sched, eager)
    assert sched.followers == eager.followers == {0: {"B": 1}}
    assert sched.assign()[1] == [None, {"A": 1}, None]
