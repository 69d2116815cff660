"""A checked run of a program again from the same checker state replays its last kept run
(bmk/sim/lmemcheck.py _Recording, issue 34 item 4): the warnings and the state it leaves must
be those of checking every instruction one by one, whatever the data does (its writes change
other bytes: the dead-write questions are asked again), when an instruction's log differs from
the kept one, and when a run stops at an error."""
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bmk
from bmk.sim import lmemcheck
from bmk.sim.lmemcheck import LmemCheck
from bmk.sim.report import OVERWRITTEN

from tests.sim.test_lmemcheck_slots import _OP, G, _middle_slot_dead_write, _program, _warnings

_start = LmemCheck.start


def _one_by_one(self, n, key=None):
    """LmemCheck.start without a key: nothing kept, nothing replayed."""
    return _start(self, n)


def _state(sim, span=4096):
    """The checker's state per byte of the first `span` offsets of every lane (owner, seen, lost,
    and prev where an owner is set: lanes x offsets), its base. The programs here touch no byte
    past them."""
    lc = sim._lcheck
    m = lc.map
    seg = np.searchsorted(m.bp, np.arange(span), side="right") - 1
    past = seg[-1] + (m.bp[seg[-1] + 1] == span)
    assert not (m.owner[past:].any() or m.seen[past:].any() or m.lost[past:].any())
    owner, seen, lost = (arr[seg].T for arr in (m.owner, m.seen, m.lost))
    prev = lc.prev.reshape(m.npu_num, -1)[:, :span]
    return owner.tobytes(), seen.tobytes(), lost.tobytes(), np.where(owner != 0, prev, 0).tobytes(), lc.base


def _data(seed):
    """gmem contents drawn from {1, 2}: a load over an unread value may leave its bytes as they were."""
    return np.random.default_rng(seed).integers(1, 3, 0x8000).astype(np.int8)


def _runs(buf, seeds, replay, twist=None):
    """Per seed, the warnings and state of a checked run on one Simulator reset between runs.
    twist(run, i, entries) may change an instruction's log (as the checker sees it)."""
    sim = bmk.Simulator("bm1684x")
    original = LmemCheck.instruction
    count = {"run": -1}

    def instruction(self, i, entries, copies=False):
        if twist is not None:
            entries = twist(count["run"], i, entries)
        return original(self, i, entries, copies)

    out = []
    with mock.patch.object(LmemCheck, "instruction", instruction), \
            mock.patch.object(LmemCheck, "start", _start if replay else _one_by_one):
        for seed in seeds:
            count["run"] += 1
            sim.reset()
            sim.gmem_write(G, _data(seed))
            out.append((_warnings(sim.run(buf)), _state(sim)))
    return out


@settings(max_examples=50, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=7), st.lists(st.integers(0, 3), min_size=3, max_size=6))
def test_replayed_runs_check_as_one_by_one(ops, seeds):
    """Loads and stores over each other's bytes, run on data that makes a write change an
    unread value's bytes in one run and not in another."""
    buf = _program(ops).acquire_cmdbuf()
    assert _runs(buf, seeds, replay=True) == _runs(buf, seeds, replay=False)


@settings(max_examples=50, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=7), st.lists(st.integers(0, 3), min_size=3, max_size=6))
def test_replayed_runs_asking_witnesses_check_as_one_by_one(ops, seeds):
    """The same with every piece's questions kept with their witnesses (LmemCheck._changed_seen,
    which these programs' small pieces do not take) and asked through them on a replay, where a
    byte a write changed in one run may not change in the next."""
    buf = _program(ops).acquire_cmdbuf()
    with mock.patch.object(lmemcheck, "SMALL_PIECE", 0):
        assert _runs(buf, seeds, replay=True) == _runs(buf, seeds, replay=False)


def _fresh(run, at):
    """A twist: in run `run`, instruction `at` logs new entry objects (equal to the old ones)."""
    def twist(r, i, entries):
        return [tuple(list(e)) for e in entries] if (r, i) == (run, at) else entries
    return twist


@settings(max_examples=30, deadline=None)
@given(st.lists(_OP, min_size=2, max_size=7), st.data())
def test_a_log_unlike_the_kept_one_checks_the_rest_one_by_one(ops, data):
    """An instruction whose entries are not the kept ones (a memo emptied, views made again):
    the checks of the instructions before it are made, then the run goes on one by one."""
    buf = _program(ops).acquire_cmdbuf()
    twist = _fresh(2, data.draw(st.integers(0, len(ops) - 1)))
    seeds = [0, 1, 0, 1]
    assert _runs(buf, seeds, replay=True, twist=twist) == _runs(buf, seeds, replay=False)


