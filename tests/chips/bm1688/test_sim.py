"""bm1688 simulator: what BM1688 adds to the BM1684X family (bmk/sim/bm1688), each against a
numpy reference written from the sources the modules cite, and the family's kinds under
BM1688's parameters (32 NPUs of 128 KiB, 16-byte EUs, implicit ids)."""
import attrs
import numpy as np
import pytest

import bmk
from bmk.encoders import Record
from bmk.errors import SimulationError
from bmk.isa import load_chip
from tests.models import files

CHIP = load_chip("bm1688")
NPU, LANE = 32, 131072
STATIC = 0x800000


def rec(engine, cls, kind, **fields):
    """A Record of class `cls`: its defaults, keys and kind match, then `fields`."""
    c = CHIP.engine(engine).cls(cls)
    f = c.defaults
    f.update(dict(c.keys[0]))
    f.update(dict(c.instruction(kind).match))
    unknown = set(fields) - set(c.by_name)
    assert not unknown, unknown
    f.update(fields)
    return Record(engine, cls, kind, f)


def code(field, name):
    return CHIP.engine("tiu").cls("sCONV").field(field).enum_value(name)


def regs(reg_idx0, imm0, reg_idx1=127, reg_idx2=127, imm1=0):
    return rec("tiu", "SYS_TR_ACC", "system_tr_wr.wr_imm", reg_idx0=reg_idx0, imm0=imm0, reg_idx1=reg_idx1,
               reg_idx2=reg_idx2, imm1=imm1)


def put(sim, lane, offset, values):
    sim.lmem_write(lane * LANE + offset, np.ascontiguousarray(values).tobytes())


def get(sim, lane, offset, n, dtype):
    return np.frombuffer(sim.lmem_read(lane * LANE + offset, n * np.dtype(dtype).itemsize), dtype)


def requant(acc, mult, shift, zp):
    """TPU1686 requant (bmk/sim/bm1684x/quant.py rq1): acc * mult >> -shift rounded half up, + zp."""
    prod = acc.astype(np.int64) * mult
    return np.floor(prod / 2.0 ** -shift + 0.5).astype(np.int64) + zp


@pytest.mark.parametrize("per_channel", [True, False])
def test_quantized_conv_reads_its_operands_from_registers(per_channel):
    """A 1x1 int8 conv, 4 -> 2 channels: bias int32 in opd2, kernel zero point in register 5,
    requant (multiplier, shift, zero point) per channel at the address in register 6 or as the
    constants of registers 6, 32, 33; relu; an unsigned result (opt_res0_sign 0)."""
    rng = np.random.default_rng(0)
    x = rng.integers(-30, 30, (4, 3, 3)).astype(np.int8)
    w = rng.integers(-20, 20, (2, 4)).astype(np.int8)
    bias = np.array([500, -300], np.int32)
    mult, shift, zp = np.array([3 << 20, 5 << 19]), np.array([-24, -23]), np.array([3, 0])
    kzp = 2
    sim = bmk.Simulator("bm1688")
    for c in range(4):
        put(sim, c, 0x0, x[c].ravel())
    for o in range(2):
        put(sim, o, 0x100, np.pad(w[o], (0, 28)))            # one 32-channel block per output channel
        put(sim, o, 0x200, bias[o:o + 1])
        put(sim, o, 0x300, np.array([mult[o], (shift[o] & 0xFF) | (zp[o] << 16)], np.int32))
    if per_channel:
        write = [regs(5, kzp, 6, 127, 0x300)]
    else:
        mult, shift, zp = mult[:1].repeat(2), shift[:1].repeat(2), zp[:1].repeat(2)
        write = [regs(5, kzp), regs(6, int(mult[0]), 32, 33, (int(shift[0]) & 0xFFFFFFFF) | (int(zp[0]) << 32))]
    conv = rec("tiu", "sCONV", "conv.normal", opt_rq=1, opt_opd4_const=1, opt_opd5_const=int(not per_channel),
               relu=1, opd0_sign=1, opd1_sign=1, opd2_sign=1, opd2_n_str=5, res0_n=1, res0_c=2, res0_h=3, res0_w=3,
               opd0_c=4, opd0_h=3, opd0_w=3, opd1_h=1, opd1_w=1, res_op_x_str=1, res_op_y_str=1, opd3_const=1,
               res0_addr=0x400, opd0_addr=0x0, opd1_addr=0x100, opd2_addr=0x200)
    sim.run(write + [conv])
    acc = np.einsum("oi,ihw->ohw", w.astype(np.int64) - kzp, x.astype(np.int64)) + bias[:, None, None]
    want = np.clip(requant(np.maximum(acc, 0), mult[:, None, None], shift[:, None, None], zp[:, None, None]), 0, 255)
    for o in range(2):
        np.testing.assert_array_equal(get(sim, o, 0x400, 9, np.uint8), want[o].ravel())


