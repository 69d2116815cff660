"""A run with race detection on a racy stream of real vendor commands (issue 32 item 7): 40
shuffled bm1684 yolov5s commands that never wait (tests/race_stream.py), 5 KB, 43 races.

Such a run also checks local memory (checks default to on with races, bmk/sim/lmemcheck.py); the
check listed every uninitialized byte as an index row and sorted owner values to find the
distinct ones: 203 MB of tracemalloc peak (+152 MB over a run without races) and 3.3 s CPU for
this stream, 22.9 s for 80 commands (bench/races.py). Its work now follows the bytes each command
touches, in passes over them; bounded here by memory (tracemalloc: deterministic, not wall-clock),
and every result kept."""
import tracemalloc
from unittest import mock

import numpy as np
import pytest

import bmk
from bmk.sim import lmemcheck
from bmk.sim.lmemcheck import _distinct, _distinct_pairs
from bmk.sim.races import find_races
from bmk.sim.memory import LaneLayout
from tests.race_stream import racy_stream

MB = 1 << 20


def _peak(stream, **kw):
    sim = bmk.Simulator("bm1684")
    tracemalloc.start()
    try:
        report = sim.run(stream, **kw)
        return report, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def stream():
    return racy_stream(40, seed=1)


def test_races_and_warnings_of_the_racy_stream(stream):
    report = bmk.Simulator("bm1684").run(stream)
    assert sum(map(len, stream.values())) == 5120
    assert len(report.races) == 43 and not report.races_truncated
    first = report.races[0]
    assert (first.first, first.second, first.space, first.lo, first.hi) == (0, 28, "lmem", 0x40000, 0x419c0)
    assert first.lanes == (0, 1, 2) and first.kinds == ("read", "write")
    assert [(r.first, r.second) for r in report.races] == sorted((r.first, r.second) for r in report.races)
    assert len(report.warnings) == 20
    w = report.warnings[0]
    assert (w.kind, w.index, w.lanes, w.lo, w.hi) == ("uninitialized", 0, tuple(range(64)), 0x40000, 0x40640)


def test_a_run_like_the_last_takes_its_races(stream):
    """Races of a run whose instructions logged the last run's entries are the last run's
    (Simulator._races); views made again (a memo emptied) are looked at again. Every run reports
    what a fresh Simulator reports."""
    want = bmk.Simulator("bm1684").run(stream)
    sim = bmk.Simulator("bm1684")
    assert sim.run(stream).races == want.races
    with mock.patch("bmk.sim.core.find_races", side_effect=AssertionError("searched again")):
        for _ in range(2):
            sim.reset()
            assert sim.run(stream).races == want.races
    sim._memos.clear()                      # the plans' memos and the memories' views, made again
    for mem in sim.memories.values():
        mem._views.clear()
    with mock.patch("bmk.sim.core.find_races", wraps=find_races) as spy:
        sim.reset()
        assert sim.run(stream).races == want.races and spy.called
    other = racy_stream(40, seed=2)         # other commands: other races
    assert sim.run(other).races == bmk.Simulator("bm1684").run(other).races != want.races


def test_the_checks_cost_a_few_mb_over_the_run(stream):
    """Checks and races add a few MB to what the run itself allocates (was +152 MB)."""
    plain, base = _peak(stream, races=False)
    checked, peak = _peak(stream)
    assert len(checked.races) == 43 and not plain.races
    assert peak - base < 32 * MB, (peak - base) / MB


def test_distinct_is_np_unique():
    rng = np.random.default_rng(7)
    for values in (rng.integers(2, 60, (5, 7, 64), dtype=np.int32), np.array([3], np.int32),
                   np.zeros((0,), np.int32), np.array([0, 1, 2 ** 31 - 2, 5], np.int32),
                   rng.integers(0, 2 ** 31 - 1, 1000, dtype=np.int32)):
        assert _distinct(values) == np.unique(values).tolist()
    a, b = rng.integers(2, 40, 3000, dtype=np.int32), rng.integers(0, 9, 3000, dtype=np.int32)
    b[::7] = 2 ** 31 - 3             # a spread too wide for one key per pair: np.unique
    for x, y in ((a, b % 9), (a, b)):
        want = [tuple(r) for r in np.unique(np.stack([x, y], 1), axis=0).tolist()]
        assert _distinct_pairs(x, y) == want


