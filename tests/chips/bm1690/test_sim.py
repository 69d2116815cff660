"""bm1690 (SG2260) simulator: the BM1684X family on BM1690's ChipSpec (bmk/sim/bm1690): SDMA
runs the GDMA kinds, HAU streams count in the barriers and run nothing, L2 SRAM and tagged DMA
addresses (specs/bm1690/chip.toml), each against a numpy reference."""
import math

import numpy as np
import pytest

import bmk
from bmk.encoders import Record
from bmk.errors import SimulationError
from bmk.isa import load_chip

CHIP = load_chip("bm1690")
YOLO = "tests/models/bm1690/yolov5s_bm1690_f16_core8.bmodel"


def dma(engine, src_h13, dst_h13, n=16, src_l32=0, dst_l32=0x100):
    """A DMA_tensor copy of n bytes on `engine` (gdma or sdma: the same classes)."""
    c = CHIP.engine(engine).cls("DMA_tensor")
    f = {**c.defaults, **dict(c.keys[0]), **dict(c.instruction("dma.tensor").match)}
    f.update(src_nsize=1, src_csize=1, src_hsize=1, src_wsize=n, src_nstride=n, src_cstride=n, src_hstride=n,
             src_wstride=1, dst_nstride=n, dst_cstride=n, dst_hstride=n, dst_wstride=1, src_start_addr_l32=src_l32,
             src_start_addr_h13=src_h13, dst_start_addr_l32=dst_l32, dst_start_addr_h13=dst_h13, nchw_copy=1,
             stride_enable=1, localmem_mask_l32=0xFFFFFFFF, localmem_mask_h32=0xFFFFFFFF)
    return Record(engine, "DMA_tensor", "dma.tensor", f)


def l2(sim):
    """The simulator's L2 SRAM (tag 30: specs/bm1690/chip.toml [memory.l2sram]), offsets from its base."""
    assert sim.space("l2sram").base == (30 << 40) + 0x6980000000
    return sim.memories["l2sram"]


@pytest.mark.parametrize("engine", ["gdma", "sdma"])
def test_a_dma_copy_from_global_memory_to_l2_sram(engine):
    """GDMA and SDMA run the family's dma.tensor: 16 bytes from tag 1 (weights) to tag 30 (L2)."""
    x = np.arange(-8, 8, dtype=np.int8)
    sim = bmk.Simulator("bm1690")
    sim.gmem_write(1 << 40, x.tobytes())
    sim.run([dma(engine, 0x100, 0x1E69, dst_l32=0x80000100)])
    np.testing.assert_array_equal(np.frombuffer(l2(sim).load(0x100, 16), np.int8), x)


def test_sdma_reads_l2_sram_into_local_memory():
    """Tag 31 is local memory as a DMA sees it: an SDMA load of L2 SRAM lands in lane 0."""
    x = np.arange(16, dtype=np.uint8) * 3
    sim = bmk.Simulator("bm1690")
    l2(sim).store(0x40, x)
    sim.run([dma("sdma", 0x1E69, 0x1F00, src_l32=0x80000040, dst_l32=0x200)])
    np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(0x200, 16), np.uint8), x)


def _records():
    m = bmk.load_model(YOLO)
    return {g.core: list(m.records(g)) for g in m.groups()}


def test_hau_streams_count_in_every_barrier_and_run_nothing():
    """Each wait of yolov5s's 8 cores counts 32 = 8 x (TIU, GDMA, SDMA, HAU): the HAU stream
    (opaque bytes) takes part in all 60 barriers and is in no round."""
    from bmk.sim.cores import rounds
    recs = _records()
    assert {r.engine for r in recs[0]} == {"tiu", "gdma", "sdma", "hau"}
    plan = rounds(CHIP, recs)
    assert len(plan) == 61 and all(len(row) == 8 for row in plan)
    assert not any(r.engine == "hau" for row in plan for part in row for r in part.records)
    assert sum(len(p.records) for row in plan for p in row) == sum(
        1 for rs in recs.values() for r in rs if r.engine != "hau")


def test_a_missing_hau_stream_breaks_the_barrier_count():
    """Without core 3's HAU stream the waits' count 32 is not the 31 streams taking part: refused."""
    from bmk.sim.cores import rounds
    recs = _records()
    recs[3] = [r for r in recs[3] if r.engine != "hau"]
    with pytest.raises(SimulationError, match="count of 31"):
        rounds(CHIP, recs)


def test_cdma_is_refused_by_name():
    """No shared model runs a CDMA command: the simulator has no semantics for any."""
    e = CHIP.engine("cdma")
    c = e.classes[0]
    kind = c.instructions[0].name
    f = {**c.defaults, **dict(c.keys[0]), **dict(c.instructions[0].match)}
    with pytest.raises(SimulationError, match="cdma"):
        bmk.Simulator("bm1690").run([Record("cdma", c.name, kind, f)])


