"""Data Type Converting functions (seed 003): through bytes and the simulator against numpy
references from the seed's formulas (dst = INT32(src) / FP32(src)); the remarks as errors; the
vendor's md_sfu fp32_to_int and int2float lut rebuilt field for field."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.bm1684 import api
from bmk.isa import load_chip
from tests.chips.bm1684.helpers import LANE, get, npu_addr, put, run, unchanged_after
from tests.vectors.vendor import streams

rng = np.random.default_rng(7)
f32 = np.float32
ROWS = {row.name: row for row in api.OPS}
IDS = {"cmd_id_tpu", "cmd_id_gdma"}


def kinds_of(ctx):
    return {f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())}


def vendor(kind, **want):
    for rec in bmk.decode("bm1684", streams("bm1684")):
        if rec.kind == kind and all(rec.fields[k] == v for k, v in want.items()):
            return rec.fields
    raise AssertionError(f"no vendor {kind} with {want}")


def rebuilt(fn, *args):
    ctx = bm1684.Context()
    getattr(ctx, fn)(*args)
    mine, = bmk.decode("bm1684", ctx.acquire_streams())
    return {k: x for k, x in mine.fields.items() if k not in IDS}


def vendor_args(v):
    base = load_chip("bm1684").space("local").base
    return v["res0_addr"] - base, v["opd0_addr"] - base, (v["res0_n"], v["res0_c"], v["res0_h"], v["res0_w"])


# -- okk_bdc_fp32_to_int32 -------------------------------------------------------------------------
@pytest.mark.parametrize("start", [0, 37])
def test_fp32_to_int32_rounds_to_nearest_even_and_saturates(start):
    shape = (2, 70, 3, 5)
    x = (rng.standard_normal(shape) * 1e3).astype(f32)
    x.flat[:12] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3e9, -3e9, 2.1474836e9, -2**31, np.nan, np.inf]
    src, dst = npu_addr(start, 0), npu_addr(start, 8192)
    ctx = bm1684.Context()
    ctx.bdc_fp32_to_int32(dst, src, shape)
    assert kinds_of(ctx) == set(ROWS["bdc_fp32_to_int32"].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, src, x)
    run(ctx, sim)
    want = np.clip(np.nan_to_num(np.rint(x.astype(np.float64)), nan=0.0), -2**31, 2**31 - 1).astype(np.int32)
    got = get(sim, dst, shape, dtype="int32")
    assert np.array_equal(got, want)
    assert list(got.flat[:12]) == [0, 2, 2, 0, -2, -2, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 2**31 - 1]


def test_rebuilds_the_vendor_fp32_to_int():
    """The vendor's md_sfu fp32_to_int (SiLU) rebuilt with okk_bdc_fp32_to_int32: every field
    equal but the sync ids (cmd_id_tpu, cmd_id_gdma), addresses included."""
    v = vendor("md_sfu.fp32_to_int")
    assert rebuilt("bdc_fp32_to_int32", *vendor_args(v)) == {k: x for k, x in v.items() if k not in IDS}


# -- okk_bdc_lookup_int32_to_fp32 ------------------------------------------------------------------
def test_lookup_int32_to_fp32_every_value():
    shape = (1, 256, 1, 1)                               # 256 channels: four slots from NPU 0
    x = np.arange(-128, 128, dtype=np.int32).reshape(shape)
    src, dst = npu_addr(5, 0), npu_addr(5, 1024)
    shape = (1, 256, 1, 1)
    ctx = bm1684.Context()
    ctx.bdc_lookup_int32_to_fp32(dst, src, shape)
    assert kinds_of(ctx) == {"tiu.lut"}
    sim = bmk.Simulator("bm1684")
    put(sim, src, x, dtype="int32")
    run(ctx, sim)
    assert np.array_equal(get(sim, dst, shape), x.astype(f32))


def test_rebuilds_the_vendor_int2float_lut():
    """The vendor's second SiLU lut (int2float, in place) rebuilt with okk_bdc_lookup_int32_to_fp32:
    every field equal but the sync ids; opd1_addr is the int2float table's L2 SRAM offset."""
    v = vendor("lut", opd1_addr=load_chip("bm1684").param("l2_sram_int2float_table"))
    assert v["opd1_addr"] == 0x301300
    assert rebuilt("bdc_lookup_int32_to_fp32", *vendor_args(v)) == {k: x for k, x in v.items() if k not in IDS}