def test_a_register_read_with_no_write_before_it_is_refused_by_name():
    conv = rec("tiu", "sCONV", "conv.normal", opt_rq=1, opt_opd4_const=1, res0_n=1, res0_c=1, res0_h=1, res0_w=1,
               opd0_c=1, opd0_h=1, opd0_w=1, opd1_h=1, opd1_w=1, res_op_x_str=1, res_op_y_str=1)
    with pytest.raises(SimulationError, match="tgcr_opd4"):
        bmk.Simulator("bm1688").run([conv])
    [finding] = bmk.check([conv], "bm1688")             # refused before anything runs, by bmk check too
    assert finding.field == "tgcr_opd4" and "must be written" in finding.reason


def test_quantized_average_pool_takes_the_constant_requant():
    """cls_sound_babay_cry's 2x2 pools: sum * 0x33 (opd1 constant), multiplier 1, shift -7."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (2, 4, 4)).astype(np.uint8)
    sim = bmk.Simulator("bm1688")
    for c in range(2):
        put(sim, c, 0x0, x[c].ravel())
    pool = rec("tiu", "sPorD", "pord.avgpooling", opt_rq=1, opt_opd5_const=1, opd1_const=1, opd3_const=1,
               opd2_n_str=5, res0_n=1, res0_c=2, res0_h=2, res0_w=2, opd0_h=4, opd0_w=4, opd1_h=2, opd1_w=2,
               res_op_x_str=2, res_op_y_str=2, res0_addr=0x100, opd0_addr=0x0, opd1_addr=0x33)
    sim.run([regs(6, 1, 32, 33, 0xFFFFFFF9), pool])
    sums = x.reshape(2, 2, 2, 2, 2).astype(np.int64).sum(axis=(2, 4))
    want = np.clip(requant(sums * 0x33, 1, -7, 0), 0, 255)
    for c in range(2):
        np.testing.assert_array_equal(get(sim, c, 0x100, 4, np.uint8), want[c].ravel())


def test_constant_dequantization_scale_is_in_opd1():
    """BM1688's dq0 constant: opd1_addr the fp32 scale, opd2_addr the zero point."""
    a = np.array([-5, 0, 7, 127], np.int8)
    sim = bmk.Simulator("bm1688")
    put(sim, 0, 0x0, a)
    scale = np.float32(0.0367)
    dq = rec("tiu", "sRQ&sDQ", "quant.dq0", opd0_sign=1, opd2_sign=1, res0_prec=code("res0_prec", "fp32"),
             opd1_const=1, res0_n=1, res0_c=1, res0_h=1, res0_w=4, res0_addr=0x100, opd0_addr=0x0,
             opd1_addr=int(np.array(scale).view(np.uint32)), opd2_addr=2)
    sim.run([dq])
    np.testing.assert_array_equal(get(sim, 0, 0x100, 4, np.float32), ((a.astype(np.float32) - 2) * scale))


def test_static_operands_are_offsets_into_the_lookup_tables():
    """tsbc.s_distribute from static offset 448: BM1688's sequence table (tpu-mlir target_1688
    gen_lookup_table: EXP_COEFF 32, LOG_COEFF 64, ERF_COEFF 16 words before it)."""
    sim = bmk.Simulator("bm1688")
    d = rec("tiu", "sCW&sBC", "tsbc.s_distribute", res0_prec=code("res0_prec", "int32"), res0_n=1, res0_c=9,
            res0_h=1, res0_w=1, opd0_c=9, opd0_w=1, res0_addr=0x40, opd0_addr=448)
    sim.run([d])
    np.testing.assert_array_equal([get(sim, c, 0x40, 1, np.int32)[0] for c in range(9)], np.arange(9))
    coeff = np.frombuffer(sim.memories["static"].load(0, 16), np.float32)
    np.testing.assert_allclose(coeff, [1, 1, 0.5, 1 / 6])