def rec(engine, cls, kind, **fields):
    """A Record of class `cls`: its defaults, keys and kind match, then `fields`."""
    c = CHIP.engine(engine).cls(cls)
    f = {**c.defaults, **dict(c.keys[0]), **dict(c.instruction(kind).match)}
    unknown = set(fields) - set(c.by_name)
    assert not unknown, unknown
    f.update(fields)
    return Record(engine, cls, kind, f)


def prec(name):
    return CHIP.code("tiu", "res0_prec", name)


@pytest.mark.parametrize("kind,ref", [("arith.max", np.maximum), ("arith.min", np.minimum),
                                      ("arith.adds", np.add)])
def test_a_float_result_takes_either_result_sign(kind, ref):
    """f16 max / min / add with opt_res0_sign 1, as every shared f16 stream sets it: a float is
    signed whatever the flag (bmk/sim/bm1690/floats.py); 16 fp16 values on lane 0."""
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-4, 4, 16).astype(np.float16) for _ in range(2))
    sim = bmk.Simulator("bm1690")
    sim.lmem_write(0x100, a.tobytes())
    sim.lmem_write(0x200, b.tobytes())
    sim.run([rec("tiu", "sAR", kind, tsk_opd_num=2, res0_prec=prec("fp16"), opd0_prec=prec("fp16"),
                 opd1_prec=prec("fp16"), opd0_sign=1, opd1_sign=1, opt_res0_sign=1, res0_n=1, res0_c=1, res0_h=1,
                 res0_w=16, res0_addr=0x300, opd0_addr=0x100, opd1_addr=0x200)])
    got = np.frombuffer(sim.lmem_read(0x300, 32), np.float16)
    np.testing.assert_array_equal(got, ref(a.astype(np.float32), b.astype(np.float32)).astype(np.float16))


def test_an_integer_result_sign_other_than_the_operands_is_refused_by_name():
    """int8 + int8 -> int16 with opt_res0_sign 1 but unsigned operands: the family writes an
    unsigned result (opd0_sign | opd1_sign), so the flag would change it: refused."""
    r = rec("tiu", "sAR", "arith.max", tsk_opd_num=2, res0_prec=prec("int16"), opd0_prec=prec("int8"),
            opd1_prec=prec("int8"), opt_res0_sign=1, res0_n=1, res0_c=1, res0_h=1, res0_w=16, res0_addr=0x300,
            opd0_addr=0x100, opd1_addr=0x200)
    with pytest.raises(SimulationError, match="arith.max: opt_res0_sign must be 0 or opd0_sign"):
        bmk.Simulator("bm1690").run([r])


def test_a_conv_kernel_of_another_precision_is_refused_by_name():
    r = rec("tiu", "sCONV", "conv.normal", opd0_prec=prec("fp16"), opd1_prec=prec("fp32"), res0_prec=prec("fp16"),
            res0_n=1, res0_c=1, res0_h=1, res0_w=1, opd0_c=1, opd0_h=1, opd0_w=1, opd1_h=1, opd1_w=1)
    with pytest.raises(SimulationError, match="opd1_prec must be opd0_prec"):
        bmk.Simulator("bm1690").run([r])


def test_an_f16_conv_with_an_fp32_bias_runs_as_the_family_reads_it():
    """A 1x1 f16 conv, 2 -> 1 channel, fp32 bias (opd2_prec fp32, as the shared f16 streams set
    it): y = w0 x0 + w1 x1 + b, rounded once to fp16. The kernel's layout (bm1684x/conv.py):
    cube = ic_parallel_int8 / 2 = 32 fp16 per tap, IC padded to it."""
    x = np.array([[1.5, -2.0, 0.25, 3.0], [0.5, 1.0, -1.0, 2.0]], np.float16)      # (IC 2, W 4) on lanes 0, 1
    w = np.zeros(32, np.float16)
    w[:2] = [0.75, -1.25]
    bias = np.array([0.125], np.float32)
    sim = bmk.Simulator("bm1690")
    lane = CHIP.param("lmem_size")
    for c in range(2):
        sim.lmem_write(c * lane + 0x1000, x[c].tobytes())
    sim.lmem_write(0x2000, w.tobytes())
    sim.lmem_write(0x3000, bias.tobytes())
    sim.run([rec("tiu", "sCONV", "conv.normal", opd0_prec=prec("fp16"), opd1_prec=prec("fp16"),
                 res0_prec=prec("fp16"), opd2_prec=prec("fp32"), res0_n=1, res0_c=1, res0_h=1, res0_w=4, opd0_c=2,
                 opd0_h=1, opd0_w=4, opd1_h=1, opd1_w=1, res_op_y_str=1, res_op_x_str=1, opd0_addr=0x1000,
                 opd1_addr=0x2000, opd2_addr=0x3000,
                 res0_addr=0x4000, opd0_sign=1, opd1_sign=1, opd2_sign=1)])
    want = (0.75 * x[0].astype(np.float64) - 1.25 * x[1] + 0.125).astype(np.float16)
    np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(0x4000, 8), np.float16), want)


