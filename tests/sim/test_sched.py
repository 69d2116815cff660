"""Two engines and sync ids: serial vs parallel vs streams, races, id wrap-around, goldens."""
import json

import numpy as np
import pytest

import bmk
from bmk.bm1880 import CTRL_NULL, shape_t4
from bmk.encoders import encode_record
from bmk.isa import load_chip

from tests.goldens import GOLDEN_IDS, golden, load_cases, run_calls

from tests.chips.bm1880.sim.helpers import I8, new, rand16, sat

CHIP = load_chip("bm1880")
TILES, SHAPE = 6, (1, 32, 16, 16)
NB = 16 * 16                   # bytes of one plane per lane
PLANE = 32 * NB                # bytes of one plane in gmem
A_G, B_G, R_G = 0x100000, 0x400000, 0x800000


def buffers(ctx, k):
    """Double-buffered tensors of tile k: a (lo, hi), b (lo, hi), r."""
    base = (k % 2) * 5 * NB
    ts = [ctx.tl_prealloc(base + i * NB, shape_t4(*SHAPE), I8) for i in range(5)]
    return ts[0:2], ts[2:4], ts[4]


def load(ctx, k):
    (al, ah), (bl, bh), _ = buffers(ctx, k)
    for t, g in ((al, A_G), (ah, A_G + PLANE), (bl, B_G), (bh, B_G + PLANE)):
        ctx.gdma_load(t, g + k * 2 * PLANE, CTRL_NULL)


def add(ctx, k):
    (al, ah), (bl, bh), r = buffers(ctx, k)
    ctx.tpu_add(res_high=None, res_low=r, a_high=ah, a_low=al, b_high=bh, b_low=bl)


def store(ctx, k):
    ctx.gdma_store(buffers(ctx, k)[2], R_G + k * PLANE, CTRL_NULL)


def program(style):
    ctx, _ = new()
    if style == "serial":
        for k in range(TILES):
            load(ctx, k), add(ctx, k), store(ctx, k)
    elif style == "parallel":
        load(ctx, 0)
        for k in range(TILES):
            with ctx.parallel():
                add(ctx, k)
                if k + 1 < TILES:
                    load(ctx, k + 1)
                if k:
                    store(ctx, k - 1)
        store(ctx, TILES - 1)
    elif style == "streams":
        ctx.create_streams(2)
        for k in range(0, TILES, 2):
            for s in (0, 1):
                ctx.set_stream(s)
                load(ctx, k + s)
            for s in (0, 1):
                ctx.set_stream(s)
                add(ctx, k + s), store(ctx, k + s)
        ctx.destroy_streams()
    return ctx.acquire_cmdbuf()


def inputs():
    rng = np.random.default_rng(400)
    a, b = rand16(rng, (TILES,) + SHAPE, True), rand16(rng, (TILES,) + SHAPE, True)
    return a, b


def planes(v):
    """(TILES, ...) 16-bit values -> gmem bytes: per tile, low plane then high plane."""
    u = (v & 0xFFFF).astype(np.uint16)
    return np.stack([(u & 0xFF).astype(np.uint8), (u >> 8).astype(np.uint8)], axis=1)


def simulate(buf):
    a, b = inputs()
    sim = bmk.Simulator("bm1880")
    sim.gmem_write(A_G, planes(a))
    sim.gmem_write(B_G, planes(b))
    report = sim.run(buf)
    out = np.frombuffer(sim.gmem_read(R_G, TILES * PLANE), np.int8).reshape((TILES,) + SHAPE)
    return report, out, sat(a + b, True)


def test_serial_parallel_streams_same_result_fewer_cycles():
    results = {s: simulate(program(s)) for s in ("serial", "parallel", "streams")}
    for style, (report, out, ref) in results.items():
        np.testing.assert_array_equal(out, ref, err_msg=style)
        assert report.races == (), (style, [str(r) for r in report.races])
    serial = results["serial"][0]
    assert serial.overlap_cycles == 0
    assert serial.total_cycles == serial.serial_cycles
    for style in ("parallel", "streams"):
        rep = results[style][0]
        assert rep.total_cycles < serial.total_cycles, style
        assert rep.overlap_cycles > 0
        assert rep.engine_busy == serial.engine_busy     # same work, overlapped
        assert rep.total_cycles == rep.serial_cycles - rep.overlap_cycles


def test_forgotten_dependency_is_a_race():
    """A parallel group whose add reads what the load in the same group writes."""
    ctx, sim = new()
    a_l = ctx.tl_prealloc(0, shape_t4(1, 32, 4, 4), I8)
    a_h = ctx.tl_prealloc(16, shape_t4(1, 32, 4, 4), I8)
    r = ctx.tl_prealloc(64, shape_t4(1, 32, 4, 4), I8)
    ctx.gdma_load(a_h, 0x1000, CTRL_NULL)
    with ctx.parallel():
        ctx.gdma_load(a_l, 0x2000, CTRL_NULL)           # instruction 1 writes lanes 0-31 [0, 16)
        ctx.tpu_add(res_high=None, res_low=r, a_high=a_h, a_low=a_l, b_high=a_h, b_low=a_l)
    ctx.gdma_store(r, 0x3000, CTRL_NULL)
    report = sim.run(ctx.acquire_cmdbuf())
    assert len(report.races) == 1
    race = report.races[0]
    assert (race.first, race.second, race.space, race.lo, race.hi) == (1, 2, "lmem", 0, 16)
    assert race.lanes == tuple(range(32)) and race.kinds == ("write", "read")
    assert "instructions 1 (write) and 2 (read)" in str(race)
    assert report.to_dict()["races"][0]["first"] == 1


