"""Simulator semantics of md_sfu (fp32_to_int, rsqrt, taylor) and lut (bmk/sim/bm1684/sfu.py),
and the L2 SRAM lookup tables the simulator places itself (tables.py).

The strongest check: the vendor's own SiLU sequence of the yolov5s stream (md_scalar mul, ar
min/max, md_sfu fp32_to_int, two luts, md_scalar sub, md_sfu taylor, md_scalar add/mul/add,
md_scalar divide), replayed unchanged but for its sync ids, computes x * sigmoid(x): the table
contents, the lut index rule and the taylor form (e^x - 1) fit what the vendor's compiler emits.
"""
import math

import numpy as np
import pytest

import bmk
from bmk.isa import load_chip
from bmk.bm1684.lowering import common as lo
from bmk.encoders import Record
from bmk.errors import SimulationError
from bmk.sim.semantics import Semantics
from tests.chips.bm1684.helpers import get, npu_addr, put
from tests.vectors.vendor import streams

CHIP = load_chip("bm1684")

f32 = np.float32
rng = np.random.default_rng(84)


def renumber(records):
    """The records as a stand-alone TIU stream: ids 1..n, no GDMA dependency."""
    return [Record(r.engine, r.cls, r.kind, {**r.fields, "cmd_id_tpu": i + 1, "cmd_id_gdma": 0}, r.stream,
                   r.offset, r.header) for i, r in enumerate(records)]


def command(kind, **fields):
    tiu = CHIP.engine("tiu").format
    return Record("tiu", tiu.name, kind, {**tiu.defaults, **CHIP.kind("tiu", kind), "cmd_en": 1, "cmd_id_en": 1, **fields})


def run(records, sim=None):
    sim = sim or bmk.Simulator("bm1684")
    sim.run(bmk.encode("bm1684", renumber(records), raw=True))
    return sim


def l2_floats(sim, offset, n):
    return np.frombuffer(sim.memories["l2sram"].load(offset, 4 * n), "<f4")


def test_tables_are_in_l2_sram_on_construction():
    """The tables of the vendor's l2_sram_table generator, at memmap.h's offsets."""
    sim = bmk.Simulator("bm1684")
    l2 = sim.space("l2sram")
    assert (l2.base, l2.size) == (0x10000000, 0x400000)                    # 4 MiB covers offset 0x300000+
    p = CHIP.param
    assert (p("l2_sram_exp_int_table"), p("l2_sram_exp_table"), p("l2_sram_exp_taylor_table"),
            p("l2_sram_int2float_table")) == (0x300000, 0x300400, 0x300C00, 0x301300)   # the streams' opd1_addr
    k = np.r_[0:128, -128:0]                                               # index i is the int8 i
    inside = (k >= -103) & (k <= 88)                                       # the generator's range; 0 elsewhere
    assert np.array_equal(l2_floats(sim, 0x300000, 256), np.where(inside, k, 0).astype(f32))
    with np.errstate(over="ignore"):
        assert np.array_equal(l2_floats(sim, 0x300400, 256),
                              np.where(inside, np.exp(k.astype(np.float64)), 0).astype(f32))
    assert np.array_equal(l2_floats(sim, 0x301300, 256), k.astype(f32))
    assert np.array_equal(l2_floats(sim, p("l2_sram_uint2float_table"), 256), np.arange(256, dtype=f32))
    taylor = l2_floats(sim, 0x300C00, 64)
    assert np.allclose(taylor[:30], [1 / math.factorial(j + 1) for j in range(30)], rtol=1e-6, atol=0)
    assert taylor[2] == np.float32(np.float32(np.float32(1) / 2) / 3)        # fp32 divisions, as the generator
    assert np.array_equal(l2_floats(sim, p("l2_sram_lnx_table"), 256),
                          (math.log(2.0) * (np.arange(256) - 127.0)).astype(f32))
    assert np.array_equal(l2_floats(sim, p("l2_sram_lnx_taylor_table"), 4), np.array([1, -1 / 2, 1 / 3, -1 / 4], f32))
    assert np.array_equal(l2_floats(sim, p("l2_sram_sinx_taylor_table"), 4), np.array([1, 0, -1 / 6, 0], f32))
    assert np.array_equal(l2_floats(sim, p("l2_sram_arcsinx_taylor_table"), 5), np.array([1, 0, 1 / 6, 0, 3 / 40], f32))
    assert bmk.Simulator("bm1684", semantics=Semantics({})).memories["l2sram"].load(0x300400, 4).tobytes() == bytes(4)


def vendor_silu():
    """The first SiLU of the yolov5s TIU stream: md_scalar mul by -1 up to the md_scalar divide."""
    tiu = [r for r in bmk.decode("bm1684", streams("bm1684")) if r.engine == "tiu"]
    i = next(k for k, r in enumerate(tiu) if r.kind == "lut") - 4
    silu = tiu[i:i + 12]
    assert [r.kind for r in silu] == ["md_scalar.mul", "arith.min", "arith.max", "md_sfu.fp32_to_int", "lut", "lut",
                                      "md_scalar.sub", "md_sfu.taylor", "md_scalar.add", "md_scalar.mul",
                                      "md_scalar.add", "md_scalar.divide"]
    return silu


