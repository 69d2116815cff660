"""Sync-id tables: the worked examples of isa-facts/bm1880-notes.md, through the API."""
import pytest

from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8
from bmk.encoders import decode_cmdbuf
from bmk.errors import ScheduleError
from bmk.isa import load_chip
from bmk.scheduler import Scheduler

CHIP = load_chip("bm1880")


def ids(buf):
    """[(engine, own id, id waited for on the other engine)] of a command buffer."""
    out = []
    for r in decode_cmdbuf(CHIP, buf):
        if r.engine == "tiu":
            out.append(("tiu", r.fields["cmd_id_tpu"], r.fields["cmd_id_gdma"]))
        else:
            out.append(("tdma", r.fields["cmd_id"], r.fields["wait_id_tpu"]))
    return out


class Program:
    """The seed's section-3 program pieces: 16-bit a/b loaded as (2,C,H,W), 8-bit result."""

    def __init__(self):
        self.ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
        s1, s2 = bm1880.shape_t4(1, 32, 8, 8), bm1880.shape_t4(2, 32, 8, 8)
        self.t = {}
        for i, name in enumerate(["a0", "b0", "a1", "b1"]):
            la = 1024 * i
            self.t[name] = self.ctx.tl_prealloc(la, s2, FMT_I8)
            self.t[name + "_l"] = self.ctx.tl_prealloc(la, s1, FMT_I8)
            self.t[name + "_h"] = self.ctx.tl_prealloc(la + 64, s1, FMT_I8)
        for i, name in enumerate(["r0", "r1", "c0", "c1"]):
            self.t[name] = self.ctx.tl_prealloc(4096 + 1024 * i, s1, FMT_I8)

    def load(self, name):
        return self.ctx.gdma_load(self.t[name], 0x10000, CTRL_NULL)

    def store(self, name):
        return self.ctx.gdma_store(self.t[name], 0x30000, CTRL_NULL)

    def add(self, r, a, b):
        t = self.t
        return self.ctx.tpu_add(res_high=None, res_low=t[r], a_high=t[a + "_h"], a_low=t[a + "_l"],
                                b_high=t[b + "_h"], b_low=t[b + "_l"])


def test_serial_load_load_add_store():
    p = Program()
    p.load("a0"), p.load("b0"), p.add("r0", "a0", "b0"), p.store("r0")
    assert ids(p.ctx.acquire_cmdbuf()) == [("tdma", 1, 0), ("tdma", 2, 0), ("tiu", 1, 2), ("tdma", 3, 1)]


def test_parallel_seed_example():
    p = Program()
    p.load("a0"), p.load("b0")
    with p.ctx.parallel():
        p.add("r0", "a0", "b0"), p.load("a1"), p.load("b1")
    p.ctx.parallel_enable()
    p.store("r0"), p.add("r1", "a1", "b1")
    p.ctx.parallel_disable()
    p.store("r1")
    assert ids(p.ctx.acquire_cmdbuf()) == [
        ("tdma", 1, 0), ("tdma", 2, 0), ("tiu", 1, 2), ("tdma", 3, 0), ("tdma", 4, 0),
        ("tdma", 5, 1), ("tiu", 2, 4), ("tdma", 6, 2)]


def test_two_streams_seed_example():
    p = Program()
    p.ctx.create_streams(2)
    p.ctx.set_stream(0)
    p.load("a0"), p.load("b0"), p.add("c0", "a0", "b0"), p.store("c0")
    p.ctx.set_stream(1)
    p.load("a1"), p.load("b1"), p.add("c1", "a1", "b1"), p.store("c1")
    p.ctx.destroy_streams()
    assert ids(p.ctx.acquire_cmdbuf()) == [
        ("tdma", 1, 0), ("tdma", 2, 0), ("tiu", 1, 2), ("tdma", 3, 1), ("tdma", 4, 1),
        ("tdma", 5, 1), ("tiu", 2, 5), ("tdma", 6, 2)]