# -- okk_bdc_4N_int8_to_fp32 / okk_bdc_int8_to_fp32 ------------------------------------------------
def int8_values(shape, signed):
    lo, hi = (-128, 127) if signed else (0, 255)
    x = rng.integers(lo, hi + 1, shape)
    x.flat[:2] = lo, hi                                  # both ends of the type
    return x.astype(np.int8 if signed else np.uint8)


def fp32_layout(addr, shape, aligned):
    start = bm1684.start_npu_index(addr)
    return bm1684.aligned_stride_for_32bit(start, shape) if aligned else bm1684.compact_stride(start, shape)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("start", [0, 60])
def test_4N_int8_to_fp32(signed, aligned, start):
    shape = (5, 10, 3, 7)                                # N = 5: a partial 4N group; C = 10 from NPU 60 wraps
    x = int8_values(shape, signed)
    dst, src, work = npu_addr(start, 0), npu_addr(start, 16384), npu_addr(start, 32768)
    ctx = bm1684.Context()
    ctx.bdc_4N_int8_to_fp32(dst, src, work, shape, signed, aligned)
    assert kinds_of(ctx) == set(ROWS["bdc_4N_int8_to_fp32"].kinds)
    sim = bmk.Simulator("bm1684")
    dtype = "int8" if signed else "uint8"
    put(sim, src, x, fp32_layout(src, shape, aligned), dtype=dtype, pack=4)   # 4N strides count words
    run(ctx, sim)
    assert np.array_equal(get(sim, dst, shape, fp32_layout(dst, shape, aligned)), x.astype(f32))


