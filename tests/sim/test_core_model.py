"""The chip-neutral simulator core: 64 NPUs, more than two engines, memory spaces, dtype and
4N/2N views, the Semantics object, (stream, offset) in errors. The test chip is bm1880's spec
evolved to 64 NPUs with a third engine ("dma2": the tdma format under another name and id)."""

from pathlib import Path

import attrs
import numpy as np
import pytest

import bmk.sim
from bmk import layout
from bmk.encoders import make_record
from bmk.errors import ArgumentError, SimulationError
from bmk.isa import load_chip
from bmk.sim import Simulator
from bmk.isa.spec import MemorySpace
from bmk.sim.semantics import Semantics, semantics_for, simulated_chips

LANE = 4096


def chip64(third=True):
    base = load_chip("bm1880")
    params = dict(base.params)
    params.update(npu_num=64, lmem_size=LANE)
    engines = list(base.engines)
    if third:
        tdma = base.engine("tdma")
        engines.append(attrs.evolve(tdma, name="dma2", id=3, wait_for=(("tiu", "wait_id_tpu"),)))
    memory = tuple(attrs.evolve(m, size=64 * LANE, lane_bytes=LANE) if m.name == "local" else m for m in base.memory)
    return attrs.evolve(base, params=tuple(params.items()), engines=tuple(engines), memory=memory)


def fill(m, f):
    """Tiny semantics: lmem (1, dst_c, 1, dst_w) at dst_addr <- const_val (one byte each)."""
    addr = m.formats["tdma"].compose("dst_addr", f)
    shape = (1, f["dst_c"], 1, f["dst_w"])
    m.lmem.tensor("dst", addr, shape, (f["dst_w"],) * 3 + (1,), m.log, True).write(np.uint8(f["const_val"]))


def noop(m, f):
    return None


def tiny(chip):
    kinds = {("tiu", ins.name): noop for ins in chip.engine("tiu").format.instructions}
    kinds[("tdma", "fill")] = fill
    kinds[("dma2", "fill")] = fill
    return Semantics(kinds, cycles=lambda engine, kind, f, m: 10)


def rec(chip, engine, kind, offset, addr=0, **fields):
    fmt = chip.engine(engine).format
    f = dict(fmt.defaults)
    f.update(fmt.instruction(kind).match)
    if engine != "tiu":
        f.update(fmt.split("dst_addr", addr))
    f.update(fields)
    return make_record(chip, engine, fmt, f, None, offset)


def fills(chip, dma2_waits):
    tiu_kind = chip.engine("tiu").format.instructions[0].name
    return [rec(chip, "tdma", "fill", 0, 0x100, cmd_id=1, dst_c=64, dst_w=4, src_n=1, const_val=7),
            rec(chip, "tiu", tiu_kind, 1, cmd_id_tpu=1, cmd_id_gdma=1),
            rec(chip, "dma2", "fill", 2, 0x100, cmd_id=1, dst_c=64, dst_w=4, src_n=1, const_val=9,
                wait_id_tpu=1 if dma2_waits else 0)]


def test_transitive_waits_order_three_engines():
    """dma2 waits for tiu, which waits for tdma: dma2 follows tdma without waiting for it."""
    chip = chip64()
    sim = Simulator(chip, tiny(chip))
    report = sim.run(fills(chip, True))
    assert report.races == ()
    assert [(i.start, i.end) for i in report.instructions] == [(0, 10), (10, 20), (20, 30)]
    assert sim.lmem_read_array(0x100, (1, 64, 1, 4), (4, 4, 4, 1), "uint8").tolist() == [[[[9] * 4]] * 64]
    assert set(report.pair_overlap) == {("tiu", "tdma"), ("tiu", "dma2"), ("tdma", "dma2")}
    assert report.overlap_cycles == 0 and report.total_cycles == 30


def test_race_across_three_engines_on_all_64_lanes():
    chip = chip64()
    report = Simulator(chip, tiny(chip)).run(fills(chip, False))
    assert [(r.first, r.second, r.space, r.lo, r.hi, r.kinds) for r in report.races] == \
        [(0, 2, "lmem", 0x100, 0x104, ("write", "write"))]
    assert report.races[0].lanes == tuple(range(64))
    assert report.overlap_cycles == 10 and report.pair_overlap[("tdma", "dma2")] == 10


