"""BM1690's fp8 (prec 7: E5M2 when the sign bit is 0, E4M3FN when 1): the formats against
independent references (E5M2 is the high byte of an IEEE half, OCP FP8 table values), then each
fp8 kind the f8e5m2 resnet50 runs against a numpy reference, and that model to its end (its
older build's waits read with 16-bit ids: bmk/models/decoding.py model_spec)."""
import numpy as np
import pytest

import bmk
from bmk import dtypes
from bmk import numerics
from bmk.errors import SimulationError
from bmk.isa import load_chip

from tests.chips.bm1690.test_sim import CHIP, prec, rec

E5M2, E4M3 = "fp8e5m2", "fp8e4m3"


def test_e5m2_values_are_the_high_byte_of_a_half():
    b = np.arange(256, dtype=np.uint16)
    half = (b << 8).view(np.float16).astype(np.float64)
    np.testing.assert_array_equal(numerics.fp8_values(E5M2), half)        # NaN where the half is NaN, +-inf alike


@pytest.mark.parametrize("byte,value", [(0x38, 1.0), (0x7E, 448.0), (0x08, 2.0 ** -6), (0x01, 2.0 ** -9),
                                        (0x46, 3.5), (0xC6, -3.5), (0x80, -0.0), (0x07, 7 * 2.0 ** -9)])
def test_e4m3_values_of_the_ocp_table(byte, value):
    assert numerics.fp8_values(E4M3)[byte] == value and np.signbit(numerics.fp8_values(E4M3)[byte]) == np.signbit(value)


def test_e4m3_has_no_infinity_and_two_nans():
    v = numerics.fp8_values(E4M3)
    assert np.isnan(v[0x7F]) and np.isnan(v[0xFF]) and np.isnan(v).sum() == 2 and np.isfinite(v[~np.isnan(v)]).all()
    assert numerics.fp8_largest(E4M3) == 448.0 and numerics.fp8_largest(E5M2) == 57344.0


def test_rounding_to_e5m2_is_a_halfs_rounding_to_its_high_byte():
    """Every finite half within range: round to nearest even on the bits (reference: add 0x7F
    plus the kept low bit, drop 8 bits), largest finite 0x7B past the top."""
    h = np.arange(0x10000, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h)]
    bits = h.view(np.uint16).astype(np.int64)
    mag = bits & 0x7FFF
    want = np.minimum((mag + 0x7F + ((mag >> 8) & 1)) >> 8, 0x7B) | ((bits >> 8) & 0x80)
    np.testing.assert_array_equal(numerics.fp8_to_bits(h.astype(np.float64), E5M2), want)


@pytest.mark.parametrize("x,byte", [(1.0625, 0x38), (1.1875, 0x3A), (464.0, 0x7E), (1e6, 0x7E), (-1e6, 0xFE),
                                    (np.inf, 0x7E), (2.0 ** -10, 0x00), (3 * 2.0 ** -11, 0x01), (np.nan, 0x7F)])
def test_rounding_to_e4m3_ties_to_even_and_saturates(x, byte):
    assert int(numerics.fp8_to_bits(np.array([x]), E4M3)[0]) == byte


@pytest.mark.parametrize("mode,want", [(1, 0x3A), (2, 0x39), (3, 0x39), (4, 0x3A), (5, 0x3A), (6, 0x39)])
def test_rounding_to_e4m3_by_every_mode(mode, want):
    """1.1875 lies halfway between 1.125 (0x39) and 1.25 (0x3A): numerics.Round's modes."""
    assert int(numerics.fp8_to_bits(np.array([1.1875]), E4M3, mode)[0]) == want
    assert int(numerics.fp8_to_bits(np.array([-1.1875]), E4M3, mode)[0]) == {1: 0xBA, 2: 0xB9, 3: 0xBA, 4: 0xB9,
                                                                    5: 0xB9, 6: 0xBA}[mode]


def test_every_finite_byte_round_trips():
    for name in (E5M2, E4M3):
        v = numerics.fp8_values(name)
        keep = np.isfinite(v)
        np.testing.assert_array_equal(numerics.fp8_to_bits(v[keep], name), np.arange(256)[keep])


def test_the_sign_bit_picks_the_format():
    assert dtypes.of_precision("fp8", 0) is dtypes.FP8E5M2 and dtypes.of_precision("fp8", 1) is dtypes.FP8E4M3


def wr_imm(reg, value):
    """system_tr_wr.wr_imm: TIU register `reg` <- value (the other two slots to register 127)."""
    return rec("tiu", "SYS_TR_ACC", "system_tr_wr.wr_imm", reg_idx0=reg, imm0=value, reg_idx1=127, reg_idx2=127)


LANE = CHIP.param("lmem_size")


def q(x, name=E5M2):
    return numerics.fp8_to_bits(np.asarray(x, np.float64), name)