def test_where_names_the_lanes_and_first_lane_offsets():
    """The lanes holding a hit and the first one's offset range, without listing every hit: a
    hit is per cell (segment x lane) of the checker's LaneMap, the reference byte by byte."""
    sim = bmk.Simulator("bm1684")
    lc = sim._checker(1)
    lane = sim.lmem.lane_size
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, h, w, l0, c = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 9),
                                           rng.integers(0, 64), rng.integers(1, 64)))
        off = int(rng.integers(0, 1000))
        lc.map.split(np.sort(rng.integers(0, 1200, 6)))         # segments cutting through the tensor
        layout = LaneLayout((off, (n, 1, h, w), (h * w * 4 * 2, 0, w * 4, 4)), l0, min(c, 64 - l0))
        entry = ("lmem", 0, off, off + 1, False, layout)
        (flat, shape, strides, _), = lc.pieces(entry)
        (piece,) = lc._pieces(entry)
        hit = rng.random((len(piece.ids), piece.b - piece.a)) < 0.3
        if not hit.any():
            continue
        idx = np.argwhere(np.ones(shape, bool))                 # every byte of the piece: the reference
        lanes, offs = np.divmod(flat + idx @ np.array(strides, np.int64), lane)
        row = np.searchsorted(piece.ids, np.searchsorted(lc.map.bp, offs, "right") - 1)
        on = hit[row, lanes - piece.a]
        lanes, offs = lanes[on], offs[on]
        want = (tuple(np.unique(lanes).tolist()), int(offs[lanes == lanes.min()].min()),
                int(offs[lanes == lanes.min()].max()) + 1)
        assert lc._where(piece, hit) == want


def _written(sim, lc, entry):
    """A write entry's one _Piece, the lmem address of each of its bytes, each byte's cell (rows,
    lanes of the piece) and changed(): the byte-by-byte reference of LmemCheck._changed, per cell
    whether Lmem.data differs from prev in any of its bytes."""
    (flat, shape, strides, _), = lc.pieces(entry)
    (piece,) = lc._pieces(entry)
    where = flat + np.argwhere(np.ones(shape, bool)) @ np.array(strides, np.int64)
    lanes, offs = np.divmod(where, sim.lmem.lane_size)
    cell = np.searchsorted(piece.ids, np.searchsorted(lc.map.bp, offs, "right") - 1), lanes - piece.a

    def changed():
        want = np.zeros((len(piece.ids), piece.b - piece.a), bool)
        np.logical_or.at(want, cell, sim.lmem.data[where] != lc.prev[where])
        return want
    return piece, where, cell, changed