def test_lane_63_alone():
    chip = chip64()
    sem = tiny(chip)
    recs = [rec(chip, "tdma", "fill", 0, 63 * LANE + 8, cmd_id=1, dst_c=1, dst_w=2, src_n=1, const_val=5),
            rec(chip, "tdma", "fill", 1, 63 * LANE + 9, cmd_id=2, dst_c=2, dst_w=2, src_n=1, const_val=6)]
    sim = Simulator(chip, sem)
    sim.run(recs)
    assert sim.lmem_read(63 * LANE + 8, 3) == bytes([5, 6, 6])
    assert sim.lmem_read(9 + 2, 2) == bytes([6, 6])    # channel 1 wrapped to lane 0, slot 1 (c stride 2)


def test_unmodelled_kind_and_stream_in_errors():
    chip = chip64()
    sem = Semantics({k: v for k, v in tiny(chip).kinds.items() if k != ("dma2", "fill")})

    recs = fills(chip, True)
    recs[2] = attrs.evolve(recs[2], offset=16, stream="dma2")
    with pytest.raises(SimulationError, match=r"instruction 2 \(stream dma2 byte 16, dma2\): dma2 kind 'fill' "
                                              r"must have simulator semantics"):
        Simulator(chip, sem).run(recs)
    recs[2] = attrs.evolve(recs[2], fields=dict(recs[2].fields, dst_c=64, dst_w=LANE))
    with pytest.raises(SimulationError, match=r"stream dma2 byte 16, dma2\): fill: dst must fit in its lmem lane"):
        Simulator(chip, tiny(chip)).run(recs)


def test_report_names_streams():
    chip = chip64()

    recs = [attrs.evolve(r, offset=r.offset * 16, stream=r.engine) for r in fills(chip, True)]
    report = Simulator(chip, tiny(chip)).run(recs)
    assert [(i.stream, i.offset, i.where) for i in report.instructions][2] == ("dma2", 32, "stream dma2 byte 32")
    assert report.to_dict()["instructions"][0]["stream"] == "tdma"


def test_semantics_registry_and_arguments():
    chip = load_chip("bm1880")
    sem = semantics_for("bm1880")
    sims = sorted(p.parent.name for p in Path(bmk.sim.__file__).parent.glob("*/__init__.py"))
    assert list(simulated_chips()) == sims and {"bm1880", "bm1684", "bm1684x"} <= set(sims)
    assert sem.missing(chip) == []                       # every spec kind of bm1880 has semantics
    assert len(sem.kinds) == sum(len(e.format.instructions) for e in chip.engines if e.format)
    assert Simulator("bm1880").semantics is sem and Simulator(chip).chip is chip
    with pytest.raises(ArgumentError, match="Simulator: semantics must be a bmk.sim.semantics.Semantics"):
        Simulator("bm1880", {"tiu": {}})
    with pytest.raises(ArgumentError, match="Simulator: chip must be a chip name or a ChipSpec"):
        Simulator(1880)
    with pytest.raises(SimulationError, match="chip must have simulator semantics"):
        semantics_for("bm9999")


# -- memory spaces -----------------------------------------------------------------------------------
def test_bm1880_spaces_from_params():
    chip = load_chip("bm1880")
    assert chip.memory == (MemorySpace("local", 0, 32 * 32768, 32768),
                                   MemorySpace("global", 0x100000000, (1 << 40) - (1 << 32), None, 0xFFFFFFFFFF))
    sim = Simulator("bm1880")
    assert sim.space_of(0x100001000) == (sim.space("global"), 0x1000)
    assert sim.space_of(0x20) == (sim.space("local"), 0x20)
    with pytest.raises(SimulationError, match=r"address must be inside a memory space of bm1880 \(local \[0x0, "
                                              r"0x100000\), global \[0x100000000, 0x10000000000\)\), not 0x200000"):
        sim.space_of(0x200000)
    assert sim.gmem_offset == 0x100000000


def test_spaces_from_a_memory_map():
    spaces = (MemorySpace("dtcm", 0x02000000, 0x80000), MemorySpace("local", 0x08000000, 64 * LANE, LANE),
              MemorySpace("l2sram", 0x10000000, 0x1000000), MemorySpace("global", 0x100000000, 0x200000000))
    chip = attrs.evolve(chip64(), memory=spaces)
    sim = Simulator(chip, tiny(chip))
    assert set(sim.memories) == {"dtcm", "local", "l2sram", "global"}
    assert sim.lmem.npu_num == 64 and sim.memories["l2sram"].name == "l2sram"
    assert sim.space_of(0x10000010) == (spaces[2], 0x10)
    assert sim.space_of(0x08000000 + 5 * LANE) == (spaces[1], 5 * LANE)
    with pytest.raises(SimulationError, match="not 0x30000000"):
        sim.space_of(0x30000000)