def test_an_fp8_conv_adds_its_bias_then_scales_per_channel_and_rounds_once():
    """A 1x1 e5m2 conv, 2 -> 2 channels, opt_rq with the rescale at register 6's address (one fp32
    per output channel, compact) and the fp32 bias in opd2, relu: y = relu((w . x + b) * s),
    rounded once into e5m2 (tpu-mlir's BM1690 fp8 packing and lowering: bmk/sim/bm1688/rq.py)."""
    rng = np.random.default_rng(5)
    x = numerics.fp8_to_values(q(rng.uniform(-3, 3, (2, 8))), E5M2)              # (IC, W), exact e5m2 values
    w = numerics.fp8_to_values(q(rng.uniform(-1, 1, (2, 2))), E5M2)              # (OC, IC)
    bias, scale = np.array([0.5, -1.25], np.float32), np.array([0.75, 3.0], np.float32)
    sim = bmk.Simulator("bm1690")
    for c in range(2):
        sim.lmem_write(c * LANE + 0x1000, q(x[c]).tobytes())
        sim.lmem_write(c * LANE + 0x2000, q(w[c]).tobytes())          # output channel c's kernel on lane c
        sim.lmem_write(c * LANE + 0x3000, bias[c:c + 1].tobytes())
        sim.lmem_write(c * LANE + 0x3800, scale[c:c + 1].tobytes())
    conv = rec("tiu", "sCONV", "conv.normal", opd0_prec=prec("fp8"), opd1_prec=prec("fp8"), res0_prec=prec("fp8"),
               opd2_prec=prec("fp32"), res0_n=1, res0_c=2, res0_h=1, res0_w=8, opd0_c=2, opd0_h=1, opd0_w=8,
               opd1_h=1, opd1_w=1, res_op_y_str=1, res_op_x_str=1, opd0_addr=0x1000, opd1_addr=0x2000,
               opd2_addr=0x3000, res0_addr=0x4000, opt_rq=1, relu=1)
    sim.run([wr_imm(6, 0x3800), conv])
    exact = np.maximum((w @ x + bias[:, None].astype(np.float64)) * scale[:, None], 0)
    got = np.stack([np.frombuffer(sim.lmem_read(c * LANE + 0x4000, 8), np.uint8) for c in range(2)])
    np.testing.assert_array_equal(got, q(exact))


def _pool(seed, kind, before, **fields):
    """A stride-2 e5m2 pool of a random (1, 4, 4) plane on lane 0 into (2, 2), after `before`:
    (the input's values, the result's 4 bytes)."""
    x = numerics.fp8_to_values(q(np.random.default_rng(seed).uniform(-8, 8, (1, 4, 4))), E5M2)
    sim = bmk.Simulator("bm1690")
    sim.lmem_write(0x1000, q(x).tobytes())
    sim.run(before + [rec("tiu", "sPorD", kind, opd0_prec=prec("fp8"), res0_prec=prec("fp8"), res0_n=1, res0_c=1,
                          res0_h=2, res0_w=2, opd0_h=4, opd0_w=4, res_op_y_str=2, res_op_x_str=2, opd0_addr=0x1000,
                          res0_addr=0x2000, **fields)])
    return x, np.frombuffer(sim.lmem_read(0x2000, 4), np.uint8)


def test_an_fp8_average_pool_scales_by_its_constant_rescale():
    """An e5m2 2x2 average pool as the resnet50 stream writes it: the kernel a constant e5m2 1.0
    (opd1_addr 60), the fp32 rescale 1/4 in register 6 (opt_opd5_const)."""
    x, got = _pool(2, "pord.avgpooling", [wr_imm(6, int(np.array([0.25], np.float32).view(np.uint32)[0]))],
                   opd1_h=2, opd1_w=2, opd1_const=1, opd1_addr=0x3C, opd3_const=1, opt_rq=1, opt_opd5_const=1)
    np.testing.assert_array_equal(got, q(x[0].reshape(2, 2, 2, 2).sum(axis=(1, 3)) * 0.25).ravel())


def test_fp8_add_and_casts_round_once_into_the_result():
    """fp32 -> e5m2 (cast), e5m2 + e5m2 -> e5m2 (add), e5m2 -> fp32 (cast), on 16 values of lane 0."""
    a = np.random.default_rng(7).uniform(-100, 100, 16).astype(np.float32)
    b = numerics.fp8_to_values(q(np.linspace(-2, 2, 16)), E5M2)
    sim = bmk.Simulator("bm1690")
    sim.lmem_write(0x100, a.tobytes())
    sim.lmem_write(0x200, q(b).tobytes())
    shape = dict(res0_n=1, res0_c=1, res0_h=1, res0_w=16)
    sim.run([rec("tiu", "sAR", "arith.cast", tsk_opd_num=1, opd0_prec=prec("fp32"), res0_prec=prec("fp8"),
                 opd0_addr=0x100, res0_addr=0x300, **shape),
             rec("tiu", "sAR", "arith.add", tsk_opd_num=2, opd0_prec=prec("fp8"), opd1_prec=prec("fp8"),
                 res0_prec=prec("fp8"), opd0_addr=0x300, opd1_addr=0x200, res0_addr=0x400, **shape),
             rec("tiu", "sAR", "arith.cast", tsk_opd_num=1, opd0_prec=prec("fp8"), res0_prec=prec("fp32"),
                 opd0_addr=0x400, res0_addr=0x500, **shape)])
    cast = q(a)
    np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(0x300, 16), np.uint8), cast)
    added = q(numerics.fp8_to_values(cast, E5M2) + b)
    np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(0x400, 16), np.uint8), added)
    np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(0x500, 64), np.float32),
                                  numerics.fp8_to_values(added, E5M2))


