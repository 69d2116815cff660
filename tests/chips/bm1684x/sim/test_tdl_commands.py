"""The field values the BM1684X builds of four tdl_models networks need (issue 27 item 2),
each from a real command of those networks (decoded fields copied below; the networks are in
tests/models/bm1684x/) against a numpy reference written from the meaning the module states:

- pord.avgpooling opd2_addr (pord.py): an int8 average = sat(round(window sum * opd1 >> opd2));
  cls_sound_babay_cry's four pools;
- dma.tensor.broadcast and dma.gather with stride_enable 0 (gdma.py, dma_index.py): the
  default layouts; cls_attribute_face's broadcast of an int32 row, topformer's fp16 row gather;
- sg gathers of any precision, opd0_prec = res0_prec (sg.py): topformer's fp16
  pl_gather_d1coor, hand_keypoint's fp32 pe_s_gather_hzd;
- quant.dq0's constant form, zp = opd1_addr, scale = opd2_addr (quant.py): cls_attribute_face's
  sigmoid tables dequantized by 1/255;
and the static refusals (bmk.sim.bm1684x.check, before any run) around them."""
import numpy as np
import pytest

import bmk
from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim import bm1684x as sem
from tests.chips.bm1684x.sim.helpers import (CHIP, FLOATS, GLOBAL_BASE, INTS, LANE, LOCAL_BASE, aligned, get, prec,
                                             put, rand, rec, run, sat, to_storage)
from tests.chips.bm1684x.sim.test_gdma import gget, gput

I8, U8, I16, U16, I32, U32 = INTS
FP16, FP32, BF16 = FLOATS

# cls_sound_babay_cry, command 28 of its TIU stream (sPorD): a 2x2 stride-2 int8 average pool
CRY_AVGPOOL = {'opd2_addr': 7, 'opd1_addr': 51, 'res0_addr': 32768, 'opd1_w': 2, 'opd1_h': 2, 'opd0_w': 40,
               'opd0_h': 188, 'res0_w': 20, 'res0_h': 94, 'res0_c': 32, 'res0_n': 1, 'opd2_n_str': 5,
               'res_op_y_str': 2, 'res_op_x_str': 2, 'opd3_const': 1, 'opd1_const': 1}
# the (opd1_addr, opd2_addr) pairs of its four int8 average pools
CRY_PAIRS = [(0x33, 7), (0x51, 8), (0x2f, 7), (5, 4)]


def windows_sum(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, c, oh, ow), np.int64)
    for ky in range(k):
        for kx in range(k):
            out += x[:, :, ky:ky + (oh - 1) * s + 1:s, kx:kx + (ow - 1) * s + 1:s]
    return out


def half_up_shift(v, n):
    """v / 2**n rounded half up (rounding_mode_t half_up, bm1684x-memory.md)."""
    return (np.asarray(v, np.int64) + (1 << (n - 1))) >> n if n else np.asarray(v, np.int64)


@pytest.mark.parametrize("mul,shift", CRY_PAIRS)
@pytest.mark.parametrize("signed", [0, 1])
def test_int8_avgpool_scales_the_window_sum_by_opd1_and_shifts_by_opd2(mul, shift, signed):
    assert numerics.as_mode(CRY_AVGPOOL["opd2_n_str"]) == numerics.Round.HALF_UP
    dt = I8 if signed else U8
    rng = np.random.default_rng(mul)
    x = rand(rng, (1, 32, 188, 40), dt)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, dt)
    f = dict(CRY_AVGPOOL, opd1_addr=mul, opd2_addr=shift, opd0_sign=signed)
    sim, _ = run([rec("tiu", "sPorD", "pord.avgpooling", **f)], sim)
    want = sat(half_up_shift(windows_sum(x, 2, 2) * mul, shift), dt)
    np.testing.assert_array_equal(get(sim, 0x8000, (1, 32, 94, 20), dt), want)