@pytest.mark.parametrize("small_piece", [lmemcheck.SMALL_PIECE, 0])
def test_the_dead_write_questions_are_asked_again(small_piece):
    """The middle-slot dead write (test_lmemcheck_slots): the second load's 32 channels go over
    channels 168-199 of the first, unread. Whether that is reported depends on whether it changed
    their bytes: run on data where it does, where it does not (its source holds the same bytes),
    where it does again, and where it does for one of the load's two pieces only; each run reports
    what checking one by one reports, and only the runs unlike the kept one stop their replay.
    small_piece 0: the questions are kept with their witnesses (LmemCheck._changed_seen), which
    a replay asks first."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()
    changes = np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8)
    same = changes.copy()
    same[0x4000:0x4000 + 32 * 16] = same[168 * 16:200 * 16]
    # the load writes two pieces (lanes 40-63, then lanes 0-15 a slot on), each asked about: the
    # first changes its bytes as in the kept run, the second not
    half = changes.copy()
    half[0x4000 + 24 * 16:0x4000 + 32 * 16] = half[192 * 16:200 * 16]
    sim, ref = bmk.Simulator("bm1684x"), bmk.Simulator("bm1684x")
    diverged, original = [], LmemCheck._diverge

    def spy(self, *a):
        diverged.append(run)
        return original(self, *a)

    got = []
    for run, data in enumerate((changes, changes, same, changes, changes, half)):
        for s in (sim, ref):
            s.reset()
            s.gmem_write(G, data)
        with mock.patch.object(LmemCheck, "_diverge", spy), mock.patch.object(lmemcheck, "SMALL_PIECE", small_piece):
            mine = _warnings(sim.run(buf))
        with mock.patch.object(LmemCheck, "start", _one_by_one):
            assert mine == _warnings(ref.run(buf))
        assert _state(sim) == _state(ref)
        got.append([w[0] for w in mine])
    assert got == [[OVERWRITTEN], [OVERWRITTEN], [], [OVERWRITTEN], [OVERWRITTEN], []]
    # 0 cuts the map, 1 kept, 2 unlike it (kept in its place), 3 unlike that (kept), 4 replayed,
    # 5 unlike it at its second question
    assert diverged == [2, 3, 5]


def test_a_replay_runs_no_checks_of_its_own():
    """The third run of a program from a reset Simulator checks no instruction one by one."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()
    sim = bmk.Simulator("bm1684x")
    data = np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8)
    got = []
    for run in range(3):        # the first cuts the checker's map at the tensors' ends (not kept), the second is kept
        sim.reset()
        sim.gmem_write(G, data)
        with mock.patch.object(LmemCheck, "_check", side_effect=AssertionError("checked one by one")) if run == 2 \
                else mock.patch.object(LmemCheck, "_replayed", side_effect=AssertionError("replayed")):
            got.append([w[0] for w in _warnings(sim.run(buf))])
    assert got == [[OVERWRITTEN]] * 3


class _Stop(Exception):
    pass