def test_the_vendor_silu_sequence_computes_x_sigmoid_x():
    silu = vendor_silu()
    x_rec, out_rec = silu[0], silu[-1]
    shape = (x_rec.fields["res0_n"], x_rec.fields["res0_c"], x_rec.fields["res0_h"], x_rec.fields["res0_w"])
    base = CHIP.space("local").base
    x_addr, out_addr = x_rec.fields["opd0_addr"] - base, out_rec.fields["res0_addr"] - base
    x = rng.uniform(-20, 20, shape).astype(f32)
    x.flat[:5] = [0.0, 1.0, -1.0, 87.0, -87.0]
    sim = bmk.Simulator("bm1684")
    put(sim, x_addr, x)
    run(silu, sim)
    got = get(sim, out_addr, shape)
    want = (x.astype(np.float64) / (1 + np.exp(-x.astype(np.float64)))).astype(f32)
    assert np.allclose(got, want, rtol=4e-7, atol=1e-37)     # 12 series of taylor: a few ulp


def test_fp32_to_int_saturates_to_the_result_precision():
    shape = (1, 3, 1, 4)
    x = np.array([-40000.0, 40000.0, 2.5, -2.5, 3.5, np.nan, -np.inf, 1e10, 0.49, -0.51, 7.0, 100.0], f32)
    f = {}
    lo.tensor(CHIP, f, "res0", 4096, None, prec="int16", shape=shape)
    lo.tensor(CHIP, f, "opd0", 0, None)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, x.reshape(shape))
    run([command("md_sfu.fp32_to_int", **f)], sim)
    got = get(sim, 4096, shape, dtype="int16", pack=2)
    assert list(got.flat) == [-32768, 32767, 2, -2, 4, 0, -32768, 32767, 0, -1, 7, 100]


def test_lut_index_is_the_low_bits_of_an_int8_or_a_word():
    """A 4N int8 opd0 indexes the table by its byte; an int32 (or fp32-precision) word by its
    low opd1_h bits: 300 -> 44, -1 -> 255; the result is the table's word, here into int32."""
    shape = (5, 2, 1, 3)
    idx = rng.integers(-128, 128, shape).astype(np.int8)
    f = {}
    lo.tensor(CHIP, f, "res0", npu_addr(62, 4096), None, shape=shape)
    lo.tensor(CHIP, f, "opd0", npu_addr(62, 0), None, prec="int8", signed=True)
    f.update(opd1_addr=CHIP.param("l2_sram_int2float_table"), opd1_h=8)
    sim = bmk.Simulator("bm1684")
    put(sim, npu_addr(62, 0), idx, dtype="int8", pack=4)
    run([command("lut", **f)], sim)
    assert np.array_equal(get(sim, npu_addr(62, 4096), shape), idx.astype(f32))

    words = np.array([300, -1, 5, 256], np.int32).reshape(1, 1, 1, 4)
    f = {}
    lo.tensor(CHIP, f, "res0", 8192, None, prec="int32", shape=words.shape)
    lo.tensor(CHIP, f, "opd0", 0, None)                                          # default fp32: the word as an int
    f.update(opd1_addr=CHIP.param("l2_sram_uint2float_table"), opd1_h=8)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, words, dtype="int32")
    run([command("lut", **f)], sim)
    assert list(get(sim, 8192, words.shape, dtype="int32").view(f32).flat) == [44.0, 255.0, 5.0, 0.0]


def test_taylor_is_horner_in_fp32_of_the_table_at_opd1():
    """res0 = x (c0 + x (c1 + ... x c_{n-1})) with c read from any L2 SRAM offset (here a table the
    test writes itself: 2, 3, 4 -> 2x + 3x^2 + 4x^3)."""
    shape = (1, 2, 2, 2)
    x = rng.uniform(-2, 2, shape).astype(f32)
    sim = bmk.Simulator("bm1684")
    sim.memories["l2sram"].store(0x200000, np.array([2, 3, 4], "<f4").view(np.uint8))
    put(sim, 0, x)
    f = {}
    lo.tensor(CHIP, f, "res0", 1024, None, shape=shape)
    lo.tensor(CHIP, f, "opd0", 0, None)
    run([command("md_sfu.taylor", opd1_addr=0x200000, opd1_n=3, **f)], sim)
    want = x * (f32(2) + x * (f32(3) + x * f32(4)))
    assert np.array_equal(get(sim, 1024, shape), want)


@pytest.mark.parametrize("kind, fields, match", [
    ("lut", {"tsk_eu_typ": 19, "opd1_h": 8}, "lut: tsk_eu_typ must be 0"),
    ("lut", {"opd1_h": 0}, r"lut: opd1_h \(index bits\) must be in \[1, 16\], not 0"),
    ("lut", {"opd1_h": 8, "opt_res0_prec": 0}, "lut: opt_res0_prec must be 32-bit"),
    ("lut", {"opd1_h": 8, "opt_opd0_prec": 1}, "lut: opt_opd0_prec must be an integer precision"),
    ("lut", {"opd1_h": 8, "opd1_addr": 0x3FFFFC}, "lut table .opd1. must be inside l2sram"),
    ("md_sfu.taylor", {"opd1_n": 0}, r"taylor: opd1_n \(number of series\) must be in \[1, 64\]"),
    ("md_sfu.taylor", {"opd1_n": 4, "opt_opd0_prec": 4}, "taylor: opt_opd0_prec must be fp32, not int32"),
    ("md_sfu.fp32_to_int", {}, "fp32_to_int: opt_res0_prec must be an integer precision, not fp32"),
    ("md_sfu.rsqrt", {"opt_opd0_prec": 0}, "rsqrt: opt_opd0_prec must be fp32, not int8"),
])
def test_fields_the_semantics_do_not_model(kind, fields, match):
    f = {}
    lo.tensor(CHIP, f, "res0", 4096, None, shape=(1, 1, 1, 4))
    lo.tensor(CHIP, f, "opd0", 0, None)
    with pytest.raises(SimulationError, match=match):
        run([command(kind, **{**f, **fields})])
