"""Simulator semantics of arith.* and md_scalar.* (bmk/sim/bm1684/arith.py) on hand-made records.

Each command is built field by field (spec defaults + the kind + operands), encoded to a raw
TIU stream with bmk.encode and run; results are compared with numpy float32 / widened-int
references written from seed 003's formulas.
"""
import numpy as np
import pytest

import bmk
from bmk.encoders import Record
from bmk.isa import load_chip
from bmk.bm1684.lowering import common as lo
from bmk.errors import SimulationError
from tests.chips.bm1684.helpers import get, npu_addr, put

CHIP = load_chip("bm1684")

rng = np.random.default_rng(1684)
SHAPE = (2, 70, 3, 5)                     # 70 channels: crosses the 64-NPU boundary


def command(kind, **fields):
    tiu = CHIP.engine("tiu").format
    return Record("tiu", tiu.name, kind, {**tiu.defaults, **CHIP.kind("tiu", kind), "cmd_en": 1, "cmd_id_en": 1,
                                          **fields})


def run(records, sim):
    records = [attr_id(r, i + 1) for i, r in enumerate(records)]
    sim.run(bmk.encode("bm1684", records, raw=True))
    return sim


def attr_id(r, i):
    return Record(r.engine, r.cls, r.kind, {**r.fields, "cmd_id_tpu": i}, r.stream, r.offset, r.header)


def fp32_command(kind, res, a, b, shape=SHAPE, a_const=False, b_const=False, **extra):
    f = {}
    lo.tensor(CHIP, f, "res0", res, None, shape=shape)
    for slot, v, is_const in (("opd0", a, a_const), ("opd1", b, b_const)):
        if is_const:
            lo.const(CHIP, f, slot, lo.fp32_bits(v))
        else:
            lo.tensor(CHIP, f, slot, v, None)
    return command(kind, **f, **extra)


def data(shape=SHAPE):
    return rng.standard_normal(shape).astype(np.float32) * np.float32(100)


FP32 = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
        "divide": np.divide}


@pytest.mark.parametrize("cls", ["arith", "md_scalar"])
@pytest.mark.parametrize("op", sorted(FP32))
@pytest.mark.parametrize("start", [0, 37])
def test_fp32_tensor_tensor(cls, op, start):
    a, b = data(), data()
    A, B, R = npu_addr(start, 0), npu_addr(start, 8192), npu_addr(start, 16384)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    put(sim, B, b)
    run([fp32_command(f"{cls}.{op}", R, A, B)], sim)
    out = get(sim, R, SHAPE)
    assert out.dtype == np.float32
    assert np.array_equal(out.view(np.uint32), FP32[op](a, b).astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("cls", ["arith", "md_scalar"])
@pytest.mark.parametrize("op", sorted(FP32))
@pytest.mark.parametrize("const_slot", ["opd0", "opd1"])
def test_fp32_constant_either_side(cls, op, const_slot):
    a, C = data(), np.float32(-3.25)
    A, R = npu_addr(5, 0), npu_addr(5, 16384)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    if const_slot == "opd1":
        rec, expect = fp32_command(f"{cls}.{op}", R, A, C, b_const=True), FP32[op](a, C)
    else:
        rec, expect = fp32_command(f"{cls}.{op}", R, C, A, a_const=True), FP32[op](C, a)
    run([rec], sim)
    assert np.array_equal(get(sim, R, SHAPE).view(np.uint32), np.asarray(expect, np.float32).view(np.uint32))


@pytest.mark.parametrize("cls", ["arith", "md_scalar"])
@pytest.mark.parametrize("const", [False, True])
def test_fp32_mac_accumulates_with_two_roundings(cls, const):
    a, b, d = data(), data(), data()
    A, B, R = npu_addr(0, 0), npu_addr(0, 8192), npu_addr(0, 16384)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    put(sim, R, d)
    if const:
        b = np.float32(0.1)
    else:
        put(sim, B, b)
    run([fp32_command(f"{cls}.mac", R, A, b if const else B, b_const=const)], sim)
    expect = (d + (a * b).astype(np.float32)).astype(np.float32)
    assert np.array_equal(get(sim, R, SHAPE).view(np.uint32), expect.view(np.uint32))


def test_fp32_specials():
    a = np.array([1.0, -1.0, 0.0, np.inf, np.nan, 3e38], np.float32).reshape(1, 1, 1, 6)
    b = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 3e38], np.float32).reshape(1, 1, 1, 6)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, a)
    put(sim, 4096, b)
    run([fp32_command("md_scalar.divide", 8192, 0, 4096, shape=(1, 1, 1, 6)),
         fp32_command("arith.add", 12288, 0, 4096, shape=(1, 1, 1, 6))], sim)
    with np.errstate(all="ignore"):
        assert np.array_equal(get(sim, 8192, (1, 1, 1, 6)), a / b, equal_nan=True)
        assert np.array_equal(get(sim, 12288, (1, 1, 1, 6)), a + b, equal_nan=True)   # 6e38 -> inf