def test_an_fp8_max_pool_with_the_streams_nan_pad_takes_the_window_maximum():
    """A 3x3 stride-2 e5m2 max pool padded by 1, its pad the resnet50 stream's opd3 0xFF7F (0x7F:
    NaN in e5m2): a NaN never wins (bm1684x/pord.py), so the border windows take their real
    maximum; a NaN pad that won would poison every border output."""
    x, got = _pool(4, "pord.maxpooling", [], opd1_h=3, opd1_w=3, opd0_up_pad=1, opd0_lf_pad=1, opd3_const=1,
                   opd3_addr=0xFF7F, opd2_addr=0xFFFFFFFF)
    padded = np.pad(x[0], ((1, 0), (1, 0)), constant_values=-np.inf)
    want = np.array([[padded[2 * i:2 * i + 3, 2 * j:2 * j + 3].max() for j in range(2)] for i in range(2)])
    np.testing.assert_array_equal(got, q(want).ravel())


def test_an_fp8_copy_of_a_constant_fills_with_its_byte():
    """arith.copy with a constant fp8 operand (opd0_const, the value's byte in opd0_addr), as the
    stream clears its buffers: every element the constant's e5m2 value."""
    sim = bmk.Simulator("bm1690")
    sim.run([rec("tiu", "sAR", "arith.copy", tsk_opd_num=1, opd0_prec=prec("fp8"), res0_prec=prec("fp8"),
                 opd0_const=1, opd0_addr=0xBC, res0_addr=0x300, res0_n=1, res0_c=1, res0_h=1, res0_w=8)])
    assert numerics.fp8_values(E5M2)[0xBC] == -1.0
    assert sim.lmem_read(0x300, 8) == bytes([0xBC] * 8)


def test_an_fp8_operand_of_another_kind_is_refused_by_name():
    r = rec("tiu", "sMM", "mm.normal", opd0_prec=prec("fp8"), res0_prec=prec("fp32"), res0_c=1, res0_w=1,
            opd0_n=1, opd0_c=1, opd0_w=1, opd1_w=1)
    with pytest.raises(SimulationError, match="mm.normal: opd0_prec .*must not be fp8 in mm.normal"):
        bmk.Simulator("bm1690").run([r])


RESNET_F8 = "tests/models/bm1690/resnet50_v2_sg2260_f8e5m2.bmodel"


def test_the_older_build_reads_its_waits_with_16_bit_ids():
    """The Dec 2023 f8e5m2 build marks its waits with bit 16 (65537 = position 1): read with
    params.older_wait_mask; the Jan 2024 f16 build keeps the chip's 20-bit mask."""
    from bmk.models.decoding import model_spec
    older = model_spec(bmk.load_model(RESNET_F8))
    assert {e.wait_mask for e in older.engines if e.wait_mask} == {0xFFFF}
    newer = model_spec(bmk.load_model("tests/models/bm1690/resnet50_v2_sg2260_f16_core8.bmodel"))
    assert newer is load_chip("bm1690")
    assert older is load_chip("bm1690").with_wait_mask(0xFFFF)


def _resnet_f8():
    from bmk.models.run import prepare
    m = bmk.load_model(RESNET_F8)
    prepared = prepare(m)
    sim = bmk.Simulator(prepared.spec, semantics=prepared.semantics)
    sim.gmem_write(1 << 40, q(np.random.default_rng(0).uniform(-0.05, 0.05, 4 << 20)).tobytes())
    return m, prepared, sim, np.random.default_rng(3).uniform(0, 1, (1, 3, 224, 224)).astype(np.float32)


def test_the_f8e5m2_resnet50_runs_to_its_end():
    """The whole network runs: every fp8 conv, add, pool and cast executes, with the older build's
    waits (test above), to its (1, 1000) result."""
    from bmk.models.run import simulate
    m, prepared, sim, x = _resnet_f8()
    out, reports = simulate(m, {"data": x}, prepared=prepared, sim=sim)[:2]
    assert out["resnetv24_dense0_fwd_Gemm_f32"].shape == (1, 1000)
    assert sum(len(r.instructions) for _, r in reports) == sum(sum(g.counts.values()) for g in m.groups())