def test_a_run_stopped_by_an_error_leaves_the_checks_of_what_ran():
    """A replayed run stopped at instruction 2: the state is that of checking 0 and 1 one by one
    (LmemCheck.abort catches up)."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()
    original = LmemCheck.instruction

    def stop_at_2(self, i, entries, copies=False):
        if i == 2:
            raise _Stop()
        return original(self, i, entries, copies)

    states = []
    for start in (_start, _one_by_one):
        sim = bmk.Simulator("bm1684x")
        with mock.patch.object(LmemCheck, "start", start):
            sim.run(buf)
            sim.reset()
            with mock.patch.object(LmemCheck, "instruction", stop_at_2):
                try:
                    sim.run(buf)
                except _Stop:
                    pass
        states.append(_state(sim))
    assert states[0] == states[1]
    assert np.frombuffer(states[0][0], np.int32).any()        # instructions 0 and 1 were checked


def test_the_kept_runs_hold_a_bounded_number_of_map_cells():
    """Kept runs hold the map rows they changed (lmemcheck.MAX_KEPT_CELLS in all): past the bound
    the kept ones are dropped, and the count stays the sum of what is kept."""
    sim = bmk.Simulator("bm1684x")
    bufs = [_program([("load", 0, slot, 64, 16), ("store", 0, slot, 64, 16)]).acquire_cmdbuf() for slot in range(3)]
    for buf in bufs:                    # every tensor's ends cut the map first: then runs are kept
        sim.run(buf)
    for bound, kept in ((1, 1), (1 << 20, 3)):
        with mock.patch("bmk.sim.lmemcheck.MAX_KEPT_CELLS", bound):
            for buf in bufs:
                sim.reset()
                sim.run(buf)
                lc = sim._lcheck
                assert lc._kept_cells == sum(r.cells() for r in lc._recordings.values())
        assert len(lc._recordings) == kept and all(r.cells() for r in lc._recordings.values())


def test_a_run_whose_questions_hold_more_than_the_bound_is_not_kept():
    """A kept run counts its questions' cells with its end's (lmemcheck.MAX_KEPT_CELLS); a run
    whose questions alone pass the bound lets them go and is not kept, and checks the same."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()
    data = np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8)
    sim, ref = bmk.Simulator("bm1684x"), bmk.Simulator("bm1684x")

    def run(s):
        s.reset()
        s.gmem_write(G, data)
        return _warnings(s.run(buf))
    run(sim), run(sim)
    (rec,) = sim._lcheck._recordings.values()
    asked = sum(op[1].size for ops in rec.ops for op in ops if op.__class__ is tuple)
    assert asked and rec.cells() == rec.end[1].size + asked
    with mock.patch.object(lmemcheck, "MAX_KEPT_CELLS", asked - 1):
        sim._lcheck._recordings.clear()
        sim._lcheck._kept_cells = 0
        for _ in range(2):
            got = run(sim)
            assert not sim._lcheck._recordings and sim._lcheck._making is None
            with mock.patch.object(LmemCheck, "start", _one_by_one):
                assert got == run(ref) and [w[0] for w in got] == [OVERWRITTEN]
            assert _state(sim) == _state(ref)


def test_bytes_the_host_wrote_start_another_state():
    """A store of local bytes nothing wrote is reported on every run, replayed or not; once the
    host wrote them before the run (lmem_write), it is not: the run starts from another state."""
    buf = _program([("store", 0, 0, 64, 16)]).acquire_cmdbuf()
    sim = bmk.Simulator("bm1684x")
    got = []
    for host in (False, False, False, True, False):
        sim.reset()
        if host:
            sim.lmem_write(0, bytes(16))        # the tensor's bytes on lane 0 (no new cut of the map)
        got.append([(w.kind, w.lanes[0]) for w in sim.run(buf).warnings])
    assert got == [[("uninitialized", 0)]] * 3 + [[("uninitialized", 1)]] + [[("uninitialized", 0)]]


def test_a_new_simulator_takes_the_prev_array_of_one_gone():
    """A checker's prev array goes back to lmemcheck._SPARE_PREV when its Simulator is gone (at
    most MAX_SPARE_PREV a size) and the next new one takes it; two live checkers never share one."""
    import gc

    from bmk.sim import lmemcheck
    buf = _program([("load", 0, 0, 64, 16)]).acquire_cmdbuf()
    with mock.patch.dict(lmemcheck._SPARE_PREV, clear=True):
        sims = [bmk.Simulator("bm1684x") for _ in range(4)]
        for s in sims:
            s.run(buf)
        prevs = [s._lcheck.prev for s in sims]
        assert len({p.ctypes.data for p in prevs}) == 4
        del sims, s
        gc.collect()
        spare = lmemcheck._SPARE_PREV[prevs[0].size]
        assert len(spare) == lmemcheck.MAX_SPARE_PREV
        kept = {p.ctypes.data for p in spare}
        new = [bmk.Simulator("bm1684x") for _ in range(3)]
        for s in new:
            s.run(buf)
        taken = [s._lcheck.prev.ctypes.data for s in new]
        assert set(taken[:2]) == kept and taken[2] not in kept and not spare


@settings(max_examples=30, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=7), st.lists(st.integers(0, 3), min_size=2, max_size=4))
def test_a_prev_array_holding_other_bytes_checks_the_same(ops, seeds):
    """prev taken from a Simulator gone holds its bytes, not zeros: the checks (replayed or one by
    one) and the state they leave are those of a prev of zeros."""
    from bmk.sim import lmemcheck
    buf = _program(ops).acquire_cmdbuf()

    def noise(n, dtype):
        return np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    with mock.patch.dict(lmemcheck._SPARE_PREV, clear=True):
        clean = _runs(buf, seeds, replay=True)
    with mock.patch.dict(lmemcheck._SPARE_PREV, clear=True), mock.patch.object(lmemcheck, "_zeros", noise):
        assert _runs(buf, seeds, replay=True) == clean
