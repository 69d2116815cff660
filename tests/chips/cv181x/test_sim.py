"""The CV18xx simulators (issue 30 slice a): bm1880's semantics on each chip's parameters, the
CV18xx TIU fields beyond bm1880's executed or refused by name, `bmk check` listing the refusals of
the cv181x test models, m.run refusing before it runs anything."""
import attrs
import numpy as np
import pytest

import bmk
from bmk.errors import ModelError, SimulationError
from bmk.isa import load_chip
from bmk.isa.registry import chips_with
from bmk.sim.semantics import semantics_for
from tests.models.files import ALL, HAND_181X, TOPFORMER_181X

SHAPE = (1, 11, 2, 3)           # 11 channels: more than cv181x's 8 NPUs, a second pass on 3 lanes
A, B, R = 0x40, 0x80, 0x100     # lane offsets of opd0, opd1, res0


def test_cv18xx_chips_are_simulated_with_their_parameters():
    assert {"cv180x", "cv181x", "cv182x", "cv183x"} <= set(chips_with("simulator"))
    for chip, npu in (("cv180x", 2), ("cv181x", 8), ("cv182x", 8), ("cv183x", 32)):
        m = bmk.Simulator(chip)
        assert (m.npu_num, m.eu_num, m.lmem.size) == (npu, 16, npu * 32768)
    # ge and min_pool (cvikernel's additions to bm1880's kinds) have functions too (kinds.py)
    assert semantics_for("cv181x").missing(load_chip("cv181x")) == []
    assert semantics_for("cv183x").missing(load_chip("cv183x")) == []


def _hand_record(kind):
    model = bmk.load_model(HAND_181X)
    return next(r for g in model.groups() for r in model.records(g) if r.name == kind)