def test_semantics_init_fills_a_fresh_chip():
    """Semantics.init(m) runs once, at construction, after the memories exist (bm1684: its L2 SRAM
    lookup tables); the default leaves every memory zero."""
    chip = chip64()
    calls = []

    def init(m):
        calls.append(m)
        m.lmem.write_bytes(8, b"\x01\x02")

    sem = attrs.evolve(tiny(chip), init=init)
    sim = Simulator(chip, sem)
    assert calls == [sim] and sim.lmem_read(8, 3) == b"\x01\x02\x00"
    assert Simulator(chip, tiny(chip)).lmem_read(8, 2) == bytes(2)


# -- dtype and 4N / 2N views -------------------------------------------------------------------------
def big_sim():
    chip = chip64()
    return Simulator(chip, tiny(chip))


def test_bm1684x_worked_examples():
    """isa-facts bm1684x-memory.md: aligned strides and element addresses (lane = addr // lane size)."""
    assert layout.aligned_stride((1, 67, 1, 3), 1, 64, 64) == (128, 64, 3, 1)
    assert layout.element_location(0, (0, 65, 0, 2), (128, 64, 3, 1), 1, 262144, 64) == (1, 66)
    assert layout.aligned_stride((2, 3, 1, 5), 2, 64, 64) == (32, 32, 5, 1)
    assert layout.element_location(0x400, (1, 2, 0, 4), (32, 32, 5, 1), 2, 262144, 64) == (2, 0x448)
    assert layout.aligned_stride((1, 2, 2, 3), 4, 64, 64)[1] == 16
    assert layout.element_location(5 * 262144 + 0x1000, (0, 1, 1, 2), (32, 16, 3, 1), 4, 262144, 64) == \
        (6, 0x1000 + (3 + 2) * 4)
    assert layout.aligned_stride((2, 3, 1, 1), 1, 64, 64, start_npu=62)[0] == 128
    assert layout.element_location(62 * 262144, (1, 2, 0, 0), (128, 64, 1, 1), 1, 262144, 64) == (0, 192)
    assert layout.aligned_stride((2, 3, 5, 7), 4, 128, 64) == (64, 64, 7, 1)       # bm1684 example
    assert layout.compact_stride((2, 70, 2, 3), 64) == (12, 6, 3, 1)
    assert layout.continuous_stride((2, 3, 4, 5)) == (60, 20, 5, 1)
    assert (layout.pack_factor(1), layout.pack_factor(2), layout.pack_factor(4)) == (4, 2, 1)


@pytest.mark.parametrize("dtype,np_dtype", [("int16", np.int16), ("int32", np.int32), ("fp32", np.float32),
                                            ("uint16", np.uint16), ("bf16", np.uint16)])
def test_dtype_views_match_the_element_formula(dtype, np_dtype):
    sim = big_sim()
    shape, e = (2, 67, 2, 3), np.dtype(np_dtype).itemsize
    stride = layout.aligned_stride(shape, e, 64, 64, start_npu=3)
    addr = 3 * LANE + 0x40
    vals = (np.arange(np.prod(shape)) - 300).reshape(shape).astype(np_dtype)
    sim.lmem_write_array(addr, vals, stride, dtype)
    assert np.array_equal(sim.lmem_read_array(addr, shape, stride, dtype), vals)
    for idx in [(0, 0, 0, 0), (1, 60, 1, 2), (1, 61, 0, 1), (0, 66, 1, 0)]:
        lane, off = layout.element_location(addr, idx, stride, e, LANE, 64)
        raw = sim.lmem_read(lane * LANE + off, e)
        assert np.frombuffer(raw, np_dtype)[0] == vals[idx]