def test_avgpool_opd2_refusals_are_static():
    fp16 = dict(CRY_AVGPOOL, opd0_prec=prec(FP16), res0_prec=prec(FP16), opd1_addr=0x3800)
    for fields, field, value in ((fp16, "opd2_addr", 7), (dict(CRY_AVGPOOL, opd2_addr=32), "opd2_addr", 32),
                                 (dict(CRY_AVGPOOL, res1_addr=3), "res1_addr", 3),
                                 (dict(fp16, opd2_addr=0, res1_addr=3), "res1_addr", 3)):
        r = rec("tiu", "sPorD", "pord.avgpooling", **fields)
        with pytest.raises(SimulationError, match=rf"pord.avgpooling: {field} .*not {value}"):
            sem.check(CHIP, "tiu", r.fields)
    sem.check(CHIP, "tiu", rec("tiu", "sPorD", "pord.avgpooling", **CRY_AVGPOOL).fields)


# cls_attribute_face, command 109 of its GDMA stream: an int32 row broadcast to 64 NPUs, no strides
FACE_BROADCAST = {'localmem_mask_h32': 4294967295, 'localmem_mask_l32': 4294967295, 'dst_start_addr_l32': 134218240,
                  'src_start_addr_h8': 1, 'src_start_addr_l32': 282624, 'dst_wsize': 64, 'dst_hsize': 1,
                  'dst_csize': 64, 'dst_nsize': 1, 'src_wsize': 64, 'src_hsize': 1, 'src_csize': 1, 'src_nsize': 1,
                  'src_data_format': 4}


def test_broadcast_with_implicit_strides_of_the_real_command():
    f = dict(FACE_BROADCAST, stride_enable=0)
    src, dst = GLOBAL_BASE + 282624, 134218240 - LOCAL_BASE
    row = rand(np.random.default_rng(3), (1, 1, 1, 64), I32)
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(src, to_storage(row, I32).tobytes())
    sim, _ = run([rec("gdma", "DMA_tensor", "dma.tensor.broadcast", **f)], sim)
    np.testing.assert_array_equal(get(sim, dst, (1, 64, 1, 64), I32), np.broadcast_to(row, (1, 64, 1, 64)))


@pytest.mark.parametrize("start", [0, 3])
@pytest.mark.parametrize("src_local", [False, True])
def test_broadcast_with_implicit_strides_takes_the_default_layouts(start, src_local):
    """stride_enable 0: the source contiguous (global) or aligned (local) over (N, 1, H, W), the
    destination aligned from its start NPU (tpu_gdma_channel_bcast_S2L / _L2L's defaults); the
    stride fields hold junk that must not be read."""
    n, c, h, w = 2, 70 - start, 3, 5
    x = rand(np.random.default_rng(4), (n, 1, h, w), I16)
    sim = bmk.Simulator("bm1684x")
    if src_local:
        src = LOCAL_BASE + 40 * LANE + 0x800
        put(sim, 40 * LANE + 0x800, x, I16, aligned(40, (n, 1, h, w), I16))
    else:
        src = GLOBAL_BASE + 0x1000
        gput(sim, src, x, I16, (h * w, h * w, w, 1))
    dst = start * LANE + 0x4000
    junk = {f"{s}_{d}stride": 7 for s in ("src", "dst") for d in "nch"}
    f = dict(stride_enable=0, src_data_format=CHIP.engine("gdma").cls("DMA_tensor").field("src_data_format")
             .enum_value("int16"), localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF,
             src_start_addr_l32=src & 0xFFFFFFFF, src_start_addr_h8=src >> 32,
             dst_start_addr_l32=(LOCAL_BASE + dst) & 0xFFFFFFFF, dst_start_addr_h8=(LOCAL_BASE + dst) >> 32,
             src_nsize=n, src_csize=1, src_hsize=h, src_wsize=w, dst_nsize=n, dst_csize=c, dst_hsize=h, dst_wsize=w,
             **junk)
    sim, _ = run([rec("gdma", "DMA_tensor", "dma.tensor.broadcast", **f)], sim)
    np.testing.assert_array_equal(get(sim, dst, (n, c, h, w), I16, aligned(start, (n, c, h, w), I16)),
                                  np.broadcast_to(x, (n, c, h, w)))


