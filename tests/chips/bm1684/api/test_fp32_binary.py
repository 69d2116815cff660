"""FP32 Binary functions (seed 003): through bytes and the simulator against numpy float32
references written from the seed's formulas; the remarks as errors; the vendor's encoding."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.bm1684 import api
from bmk.isa import load_chip
from tests.chips.bm1684.helpers import LANE, get, npu_addr, put, run, unchanged_after
from tests.vectors.vendor import streams

rng = np.random.default_rng(3)
SHAPE = (2, 70, 3, 5)                       # 70 channels: wraps past NPU 63 from NPU 37
f32 = np.float32

TT = {"bdc_add": np.add, "bdc_sub": np.subtract, "bdc_mul": np.multiply, "bdc_div": np.divide,
      "bdc_max": np.maximum, "bdc_min": np.minimum}
TC = {"bdc_add_C": lambda x, C: x + C, "bdc_sub_C": lambda x, C: x - C, "bdc_C_sub": lambda x, C: C - x,
      "bdc_mul_C": lambda x, C: x * C, "bdc_div_C": lambda x, C: x / C, "bdc_C_div": lambda x, C: C / x,
      "bdc_max_C": np.maximum, "bdc_min_C": np.minimum}
ROWS = {row.name: row for row in api.OPS}


def kinds_of(ctx):
    return {f"{r.engine}.{r.kind}" for r in bmk.decode("bm1684", ctx.acquire_streams())}


def same_bits(a, b):
    return np.array_equal(np.asarray(a, f32).view(np.uint32), np.asarray(b, f32).view(np.uint32))


def data(shape=SHAPE, scale=100):
    return (rng.standard_normal(shape) * scale).astype(f32)


@pytest.mark.parametrize("name", sorted(TT))
@pytest.mark.parametrize("start, strided", [(0, False), (37, False), (5, True)])
def test_tensor_tensor(name, start, strided):
    a, b = data(), data()
    if name == "bdc_div":
        b[0, 0, 0, :2] = 0                                   # x / 0 = +-inf, IEEE
    A, B, D = npu_addr(start, 0), npu_addr(start, 16384), npu_addr(start, 32768)
    strides = (None, None, None)
    if strided:
        strides = ((2 * 15 * 2 + 8, 30, 10, 2), (32, 16, 5, 1), (64, 16, 5, 1))   # n/c/h/w strides, w gaps
    ctx = bm1684.Context()
    getattr(ctx, name)(D, A, B, SHAPE, *strides)
    assert kinds_of(ctx) == set(ROWS[name].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a, strides[1])
    put(sim, B, b, strides[2])
    run(ctx, sim)
    with np.errstate(all="ignore"):
        assert same_bits(get(sim, D, SHAPE, strides[0]), TT[name](a, b))


@pytest.mark.parametrize("name", sorted(TC))
@pytest.mark.parametrize("C", [1.5, -0.1, 3, float("-inf")])
def test_tensor_constant(name, C):
    a = data()
    A, D = npu_addr(37, 0), npu_addr(37, 16384)
    ctx = bm1684.Context()
    getattr(ctx, name)(D, A, C, SHAPE, None, None)
    assert kinds_of(ctx) == set(ROWS[name].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    run(ctx, sim)
    assert same_bits(get(sim, D, SHAPE), TC[name](a, f32(C)))


@pytest.mark.parametrize("const", [False, True])
def test_mac_accumulates(const):
    a, b, d = data(), data(), data()
    A, B, D = npu_addr(37, 0), npu_addr(37, 16384), npu_addr(37, 32768)
    ctx = bm1684.Context()
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    put(sim, D, d)
    if const:
        b = f32(0.3)
        ctx.bdc_mac_C(D, A, 0.3, SHAPE, None, None)
    else:
        put(sim, B, b)
        ctx.bdc_mac(D, A, B, SHAPE, None, None, None)
    assert kinds_of(ctx) == set(ROWS["bdc_mac_C" if const else "bdc_mac"].kinds)
    run(ctx, sim)
    assert same_bits(get(sim, D, SHAPE), d + (a * b).astype(f32))


@pytest.mark.parametrize("shape, stride", [((65535, 1, 1, 1), (1, 1, 1, 1)), ((1, 4095, 1, 1), None),
                                           ((1, 1, 1, 65535), (1, 1, 1, 1)), ((1, 1, 65535, 1), (1, 1, 1, 1))])
def test_shape_boundaries(shape, stride):
    """The largest n, c, h, w of the shape remark (free strides keep 65535 elements in one NPU;
    dst = src0, in place, as two 256 KiB tensors fill the NPU)."""
    a, b = data(shape), data(shape)
    ctx = bm1684.Context()
    ctx.bdc_sub(0, 0, 262144, shape, stride, stride, stride)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, a, stride)
    put(sim, 262144, b, stride)
    run(ctx, sim)
    assert same_bits(get(sim, 0, shape, stride), a - b)


SELECT = {"bdc_greater_select_value": lambda a, b: a > b, "bdc_equal_select_value": lambda a, b: a == b}
SELECT_C = {"bdc_greater_C_select_value": lambda x, C: x > C, "bdc_C_greater_select_value": lambda x, C: C > x,
            "bdc_equal_C_select_value": lambda x, C: x == C}


@pytest.mark.parametrize("name", sorted(SELECT))
@pytest.mark.parametrize("select_val, bits", [(7, 7), (-1, 0xFFFFFFFF), (2.5, 0x40200000)])
def test_select_value(name, select_val, bits):
    a = rng.integers(-2, 3, SHAPE).astype(f32)
    b = rng.integers(-2, 3, SHAPE).astype(f32)
    A, B, D = npu_addr(60, 0), npu_addr(60, 16384), npu_addr(60, 32768)
    ctx = bm1684.Context()
    getattr(ctx, name)(D, A, B, select_val, SHAPE, None, None, None)
    assert kinds_of(ctx) == set(ROWS[name].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    put(sim, B, b)
    run(ctx, sim)
    expect = np.where(SELECT[name](a, b), np.uint32(bits), np.uint32(0))
    assert np.array_equal(get(sim, D, SHAPE, dtype="uint32"), expect)


@pytest.mark.parametrize("name", sorted(SELECT_C))
def test_select_C_value(name):
    a = rng.integers(-2, 3, SHAPE).astype(f32)
    A, D = npu_addr(1, 0), npu_addr(1, 16384)
    ctx = bm1684.Context()
    getattr(ctx, name)(D, A, 1.0, 0x12345678, SHAPE, None, None)
    assert kinds_of(ctx) == set(ROWS[name].kinds)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    run(ctx, sim)
    expect = np.where(SELECT_C[name](a, f32(1.0)), np.uint32(0x12345678), np.uint32(0))
    assert np.array_equal(get(sim, D, SHAPE, dtype="uint32"), expect)


@pytest.mark.parametrize("name, args, match", [
    ("bdc_add", (2, 4096, 8192, (1, 1, 1, 1)), "dst_addr must be divisible by 4"),
    ("bdc_add", (0, 4096, 8190, (1, 1, 1, 1)), "src1_addr must be divisible by 4"),
    ("bdc_sub", (0, 4096, LANE + 8192, (1, 1, 1, 1)), "src1_addr must be an address on NPU [0-9]+, where dst_addr"),
    ("bdc_mul", (0, LANE, 8192, (1, 1, 1, 1)), "src0_addr must be an address on NPU [0-9]+, where dst_addr"),
    ("bdc_max", (0, 4096, 8192, (1, 4096, 1, 1)), r"shape.c must be an integer in \[1, 4095\]"),
    ("bdc_min", (0, 4096, 8192, (0, 1, 1, 1)), r"shape.n must be an integer in \[1, 65535\]"),
    ("bdc_div", (0, 4096, 8192, (1, 1, 65536, 1)), r"shape.h must be an integer in \[1, 65535\]"),
    ("bdc_mac", (0, 4096, 8192, (1, 1, 1, 65536)), r"shape.w must be an integer in \[1, 65535\]"),
    ("bdc_add", (LANE - 4, 4096, 8192, (1, 1, 1, 2)), "dst_addr must be such that the tensor fits"),
    ("bdc_add", (0, 4096, 64 * LANE, (1, 1, 1, 1)), "src1_addr must be a local address in"),
    ("bdc_add", (0, 4096, 8192, (1, 1, 1)), "shape must be a dim4"),
    ("bdc_add", (0, 4096, 8192, (1, 1, 1, 1), (1, 1, 1)), r"dst_stride must be None \(the default layout\) or a dim4 stride"),
    ("bdc_add", (0, 4096, 8192, (1, 1, 1, 1), None, (1, -1, 1, 1)), r"src0_stride.c must be an integer in"),
    ("bdc_add_C", (0, 4096, "1", (1, 1, 1, 1)), "C must be a float"),
    ("bdc_mul_C", (0, 4096, -1e39, (1, 1, 1, 1)), "C must be a float within the fp32 range"),
    ("bdc_greater_C_select_value", (0, 4096, 2**200, 1, (1, 1, 1, 1)), "C must be a float within the fp32 range"),
    ("bdc_C_div", (0, LANE, 1.0, (1, 1, 1, 1)), "src_addr must be an address on NPU [0-9]+, where dst_addr"),
    ("bdc_max_C", (0, 4098, 1.0, (1, 1, 1, 1)), "src_addr must be divisible by 4"),
    ("bdc_greater_select_value", (0, 4096, 8192, 2**32, (1, 1, 1, 1)), r"select_val must be an integer in"),
    ("bdc_equal_C_select_value", (0, 4096, None, 1, (1, 1, 1, 1)), "C must be a float"),
    ("bdc_C_greater_select_value", (0, 4096, 1.0, "x", (1, 1, 1, 1)), "select_val must be an integer in"),
])
def test_remarks(name, args, match):
    ctx = bm1684.Context()
    ctx.bdc_add(0, 4096, 8192, (1, 2, 3, 4))
    unchanged_after(ctx, getattr(ctx, name), *args, match=f"{name}: {match}")


def _vendor(kind, **want):
    for rec in bmk.decode("bm1684", streams("bm1684")):
        if rec.kind == kind and all(rec.fields[k] == v for k, v in want.items()):
            return rec
    raise AssertionError(f"no vendor {kind} with {want}")


IDS = {"cmd_id_tpu", "cmd_id_gdma"}
ADDRS = {"res0_addr", "opd0_addr", "opd1_addr"}


def _local(addr):
    return addr - 0x08000000


def test_rebuilds_the_vendor_ar_command():
    """The vendor's ar add (yolov5s: the residual add, free strides) rebuilt with okk_bdc_add.

    Every field equals the vendor's except the sync ids (cmd_id_tpu, cmd_id_gdma: assigned by
    position in the stream). Addresses are the vendor's own (local window base + offset)."""
    v = _vendor("arith.add").fields
    shape = (v["res0_n"], v["res0_c"], v["res0_h"], v["res0_w"])
    stride = {s: (v[f"{s}_n_str"], v[f"{s}_c_str"], v[f"{s}_h_str"], v[f"{s}_w_str"]) for s in ("res0", "opd0", "opd1")}
    ctx = bm1684.Context()
    ctx.bdc_add(_local(v["res0_addr"]), _local(v["opd0_addr"]), _local(v["opd1_addr"]), shape,
                stride["res0"], stride["opd0"], stride["opd1"])
    mine, = bmk.decode("bm1684", ctx.acquire_streams())
    assert mine.kind == "arith.add"
    assert {k: x for k, x in mine.fields.items() if k not in IDS} == {k: x for k, x in v.items() if k not in IDS}


