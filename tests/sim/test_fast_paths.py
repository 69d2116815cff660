"""The simulator's memos and vectorized bookkeeping give what the plain computations give."""
import attrs
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import bmk
from bmk.encoders import decode_cmdbuf
from bmk.errors import ArgumentError
from bmk.isa import load_chip
from bmk.sim.core import _intersection
from bmk.sim.memory import AccessLog, Gmem, Lmem
from bmk.sim.races import find_races
from tests.goldens import golden

CHIP = load_chip("bm1880")


def _intervals(draw_lengths):
    """Sorted, disjoint intervals from (gap, length) pairs."""
    out, t = [], 0
    for gap, length in draw_lengths:
        t += gap
        out.append((t, t + length))
        t += length
    return out


def _brute(xs, ys):
    a = {t for lo, hi in xs for t in range(lo, hi)}
    return len(a & {t for lo, hi in ys for t in range(lo, hi)})


pairs = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(pairs, pairs)
def test_intersection_is_the_common_length(a, b):
    xs, ys = _intervals(a), _intervals(b)
    assert _intersection(xs, ys) == _brute(xs, ys)


def test_kind_memo_agrees_with_first_match():
    """Format.instruction_of (memoized on the match fields) = the first instruction that matches."""
    fmt = CHIP.engine("tiu").format
    keys = sorted({k for ins in fmt.instructions for k, _ in ins.match})
    rng = np.random.default_rng(0)
    values = {k: sorted({v for ins in fmt.instructions for kk, v in ins.match if kk == k} | {0, 1}) for k in keys}
    for _ in range(2000):
        f = dict(fmt.defaults)
        f.update({k: int(rng.choice(values[k])) for k in keys})
        assert fmt.instruction_of(f) is next((i for i in fmt.instructions if i.matches(f)), None)
    partial = {keys[0]: 0}                  # fields left out read as 0: not memoized, still right
    assert fmt.instruction_of(partial) is next((i for i in fmt.instructions if i.matches(partial)), None)


def test_memoized_lmem_views_see_the_memory_and_log_each_use():
    mem = Lmem(32, 0x8000)
    log = AccessLog()
    a = mem.tensor("x", 0x10, (1, 40, 2, 2), (160, 4, 2, 1), log)
    b = mem.tensor("x", 0x10, (1, 40, 2, 2), (160, 4, 2, 1), log)
    assert a is b and len(log.entries) == 2 and log.entries[0] == log.entries[1]
    mem.data[:] = 7                         # the memoized view reads what is there now
    assert (a.read() == 7).all()
    a.write(np.arange(160, dtype=np.uint8).reshape(1, 40, 2, 2))
    assert mem.tensor("x", 0x10, (1, 40, 2, 2), (160, 4, 2, 1)).read().reshape(-1).tolist() == list(range(160))
    lst = mem.tensor("x", 0x10, [1, 40, 2, 2], [160, 4, 2, 1], log)      # lists: built, not memoized
    assert lst.read().reshape(-1).tolist() == list(range(160)) and len(log.entries) == 3


def test_memoized_gmem_views_follow_writes():
    mem = Gmem(1 << 30)
    v = mem.tensor("g", 0x100, (1, 1, 2, 4), (8, 8, 4, 1))
    mem.store(0x100, np.arange(8, dtype=np.uint8))
    assert mem.tensor("g", 0x100, (1, 1, 2, 4), (8, 8, 4, 1)) is v
    assert v.read().reshape(-1).tolist() == list(range(8))


def test_plans_shared_by_equal_instructions_give_the_plain_run():
    """A buffer run on a warm simulator (plans, views memoized) reports what a cold one does,
    and hand-made records (unhashable values, other key orders) run as decoded ones do."""
    buf = golden("sched_two_streams_seed_example")
    cold = bmk.Simulator("bm1880").run(buf).to_dict()
    warm = bmk.Simulator("bm1880")
    warm.run(buf)
    assert warm.run(buf).to_dict() == cold
    records = decode_cmdbuf(CHIP, buf)
    shuffled = [attrs.evolve(r, fields=dict(reversed(list(r.fields.items())))) for r in records]
    assert bmk.Simulator("bm1880").run(shuffled).to_dict() == cold
    odd = [attrs.evolve(r, fields={**r.fields, "unused_list": [1]}) for r in records[:1]]
    assert bmk.Simulator("bm1880").run(odd).instructions[0].kind == cold["instructions"][0]["kind"]