def test_int8_4n_view_against_hand_layout():
    """4N: batches 4g..4g+3 share the 32-bit word of group g, byte i = batch 4g + i."""
    sim = big_sim()
    shape = (6, 2, 1, 3)                     # groups of 4 batches: 2 (the second partial)
    stride = (8, 4, 3, 1)                    # in 32-bit words: n 8, c 4 (slot), h 3, w 1
    vals = np.arange(-18, 18, dtype=np.int8).reshape(shape)
    sim.lmem_write(0, bytes([0xAA]) * 128)
    sim.lmem_write(LANE, bytes([0xAA]) * 128)
    sim.lmem_write_array(0, vals, stride, "int8", pack=4)
    lane0 = np.frombuffer(sim.lmem_read(0, 64), np.uint8)
    want = np.full(64, 0xAA, np.uint8)
    for n in range(6):
        for w in range(3):
            want[4 * ((n // 4) * 8 + w) + n % 4] = np.uint8(vals[n, 0, 0, w])   # channel 0 in lane 0
    assert lane0.tolist() == want.tolist()
    assert sim.lmem_read(LANE + 4 * 1 + 2, 1) == bytes([np.uint8(vals[2, 1, 0, 1])])   # channel 1, lane 1
    assert sim.lmem_read(4 * 8 + 2, 2) == b"\xaa\xaa"         # batches 6, 7 of the partial group untouched
    assert np.array_equal(sim.lmem_read_array(0, shape, stride, "int8", pack=4), vals)


def test_int16_2n_view_against_hand_layout():
    """2N: batches 2g, 2g+1 share the 32-bit word of group g, low half = batch 2g (little-endian)."""
    sim = big_sim()
    shape, stride = (2, 1, 1, 2), (2, 2, 2, 1)
    vals = np.array([[0x1122, -2], [0x3344, 0x5566]], np.int16).reshape(shape)   # [n][w]
    sim.lmem_write_array(0, vals, stride, "int16", pack=2)
    # word w holds (batch 0, batch 1) of column w
    assert sim.lmem_read(0, 8) == bytes([0x22, 0x11, 0x44, 0x33, 0xFE, 0xFF, 0x66, 0x55])
    assert np.array_equal(sim.lmem_read_array(0, shape, stride, "int16", pack=2), vals)


def test_array_arguments_are_checked():
    sim = big_sim()
    with pytest.raises(ArgumentError, match="lmem_read_array: dtype must be"):
        sim.lmem_read_array(0, (1, 1, 1, 1), (1, 1, 1, 1), "int9")
    with pytest.raises(ArgumentError, match="lmem_read_array: shape, stride must be 4 integers"):
        sim.lmem_read_array(0, (1, 1, 1), (1, 1, 1, 1), "int8")
    with pytest.raises(ArgumentError, match="must fit in its lmem lane"):
        sim.lmem_read_array(0, (1, 1, 1, LANE), (LANE, LANE, LANE, 1), "int16")
    with pytest.raises(ArgumentError, match="pack must make 4-byte words"):
        sim.lmem_read_array(0, (4, 1, 1, 1), (1, 1, 1, 1), "int8", pack=2)


def test_run_takes_raw_streams_and_a_cmdbuf_alike():
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register()
    s = bm1880.shape_t4(1, 32, 2, 8)
    a, r = ctx.tl_prealloc(0, s, FMT_I8), ctx.tl_prealloc(512, s, FMT_I8)
    ctx.gdma_load(a, 0x1000, CTRL_NULL)
    ctx.tpu_relu(ofmap=r, ifmap=a)
    ctx.gdma_store(r, 0x3000, CTRL_NULL)
    data = (np.arange(512) % 256).astype(np.uint8)
    results = []
    for program in (ctx.acquire_cmdbuf(), ctx.acquire_streams()):
        sim = Simulator("bm1880")
        sim.gmem_write(0x1000, data)
        report = sim.run(program)
        results.append((sim.gmem_read(0x3000, 512), [(i.engine, i.kind) for i in report.instructions]))
    assert results[0] == results[1]
    assert results[0][0] == np.maximum(data.view(np.int8), 0).astype(np.uint8).tobytes()
    assert [i.stream for i in Simulator("bm1880").run(ctx.acquire_streams()).instructions] == ["tdma", "tiu", "tdma"]


def test_a_refusal_naming_its_kind_is_not_prefixed_again():
    """Issue 32.10: a kind's message that starts with its own name read 'mm.mul: mm.mul: ...'."""
    chip = chip64()

    def refuses(m, f):
        raise SimulationError("fill: const_val must be below 9 (here), not 9")
    sem = tiny(chip)
    sem = Semantics({**sem.kinds, ("tdma", "fill"): refuses}, cycles=sem.cycles)
    with pytest.raises(SimulationError) as e:
        Simulator(chip, sem).run(fills(chip, False)[:2])
    assert str(e.value) == "instruction 0 (byte 0, tdma): fill: const_val must be below 9 (here), not 9"

    def plain(m, f):
        raise SimulationError("const_val must be below 9, not 9")
    sem = Semantics({**sem.kinds, ("tdma", "fill"): plain}, cycles=sem.cycles)
    with pytest.raises(SimulationError, match=r"\(byte 0, tdma\): fill: const_val must be below 9, not 9$"):
        Simulator(chip, sem).run(fills(chip, False)[:2])