def test_add_dependency_across_engines_and_same_engine():
    p = Program()
    p.ctx.parallel_enable()
    load = p.load("a0")
    add = p.add("r0", "a1", "b1")
    store = p.store("c0")
    assert ids(p.ctx.acquire_cmdbuf()) == [("tdma", 1, 0), ("tiu", 1, 0), ("tdma", 2, 0)]
    p.ctx.add_dependency(load, add)
    p.ctx.add_dependency(load, store)        # same engine: implicit, no effect
    assert ids(p.ctx.acquire_cmdbuf()) == [("tdma", 1, 0), ("tiu", 1, 1), ("tdma", 2, 0)]


@pytest.mark.parametrize("engines, links, expected", [
    # (engine sequence, extra links, [(own, waits)])
    ("AB", [], [(1, {}), (1, {})]),
    ("AB", [(0, 1)], [(1, {}), (1, {"A": 1})]),
    ("AAB", [(0, 2), (1, 2)], [(1, {}), (2, {}), (1, {"A": 2})]),     # latest predecessor wins
    ("ABB", [(0, 1), (0, 2)], [(1, {}), (1, {"A": 1}), (2, {})]),     # earliest follower kept
])
def test_scheduler_table(engines, links, expected):
    s = Scheduler()
    s.parallel_enable()
    for e in engines:
        s.add(e)
    for before, after in links:
        s.link(before, after)
    own, waits = s.assign()
    assert [(o, w or {}) for o, w in zip(own, waits)] == expected


def test_inherit_wait_rule():
    s = Scheduler()
    s.parallel_enable()
    for e in ["T", "D", "D", "T", "D"]:
        s.add(e)
    s.link(0, 1)
    own, waits = s.assign(inherit_wait=["D"])
    assert [w or {} for w in waits] == [{}, {"T": 1}, {"T": 1}, {}, {"T": 1}]


def test_id_wrap_chunks():
    s = Scheduler()
    for _ in range(0xFFFF + 2):
        s.add("T")
    own, waits = s.assign()
    assert own[0xFFFE] == 0xFFFF and own[0xFFFF] == 1 and own[0x10000] == 2


def test_stream_misuse():
    ctx = bm1880.register()
    with pytest.raises(ScheduleError, match=r"set_stream: streams must be created first"):
        ctx.set_stream(0)
    ctx.create_streams(2)
    with pytest.raises(ScheduleError, match=r"set_stream: i must be a stream index in \[0, 1\], not 2"):
        ctx.set_stream(2)
    with pytest.raises(ScheduleError, match=r"create_streams: streams can be created only in serial mode"):
        ctx.create_streams(2)
    ctx.destroy_streams()
    with pytest.raises(ScheduleError, match=r"destroy_streams: no streams to destroy"):
        ctx.destroy_streams()
    with pytest.raises(ScheduleError, match=r"create_streams: nr_streams must be an integer >= 1, not 0"):
        ctx.create_streams(0)


def test_id_wrap_per_engine():
    """Each engine wraps at its own largest id (its own-id field's width); any wrap ends the chunk."""
    s = Scheduler()
    for e in "AAABAB":
        s.add(e)
    s.link(0, 3)                      # A#1 -> B: crosses the chunk end at A#3, dropped
    s.link(3, 4)                      # B#1 -> A: both in the second chunk, kept
    own, waits = s.assign(max_id={"A": 3, "B": 0xFFFF})
    assert own == [1, 2, 3, 1, 1, 2]
    assert waits[3] is None and waits[4] == {"B": 1}


def test_fork_leaves_the_scheduler_unchanged():
    s = Scheduler()
    s.add("A"), s.add("B")
    before = (list(s.engine_of), {k: dict(v) for k, v in s.followers.items()}, dict(s.last))
    f = s.fork()
    f.add("A"), f.add("B")
    assert (s.engine_of, s.followers, s.last) == before
    assert f.assign()[1][2:] == [{"B": 1}, {"A": 2}]