def int8_1n_layout(addr, shape, aligned):
    """The seed's 1N int8 layouts in bytes: C stride ALIGN(H*W, 128) (aligned) or ALIGN(H*W, 4)
    (the approximate compact layout), N stride C stride * channel slots."""
    n, c, h, w = shape
    cs = -(-(h * w) // (128 if aligned else 4)) * (128 if aligned else 4)
    return (cs * bm1684.channle_num_per_npu(bm1684.start_npu_index(addr), c), cs, w, 1)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("hw", [(2, 2), (3, 3), (1, 7), (5, 9)])    # H*W % 4 = 0, 1, 3, 1
def test_int8_to_fp32(signed, aligned, hw):
    shape = (3, 67, *hw)                                 # 67 channels from NPU 2: two slots on NPU 2..4
    x = int8_values(shape, signed)
    dst, src, work = npu_addr(2, 0), npu_addr(2, 16384), npu_addr(2, 32768)
    ctx = bm1684.Context()
    ctx.bdc_int8_to_fp32(dst, src, work, shape, signed, aligned)
    assert kinds_of(ctx) == set(ROWS["bdc_int8_to_fp32"].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, src, x, int8_1n_layout(src, shape, aligned), dtype="int8" if signed else "uint8")
    run(ctx, sim)
    assert np.array_equal(get(sim, dst, shape, fp32_layout(dst, shape, aligned)), x.astype(f32))


def test_int8_to_fp32_in_place():
    """dst_addr = src_addr is allowed (only dst = work is not): the lookups read the copy in work."""
    shape = (2, 3, 5, 3)
    x = int8_values(shape, True)
    addr, work = npu_addr(1, 0), npu_addr(1, 8192)
    ctx = bm1684.Context()
    ctx.bdc_int8_to_fp32(addr, addr, work, shape, True, False)
    sim = bmk.Simulator("bm1684")
    put(sim, addr, x, int8_1n_layout(addr, shape, False), dtype="int8")
    run(ctx, sim)
    assert np.array_equal(get(sim, addr, shape, fp32_layout(addr, shape, False)), x.astype(f32))


# -- remarks ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bdc_fp32_to_int32", "bdc_lookup_int32_to_fp32"])
@pytest.mark.parametrize("args, match", [
    ((2, 0, (1, 1, 1, 1)), "dst_addr must be divisible by 4"),
    ((0, LANE, (1, 1, 1, 1)), "src_addr must be an address on NPU [0-9]+, where dst_addr starts"),
    ((0, 4096, (1, 4096, 1, 1)), r"shape.c must be an integer in \[1, 4095\]"),
    ((0, 4096, (1, 1, 65536, 1)), r"shape.h must be an integer in \[1, 65535\]"),
    ((0, LANE - 64, (1, 1, 1, 32)), "src_addr must be such that the tensor fits its NPUs"),
])
def test_two_operand_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_fp32_to_int32(0, 4096, (1, 2, 3, 4))
    unchanged_after(ctx, getattr(ctx, name), *args, match=f"{name}: {match}")


@pytest.mark.parametrize("name", ["bdc_4N_int8_to_fp32", "bdc_int8_to_fp32"])
@pytest.mark.parametrize("args, match", [
    ((0, 4096, 0, (1, 1, 1, 1), True, True), "dst_addr must be different from work_addr"),
    ((0, 4096, LANE, (1, 1, 1, 1), True, True), "work_addr must be an address on NPU [0-9]+, where dst_addr"),
    ((0, 4098, 8192, (1, 1, 1, 1), True, True), "src_addr must be divisible by 4"),
    ((0, 4096, 8190, (1, 1, 1, 1), True, True), "work_addr must be divisible by 4"),
    ((0, 4096, 8192, (0, 1, 1, 1), True, True), r"shape.n must be an integer in \[1, 65535\]"),
    ((0, 4096, 8192, (1, 1, 1, 1), 2, True), "is_signed must be a bool"),
    ((0, 4096, 8192, (1, 1, 1, 1), True, None), "is_aligned_layout must be a bool"),
    ((LANE - 4, 4096, 8192, (1, 1, 1, 2), True, False), "dst_addr must be such that the tensor fits"),
])
def test_int8_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_4N_int8_to_fp32(0, 4096, 8192, (1, 2, 3, 4), True, True)
    unchanged_after(ctx, getattr(ctx, name), *args, match=f"{name}: {match}")


def test_int8_source_and_work_must_fit():
    """A 4N tensor of N = 5 takes two whole 4-batch groups (8 bytes per element position), the
    1N one 5 bytes: a source that fits as 1N at the end of an NPU does not fit as 4N."""
    ctx = bm1684.Context()
    shape = (5, 1, 1, 4096)
    end = LANE - 5 * 4096
    ctx.bdc_int8_to_fp32(0, end, 0x20000, shape, True, False)
    unchanged_after(ctx, ctx.bdc_4N_int8_to_fp32, 0, end, 0x20000, shape, True, False,
                    match="bdc_4N_int8_to_fp32: src_addr must be such that the tensor fits")
    unchanged_after(ctx, ctx.bdc_int8_to_fp32, 0, 0x20000, end + 4, shape, True, False,
                    match="bdc_int8_to_fp32: work_addr must be such that the tensor fits")


def test_numpy_integers_and_bools():
    ctx = bm1684.Context()
    ctx.bdc_int8_to_fp32(np.int64(0), np.uint32(4096), np.int32(8192), (np.int8(2), 3, 4, np.int16(5)),
                         np.bool_(True), np.int64(0))
    ctx.bdc_fp32_to_int32(np.uint64(0), np.int32(4096), (1, 2, 3, np.int64(4)))
    other = bm1684.Context()
    other.bdc_int8_to_fp32(0, 4096, 8192, (2, 3, 4, 5), True, False)
    other.bdc_fp32_to_int32(0, 4096, (1, 2, 3, 4))
    assert ctx.acquire_cmdbuf() == other.acquire_cmdbuf()
