"""What the local-memory checks skip to be cheap (issue 34 item 4) without changing what they
report: no warning is built once the list is full (MAX_WARNINGS), an overwritten-tensor read
costs the owners' pass only for a pair it may report, and the bytes-as-they-were array (prev)
is lane-major like local memory, so a write copies without a gather."""
import numpy as np
import pytest

import bmk
from bmk import bm1684x
from bmk.sim import lmemcheck
from bmk.sim.report import OVERWRITTEN, UNINITIALIZED
from tests.loop.test_lmem_checks import G, _clobbered, _sim

I8 = bm1684x.DT_INT8
SMALL = bm1684x.dim4(1, 8, 1, 16)


def _reads_never_written(n):
    """n instructions, each reading 16 bytes a lane never written (instruction k + 1 reads 0x2000 + 64 k)."""
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0, G, SMALL, None, None, I8)
    for k in range(n):
        ctx.bdc_and(0x1000, 0, 0x2000 + 64 * k, SMALL, None, None, None, I8)
    return ctx.acquire_cmdbuf()


@pytest.fixture
def where_calls(monkeypatch):
    calls = []
    real = lmemcheck.LmemCheck._where

    def counted(self, *a):
        calls.append(a[0])
        return real(self, *a)
    monkeypatch.setattr(lmemcheck.LmemCheck, "_where", counted)
    return calls


def test_a_full_list_builds_no_more_warnings(monkeypatch, where_calls):
    buf = _reads_never_written(12)
    monkeypatch.setattr(lmemcheck, "MAX_WARNINGS", 100)
    every = bmk.Simulator("bm1684x").run(buf, races=False, checks=True).warnings
    assert [(w.kind, w.index, w.lo, w.hi) for w in every] == \
           [(UNINITIALIZED, k + 1, 0x2000 + 64 * k, 0x2010 + 64 * k) for k in range(12)]
    assert len(where_calls) == 12
    where_calls.clear()
    monkeypatch.setattr(lmemcheck, "MAX_WARNINGS", 5)
    first = bmk.Simulator("bm1684x").run(buf, races=False, checks=True).warnings
    assert first == every[:5]
    assert len(where_calls) == 5            # the 7 warnings past the list's end were never built


def test_an_overwritten_read_past_a_full_list(monkeypatch, where_calls):
    (w,) = _sim().run(_clobbered().acquire_cmdbuf()).warnings
    assert (w.kind, w.index, w.writer, w.clobber, w.lo, w.hi) == (OVERWRITTEN, 2, 0, 1, 0x40, 0x50)
    where_calls.clear()
    monkeypatch.setattr(lmemcheck, "MAX_WARNINGS", 0)
    assert _sim().run(_clobbered().acquire_cmdbuf()).warnings == ()
    assert where_calls == []


def test_prev_follows_local_memory_lane_major():
    """prev holds each byte as the last write left it, at the byte's own Lmem.data offset: after
    host writes, after a checked run, and after an unchecked run (then copied whole)."""
    sim = bmk.Simulator("bm1684x")
    sim.lmem_write(3 * bm1684x.local_mem_size_per_npu() + 0x100, bytes(range(1, 33)))
    sim.gmem_write(G, np.arange(1, 1 + 0x2000, dtype=np.int64).astype(np.int8))
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0x40, G, SMALL, None, None, I8)
    sim.run(ctx.acquire_cmdbuf())
    lc = sim._lcheck
    data = sim.lmem.data
    touched = np.flatnonzero(lc.map.per_byte(lc.map.owner))
    assert len(touched) == 8 * 16 + 32
    assert np.array_equal(lc.prev[touched], data[touched])
    assert data[touched].any()
    sim.run(ctx.acquire_cmdbuf(), races=False)              # unchecked: prev is taken whole on the next checked run
    sim.lmem_write(0x40, bytes(16))                         # the host changes lane 0 behind the checker's back
    sim.run(bm1684x.Context().acquire_cmdbuf())
    assert np.array_equal(lc.prev, data)