def test_s_bc_broadcasts_the_fp16_exp_coefficients_of_static_memory():
    """tsbc.s_bc as the f16 yolov5s stream writes it (opd0_c = res0_c = 64, 7 fp16 at static
    offset 0x580): every lane gets fp16 1 / k!, k < 7 (TPU1686 EXP_FP16_COEFF at
    EXP_FP16_TAYLOR_OFFSET 1408: specs/bm1690/chip.toml)."""
    sim = bmk.Simulator("bm1690")
    sim.run([rec("tiu", "sCW&sBC", "tsbc.s_bc", res0_prec=prec("fp16"), res0_n=1, res0_c=64, res0_h=1, res0_w=7,
                 opd0_c=64, opd0_w=7, opd0_addr=0x580, res0_addr=0x40)])
    want = np.array([1 / math.factorial(k) for k in range(7)]).astype(np.float16)
    lane = CHIP.param("lmem_size")
    for c in (0, 17, 63):
        np.testing.assert_array_equal(np.frombuffer(sim.lmem_read(c * lane + 0x40, 14), np.float16), want)


def test_the_vendor_yolov5s_f16_runs_on_8_cores_to_the_end_with_no_race():
    """yolov5s_bm1690_f16_core8 (coefficients stripped: synthetic fp16 weights in tag 1), one
    float input: 8 cores, round by round (60 barriers), every output finite, none all zero, no race.
    The weights are uniform in +-0.15: with +-0.05 every layer shrinks its input (x * sigmoid(x)
    after a conv of gain ~0.25) and the heads come out zero after 60 layers."""
    from bmk.models.run import prepare, simulate
    m = bmk.load_model(YOLO)
    prepared = prepare(m)
    sim = bmk.Simulator(prepared.spec, semantics=prepared.semantics)
    rng = np.random.default_rng(0)
    sim.gmem_write(1 << 40, rng.uniform(-0.15, 0.15, 32 << 20).astype(np.float16).tobytes())
    st = m.nets[0].stages[0]
    out, reports, _ = simulate(m, {"images": rng.uniform(0, 1, (1, 3, 640, 640)).astype(np.float32)},
                               prepared=prepared, sim=sim)
    assert len(reports) > 60 and all(not r.races for _, r in reports)
    assert {k: v.shape for k, v in out.items()} == {t.name: tuple(t.shape) for t in st.outputs}
    for v in out.values():
        assert np.isfinite(v).all() and np.abs(v).mean() > 1e-4


def test_waits_that_count_no_hau_stream_leave_every_hau_stream_out():
    """The older sg2260 layout's waits count TIU and GDMA only: with every count set to the 24
    readable streams, the barriers hold with no HAU stream taking part (bmk/sim/cores.py)."""
    import attrs
    from bmk.sim.cores import _messages, rounds
    msgs = _messages(CHIP)
    recs = _records()
    for core, rs in recs.items():
        for i, r in enumerate(rs):
            m = msgs.get(r.engine)
            if m is not None and r.kind == m.wait:
                field, first, width = m.count
                v = r.fields[field] & ~(((1 << width) - 1) << first) | 24 << first
                rs[i] = attrs.evolve(r, fields={**r.fields, field: v})
    assert len(rounds(CHIP, recs)) == 61


RESNET_F16 = "tests/models/bm1690/resnet50_v2_sg2260_f16_core8.bmodel"


def _resnet(path, weights):
    from bmk.models.run import prepare, simulate
    m = bmk.load_model(path)
    prepared = prepare(m)
    sim = bmk.Simulator(prepared.spec, semantics=prepared.semantics)
    sim.gmem_write(1 << 40, weights)
    x = np.random.default_rng(3).uniform(0, 1, (1, 3, 224, 224)).astype(np.float32)
    return simulate(m, {"data": x}, prepared=prepared, sim=sim)[:2]


def test_resnet50_f16_runs_on_8_cores_with_no_race_and_reads_its_weights():
    """resnet50_v2_sg2260_f16_core8 (coefficients stripped): synthetic fp16 weights in tag 1 give
    a finite, non-zero result over the 1000 classes; with zero weights the last Gemm gives 0
    (so the result does come from the weights); no round races."""
    rng = np.random.default_rng(0)
    w = rng.uniform(-0.05, 0.05, 64 << 20).astype(np.float16).tobytes()
    out, reports = _resnet(RESNET_F16, w)
    assert all(not r.races for _, r in reports) and len(reports) > 8
    [(name, y)] = out.items()
    assert y.shape == (1, 1000) and np.isfinite(y).all() and np.abs(y).mean() > 1
    zero, _ = _resnet(RESNET_F16, bytes(16))
    np.testing.assert_array_equal(zero[name], np.zeros((1, 1000), np.float32))


