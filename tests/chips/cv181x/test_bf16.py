"""CV18xx bf16 (bmk/sim/cv181x/bf16.py, tdma.py): TIU element-wise ops with opd_typ 1 and TDMA
moves with a bf16 side, against numpy references from cvikernel's rules (strides in bytes, a bf16
constant's bits in opd1_addr, int8 -> bf16 exact, bf16 -> int8 rounded by int8_rnd_mode)."""
import attrs
import numpy as np
import pytest

import bmk
from bmk.numerics import bf16_to_fp32, fp32_to_bf16
from tests.chips.cv181x.test_sim import A, B, R, _eltwise

SHAPE = (1, 11, 2, 3)
BYTE_STRIDES = (2 * 32, 32, 6, 2)         # bytes: bf16 elements, channel stride 32 bytes
ELEM_STRIDES = tuple(s // 2 for s in BYTE_STRIDES)


def _bf16_operands(seed):
    rng = np.random.default_rng(seed)
    a = fp32_to_bf16(rng.normal(0, 10, SHAPE).astype(np.float32))
    b = fp32_to_bf16(rng.normal(0, 10, SHAPE).astype(np.float32))
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(A, a, ELEM_STRIDES, "uint16")
    m.lmem_write_array(B, b, ELEM_STRIDES, "uint16")
    return m, bf16_to_fp32(a), bf16_to_fp32(b)


def _bf16(eu, **fields):
    f = {f"{s}_{d}_str": v for s in ("res0", "opd0", "opd1") for d, v in zip("nchw", BYTE_STRIDES)}
    return _eltwise("cv181x", eu, opd_typ=1, **f, **fields)


@pytest.mark.parametrize("eu, op", [(0, np.multiply), (2, np.add), (3, np.subtract), (4, np.maximum),
                                    (5, np.minimum)])
def test_bf16_eltwise_rounds_the_fp32_result_to_nearest_even(eu, op):
    m, a, b = _bf16_operands(eu)
    m.run([_bf16(eu)], races=False)
    got = m.lmem_read_array(R, SHAPE, ELEM_STRIDES, "uint16")
    np.testing.assert_array_equal(got, fp32_to_bf16(op(a, b)))


def test_bf16_mul_by_a_constant_in_opd1_addr_with_relu():
    m, a, _ = _bf16_operands(1)
    c = int(fp32_to_bf16(np.array([-0.0366], np.float32))[0])
    m.run([_bf16(0, opt_opd1_const=1, opd1_addr=c, opt_relu=1)], races=False)
    want = fp32_to_bf16(np.maximum(a * bf16_to_fp32(np.array([c], np.uint16))[0], 0))
    np.testing.assert_array_equal(m.lmem_read_array(R, SHAPE, ELEM_STRIDES, "uint16"), want)


def test_bf16_kind_without_semantics_is_refused_by_name():
    with pytest.raises(bmk.errors.SimulationError, match="tiu.xor: opd_typ must be 0 for xor"):
        bmk.Simulator("cv181x").run([_bf16(9)], races=False)


def _tdma(kind, **fields):
    from tests.chips.cv181x.test_sim import _hand_record
    rec = _hand_record(kind)
    return attrs.evolve(rec, fields=dict(rec.fields, wait_id_tpu=0, intra_cmd_paral=0, compress_en=0,
                                         src_base_reg_sel=0, dst_base_reg_sel=0, **fields))


def _move(src_fmt, dst_fmt, sign=1, rnd=0):
    """A load of (1, 2, 3, 4) from gmem 0x100 (contiguous) to lmem 0x40 (channel stride 32 bytes)."""
    es, ed = 2 if src_fmt == 2 else 1, 2 if dst_fmt == 2 else 1
    return _tdma("tdma.load", src_fmt=src_fmt, dst_fmt=dst_fmt, int8_sign=sign, int8_rnd_mode=rnd, sys_dtype=0,
                 src_n=1, src_c=2, src_h=3, src_w=4, dst_c=2, dst_h=3, dst_w=4,
                 src_n_stride=24 * es, src_c_stride_low=12 * es, src_c_stride_high=0, src_h_stride=4 * es,
                 dst_n_stride=64, dst_c_stride_low=32, dst_c_stride_high=0, dst_h_stride=4 * ed,
                 src_base_addr_low=0x100, src_base_addr_high=0, dst_base_addr_low=0x40, dst_base_addr_high=0)


def test_tdma_int8_to_bf16_load_is_exact():
    x = np.arange(-12, 12, dtype=np.int8)
    m = bmk.Simulator("cv181x")
    m.gmem_write(0x100, x.tobytes())
    m.run([_move(1, 2)], races=False)
    got = m.lmem_read_array(0x40, (1, 2, 3, 4), (32, 16, 4, 1), "uint16")
    np.testing.assert_array_equal(bf16_to_fp32(got).reshape(-1), x.astype(np.float32))


@pytest.mark.parametrize("rnd, sign", [(0, 1), (1, 1), (0, 0)])
def test_tdma_bf16_to_int8_rounds_by_int8_rnd_mode_and_saturates(rnd, sign):
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.7, 300, -300, 127.4, -128.6, 3.49] * 2, np.float32)
    m = bmk.Simulator("cv181x")
    m.gmem_write(0x100, fp32_to_bf16(v).tobytes())
    m.run([_move(2, 1, sign, rnd)], races=False)
    got = m.lmem_read_array(0x40, (1, 2, 3, 4), (32, 16, 4, 1), "int8" if sign else "uint8").reshape(-1)
    x = bf16_to_fp32(fp32_to_bf16(v)).astype(np.float64)
    want = np.trunc(x) if rnd else np.rint(x)             # nearest even / toward zero (cvikernel.h)
    np.testing.assert_array_equal(got, np.clip(want, -128, 127) if sign else np.clip(want, 0, 255))