def test_races_window_search_matches_numpy():
    """find_races' bisect finds the window numpy.searchsorted found (known never decreases)."""
    acc = ((("lmem", 1, 0, 4, True, None),),) * 6
    known = [-1, -1, 0, 0, 2, 2]
    seq_a, seq_b = [0, 2, 4], [1, 3, 5]
    races, _ = find_races(seq_a, seq_b, known, acc, npu_num=32)
    expected = set()
    kb = np.array([known[i] for i in seq_b])
    for p, a in enumerate(seq_a):
        for q in range(known[a] + 1, int(np.searchsorted(kb, p))):
            expected.add((min(a, seq_b[q]), max(a, seq_b[q])))
    assert {(r.first, r.second) for r in races} == expected and expected


def test_equal_instructions_share_fields_and_memo():
    """Semantics see the fields of their instruction (sync ids aside) and one memo per distinct
    instruction; outside a run m.memo is None."""
    from bmk.sim.bm1880 import SEMANTICS
    from bmk.sim.semantics import Semantics
    seen = []

    def spy(fn):
        def wrapped(m, f):
            seen.append((dict(f), id(f), id(m.memo)))
            return fn(m, f)
        return wrapped

    sem = Semantics({k: spy(fn) for k, fn in SEMANTICS.kinds.items()}, SEMANTICS.check, SEMANTICS.cycles)
    from bmk import bm1880
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 16)
    shape = bm1880.shape_t4(1, 32, 4, 4)
    x, y, z = (ctx.tl_prealloc(la, shape, bm1880.FMT_I8) for la in (0, 512, 1024))
    for _ in range(3):                      # the same two instructions, with new sync ids each time
        ctx.gdma_load(x, 0x1000, bm1880.CTRL_NULL)
        ctx.tpu_mul(res_high=None, res_low=z, a=x, b=y, rshift_width=1)
    buf = ctx.acquire_cmdbuf()
    sim = bmk.Simulator("bm1880", sem)
    report = sim.run(buf)
    assert sim.memo is None
    assert report.to_dict() == bmk.Simulator("bm1880").run(buf).to_dict()
    records = decode_cmdbuf(CHIP, buf)
    ids = {"cmd_id_tpu", "cmd_id_gdma", "cmd_id", "wait_id_tpu"}
    by_content = {}
    order = sorted(range(len(records)), key=lambda i: (report.instructions[i].start, i))
    for i, (f, fid, mid) in zip(order, seen):
        strip = {k: v for k, v in records[i].fields.items() if k not in ids}
        assert {k: v for k, v in f.items() if k not in ids} == strip
        key = tuple(sorted(strip.items()))
        assert by_content.setdefault(key, (fid, mid)) == (fid, mid)
    assert len(by_content) == 2 and len(seen) == 6