def test_the_vendors_8_core_f16_matmul_matches_its_reference_output_bit_for_bit():
    """sophgo/torch-tpu python/test/bmodel/MM_0_f16_sg2260 (compiled for BM1690, 8 cores): ones
    (32, 16) @ y (16, 34) in f16, with the input and output tpu-mlir's model_runner recorded
    (input_ref_data.dat, output_ref_data.dat). Each core casts 2 rows of y to f16 into L2 SRAM,
    then after a barrier reads all 16 rows from it: the L2 SRAM is one for all cores
    (specs/bm1690/chip.toml shared). Its mm2.nn carries opd2_prec fp16 with the constant 0 bias."""
    from bmk.models.run import simulate
    from tests.models import files as F
    ref = np.load(F.MM_1690_REFERENCE)
    out, reports, _ = simulate(bmk.load_model(F.MM_1690), {"y.1": ref["input"]})
    assert len(reports) > 8 and not any(r.races for _, r in reports)
    np.testing.assert_array_equal(out["4_f32"], ref["output"])


def test_a_models_other_cores_are_kept_and_reset_with_core_0():
    """bmk/models/run.py keeps cores 1-7's Simulators in core 0's `cores` across runs, sharing its
    global memory and L2 SRAM; Simulator.reset zeroes their own memories (and fills their static
    memory as a fresh chip's), so the next run of the model, on other inputs, gives what a fresh
    Simulator gives, and the vendor's reference again after that."""
    from bmk.models.run import prepare, simulate
    from tests.models import files as F
    ref = np.load(F.MM_1690_REFERENCE)
    m = bmk.load_model(F.MM_1690)
    prepared = prepare(m)
    sim = bmk.Simulator(prepared.spec, semantics=prepared.semantics)
    simulate(m, {"y.1": ref["input"]}, prepared=prepared, sim=sim)
    cores = dict(sim.cores)
    assert sorted(cores) == list(range(1, 8))
    assert all(c.gmem is sim.gmem and c.memories["l2sram"] is sim.memories["l2sram"] for c in cores.values())
    assert all(c.lmem.data.any() for c in cores.values())
    fresh = bmk.Simulator(prepared.spec, semantics=prepared.semantics)
    sim.reset()
    for c in cores.values():
        assert not c.lmem.data.any()
        static = c.memories["static"]
        np.testing.assert_array_equal(static.load(0, static.size), fresh.memories["static"].load(0, static.size))
    y = np.random.default_rng(1).standard_normal(ref["input"].shape).astype(ref["input"].dtype)
    got, _, _ = simulate(m, {"y.1": y}, prepared=prepared, sim=sim)
    want, _, _ = simulate(m, {"y.1": y}, prepared=prepared, sim=fresh)
    assert not np.array_equal(want["4_f32"], ref["output"])
    np.testing.assert_array_equal(got["4_f32"], want["4_f32"])
    sim.reset()
    out, _, _ = simulate(m, {"y.1": ref["input"]}, prepared=prepared, sim=sim)
    assert all(sim.cores[k] is c for k, c in cores.items())
    np.testing.assert_array_equal(out["4_f32"], ref["output"])


def test_the_shared_spaces_are_global_memory_and_l2_sram():
    from bmk.models.run import _shared_spaces
    assert sorted(_shared_spaces(CHIP)) == ["global", "l2sram"]
    assert _shared_spaces(load_chip("bm1688")) == ["global"]


@pytest.mark.parametrize("bias,const", [(0x3C00, 1), (0, 0)])
def test_a_float_matmuls_bias_of_another_precision_is_refused_unless_it_is_the_constant_zero(bias, const):
    """opd2_prec fp16 on an f16 mm2.nn: accepted with the constant 0 bias (the vendor's MatMul
    sets it: moot in any float type), refused by name with a non-zero constant or a tensor."""
    r = rec("tiu", "sMM2", "mm2.nn", opd0_prec=prec("fp16"), opd1_prec=prec("fp16"), opd2_prec=prec("fp16"),
            res0_prec=prec("fp16"), opd2_const=const, opd2_addr=bias, res0_c=1, res0_w=4, opd1_c=4, opd1_w=4,
            res0_addr=0x1000, opd1_addr=0x2000)
    with pytest.raises(SimulationError, match="mm2.nn: opd2_prec must be 0 unless the bias is the constant 0"):
        bmk.Simulator("bm1690").run([r])
    bmk.Simulator("bm1690").run([rec("tiu", "sMM2", "mm2.nn", **{**r.fields, "opd2_const": 1, "opd2_addr": 0})])