@pytest.mark.parametrize("kind", ["dma.tensor", "dma.tensor.transpose", "dma.tensor.4bank_broadcast"])
def test_other_tensor_kinds_refuse_implicit_strides_statically(kind):
    r = rec("gdma", "DMA_tensor", kind, **dict(FACE_BROADCAST, stride_enable=0))
    with pytest.raises(SimulationError, match=rf"{kind}: stride_enable .*not 0"):
        sem.check(CHIP, "gdma", r.fields)
    sem.check(CHIP, "gdma", rec("gdma", "DMA_tensor", "dma.tensor.broadcast", **dict(FACE_BROADCAST,
                                                                                      stride_enable=0)).fields)


# topformer_seg_motion, command 1102 of its GDMA stream: fp16 rows gathered by L2 SRAM indices
TOPFORMER_GATHER = {'localmem_mask_h32': 4294967295, 'localmem_mask_l32': 4294967295,
                    'index_start_addr_l32': 268435456, 'dst_start_addr_l32': 134217728, 'src_start_addr_h8': 1,
                    'src_start_addr_l32': 3997696, 'index_hsize': 64, 'index_csize': 96, 'dst_hsize': 64,
                    'src_wsize': 60, 'src_hsize': 32, 'src_csize': 96, 'constant_value': 4294967295,
                    'src_data_format': 1}


def test_gather_with_implicit_strides_of_the_real_command():
    """src (1, 96, 32, 60) fp16 contiguous in global memory, indices (1, 96, 64, 1) uint32
    contiguous in L2 SRAM, dst (1, 96, 64, 60) aligned from NPU 0; indices past 32 take the
    constant (its low 16 bits: 0xffff, an fp16 NaN pattern)."""
    rng = np.random.default_rng(5)
    x = rand(rng, (1, 96, 32, 60), FP16)
    idx = rng.integers(0, 34, (1, 96, 64, 1))
    sim = bmk.Simulator("bm1684x")
    src = GLOBAL_BASE + 3997696
    sim.gmem_write(src, to_storage(x, FP16).tobytes())
    sim.memories["l2sram"].store(0, idx.astype("<u4").view(np.uint8))
    sim, _ = run([rec("gdma", "DMA_gather", "dma.gather", **dict(TOPFORMER_GATHER, stride_enable=0))], sim)
    raw = to_storage(x, FP16).view(np.uint16)
    want = np.where(idx < 32, np.take_along_axis(raw, np.minimum(idx, 31), axis=2), 0xFFFF)
    got = sim.lmem_read_array(0, (1, 96, 64, 60), aligned(0, (1, 96, 64, 60), FP16), U16)
    np.testing.assert_array_equal(got, want)


# topformer_seg_motion, TIU command 1108 (sSG): its resize's fp16 column gather, int16 indices
TOPFORMER_PL_GATHER = {'opd1_addr': 196608, 'opd1_prec': 3, 'opd0_prec': 1, 'res0_addr': 65536, 'res0_prec': 1,
                       'opd1_w': 1, 'opd1_c': 7680, 'opd0_w': 3840, 'opd0_h': 1, 'res0_w': 7680, 'res0_h': 1,
                       'res0_c': 96, 'res0_n': 1}
# hand_keypoint_cls, TIU command 32 (sSG): an fp32 table per NPU (T4) gathered by 9 int8 indices
HAND_GATHER = {'opd0_addr': 256, 'opd0_prec': 2, 'res0_addr': 192, 'res0_prec': 2, 'opd1_w': 9, 'opd1_c': 1,
               'opd0_w': 256, 'opd0_h': 1, 'res0_w': 9, 'res0_h': 1, 'res0_c': 1, 'res0_n': 1, 'opd0_str': 4}
