"""The local-memory checks (bmk/sim/lmemcheck.py) take the channel slots of a tensor that cover
every lane as one piece (LmemCheck._united, issue 34 item 4): the reports must be those of the
slot-by-slot checker, warnings naming the same slot, lanes and offsets."""
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import bmk
from bmk import bm1684x
from bmk.sim.lmemcheck import LmemCheck
from bmk.sim.report import OVERWRITTEN, UNINITIALIZED

G = 0x100000000
LANE = bm1684x.local_mem_size_per_npu()
I8 = bm1684x.DT_INT8


def _per_slot(self, entry, raw):
    return [self._piece(*p) for p in raw]


def _report(ctx, per_slot=False):
    """The warnings of a run, slots united or (per_slot) one by one."""
    buf = ctx.acquire_cmdbuf()
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G, np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8))
    if per_slot:
        with mock.patch.object(LmemCheck, "_united", _per_slot):
            report = sim.run(buf)
    else:
        report = sim.run(buf)
    return _warnings(report)


def _warnings(report):
    return [(w.kind, w.index, w.lanes, w.lo, w.hi, w.writer, w.clobber) for w in report.warnings]


def test_a_read_of_a_middle_slot_never_written_names_that_slot():
    """200 channels from lane 0: slots 0-2 cover every lane (one piece), slot 3 lanes 0-7, a slot
    every 64 bytes (the aligned stride). Only 150 channels are loaded: the read finds slot 2's
    lanes 22-63 unwritten, as slot by slot."""
    ctx = bm1684x.Context()
    shape = bm1684x.dim4(1, 200, 1, 16)
    ctx.gdma_cpy_S2L(0, G, bm1684x.dim4(1, 150, 1, 16), None, None, I8)
    ctx.gdma_cpy_L2S(G + 0x10000, 0, shape, None, None, I8)
    warnings = _report(ctx)
    assert warnings == [(UNINITIALIZED, 1, tuple(range(22, 64)), 128, 144, None, None)]
    assert warnings == _report(ctx, per_slot=True)


def _middle_slot_dead_write():
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0, G, bm1684x.dim4(1, 200, 1, 16), None, None, I8)
    # slot 2's lanes 40-63, then lanes 0-15 at slot 3's offset: 8-15 are not the tensor's
    ctx.gdma_cpy_S2L(40 * LANE + 128, G + 0x4000, bm1684x.dim4(1, 40, 1, 16), None, None, I8)
    ctx.gdma_cpy_L2S(G + 0x10000, 0, bm1684x.dim4(1, 200, 1, 16), None, None, I8)
    return ctx


def test_a_dead_write_into_a_middle_slot_is_reported_as_slot_by_slot():
    ctx = _middle_slot_dead_write()
    warnings = _report(ctx)
    assert [w[0] for w in warnings] == [OVERWRITTEN]
    assert warnings == _report(ctx, per_slot=True)


_OP = st.tuples(st.sampled_from(["load", "store"]), st.integers(0, 63), st.integers(0, 5),
                st.integers(1, 260), st.sampled_from([1, 3, 16]))


def _program(ops):
    """A Context of the loads and stores `ops` (_OP each), the k-th at its own gmem offsets."""
    ctx = bm1684x.Context()
    for k, (what, lane, slot, channels, w) in enumerate(ops):
        local = lane * LANE + 64 * slot
        shape = bm1684x.dim4(1, channels, 1, w)
        if what == "load":
            ctx.gdma_cpy_S2L(local, G + 0x40 * k, shape, None, None, I8)
        else:
            ctx.gdma_cpy_L2S(G + 0x10000 + 0x2000 * k, local, shape, None, None, I8)
    return ctx


@settings(max_examples=60, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=7))
def test_any_program_reports_as_slot_by_slot(ops):
    """Loads and stores of tensors of up to 260 channels from any lane, at offsets that overlap."""
    ctx = _program(ops)
    assert _report(ctx) == _report(ctx, per_slot=True)


def _report_rows(ctx, gated=True):
    """The warnings of two runs on one Simulator, reads looking for lost values only in segments
    LaneMap.lost_rows marks (gated) or in every segment; after every instruction, lost_rows must
    mark each segment with a lost value of the run."""
    buf = ctx.acquire_cmdbuf()
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G, np.arange(1, 1 + 0x8000, dtype=np.int64).astype(np.int8))
    original = LmemCheck.instruction

    def instruction(self, i, entries, *flags):
        if not gated:
            self.map.lost_rows[...] = True
        original(self, i, entries, *flags)
        m = self.map
        assert not ((m.lost >= self.base).any(axis=1) & ~m.lost_rows).any()

    with mock.patch.object(LmemCheck, "instruction", instruction):
        reports = [sim.run(buf) for _ in range(2)]
    return [_warnings(r) for r in reports]


@settings(max_examples=60, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=7))
def test_reads_look_for_lost_values_in_the_segments_that_may_hold_them(ops):
    """LaneMap.lost_rows (issue 34 item 4) marks every segment a dead write left lost values in:
    reads that skip the others report what reads looking everywhere report."""
    ctx = _program(ops)
    assert _report_rows(ctx) == _report_rows(ctx, gated=False)


def test_a_dead_write_found_through_the_marked_segments():
    """The middle-slot dead write above, on both runs of a Simulator: its report needs lost_rows."""
    ctx = _middle_slot_dead_write()
    got = _report_rows(ctx)
    assert [[w[0] for w in r] for r in got] == [[OVERWRITTEN], [OVERWRITTEN]] and got == _report_rows(ctx, gated=False)
