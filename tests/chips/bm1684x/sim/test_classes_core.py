"""Long and short classes simulate identically; the shared core on bm1684x: raw streams with
their end commands, sync ids, timing, trace, race detection; the simulator's bounds."""
import json

import attrs
import numpy as np
import pytest

import bmk
from bmk.errors import BmkError, SimulationError
from bmk.sim.bm1684x import GDMA_BYTES_PER_CYCLE, GDMA_STARTUP, TIU_STARTUP
from tests.chips.bm1684x.sim.helpers import (CHIP, GLOBAL_BASE, INTS, LANE, LOCAL_BASE, aligned, bits_of, prec, program,
                                       rand, rec, sign)
from tests.chips.bm1684x.sim.test_gdma import dma

I8, U8, I16, U16, I32, U32 = INTS


def _fields(rng, kind):
    shape = (2, 67, 2, 3)
    dt = INTS[int(rng.integers(0, 6))]
    f = dict(res0_n=shape[0], res0_c=shape[1], res0_h=shape[2], res0_w=shape[3], res0_addr=0x20000,
             opd0_addr=0, opd1_addr=0x10000, res0_prec=prec(dt), opd0_prec=prec(dt), opd1_prec=prec(dt),
             opd0_sign=sign(dt), opd1_sign=sign(dt), opd2_n_str=int(rng.integers(0, 7)), tsk_opd_num=2)
    if kind in ("arith.ashift", "arith.logicShift"):
        f.update(opd1_prec=prec(I8), opd1_sign=1)
    if kind in ("arith.cast", "arith.copy", "arith.not"):     # one operand (the vendor's casts and copies: 1)
        f.update(tsk_opd_num=1)
    if kind.startswith("cmp.") or "select" in kind:
        f.update(opd2_const=1, opd2_addr=bits_of(dt.max, dt), opd2_prec=prec(dt), opd2_sign=sign(dt))
    if kind.startswith("cmp."):
        f.update(opd3_const=1, opd3_addr=0)
    if kind.endswith("_and_sel"):
        f.update(res1_addr=0x30000)
    if kind.startswith("vc."):
        f.update(opd0_c=3, opd0_w=10, opd1_w=4, res0_c=2, res0_w=20, opd2_addr=bits_of(dt.max, dt), res0_n=24, res0_h=1)
    return dt, shape, f


PAIRS = [("AR", k) for k in ("arith.and", "arith.or", "arith.xor", "arith.max", "arith.min", "arith.add",
                             "arith.adds", "arith.sub", "arith.subs", "arith.mul", "arith.muls", "arith.copy",
                             "arith.not", "arith.cast", "arith.ashift", "arith.logicShift", "arith.selectGreat",
                             "arith.selectEqual", "arith.selectLess")] + \
        [("CMP", k) for k in ("cmp.sel_gt", "cmp.sel_eq", "cmp.sel_lt", "cmp.gt_and_sel", "cmp.lt_and_sel")] + \
        [("VC", k) for k in ("vc.and", "vc.or", "vc.xor", "vc.max", "vc.min", "vc.add", "vc.sub", "vc.mul",
                             "vc.add_satu", "vc.sub_satu", "vc.mul_satu", "vc.select_gt", "vc.select_eq",
                             "vc.select_lt")]
SHORT = {"AR": "sAR", "CMP": "sCMP", "VC": "sVC"}


@pytest.mark.parametrize("long,kind", PAIRS)
def test_long_and_short_forms_simulate_identically(long, kind):
    """The same instruction built in both classes (bmk.encode of Records): bytes differ, the
    decoded class differs, every byte of memory after the run is the same."""
    rng = np.random.default_rng(hash(kind) % 2**32)
    dt, shape, f = _fields(rng, kind)
    if kind in ("arith.muls", "vc.mul_satu") and dt == U32:
        dt, f = I32, dict(f, res0_prec=prec(I32), opd0_prec=prec(I32), opd1_prec=prec(I32), opd0_sign=1, opd1_sign=1)
    data = rng.integers(0, 256, 0x30000, dtype=np.uint8)
    results = []
    for cls in (long, SHORT[long]):
        sim = bmk.Simulator("bm1684x")
        for lane in range(64):
            sim.lmem_write(lane * LANE, data)
        r = rec("tiu", cls, kind, **f)
        buf = bmk.encode(CHIP, program([r]))
        assert bmk.decode(CHIP, buf)[0].cls == cls
        report = sim.run(buf)
        results.append((sim.lmem.data.copy(), report.total_cycles, len(buf)))
    (a, ca, na), (b, cb, nb) = results
    assert na != nb
    assert ca == cb
    assert np.array_equal(a, b)
    assert not np.array_equal(a[:0x30000], np.tile(data, 1)[:0x30000]) or kind == "arith.copy"