# every type of the spec's prec enum that a BM1684X operand takes (int4: nibbles; fp8: none)
PRECS = [name for name, _ in CHIP.engine("tiu").cls("sSG").field("res0_prec").enum if name not in ("int4", "fp8")]


def _dtype_of(name):
    return {"int8": I8, "int16": I16, "int32": I32, "fp16": FP16, "bf16": BF16, "fp32": FP32}[name]


def test_pl_gather_d1coor_of_the_real_fp16_command():
    rng = np.random.default_rng(6)
    a = rand(rng, (1, 96, 1, 3840), FP16)
    idx = rng.integers(0, 3840, 7680)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, FP16)
    put(sim, 196608, idx.reshape(1, 7680, 1, 1), U16, aligned(0, (1, 7680, 1, 1), U16, compact=True))
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_d1coor", **TOPFORMER_PL_GATHER)], sim)
    np.testing.assert_array_equal(get(sim, 65536, (1, 96, 1, 7680), FP16), a[..., idx])


@pytest.mark.parametrize("name", PRECS)
def test_gathers_move_every_precision(name):
    """The two real gathers, with their precision fields set to each type of the prec enum."""
    dt = _dtype_of(name)
    code = CHIP.engine("tiu").cls("sSG").field("res0_prec").enum_value(name)
    rng = np.random.default_rng(7)
    a = rand(rng, (1, 96, 1, 200), dt)
    idx = rng.integers(0, 200, 300)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, dt)
    put(sim, 196608, idx.reshape(1, 300, 1, 1), U16, aligned(0, (1, 300, 1, 1), U16, compact=True))
    f = dict(TOPFORMER_PL_GATHER, opd0_prec=code, res0_prec=code, opd0_w=200, opd1_c=300, res0_w=300)
    table = rand(rng, (1, 1, 1, 256), dt)
    hidx = rng.integers(0, 256, (1, 1, 1, 9))
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_d1coor", **f)], sim)
    np.testing.assert_array_equal(get(sim, 65536, (1, 96, 1, 300), dt), a[..., idx])
    sim = bmk.Simulator("bm1684x")
    put(sim, 256, table, dt, (0, 0, 256, 1))
    put(sim, 0, hidx, U8)
    sim, _ = run([rec("tiu", "sSG", "sg.pe_s_gather_hzd", **dict(HAND_GATHER, opd0_prec=code, res0_prec=code))], sim)
    np.testing.assert_array_equal(get(sim, 192, (1, 1, 1, 9), dt), table[..., hidx[0, 0, 0]])


def test_gathers_refuse_a_conversion_statically():
    fp16, fp32 = (CHIP.engine("tiu").cls("sSG").field("res0_prec").enum_value(n) for n in ("fp16", "fp32"))
    for kind, fields in (("sg.pl_gather_d1coor", TOPFORMER_PL_GATHER), ("sg.pe_s_gather_hzd", HAND_GATHER)):
        r = rec("tiu", "sSG", kind, **dict(fields, opd0_prec=fp16, res0_prec=fp32))
        with pytest.raises(SimulationError, match=rf"{kind}: opd0_prec .*not {fp16}"):
            sem.check(CHIP, "tiu", r.fields)
        sem.check(CHIP, "tiu", rec("tiu", "sSG", kind, **fields).fields)
    fp8 = CHIP.engine("tiu").cls("sSG").field("res0_prec").enum_value("fp8")
    r = rec("tiu", "sSG", "sg.pl_gather_d1coor", **dict(TOPFORMER_PL_GATHER, opd0_prec=fp8, res0_prec=fp8))
    with pytest.raises(SimulationError, match=r"sg.pl_gather_d1coor: res0_prec .*not 7"):
        sem.check(CHIP, "tiu", r.fields)