def test_implicit_ids_order_a_load_before_its_reader():
    """Ids are positions: a TIU command with cmd_id_dep 2 waits for the second GDMA command."""
    rng = np.random.default_rng(2)
    x = rng.integers(-100, 100, 16).astype(np.int8)
    sim = bmk.Simulator("bm1688")
    sim.gmem_write(0x8000000000 | (1 << 36), x.tobytes())
    fill = rec("gdma", "DMA_tensor", "dma.tensor", src_nsize=1, src_csize=1, src_hsize=1, src_wsize=16,
               src_nstride=16, src_cstride=16, src_hstride=16, src_wstride=1, dst_nstride=16, dst_cstride=16,
               dst_hstride=16, dst_wstride=1, src_start_addr_l32=0, src_start_addr_h8=0x90, dst_start_addr_l32=0x200,
               nchw_copy=1, stride_enable=1, localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF)
    first = attrs.evolve(fill, fields={**fill.fields, "dst_start_addr_l32": 0x300})
    copy = rec("tiu", "sAR", "arith.copy", tsk_opd_num=1, opd0_sign=1, res0_n=1, res0_c=1, res0_h=1, res0_w=16,
               res0_addr=0x100, opd0_addr=0x200, cmd_id_dep=2)
    sim.run([copy, first, fill])
    np.testing.assert_array_equal(get(sim, 0, 0x100, 16, np.int8), x)


def test_the_vendor_yolov5s_bm1688_runs_to_the_end_with_no_race():
    """tpu-mlir's TDB yolov5s_bm1688_int8_sym (1 core; its coefficients stripped, so only that it
    runs: every instruction has semantics, every wait resolves, no two engines race)."""
    from bmk.models.run import simulate
    m = bmk.load_model(files.YOLO_1688)
    st = m.nets[0].stages[0]
    out, reports, _ = simulate(m, {t.name: np.zeros(t.shape, t.dtype) for t in st.inputs}, verify=False)
    assert [len(r.races) for _, r in reports] == [0]
    assert {k: v.shape for k, v in out.items()} == {t.name: tuple(t.shape) for t in st.outputs}


def _cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("twins", files.TWINS, ids=lambda t: f"{t[0].stem}-{t[1].stem.rsplit('_', 1)[1]}")
def test_two_chips_builds_of_one_network_agree(twins):
    """tdl_models compiled one network and calibration for several chips: the same input through
    the BM1684X build and the BM1688 or CV184X build gives the same fp32 outputs (cosine >= 0.99
    each; bit-identical today)."""
    m1684x, m1688 = (bmk.load_model(p) for p in twins)
    rng = np.random.default_rng(5)
    inputs = {}
    for t in m1684x.nets[0].stages[0].inputs:
        lo, hi = (0, 256) if t.dtype == np.uint8 else (-40, 40)
        inputs[t.name] = rng.integers(lo, hi, t.shape).astype(t.dtype)
    want, got = m1684x.run(inputs), m1688.run(inputs)
    assert list(got) == list(want)
    for name in want:
        assert _cosine(want[name], got[name]) >= 0.99, name


def test_cv184x_dma_tag_31_is_local_memory_and_a_conv_takes_no_kernel_zero_point():
    """CV184X: a DMA address tagged 31 (bits 40..44) is local memory (specs/cv184x/chip.toml
    mirror); its requantizing conv reads no register 5 (the chip has no opd4 register)."""
    chip = load_chip("cv184x")
    lane = chip.param("lmem_size")
    x = np.arange(-8, 8, dtype=np.int8)
    sim = bmk.Simulator("cv184x")
    sim.gmem_write(1 << 40, x.tobytes())                          # tag 1: weights
    c = chip.engine("gdma").cls("DMA_tensor")
    f = {**c.defaults, **dict(c.keys[0]), **dict(c.instruction("dma.tensor").match)}
    f.update(src_nsize=1, src_csize=1, src_hsize=1, src_wsize=16, src_nstride=16, src_cstride=16, src_hstride=16,
             src_wstride=1, dst_nstride=16, dst_cstride=16, dst_hstride=16, dst_wstride=1, src_start_addr_h13=0x100,
             dst_start_addr_l32=0x100, dst_start_addr_h13=0x1F00, nchw_copy=1, stride_enable=1,
             localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF)
    sim.run([Record("gdma", "DMA_tensor", "dma.tensor", f)])
    np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(0x100, 16), np.int8), x)
    assert "tgcr_opd4" not in dict(chip.params) and lane == 65536


