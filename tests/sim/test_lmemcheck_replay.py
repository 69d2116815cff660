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
    and prev where an owner is set, counting the bytes a replay left to copy (LmemCheck._lag) as
    copied: lanes x offsets), its base. The programs here touch no byte past them. Lost values
    below base are none (a run's fall below the next one's when it ends): a replay leaves those
    of the questions it did not ask (lmemcheck._Question.skip) as the kept run had them."""
    lc = sim._lcheck
    m = lc.map
    seg = np.searchsorted(m.bp, np.arange(span), side="right") - 1
    past = seg[-1] + (m.bp[seg[-1] + 1] == span)
    assert not (m.owner[past:].any() or m.seen[past:].any() or m.lost[past:].any())
    owner, seen, lost = (arr[seg].T for arr in (m.owner, m.seen, m.lost))
    kept, lag = lc.prev.copy(), dict(lc._lag)       # (copied here, then put back as they were)
    lc._sync()
    prev = lc.prev.reshape(m.npu_num, -1)[:, :span].copy()
    lc.prev[...], lc._lag = kept, lag
    lost = np.where(lost >= lc.base, lost, 0)
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

    def instruction(self, i, entries, *flags):
        if twist is not None:
            entries = twist(count["run"], i, entries)
        return original(self, i, entries, *flags)

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

    def stop_at_2(self, i, entries, *flags):
        if i == 2:
            raise _Stop()
        return original(self, i, entries, *flags)

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
    asked = sum(op.cells.size for ops in rec.ops for op in ops if op.__class__ is lmemcheck._Question)
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


def _copies(sim, buf):
    """A checked run of buf: the bytes it copies into prev of whole writes, those of the boxes its
    kept run copies of the other writes (lmemcheck._Lag) on a replay, the pieces left to copy."""
    copied = []
    keep, lagged = LmemCheck._keep, lmemcheck._Lag

    def counted(self, p):
        copied.append(p.now.size if self._keeping else 0)
        return keep(self, p)
    with mock.patch.object(LmemCheck, "_keep", counted):
        sim.run(buf)
    recs = sim._lcheck._recordings.values()
    boxes = sum(op.now.size for r in recs for ops in r.ops for op in ops
                if op.__class__ is lagged and op.now is not None)
    return sum(copied), boxes, len(sim._lcheck._lag)


def test_a_replay_copies_only_the_bytes_a_later_question_compares():
    """The middle-slot dead write: the second load's question compares slot 2's lanes 40-63 and
    slot 3's lanes 0-7 of the first load, so a replay copies those boxes of it and none of the
    other two writes (the store writes no local byte); the rest waits in LmemCheck._lag until a
    run that is not a replay, and the state is that of checking one by one (the tests above)."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()
    sim, ref = bmk.Simulator("bm1684x"), bmk.Simulator("bm1684x")
    data = np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8)
    got = []
    for run in range(4):
        for s in (sim, ref):
            s.reset()
            s.gmem_write(G, data)
        got.append(_copies(sim, buf))
        with mock.patch.object(LmemCheck, "start", _one_by_one):
            ref.run(buf)
        assert _state(sim) == _state(ref)
    # (whole writes copied, boxes a replay copies, pieces left to copy) per run: the first load's
    # 200 channels (16 bytes each) and the second's 40 on runs 0 (it cuts the map) and 1 (kept);
    # then the first load's slot-3 piece whole (lanes 0-7: every byte compared) and of its slot 2
    # lanes 40-63 (24 x 16 bytes); slots 0, 1, 2 and the second load's two pieces left to copy
    assert got == [(3840, 0, 0), (3840, 384, 0), (128, 384, 5), (128, 384, 5)]
    sim.reset()
    with mock.patch.object(LmemCheck, "start", _one_by_one):      # not a replay: what waits is copied first
        sim.run(buf)
    assert not sim._lcheck._lag


def _alternating(bufs, order, replay):
    """The warnings and state after each run of bufs[k] for k in order, on one Simulator never
    reset: each run starts where the last one ended (another program's replay leaves its own
    bytes to copy)."""
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G, _data(0))
    out = []
    with mock.patch.object(LmemCheck, "start", _start if replay else _one_by_one):
        for k in order:
            out.append((_warnings(sim.run(bufs[k])), _state(sim)))
    return out


@settings(max_examples=30, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=5), st.lists(_OP, min_size=1, max_size=5),
       st.lists(st.integers(0, 1), min_size=4, max_size=9))
def test_programs_replayed_in_turn_check_as_one_by_one(ops, other, order):
    """Two programs run in turn without a reset (a model's groups): a replay of one starts with
    bytes the other's replays left to copy."""
    bufs = [_program(ops).acquire_cmdbuf(), _program(other).acquire_cmdbuf()]
    assert _alternating(bufs, order, replay=True) == _alternating(bufs, order, replay=False)


def _selects():
    """Two masked selects of 64 int8 values into one local run (the second over the first's
    values, unread), then a copy of 64 bytes of it out: each writes as many bytes as its mask
    selects (memory.AccessLog.sized), so on other masks the second write meets other bytes."""
    from tests.chips.bm1684x.sim.helpers import GLOBAL_BASE, LOCAL_BASE, program, rec
    from tests.chips.bm1684x.sim.test_gdma import addr_fields, dma, fmt

    def select(k):
        src = GLOBAL_BASE + 0x1000 * k
        return rec("gdma", "DMA_masked_select", "dma.masked_select", src_data_format=fmt(bmk.dtypes.INT8),
                   mask_data_format=fmt(bmk.dtypes.UINT8), **addr_fields("src", src),
                   **addr_fields("dst", LOCAL_BASE), **addr_fields("mask", src + 0x400),
                   localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF,
                   src_nsize=1, src_csize=1, src_hsize=1, src_wsize=64)
    out = dma(LOCAL_BASE, (1, 1, 1, 64), (64, 64, 64, 1), GLOBAL_BASE + 0x8000, (1, 1, 1, 64), (64, 64, 64, 1),
              bmk.dtypes.INT8)
    return bmk.encode("bm1684x", program([select(0), select(1), out])), GLOBAL_BASE