# cls_attribute_face, TIU command 196 (sRQ&sDQ): a sigmoid table's uint8 output to fp32
FACE_DQ0 = {'opd2_addr': 998277249, 'res0_w': 2, 'res0_h': 1, 'res0_c': 1, 'res0_n': 1, 'res0_addr': 131072,
            'opd2_n_str': 1, 'opd1_const': 1, 'res0_prec': 2, 'opd2_sign': 1}


def test_dq0_constant_form_is_opd1_zero_point_and_opd2_scale():
    x = np.array([[[[255, 94]]]])
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, U8)
    sim, _ = run([rec("tiu", "sRQ&sDQ", "quant.dq0", **FACE_DQ0)], sim)
    scale = np.array([998277249], np.uint32).view(np.float32)[0]
    assert abs(float(scale) - 1 / 255) < 1e-9
    np.testing.assert_array_equal(get(sim, 131072, (1, 1, 1, 2), FP32), (x.astype(np.float32) * scale)
                                  .astype(np.float64))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, U8)
    sim, _ = run([rec("tiu", "sRQ&sDQ", "quant.dq0", **dict(FACE_DQ0, opd1_addr=200))], sim)
    np.testing.assert_array_equal(get(sim, 131072, (1, 1, 1, 2), FP32),
                                  ((x - 200).astype(np.float32) * scale).astype(np.float64))


def test_pl_gather_moves_int4_nibbles():
    """int4 (the prec enum's 4-bit type): two elements a byte, the even one in the low nibble
    (operands.py), aligned to eu_num_4bit = 128 elements per channel."""
    code = CHIP.engine("tiu").cls("sSG").field("res0_prec").enum_value("int4")
    rng = np.random.default_rng(8)
    a = rng.integers(-8, 8, (1, 96, 1, 200))
    idx = rng.integers(0, 200, 300)
    sim = bmk.Simulator("bm1684x")
    for c in range(96):                               # channel c: NPU c % 64, group c // 64 (256 nibbles)
        nib = np.zeros(256, np.int64)
        nib[:200] = a[0, c, 0] & 0xF
        sim.lmem_write((c % 64) * LANE + (c // 64) * 128, (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).tobytes())
    put(sim, 196608, idx.reshape(1, 300, 1, 1), U16, aligned(0, (1, 300, 1, 1), U16, compact=True))
    f = dict(TOPFORMER_PL_GATHER, opd0_prec=code, res0_prec=code, opd0_w=200, opd1_c=300, res0_w=300)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_d1coor", **f)], sim)
    for c in range(96):                               # result: 384 nibbles (192 bytes) per group
        raw = np.frombuffer(sim.lmem_read((c % 64) * LANE + 65536 + (c // 64) * 192, 150), np.uint8)
        nib = np.stack([raw & 0xF, raw >> 4], 1).reshape(-1).astype(np.int64)
        np.testing.assert_array_equal(np.where(nib >= 8, nib - 16, nib)[:300], a[0, c, 0, idx])


def test_quant_precision_refusals_are_static():
    """dq0's result must be fp32, dq2's a float; A an integer but for rq2 (CHECKS in quant.py)."""
    code = {n: CHIP.engine("tiu").cls("sRQ&sDQ").field("res0_prec").enum_value(n) for n in ("int8", "fp16", "fp32")}
    cases = (("quant.dq0", dict(FACE_DQ0, res0_prec=code["fp16"]), "res0_prec", code["fp16"]),
             ("quant.dq2", dict(FACE_DQ0, res0_prec=code["int8"]), "res0_prec", code["int8"]),
             ("quant.dq0", dict(FACE_DQ0, opd0_prec=code["fp32"]), "opd0_prec", code["fp32"]))
    for kind, fields, field, value in cases:
        with pytest.raises(SimulationError, match=rf"{kind}: {field} .*not {value}"):
            sem.check(CHIP, "tiu", rec("tiu", "sRQ&sDQ", kind, **fields).fields)
    sem.check(CHIP, "tiu", rec("tiu", "sRQ&sDQ", "quant.dq2", **dict(FACE_DQ0, res0_prec=code["fp16"])).fields)