@pytest.mark.parametrize("name", ["sched_parallel_seed_example", "sched_two_streams_seed_example",
                                  "sched_add_dependency_parallel", "sched_add_dependency_streams",
                                  "sched_serial_load_load_add_store"])
def test_seed_examples_have_no_race(name):
    case = load_cases()[name]
    report = bmk.Simulator("bm1880").run(bytes.fromhex(case["cmdbuf_hex"]))
    assert report.races == ()


def test_parallel_seed_example_overlaps():
    case = load_cases()["sched_parallel_seed_example"]
    report = bmk.Simulator("bm1880").run(bytes.fromhex(case["cmdbuf_hex"]))
    assert report.overlap_cycles > 0 and report.total_cycles < report.serial_cycles


@pytest.mark.parametrize("name", GOLDEN_IDS)
def test_every_golden_decodes_and_runs(name):
    buf = golden(name)
    report = bmk.Simulator("bm1880").run(buf)
    assert len(report.instructions) == len(bmk.encoders.decode_cmdbuf(CHIP, buf))
    json.dumps(report.to_dict())


def test_golden_70000_ops_wraps_ids():
    """Sync ids restart after 0xffff; waits refer to the current id range."""
    case = load_cases()["sched_wrap_70000_ops"]
    buf = run_calls(case)[-1][1]
    report = bmk.Simulator("bm1880").run(buf, races=True)
    assert len(report.instructions) == case["instruction_count"]
    ins = report.instructions
    for i in case["sync_id_0xffff_at_instruction"]:
        assert ins[i].id == 0xffff and ins[i + 1].id == 1
    # in-order engines, serial program: every instruction starts after the previous one ended
    assert all(b.start >= a.end for a, b in zip(ins, ins[1:]))


def tiu(**f):
    base = dict(cmd_en=1, cmd_id_en=1, tsk_typ=3, tsk_eu_typ=10, tsk_opd_num=1, opt_relu=0,
                short_res0_str=3, short_opd0_str=3, res0_c=32, res0_h=1, res0_w=16, opd0_c=32, opd0_h=1,
                opd0_w=16, res0_addr=0x100, opd0_addr=0)
    base.update(f)
    return encode_record(CHIP, "tiu", base)


def tdma(**f):
    g = CHIP.gmem_addr_offset + 0x1000
    base = dict(vld=1, bar_en=1, src_c=32, dst_c=32, src_w=16, dst_w=16, src_n_stride=512,
                src_c_stride_low=16, src_h_stride=16, dst_n_stride=16, dst_c_stride_low=16, dst_h_stride=16,
                src_base_addr_low=g & 0xFFFFFFFF, src_base_addr_high=g >> 32)
    base.update(f)
    return encode_record(CHIP, "tdma", base)


def test_wait_resolves_in_the_current_id_range():
    """After an id 0xffff, ids restart: TIU id 1 (chunk 1) waits for the chunk-1 TDMA id 1."""
    buf = (tdma(cmd_id=1) + tiu(cmd_id_tpu=0xffff, cmd_id_gdma=1)
           + tdma(cmd_id=1, dst_base_addr_low=0x200) + tiu(cmd_id_tpu=1, cmd_id_gdma=1, opd0_addr=0x200))
    report = bmk.Simulator("bm1880").run(buf)
    ins = report.instructions
    assert ins[3].wait == (("tdma", 1),)
    assert ins[3].start >= ins[2].end and ins[2].start >= ins[0].end
    assert report.races == ()


def test_trace_and_report(tmp_path):
    report = simulate(program("parallel"))[0]
    path = tmp_path / "trace.json"
    report.write_trace(path)
    trace = json.loads(path.read_text())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(report.instructions)
    assert {e["cat"] for e in events} == {"tiu", "tdma"}
    assert all(e["dur"] > 0 for e in events)
    d = report.to_dict()
    assert d["total_cycles"] == report.total_cycles and d["engine_busy"] == report.engine_busy
    assert [i["index"] for i in d["instructions"]] == list(range(len(report.instructions)))
    assert "cycles" in report.summary()


def test_interleaved_tensors_do_not_race():
    """Bounding boxes meet, bytes do not: a strided TIU write around a TDMA load in one group."""
    ctx, sim = new()
    src = ctx.tl_prealloc(0x1000, shape_t4(2, 32, 1, 8), I8)
    dst = ctx.tl_prealloc(0, shape_t4(2, 32, 1, 8), I8)           # written at [0, 8) and [32, 40)
    mid = ctx.tl_prealloc(8, shape_t4(1, 32, 1, 16), I8)          # loaded at [8, 24)
    from bmk.bm1880 import stride_t4
    with ctx.parallel():
        ctx.tpu_copy_with_stride(dst=dst, dst_stride=stride_t4(32, 8, 8, 1), src=src,
                                 src_stride=stride_t4(8, 16, 8, 1))
        ctx.gdma_load(mid, 0x1000, CTRL_NULL)
        ctx.gdma_load(ctx.tl_prealloc(36, shape_t4(1, 32, 1, 2), I8), 0x1000, CTRL_NULL)   # [36, 38): races
    report = sim.run(ctx.acquire_cmdbuf())
    assert [(r.first, r.second, r.lo, r.hi) for r in report.races] == [(0, 2, 36, 38)]