@pytest.mark.parametrize("op, cond", [("select_gt", np.greater), ("select_eq", np.equal)])
@pytest.mark.parametrize("cls", ["arith", "md_scalar"])
def test_fp32_select_value(op, cond, cls):
    a = rng.integers(-3, 4, SHAPE).astype(np.float32)
    b = rng.integers(-3, 4, SHAPE).astype(np.float32)
    A, B, R = npu_addr(63, 0), npu_addr(63, 8192), npu_addr(63, 16384)
    sim = bmk.Simulator("bm1684")
    put(sim, A, a)
    put(sim, B, b)
    rec = fp32_command(f"{cls}.{op}", R, A, B)
    rec = command(rec.kind, **{**rec.fields, "tsk_opd_num": 3, **lo.const(CHIP, {}, "opd2", 0xDEADBEEF)})
    run([rec], sim)
    expect = np.where(cond(a, b), np.uint32(0xDEADBEEF), np.uint32(0))
    assert np.array_equal(get(sim, R, SHAPE, dtype="uint32"), expect)


def test_per_channel_operand_broadcasts():
    a = data()
    scale = rng.standard_normal((1, SHAPE[1], 1, 1)).astype(np.float32)
    sim = bmk.Simulator("bm1684")
    put(sim, npu_addr(3, 0), a)
    put(sim, npu_addr(3, 8192), scale, stride=bmk.bm1684.compact_stride(3, (1, SHAPE[1], 1, 1)))
    rec = fp32_command("md_scalar.mul", npu_addr(3, 16384), npu_addr(3, 0), npu_addr(3, 8192))
    rec = command(rec.kind, **{**rec.fields, "short_opd1_str": CHIP.code("tiu", "short_opd1_str", "offset")})
    run([rec], sim)
    assert np.array_equal(get(sim, npu_addr(3, 16384), SHAPE), a * scale)


def test_mixed_precisions_are_refused():
    rec = fp32_command("arith.add", 8192, 0, 4096, shape=(1, 1, 1, 4))
    rec = command(rec.kind, **{**rec.fields, "opt_opd1_prec": CHIP.code("tiu", "opt_opd1_prec", "int8")})
    with pytest.raises(SimulationError, match="arith.add: precisions must be all fp32"):
        run([rec], bmk.Simulator("bm1684"))
    rec = command("md_scalar.divide", **{**rec.fields, **CHIP.kind("tiu", "md_scalar.divide"),
                                        "opt_opd0_prec": CHIP.code("tiu", "opt_opd0_prec", "int8"),
                                        "opt_res0_prec": CHIP.code("tiu", "opt_res0_prec", "int8")})
    with pytest.raises(SimulationError, match="md_scalar.divide: integer precisions are not supported"):
        run([rec], bmk.Simulator("bm1684"))


def test_every_arith_and_mdscalar_kind_of_the_family_is_registered():
    kinds = bmk.sim.bm1684.SEMANTICS.kinds
    for op in ("add", "sub", "mul", "mac", "max", "min", "divide", "select_gt", "select_eq", "shift",
               "and", "or", "xor"):
        assert ("tiu", f"arith.{op}") in kinds and ("tiu", f"md_scalar.{op}") in kinds