def _program():
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register()
    s = bm1880.shape_t4(1, 32, 2, 8)
    a, r = ctx.tl_prealloc(0, s, FMT_I8), ctx.tl_prealloc(512, s, FMT_I8)
    ctx.gdma_load(a, 0x1000, CTRL_NULL)
    ctx.tpu_relu(ofmap=r, ifmap=a)
    ctx.gdma_store(r, 0x3000, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def test_a_compiled_program_runs_on_any_simulator_of_its_chip_as_the_buffer_does():
    """compile() decodes, checks and plans once; the Program holds nothing of a Simulator's
    memory: another Simulator runs it to the same report and memory as the buffer itself."""
    buf = _program()
    data = (np.arange(512) % 256).astype(np.uint8)
    program = bmk.Simulator("bm1880").compile(buf)
    assert len(program) == 3 and program.kinds == ["load", "max", "store"]
    results = []
    for what in (buf, program, program):
        sim = bmk.Simulator("bm1880")
        sim.gmem_write(0x1000, data)
        results.append((sim.run(what).to_dict(), sim.gmem_read(0x3000, 512)))
    assert results[0] == results[1] == results[2]
    assert results[0][1] == np.maximum(data.view(np.int8), 0).astype(np.uint8).tobytes()
    from bmk.sim.bm1880 import SEMANTICS
    from bmk.sim.semantics import Semantics
    other = Semantics(dict(SEMANTICS.kinds), SEMANTICS.check, SEMANTICS.cycles)     # planned again for its own
    with pytest.raises(ArgumentError, match=r"run: a Program runs on Simulators of the ChipSpec and Semantics it "
                                             r"was compiled for; this one was compiled for another \(bm1880\)"):
        bmk.Simulator("bm1880", other).run(program)
    assert program.sites[1] == ("tiu", program.sites[1].offset, None) and program.sites[1].offset > 0


def test_reset_gives_a_fresh_chip_and_keeps_the_plans():
    """reset() zeroes every memory in place and runs Semantics.init again: a program run after it
    gives what it gives on a new Simulator, on plans and views made by the first run."""
    sim = bmk.Simulator("bm1684")
    fresh_l2 = sim.memories["l2sram"].load(0, 1 << 16).tobytes()
    sim.gmem_write(0x100000000, b"\x07" * 64)
    sim.lmem_write(0x40, b"\x05" * 8)
    sim.memories["l2sram"].store(0, np.full(16, 9, np.uint8))
    views, memos = sim.lmem._views, sim._memos
    sim.reset()
    assert sim.gmem_read(0x100000000, 64) == bytes(64) and sim.lmem_read(0x40, 8) == bytes(8)
    assert sim.memories["l2sram"].load(0, 1 << 16).tobytes() == fresh_l2        # the lookup tables again
    assert sim.lmem._views is views and sim._memos is memos and sim.last_report is None


def test_a_dropped_bm1684_simulator_is_freed_without_the_cycle_collector():
    """Plan memos keep closures over the memories; they keep the Simulator's trail, not the
    Simulator: dropping it frees its memories at once (gc paused, as during a run)."""
    import gc
    import weakref
    from bmk import bm1684
    ctx = bm1684.Context()
    shape = bm1684.dim4(1, 2, 4, 4)
    ctx.gdma_32bit_cpy_S2L(0, 0x100000000, shape)
    ctx.bdc_add(0x10000, 0, 0, shape, None, None, None)
    ctx.gdma_32bit_cpy_L2S(0x100001000, 0x10000, shape)
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(0x100000000, np.arange(32, dtype=np.float32))
    sim.run(ctx.acquire_streams())
    assert np.array_equal(np.frombuffer(sim.gmem_read(0x100001000, 128), np.float32), 2 * np.arange(32))
    assert sim._memos and all(memo for memo in sim._memos.values())
    alive = weakref.ref(sim)
    paused = gc.isenabled()
    gc.disable()
    try:
        del sim
        assert alive() is None
    finally:
        if paused:
            gc.enable()


def test_instructions_are_made_when_first_read():
    buf = _program()
    report = bmk.Simulator("bm1880").run(buf)
    assert report.instructions._items is None and len(report.instructions) == 3
    listed = tuple(report.instructions)
    assert report.instructions == listed and report.instructions == list(listed) and report.instructions[1] is listed[1]
    assert [i.kind for i in report.instructions] == ["load", "max", "store"] and report.instructions[-1].index == 2


def test_a_program_keeps_its_schedule_and_gives_the_first_runs_report():
    """The order, start and end cycles (and the race detector's clocks) of a program's first run
    are kept by the Program; later runs, with or without race detection, report what a fresh
    run reports."""
    buf = golden("sched_two_streams_seed_example")
    fresh = bmk.Simulator("bm1880").run(buf).to_dict()
    sim = bmk.Simulator("bm1880")
    program = sim.compile(buf)
    assert program.schedule is None
    quiet = sim.run(program, races=False)
    order, start, end, clocks = program.schedule
    assert clocks is None and sorted(order) == list(range(len(program)))
    assert [(i.start, i.end) for i in quiet.instructions] == [(i["start"], i["end"]) for i in fresh["instructions"]]
    assert sim.run(program).to_dict() == fresh            # clocks worked out now, and kept
    assert program.schedule[3] is not None
    assert bmk.Simulator("bm1880").run(program).to_dict() == fresh