def test_raw_streams_with_end_commands_timing_trace(tmp_path):
    """load (S2L) -> TIU max_C waiting for it -> store (L2S) waiting for the TIU, as raw
    streams closed by sys.end / dma.sys: results, cycle model, no races, a trace file."""
    dt = I8
    shape = (1, 64, 4, 16)
    st = aligned(0, shape, dt)
    x = rand(np.random.default_rng(1), shape, dt)
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(GLOBAL_BASE, x.astype(np.int8))
    cont = (64 * 64, 64, 16, 1)
    tiu = rec("tiu", "sAR", "arith.max", res0_n=1, res0_c=64, res0_h=4, res0_w=16, res0_addr=0x1000, opd0_addr=0,
              opd1_const=1, opd1_addr=bits_of(-3, dt), res0_prec=prec(dt), opd0_prec=prec(dt), opd1_prec=prec(dt),
              opd0_sign=1, opd1_sign=1, tsk_opd_num=2)
    prog = [dma(GLOBAL_BASE, shape, cont, LOCAL_BASE, shape, st, dt), tiu,
            dma(LOCAL_BASE + 0x1000, shape, st, GLOBAL_BASE + 0x10000, shape, cont, dt)]
    prog = program(prog)
    ends = [rec("tiu", "SYSID", "sys.end", cmd_id=2), rec("gdma", "sDMA_sys", "dma.sys", cmd_id=3, cmd_id_en=1)]
    streams = bmk.encode(CHIP, prog + ends, raw=True)
    report = sim.run(streams)
    out = np.frombuffer(sim.gmem_read(GLOBAL_BASE + 0x10000, x.size), np.int8).reshape(shape)
    np.testing.assert_array_equal(out, np.maximum(x, -3))
    kinds = [(i.engine, i.kind) for i in report.instructions]
    assert ("tiu", "sys.end") in kinds and ("gdma", "dma.sys") in kinds
    dma_cyc = GDMA_STARTUP + -(-x.size // GDMA_BYTES_PER_CYCLE)
    tiu_cyc = TIU_STARTUP + 1          # ceil(N * ceil(64 / 64) * H * W / eu(8-bit)) = 64 / 64
    assert report.total_cycles == 2 * dma_cyc + tiu_cyc + 1   # + the dma.sys after the store
    assert report.races == ()
    path = tmp_path / "t.json"
    report.write_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    assert {e["name"] for e in events if e["ph"] == "X"} >= {"dma.tensor", "arith.max", "sys.end", "dma.sys"}


def test_race_without_sync_ids():
    """The TIU reads what the GDMA writes and nothing orders them: a race on the lanes touched."""
    dt = I8
    shape = (1, 8, 1, 64)
    st = aligned(0, shape, dt)
    load = dma(GLOBAL_BASE, shape, (512, 64, 64, 1), LOCAL_BASE, shape, st, dt)
    tiu = rec("tiu", "sAR", "arith.copy", res0_n=1, res0_c=8, res0_h=1, res0_w=64, res0_addr=0x1000, opd0_addr=0,
              res0_prec=prec(dt), opd0_prec=prec(dt), tsk_opd_num=1)
    load = attrs.evolve(load, fields=dict(load.fields, cmd_id=1))
    tiu = attrs.evolve(tiu, fields=dict(tiu.fields, cmd_id=1))
    report = bmk.Simulator("bm1684x").run(bmk.encode(CHIP, [load, tiu]))
    assert len(report.races) == 1
    race = report.races[0]
    assert race.space == "lmem" and race.lanes == tuple(range(8)) and (race.lo, race.hi) == (0, 64)


@pytest.mark.parametrize("change,message", [
    ({"res0_prec": 7}, "res0_prec must be one of"),
    ({"res0_str": 2}, "stride must be non-zero"),
    ({"res0_c": 0}, "must be positive"),
    ({"res0_addr": 70 * LANE}, "inside lmem"),
    ({"opd0_str": 3, "opd0_n_str": 0, "opd0_c_str": 0, "opd0_h_str": 0, "opd0_w_str": 0,
      "res0_n": 65535, "res0_c": 65535, "res0_h": 65535, "res0_w": 65535}, "at most"),
    ({"opd2_n_str": 7}, "rounding mode"),
    ({"relu": 1}, r"arith.ashift \(AR\): relu must be 0 \(bmk's arith.ashift does not execute it"),
])
def test_malformed_tiu_is_a_simulation_error(change, message):
    base = dict(res0_n=1, res0_c=4, res0_h=1, res0_w=4, res0_addr=0x100, opd0_addr=0, opd1_addr=0x40,
                tsk_opd_num=2)
    r = rec("tiu", "AR", "arith.ashift", **{**base, **change})
    sim = bmk.Simulator("bm1684x")
    with pytest.raises(SimulationError, match=message):
        sim.run(bmk.encode(CHIP, [r]))


def test_a_kind_without_semantics_names_itself():
    from bmk.sim.bm1684x import SEMANTICS
    from bmk.sim.semantics import Semantics
    less = Semantics({k: v for k, v in SEMANTICS.kinds.items() if k != ("tiu", "arith.div")}, SEMANTICS.check)
    r = rec("tiu", "sAR", "arith.div", res0_n=1, res0_c=1, res0_h=1, res0_w=1)
    with pytest.raises(SimulationError, match="tiu kind 'arith.div' must have simulator semantics"):
        bmk.Simulator("bm1684x", semantics=less).run(bmk.encode(CHIP, [r]))


def test_gmem_addresses_are_device_addresses():
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(GLOBAL_BASE + 0x10, b"abc")
    assert sim.gmem_read(GLOBAL_BASE + 0x10, 3) == b"abc"
    with pytest.raises(BmkError, match=r"gmem_read: addr must be a global address in \[0x100000000, "):
        sim.gmem_read(0x10, 3)                              # API.md: global memory starts at 0x100000000
    with pytest.raises(BmkError):
        sim.gmem_read(GLOBAL_BASE + 0x200000000, 1)