def _yolo_outputs(path, weights, x):
    """yolov5s's outputs with `weights` in its (stripped) coefficient region: tag 1 of the
    global memory (isa-facts bm1688.json address_encoding)."""
    from bmk.models.run import prepare, simulate
    m = bmk.load_model(path)
    prepared = prepare(m)
    sim = bmk.Simulator(prepared.spec, semantics=prepared.semantics)
    sim.gmem_write(0x9000000000, weights)
    out, reports, _ = simulate(m, {"images": x}, prepared=prepared, sim=sim)
    return out, reports


def test_one_core_and_two_core_builds_of_yolov5s_agree_with_no_race():
    """The vendor's TDB yolov5s for 1 and 2 BM1688 cores (coefficients stripped: both get the
    same synthetic ones, requant words with a right shift) give identical outputs; the 2-core
    run goes round by round (bmk/sim/cores.py) with no race in any round."""
    rng = np.random.default_rng(0)
    w = np.zeros((2 << 20, 4), np.uint8)              # 8 MiB: the whole weight region
    w[:, 0] = rng.integers(244, 251, len(w))          # as an int8: -12..-6; as a word's low byte: a right shift
    w[:, 2] = rng.integers(0, 3, len(w))
    x = rng.integers(0, 256, (1, 3, 640, 640)).astype(np.uint8)
    one, one_reports = _yolo_outputs(files.YOLO_1688, w.tobytes(), x)
    two, two_reports = _yolo_outputs(files.YOLO_1688_CORE2, w.tobytes(), x)
    assert len(one_reports) == 1 and len(two_reports) > 2
    assert all(not r.races for _, r in one_reports + two_reports)
    for name in one:
        assert np.abs(one[name].astype(np.int64)).mean() > 1
        np.testing.assert_array_equal(one[name], two[name])


def test_a_message_pattern_that_is_not_a_barrier_is_refused():
    from bmk.sim.cores import rounds
    m = bmk.load_model(files.YOLO_1688_CORE2)
    recs = {g.core: list(m.records(g)) for g in m.groups()}
    waits = [i for i, r in enumerate(recs[1]) if r.kind == "system.wait_msg"]
    del recs[1][waits[1]]                                   # core 1's TIU skips its second barrier
    with pytest.raises(SimulationError, match="barrier"):
        rounds(CHIP, recs)


def test_family_kinds_take_bm1688s_lanes_and_eu_width():
    """BM1684X's dma.tensor and arith.add on BM1688's parameters: 40 channels over 32 NPUs (channel
    c on NPU c % 32, group c // 32), each channel's 3x5 int8 plane aligned to the 16-byte EU
    (isa-facts bm1688.json: 32 NPUs x 128 KiB, eu_bytes 16), loaded from a tagged global address."""
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-60, 60, (1, 40, 3, 5)).astype(np.int8) for _ in range(2))
    sim = bmk.Simulator("bm1688")
    glob = 0x8000000000 | (2 << 36)                            # tag 2: activations
    sim.gmem_write(glob, a.tobytes())
    sim.gmem_write(glob + 0x1000, b.tobytes())
    loads = [rec("gdma", "DMA_tensor", "dma.tensor", src_nsize=1, src_csize=40, src_hsize=3, src_wsize=5,
                 src_nstride=600, src_cstride=15, src_hstride=5, src_wstride=1, dst_nstride=32, dst_cstride=16,
                 dst_hstride=5, dst_wstride=1, src_start_addr_l32=off, src_start_addr_h8=0xA0, dst_start_addr_l32=dst,
                 nchw_copy=1, stride_enable=1, localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF)
             for off, dst in ((0, 0x0), (0x1000, 0x100))]
    add = rec("tiu", "sAR", "arith.add", tsk_opd_num=2, opd0_sign=1, opd1_sign=1, res0_n=1, res0_c=40, res0_h=3,
              res0_w=5, res0_addr=0x200, opd0_addr=0x0, opd1_addr=0x100, cmd_id_dep=2)
    sim.run(loads + [add])
    want = np.clip(a.astype(int) + b, -128, 127)
    for c in (0, 1, 31, 32, 39):
        lane, group = c % NPU, c // NPU
        got = get(sim, lane, 0x200 + group * 16, 15, np.int8)
        np.testing.assert_array_equal(got, want[0, c].ravel(), err_msg=f"channel {c}")