def test_changed_is_per_cell_whether_any_of_its_bytes_changed():
    """LmemCheck._changed (the dead-write question): per cell of a piece, whether Lmem.data differs
    from prev in any byte of the piece there; byte by byte as the reference. Pieces of one run
    and of many, small and past 64 KiB, their offsets and the map's cuts multiples of 1, 2, 4 or
    8 (it compares as many bytes at a time as all of them allow), and pieces of many runs of one
    word each, a segment a run (Yuv2rgb's 4-byte rows)."""
    rng = np.random.default_rng(5)
    for k in range(80):
        sim = bmk.Simulator("bm1684")
        lc = sim._checker(1)
        align, size = int(rng.choice([1, 2, 4, 8])), int(rng.choice([1, 2, 4]))
        n, h = int(rng.integers(1, 3)), int(rng.integers(1, 5))
        w = align * int(rng.integers(1, 9)) * (64 if k % 3 else 1)
        l0, c = int(rng.integers(0, 64)), int(rng.integers(1, 64))
        off, gap = align * int(rng.integers(0, 64)), align * int(rng.choice([0, 1, 3]))
        cuts = 4
        if k % 4 == 3:                  # runs of one word, nothing else cutting them
            size = align = int(rng.choice([2, 4, 8]))
            n, h, w, cuts = int(rng.integers(2, 80)), 1, 1, 0
            off, gap = align * int(rng.integers(0, 64)), align * int(rng.choice([1, 3]))
        layout = LaneLayout((off, (n, 1, h, w, size), (h * w * size + gap, 0, w * size, size, 1)), l0, min(c, 64 - l0))
        entry = ("lmem", 0, off, off + 1, True, layout)
        lc.map.split(np.sort(rng.integers(off, off + n * (h * w * size + gap) + 1, cuts) // align * align))
        piece, where, _, changed = _written(sim, lc, entry)
        np.copyto(lc.prev, sim.lmem.data)
        sim.lmem.data[where[rng.random(len(where)) < rng.choice([0.0005, 0.01, 0.2])]] ^= 0x5A
        want = changed()
        cells = rng.random(want.shape) < 0.5
        assert np.array_equal(lc._changed(piece, cells) & cells, want & cells)


def test_a_replayed_question_asks_its_witnesses_first():
    """LmemCheck._changed_seen (a kept run's dead-write question): _changed over the cells, and
    one address per cell the write changed, of a byte it changed there; LmemCheck._again (the
    question replayed): _changed over the cells whether the witnesses still changed (only the
    other cells compared), one no longer did (every cell compared, the witnesses dropped) or a
    cell that kept its bytes changed them now; compared a byte and 8 bytes at a time."""
    rng = np.random.default_rng(7)
    for k in range(40):
        sim = bmk.Simulator("bm1684")
        lc = sim._checker(1)
        n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 5)), 8 * int(rng.integers(1, 9)) * (64 if k % 2 else 1)
        l0, c = int(rng.integers(0, 64)), int(rng.integers(1, 64))
        align = 8 if k % 4 < 2 else 1       # (offsets and cuts of 8: compared, and witnessed, 8 bytes a word)
        off, gap = align * int(rng.integers(0, 64)), int(rng.choice([0, 1, 8])) if align == 1 else 8
        layout = LaneLayout((off, (n, 1, h, w, 1), (h * w + gap, 0, w, 1, 1)), l0, min(c, 64 - l0))
        entry = ("lmem", 0, off, off + 1, True, layout)
        lc.map.split(np.sort(rng.integers(off, off + n * (h * w + gap) + 1, 4) // align * align))
        piece, where, (row, lanes), reference = _written(sim, lc, entry)

        def changed():
            return reference() & cells

        sim.lmem.data[where] = rng.integers(0, 256, len(where))
        np.copyto(lc.prev, sim.lmem.data)
        sim.lmem.data[where[rng.random(len(where)) < rng.choice([0.001, 0.05, 0.5])]] ^= 0x5A
        cells = rng.random((len(piece.ids), piece.b - piece.a)) < 0.7
        answer, witnesses = lc._changed_seen(piece, cells)
        assert np.array_equal(answer, changed())
        if witnesses is None:
            continue
        at, shown = witnesses
        assert (sim.lmem.data[at] != lc.prev[at]).all() and (np.diff(at) > 0).all()
        pos = np.searchsorted(where, at)
        assert (where[pos] == at).all()           # bytes of the piece, one in each cell named, all changed
        assert sorted(zip(row[pos].tolist(), lanes[pos].tolist())) == list(map(tuple, np.argwhere(shown)))
        assert not (shown & ~answer).any()
        q = lmemcheck._Question(piece, cells, answer, witnesses)
        assert np.array_equal(lc._again(q), answer) and q.witnesses is witnesses
        still = where[~np.isin(where, at)]
        sim.lmem.data[still[rng.random(len(still)) < 0.01]] ^= 0x33         # cells that kept their bytes may not now
        assert np.array_equal(lc._again(q), changed())
        lc.prev[at[:1]] = sim.lmem.data[at[:1]]                         # a witness no longer changed
        assert np.array_equal(lc._again(q), changed()) and q.witnesses is None
        sim.lmem.data[where[rng.random(len(where)) < 0.01]] ^= 0x11         # (asked again: compared as planned)
        assert np.array_equal(lc._again(q), changed())


def test_located_is_rows_where_every_run_end_is_a_breakpoint():
    """LaneMap.located (LmemCheck._locate's one search for pieces located before): the rows and
    segment indices of `rows` when every start and end is a breakpoint, None when one is not."""
    from bmk.sim.lanemap import LaneMap
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = LaneMap(4, 4096)
        m.split(np.unique(rng.integers(0, 4097, int(rng.integers(0, 40)))))
        cuts = m.bp
        k = int(rng.integers(1, 4))
        ends = np.sort(rng.choice(cuts, 2 * k, replace=len(cuts) < 2 * k))
        starts, stops = ends[0::2], ends[1::2]
        keep = starts < stops
        starts, stops = starts[keep], stops[keep]
        if not len(starts):
            continue
        points = np.concatenate([starts, stops])
        rows, ids = m.rows(starts, stops)
        got_rows, got_ids = m.located(starts, stops, points)
        assert np.array_equal(np.arange(len(m.bp))[rows], np.arange(len(m.bp))[got_rows])
        assert np.array_equal(ids, got_ids)
        off = points.copy()
        j = int(rng.integers(len(off)))
        off[j] += 1 if off[j] < 4096 else -1        # (a piece's points lie in the lane: [0, 4096])
        if not np.isin(off, m.bp).all():
            assert m.located(starts, stops, off) is None