def int_command(kind, prec, signs, shape, **extra):
    """res0 at 16384, opd0 at 0, opd1 at 8192 (NPU 0), all of precision `prec`; signs =
    (opd0, opd1, result)."""
    f = {"opt_opd2_sign": signs[2], "opt_shift_typ": 0}          # the OKKernel / vendor ar value
    lo.tensor(CHIP, f, "res0", 16384, None, prec=prec, shape=shape)
    lo.tensor(CHIP, f, "opd0", 0, None, prec=prec, signed=signs[0])
    lo.tensor(CHIP, f, "opd1", 8192, None, prec=prec, signed=signs[1])
    return command(kind, **f, **extra)


def ints(dtype, shape):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True)
    x.flat[:2] = [info.min, info.max]
    return x.astype(dtype)


@pytest.mark.parametrize("cls", ["arith", "md_scalar"])
@pytest.mark.parametrize("signed", [0, 1])
def test_int32_products_and_mac_are_exact_then_saturated(cls, signed):
    """32-bit operands: the product and the shifted accumulation exceed int64; the semantics
    stay exact (Python ints) before the rounding shift and the saturation."""
    shape = (1, 3, 2, 4)
    dt = np.int32 if signed else np.uint32
    a, b, old = ints(dt, shape), ints(dt, shape), ints(dt, shape)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, a, dtype=dt)
    put(sim, 8192, b, dtype=dt)
    run([int_command(f"{cls}.mul", "int32", (signed,) * 3, shape, opt_right_shift=3)], sim)
    wide = a.astype(object) * b.astype(object)
    lo_, hi = np.iinfo(dt).min, np.iinfo(dt).max
    expect = np.clip((wide + 4) >> 3, lo_, hi).astype(dt)
    assert np.array_equal(get(sim, 16384, shape, dtype=dt), expect)
    put(sim, 16384, old, dtype=dt)
    run([int_command(f"{cls}.mac", "int32", (signed,) * 3, shape, opt_left_shift=31, opt_right_shift=31,
                     opt_res_add_sign=signed)], sim)
    exact = (old.astype(object) << 31) + wide
    assert np.array_equal(get(sim, 16384, shape, dtype=dt), np.clip((exact + (1 << 30)) >> 31, lo_, hi).astype(dt))


def test_int8_mdscalar_add_with_constant_saturates_4N():
    shape = (7, 2, 1, 3)
    a = ints(np.int8, shape)
    f = {"opt_opd2_sign": 1}
    lo.tensor(CHIP, f, "res0", 16384, None, prec="int8", shape=shape)
    lo.tensor(CHIP, f, "opd0", 0, None, prec="int8", signed=1)
    lo.const(CHIP, f, "opd1", lo.bits(-100, 8), prec="int8", signed=1)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, a, dtype=np.int8, pack=4)
    run([command("md_scalar.add", **f)], sim)
    expect = np.clip(a.astype(np.int64) - 100, -128, 127).astype(np.int8)       # a.flat[0] = -128 saturates
    assert np.array_equal(get(sim, 16384, shape, dtype=np.int8, pack=4), expect)


@pytest.mark.parametrize("kind", ["arith.add", "md_scalar.mac", "arith.shift", "md_scalar.select_eq"])
def test_overlapping_huge_res0_is_refused_quickly(kind):
    """A malformed command with zero strides and a huge res0 would need terabytes of arrays."""
    f = {}
    lo.tensor(CHIP, f, "res0", 0, (0, 0, 0, 0), shape=(65535, 4095, 65535, 65535))
    lo.tensor(CHIP, f, "opd0", 0, (0, 0, 0, 0))
    lo.tensor(CHIP, f, "opd1", 0, (0, 0, 0, 0))
    with pytest.raises(SimulationError, match=f"{kind}: res0 must hold at most 524288 bytes per NPU"):
        run([command(kind, **f)], bmk.Simulator("bm1684"))