def _strides(chip):
    npu = load_chip(chip).param("npu_num")
    n, c, h, w = SHAPE
    return (-(-c // npu) * 8, 8, w, 1)              # explicit strides, channel stride 8 bytes


def _eltwise(chip, eu, **fields):
    """The hand-gesture model's tiu.xor descriptor made an int8 element-wise op of SHAPE with
    explicit strides on `chip` (tsk_eu_typ eu), waiting for nothing."""
    rec = _hand_record("tiu.xor")
    f = dict(rec.fields, tsk_eu_typ=eu, cmd_id_gdma=0, opd0_addr=A, opd1_addr=B, res0_addr=R,
             opt_res0_sign=1, opt_opd0_sign=1, opt_opd1_sign=1, opt_right_shift=0, opt_shift_typ=1)
    for slot in ("res0", "opd0", "opd1"):
        f.update({f"{slot}_{d}": v for d, v in zip("nchw", SHAPE)})
        f.update({f"{slot}_{d}_str": v for d, v in zip("nchw", _strides(chip))})
    f.update(fields)
    spec = load_chip(chip)
    kind = spec.fmt("tiu").instruction_of(f).name
    return attrs.evolve(rec, fields=f, kind=kind)


def _operands(chip, seed):
    """A simulator of `chip` with random int8 operands a, b at A and B: (sim, strides, a, b)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, SHAPE).astype(np.int8)
    b = rng.integers(-128, 128, SHAPE).astype(np.int8)
    m = bmk.Simulator(chip)
    st = _strides(chip)
    m.lmem_write_array(A, a, st, "int8")
    m.lmem_write_array(B, b, st, "int8")
    return m, st, a, b


@pytest.mark.parametrize("chip", ["cv180x", "cv181x", "cv182x"])
@pytest.mark.parametrize("eu, op", [(2, np.add), (3, np.subtract), (4, np.maximum), (9, np.bitwise_xor),
                                    (11, lambda a, b: (a >= b).astype(np.int32))])
def test_int8_eltwise_matches_numpy_on_each_chip(chip, eu, op):
    m, st, a, b = _operands(chip, eu)
    m.run([_eltwise(chip, eu)], races=False)
    want = np.clip(op(a.astype(np.int32), b.astype(np.int32)), -128, 127)
    np.testing.assert_array_equal(m.lmem_read_array(R, SHAPE, st, "int8"), want)


def test_int16_result_by_seg_two_planes():
    """opt_res0_seg 0 (int16, cvikernel tiu_add.c: res_high given): low and high planes b_str apart."""
    chip = "cv181x"
    m, st, a, b = _operands(chip, 7)
    m.run([_eltwise(chip, 0, opt_res0_seg=0, res0_b_str=0x200)], races=False)     # mul
    lo = m.lmem_read_array(R, SHAPE, st, "uint8").astype(np.int32)
    hi = m.lmem_read_array(R + 0x200, SHAPE, st, "int8").astype(np.int32)
    np.testing.assert_array_equal(hi * 256 + lo, a.astype(np.int32) * b)


@pytest.mark.parametrize("field, value", [("opt_res0_seg", 2), ("opt_relu_value", 5), ("cmd_pre_exe", 1),
                                          ("cmd_pre_exe_typ", 1), ("opt_relu", 2), ("opt_chl_quan", 1),
                                          ("ps32_md", 1), ("opt_rshift_typ", 0)])
def test_unmodelled_fields_refused_by_kind_field_and_value(field, value):
    rec = _eltwise("cv181x", 2, **{field: value})
    with pytest.raises(SimulationError) as e:
        bmk.Simulator("cv181x").run([rec], races=False)
    assert "tiu.add" in str(e.value) and field in str(e.value) and str(value) in str(e.value)


def test_double_conv_is_executed_as_nothing():
    """double_conv: cvikernel sets it by itself (tiu_convolution.c), the result is unchanged."""
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, SHAPE).astype(np.int8)
    results = []
    for dc in (0, 1):
        m = bmk.Simulator("cv181x")
        st = _strides("cv181x")
        m.lmem_write_array(A, a, st, "int8")
        m.lmem_write_array(B, a, st, "int8")
        m.run([_eltwise("cv181x", 2, double_conv=dc)], races=False)
        results.append(m.lmem_read_array(R, SHAPE, st, "int8"))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], np.clip(2 * a.astype(np.int32), -128, 127))


def test_tdma_intra_cmd_paral_refused_by_name():
    rec = _hand_record("tdma.copy_lmem")
    rec = attrs.evolve(rec, fields=dict(rec.fields, intra_cmd_paral=1, wait_id_tpu=0, src_fmt=1, dst_fmt=1))
    with pytest.raises(SimulationError, match="tdma.copy_lmem: intra_cmd_paral must be 0"):
        bmk.Simulator("cv181x").run([rec], races=False)


@pytest.mark.parametrize("path", [p for p in ALL if p.parent.name == "cv181x"], ids=lambda p: p.name)
def test_check_finds_nothing_to_refuse_in_the_cv181x_test_models(path):
    """Per-channel quantization, bf16 (element-wise, pooling, lookup, matrix), bf16 TDMA moves and
    VLC-compressed loads all have semantics (quant.py, bf16.py, tdma.py, vlc.py)."""
    assert bmk.check(bmk.load_model(path)) == []


def test_the_hand_gesture_softmax_runs_to_a_distribution():
    """Its bf16 softmax (max pool, exp by lookup and slope, 1 / sum by exponent and mantissa
    lookups) gives probabilities that sum to 1 (within bf16's precision)."""
    model = bmk.load_model(HAND_181X)
    (x,) = model.nets[0].stages[0].inputs
    for seed in range(3):
        q = np.round(np.random.default_rng(seed).uniform(0, 1, x.shape) * x.scale).astype(np.int8)
        (y,) = model.run({x.name: q}).values()
        assert y.min() >= 0 and abs(float(y.sum()) - 1) < 0.02


def test_tdma_base_reg_sel_picks_the_region_base_register():
    """The hand-gesture model's first load (src_base_reg_sel 3: its input buffer) reads at base
    register 3 + its address; the same bytes at the address alone are not what it loads."""
    rec = _hand_record("tdma.load")
    f = dict(rec.fields, wait_id_tpu=0)
    assert f["src_base_reg_sel"] == 3 and f["dst_base_reg_sel"] == 0
    m = bmk.Simulator("cv181x")
    base = m.base_regs[3]
    assert base == 3 * (1 << 32) // 8          # bmk's placement: one eighth of the 4 GiB window each
    fmt = load_chip("cv181x").fmt("tdma")
    addr = fmt.compose("src_addr", f)
    span = f["src_n_stride"] * f["src_n"] + fmt.compose("src_c_stride", f) * f["src_c"] + 4096
    data = np.random.default_rng(5).integers(0, 256, span, dtype=np.uint8)
    data[0] = 77
    m.gmem_write(base + addr, data.tobytes())
    m.run([attrs.evolve(rec, fields=f)], races=False)
    assert m.lmem_read(fmt.compose("dst_addr", f), 1)[0] == 77
    other = bmk.Simulator("cv181x")             # the bytes at the address alone: not what it loads
    other.gmem_write(addr, data.tobytes())
    other.run([attrs.evolve(rec, fields=f)], races=False)
    assert other.lmem_read(fmt.compose("dst_addr", f), 1)[0] == 0


def test_model_addresses_map_to_the_registers_its_tdma_picks():
    """Slice b: the hand-gesture model's input x (region 3 in bits 40-42), output (region 4) and
    weights (region 1) land where its TDMA descriptors read and write them: base register 3 + 0
    for its first load, base register 4 for its output stores."""
    from bmk.models.regions import device_address
    model = bmk.load_model(HAND_181X)
    st = model.nets[0].stages[0]
    m = bmk.Simulator("cv181x")
    (x,), (y,) = st.inputs, st.outputs
    assert device_address(m, x.address) == m.base_regs[3] + 0
    assert device_address(m, y.address) == m.base_regs[4] + 0
    assert device_address(m, st.coeff.address) == m.base_regs[1]
    fmt = load_chip("cv181x").fmt("tdma")
    recs = [r for g in model.groups() for r in model.records(g) if r.engine == "tdma"]
    load = next(r.fields for r in recs if r.fields["src_base_reg_sel"] == 3)
    assert (load["src_base_reg_sel"], fmt.compose("src_addr", load)) == (3, 0)
    assert {r.fields["dst_base_reg_sel"] for r in recs if r.name == "tdma.store"} == {0, 4}
    assert device_address(bmk.Simulator("bm1880"), x.address) == x.address     # no base registers: as given
    with pytest.raises(ModelError, match=r"memory region in \[0, 8\)"):
        device_address(m, 9 << 40, "tensor 'z'")


def test_min_pool_takes_each_windows_minimum_with_the_pad_value():
    """tiu.min_pool (cvikernel tiu_min_pooling.c: tsk_eu_typ 3, pad opd0_ins_val, 127 for int8):
    the hand-gesture model's max_pool descriptor made an int8 min pool, 2 x 3 windows, pad 1."""
    rec = _hand_record("tiu.max_pool")
    st = _strides("cv181x")
    f = dict(rec.fields, cmd_id_gdma=0, opd_typ=0, tsk_eu_typ=3, opd0_addr=A, res0_addr=R, opt_opd0_sign=1,
             opt_res0_sign=1, opd0_ins_val=127, opd1_h=2, opd1_w=3, conv_opd0_up_pad=1, conv_opd0_dn_pad=0,
             conv_opd0_lf_pad=1, conv_opd0_rt_pad=1, short_opd0_str=3, short_res0_str=3,
             **{f"{s}_{d}": v for s in ("opd0", "res0") for d, v in zip("nchw", SHAPE)},
             **{f"{s}_{d}_str": v for s in ("opd0", "res0") for d, v in zip("nchw", st)})
    rec = attrs.evolve(rec, fields=f, kind="min_pool")
    m, _, a, _ = _operands("cv181x", 12)
    m.run([rec], races=False)
    p = np.pad(a.astype(np.int32), ((0, 0), (0, 0), (1, 0), (1, 1)), constant_values=127)
    want = np.min([p[:, :, i:i + 2, j:j + 3] for i in range(2) for j in range(3)], axis=0)
    np.testing.assert_array_equal(m.lmem_read_array(R, SHAPE, st, "int8"), want)