def test_a_program_whose_footprints_depend_on_the_data_copies_every_write():
    """Replays of the two masked selects, on masks selecting 10 to 60 values: every write is
    copied into prev (no _Lag), nothing is left to copy at a run's start, and the warnings and
    state are those of checking one by one."""
    buf, g = _selects()
    rng = np.random.default_rng(3)
    sims = {True: bmk.Simulator("bm1684x"), False: bmk.Simulator("bm1684x")}
    got = {True: [], False: []}
    for run in range(6):
        values = rng.integers(1, 3, (2, 64)).astype(np.int8)
        masks = np.zeros((2, 64), np.uint8)
        for k, n in enumerate(rng.integers(10, 61, 2)):
            masks[k, :n] = 1
        for replay, sim in sims.items():
            sim.reset()
            for k in range(2):
                sim.gmem_write(g + 0x1000 * k, values[k])
                sim.gmem_write(g + 0x1000 * k + 0x400, masks[k])
            with mock.patch.object(LmemCheck, "start", _start if replay else _one_by_one):
                got[replay].append((_warnings(sim.run(buf)), _state(sim)))
            assert not sim._lcheck._lag
    assert got[True] == got[False]
    (rec,) = sims[True]._lcheck._recordings.values()
    assert rec.sized and not any(op.__class__ is lmemcheck._Lag for ops in rec.ops for op in ops)


def test_a_log_of_other_bytes_from_a_kind_not_saying_so_is_refused():
    """A replay that left bytes to copy meets an instruction logging other local bytes than the
    kept run's (as a kind whose footprint depends on the data but does not set AccessLog.sized
    would): the bytes it wrote over may have been left to copy, so the checks cannot be exact,
    and the run says so rather than guessing."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()

    def shifted(r, i, entries):         # run 3, the second load: 16 bytes further along its lanes
        if (r, i) != (3, 1):
            return entries
        return [e if getattr(e[5], "start_lane", None) is None else
                e[:2] + (e[2] + 16, e[3] + 16) + e[4:5] + (type(e[5])((e[5][0] + 16,) + e[5][1:], e[5].start_lane,
                                                                    e[5].channels),) for e in entries]
    with pytest.raises(bmk.errors.SimulationError, match="instruction 1 logged other local-memory bytes"):
        _runs(buf, [0, 0, 0, 0], replay=True, twist=shifted)


def test_a_run_that_is_not_a_replay_first_copies_what_replays_left():
    """Replays of the middle-slot program on data that changes from run to run leave prev behind
    data where they did not copy; a run of another program checked one by one (which may meet
    any byte: an imprecise write compares every byte it covers with prev) finds prev holding data
    wherever an owner is set."""
    buf = _middle_slot_dead_write().acquire_cmdbuf()
    other = _program([("load", 0, 40, 8, 16)]).acquire_cmdbuf()        # bytes none of buf's
    sim = bmk.Simulator("bm1684x")
    for seed in range(4):
        sim.reset()
        sim.gmem_write(G, _data(seed))
        sim.run(buf)
    lc = sim._lcheck
    m = lc.map
    seg = np.searchsorted(m.bp, np.arange(4096), side="right") - 1
    written = (m.owner[seg].T != 0).ravel()

    def behind():           # bytes with an owner where prev is not data
        now, was = (a.reshape(m.npu_num, -1)[:, :4096].ravel() for a in (sim.lmem.data, lc.prev))
        return int((now != was)[written].sum())
    assert lc._lag and behind()         # (the test means something: the replays left bytes behind)
    with mock.patch.object(LmemCheck, "start", _one_by_one):
        sim.run(other)
    assert not lc._lag and not behind()


@pytest.mark.parametrize("max_warnings", [lmemcheck.MAX_WARNINGS, 1])
def test_a_question_whose_writer_is_read_is_asked_again_even_once_overwritten(max_warnings):
    """The middle-slot dead write, then loads over slot 2 and over lanes 0-15 of slot 3 (one run
    of bytes a lane each): the store read the second load's bytes before they took them (the
    read is learnt where a write takes read values, not only from the map the run ends with), so
    the second load's question is asked again on every replay, and a run on data where it
    changes nothing reports nothing, as one by one. max_warnings 1: the store's warning fills
    the list, and the last loads are recorded as writes only (LmemCheck._record_only)."""
    ctx = _middle_slot_dead_write()
    for local, channels in ((128, 64), (192, 16)):
        ctx.gdma_cpy_S2L(local, G + 0x6000, bmk.bm1684x.dim4(1, channels, 1, 16), None, None, bmk.bm1684x.DT_INT8)
    buf = ctx.acquire_cmdbuf()
    changes = np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8)
    same = changes.copy()
    same[0x4000:0x4000 + 32 * 16] = same[168 * 16:200 * 16]        # (as in the test above)
    got = {}
    for replay in (True, False):
        sim = bmk.Simulator("bm1684x")
        with mock.patch.object(LmemCheck, "start", _start if replay else _one_by_one), \
                mock.patch.object(lmemcheck, "MAX_WARNINGS", max_warnings):
            got[replay] = []
            for data in (changes, changes, same, changes):
                sim.reset()
                sim.gmem_write(G, data)
                got[replay].append([w[0] for w in _warnings(sim.run(buf))])
    assert got[True] == got[False] == [[OVERWRITTEN], [OVERWRITTEN], [], [OVERWRITTEN]]