def test_cv184x_static_memory_holds_the_bf16_exponential_coefficients():
    """The vendor's EXP_BF16_COEFF words (tpu-mlir target_1688 gen_lookup_table: bf16 1/k!,
    rounded to nearest even) at CV184X static offset 0, where its streams broadcast 7 of them
    into sfu.taylor; the int32 sequence at 96 and the int16 one at 352 (TPU1686 mars3 memmap.h
    SERIAL_NUMBER_OFFSET, SERIAL_INT16_NUMBER_OFFSET; specs/cv184x/chip.toml)."""
    sim = bmk.Simulator("cv184x")
    words = np.frombuffer(sim.memories["static"].load(0, 16), "<u2")
    assert [hex(w) for w in words] == ["0x3f80", "0x3f80", "0x3f00", "0x3e2b", "0x3d2b", "0x3c09", "0x3ab6",
                                       "0x3950"]
    np.testing.assert_array_equal(np.frombuffer(sim.memories["static"].load(96, 256), "<i4"), np.arange(64))
    np.testing.assert_array_equal(np.frombuffer(sim.memories["static"].load(352, 128), "<i2"), np.arange(64))


def test_cv184x_s_bc_from_the_int32_sequence_builds_resize_indexes():
    """topformer_seg_motion's CV184X build (issue 29) makes the source rows of a 2x resize from
    static offset 96: tsbc.s_bc of 8 int32 there (k, memmap.h SERIAL_NUMBER), then arith.add of
    8, 16 and 24 for the rest of 0..30 (8 NPUs: 8 entries a row, where the BM1688 build
    broadcasts 32 of its sequence). Reference: the sequence k written from memmap.h's formula."""
    chip = load_chip("cv184x")

    def tiu(cls, kind, **fields):
        c = chip.engine("tiu").cls(cls)
        f = {**c.defaults, **dict(c.keys[0]), **dict(c.instruction(kind).match), **fields}
        return Record("tiu", cls, kind, f)

    i32 = chip.engine("tiu").cls("sCW&sBC").field("res0_prec").enum_value("int32")
    cmds = [tiu("sCW&sBC", "tsbc.s_bc", res0_prec=i32, res0_n=1, res0_c=1, res0_h=1, res0_w=8, opd0_c=1, opd0_w=8,
                res0_addr=0x100, opd0_addr=0x60)]
    for k, (addr, w) in enumerate([(0x120, 8), (0x140, 8), (0x160, 7)], 1):
        cmds.append(tiu("sAR", "arith.add", opd1_const=1, tsk_opd_num=2, res0_prec=i32, opd0_prec=i32,
                        opd1_prec=i32, res0_n=1, res0_c=1, res0_h=1, res0_w=w, res0_addr=addr, opd0_addr=0x100,
                        opd1_addr=8 * k))
    sim = bmk.Simulator("cv184x")
    sim.run(cmds)
    got = np.frombuffer(sim.lmem_read(0x100, 31 * 4), "<i4")
    np.testing.assert_array_equal(got, np.arange(31))


def test_cross_core_races_are_the_global_bytes_two_cores_touch_in_one_round():
    """bmk/sim/cores.py cross_core_races: core 0 writes [0, 100), core 1 reads [50, 150) in the same
    round: one race on [50, 100); a read against a read, or bytes apart, is none."""
    from bmk.sim.cores import cross_core_races
    write, read = ("gmem", 0, 0, 100, True, None), ("gmem", 0, 50, 150, False, None)
    [race] = cross_core_races(3, [(0, ["dma.tensor"], [(write,)]), (1, ["dma.tensor"], [(read,)])], "gmem")
    assert (race.round, race.first[:2], race.second[:2], race.lo, race.hi) == (3, (0, 0), (1, 0), 50, 100)
    assert "core 0 instruction 0 (dma.tensor) and core 1 instruction 0" in str(race)
    apart = ("gmem", 0, 100, 150, True, None)
    assert not cross_core_races(0, [(0, ["a"], [(write,)]), (1, ["b"], [(apart,)])], "gmem")
    both_read = ("gmem", 0, 0, 100, False, None)
    assert not cross_core_races(0, [(0, ["a"], [(both_read,)]), (1, ["b"], [(read,)])], "gmem")