@pytest.mark.parametrize("kind, name", [("md_scalar.mul", "bdc_mul_C"), ("md_scalar.add", "bdc_add_C"),
                                        ("arith.max", "bdc_max_C"), ("arith.min", "bdc_min_C")])
def test_rebuilds_the_vendor_constant_commands(kind, name):
    """The vendor's md_scalar mul/add by a constant (SiLU's x * -1 and 1 + exp) and its ar
    max/min clamps, rebuilt with okk_bdc_mul_C / add_C / max_C / min_C.

    Every field equals the vendor's except the sync ids (cmd_id_tpu, cmd_id_gdma), and, for the
    ar clamps, the free strides: the vendor writes them with short_X_str = free although they
    are the aligned ones, which okk's NULL stride expresses as short_X_str = aligned, so these
    commands are rebuilt with the explicit strides (then equal)."""
    v = _vendor(kind, opt_opd1_const=1).fields
    shape = (v["res0_n"], v["res0_c"], v["res0_h"], v["res0_w"])
    C = float(np.array(v["opd1_addr"], np.uint32).view(f32))
    free = v["short_res0_str"] == load_chip("bm1684").code("tiu", "short_res0_str", "free")
    strides = [None, None]
    if free:
        strides = [(v[f"{s}_n_str"], v[f"{s}_c_str"], v[f"{s}_h_str"], v[f"{s}_w_str"]) for s in ("res0", "opd0")]
    ctx = bm1684.Context()
    getattr(ctx, name)(_local(v["res0_addr"]), _local(v["opd0_addr"]), C, shape, *strides)
    mine, = bmk.decode("bm1684", ctx.acquire_streams())
    assert mine.kind == kind and free == (kind.startswith("arith"))
    assert {k: x for k, x in mine.fields.items() if k not in IDS} == {k: x for k, x in v.items() if k not in IDS}


def test_rebuilds_the_vendor_divide():
    """The vendor's md_scalar divide (SiLU's x / (1 + exp(-x))): numerator opd0, denominator opd1.

    Every field equals the vendor's except the sync ids (cmd_id_tpu, cmd_id_gdma)."""
    v = _vendor("md_scalar.divide").fields
    shape = (v["res0_n"], v["res0_c"], v["res0_h"], v["res0_w"])
    ctx = bm1684.Context()
    ctx.bdc_div(_local(v["res0_addr"]), _local(v["opd0_addr"]), _local(v["opd1_addr"]), shape)
    mine, = bmk.decode("bm1684", ctx.acquire_streams())
    assert {k: x for k, x in mine.fields.items() if k not in IDS} == {k: x for k, x in v.items() if k not in IDS}
