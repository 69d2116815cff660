"""CV18xx per-channel quantization (opt_chl_quan 1, bmk/sim/cv181x/quant.py) against numpy references
written from the vendor's formula (tpu_compiler QuantizationArithmetic.cpp: gemmlowp
SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT) and record layout (tpu-mlir CV18xx
Conv2D.cpp packWeight: int32 bias, uint32 multiplier, uint8 shift per channel)."""
import attrs
import numpy as np
import pytest

import bmk
from bmk.sim.cv181x import quant
from tests.models.files import BABY_CRY_181X


def _ref_qdm(v, m, e):
    """One value, in Python integers with C semantics (the vendor's code, transcribed)."""
    v = max(-(1 << 31), min((1 << 31) - 1, v))
    ab = v * m
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    s = ab + nudge
    high = s // (1 << 31) if s >= 0 else -((-s) // (1 << 31))       # C: toward zero
    if e == 0:
        return high
    fixup = -1 if high < 0 else 0
    return (high + fixup + (1 << (e - 1))) >> e


def test_qdm_matches_the_vendor_formula_on_ties_signs_and_zero_shift():
    rng = np.random.default_rng(0)
    acc = np.concatenate([rng.integers(-(1 << 20), 1 << 20, 400), [0, 1, -1, 3, -3, (1 << 31) - 1, -(1 << 31)]])
    mult = rng.integers(1 << 29, 1 << 31, acc.size)
    mult[:7] = 1 << 30                          # x * 2^30 / 2^31 = x / 2: ties
    shift = rng.integers(0, 12, acc.size)
    shift[:50] = 0
    got = quant.qdm(acc, mult, shift)
    want = [_ref_qdm(int(v), int(m), int(e)) for v, m, e in zip(acc, mult, shift)]
    np.testing.assert_array_equal(got, want)
    # 3 * 2^30 / 2^31 = 1.5 -> 2, then 2 / 2 -> 1; -1.5 -> -1 (nudge 1 - 2^30, C truncation), then -0.5 -> -1
    assert list(quant.qdm(np.array([3, -3]), 1 << 30, 1)) == [1, -1]


def _record(kind, index=0):
    model = bmk.load_model(BABY_CRY_181X)
    recs = [r for g in model.groups() for r in model.records(g) if r.name == kind]
    return recs[index]


def _aligned(shape, npu=8, eu=16):
    n, c, h, w = shape
    cs = -(-(h * w) // eu) * eu
    return (cs * -(-c // npu), cs, w, 1)


def _pack(bias, mult, shift):
    """The per-channel records (1, C, 1, 9 or 5) as the vendor packs them."""
    rows = []
    for i in range(len(mult)):
        b = b"" if bias is None else int(bias[i]).to_bytes(4, "little", signed=True)
        rows.append(list(b + int(mult[i]).to_bytes(4, "little") + bytes([int(shift[i])])))
    return np.array(rows, np.uint8)[None, :, None, :]


def _write_records(m, addr, recs):
    c, size = recs.shape[1], recs.shape[3]
    m.lmem_write_array(addr, recs, (-(-c // m.npu_num) * size, size, size, 1), "uint8")


@pytest.mark.parametrize("has_bias, relu", [(True, True), (False, False)])
def test_per_channel_conv_against_numpy(has_bias, relu):
    """11 output channels on 8 lanes (records two deep in a lane), pads 1, 3x3 kernel."""
    cin, cout, h, w = 3, 11, 5, 6
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (1, cin, h, w))
    wt = rng.integers(-128, 128, (cout, cin, 3, 3))
    bias = rng.integers(-20000, 20000, cout) if has_bias else None
    mult = rng.integers(1 << 29, 1 << 31, cout)
    shift = rng.integers(6, 12, cout)
    X, W, RQ, R = 0x0, 0x200, 0x400, 0x600
    rec = _record("tiu.conv")
    ho, wo = h, w
    f = dict(rec.fields, cmd_id_gdma=0, opd0_addr=X, opd1_addr=W, opd2_addr=RQ, res0_addr=R, opt_relu=int(relu),
             tsk_opd_num=3 if has_bias else 2, opd0_n=1, opd0_c=cin, opd0_h=h, opd0_w=w,
             opd1_n=cin, opd1_c=cout, opd1_h=3, opd1_w=3, opd2_c=cout, res0_n=1, res0_c=cout, res0_h=ho, res0_w=wo,
             conv_opd0_up_pad=1, conv_opd0_dn_pad=1, conv_opd0_lf_pad=1, conv_opd0_rt_pad=1,
             res0_n_str=2 * 64, res0_c_str=64, res0_h_str=w, res0_w_str=1)
    assert f["short_opd0_str"] == 0 and f["short_opd1_str"] == 1 and f["short_res0_str"] == 3
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(X, x, _aligned(x.shape), "int8")
    # weight layout (cvikernel short_opd1_str 1): logical (Cin, Cout, kh, kw) at (1, Cout, kh*kw, Cin)
    m.lmem_write_array(W, wt.transpose(1, 0, 2, 3), (1, 9 * cin, 3 * cin, cin), "int8")
    _write_records(m, RQ, _pack(bias, mult, shift))
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(R, (1, cout, ho, wo), (128, 64, w, 1), "int8")
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((cout, ho, wo), np.int64)
    for ky in range(3):
        for kx in range(3):
            acc += np.einsum("chw,oc->ohw", xp[0, :, ky:ky + ho, kx:kx + wo], wt[:, :, ky, kx])
    if has_bias:
        acc += bias[:, None, None]
    if relu:
        acc = np.maximum(acc, 0)
    want = np.array([[[_ref_qdm(int(acc[o, i, j]), int(mult[o]), int(shift[o])) for j in range(wo)]
                      for i in range(ho)] for o in range(cout)])
    np.testing.assert_array_equal(got[0], np.clip(want, -128, 127))


def test_per_channel_depthwise_against_numpy():
    c, h, w = 10, 4, 5
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (1, c, h, w))
    wt = rng.integers(-128, 128, (1, c, 3, 3))
    bias = rng.integers(-5000, 5000, c)
    mult = rng.integers(1 << 29, 1 << 31, c)
    shift = rng.integers(4, 10, c)
    X, W, RQ, R = 0x0, 0x200, 0x400, 0x600
    rec = _record("tiu.depthwise")
    st = (2 * 32, 32, w, 1)
    f = dict(rec.fields, cmd_id_gdma=0, opd0_addr=X, opd1_addr=W, opd2_addr=RQ, res0_addr=R, opt_relu=0,
             tsk_opd_num=3, opd0_n=1, opd0_c=c, opd0_h=h, opd0_w=w, opd1_n=1, opd1_c=c, opd1_h=3, opd1_w=3,
             opd2_c=c, res0_n=1, res0_c=c, res0_h=h - 2, res0_w=w - 2,
             **{f"{s}_{d}_str": v for s in ("opd0", "res0") for d, v in zip("nchw", st)})
    assert f["short_opd0_str"] == 3 and f["short_res0_str"] == 3
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(X, x, st, "int8")
    m.lmem_write_array(W, wt, _aligned(wt.shape), "int8")
    _write_records(m, RQ, _pack(bias, mult, shift))
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(R, (1, c, h - 2, w - 2), st, "int8")
    acc = np.zeros((c, h - 2, w - 2), np.int64)
    for ky in range(3):
        for kx in range(3):
            acc += x[0, :, ky:ky + h - 2, kx:kx + w - 2] * wt[0, :, ky, kx, None, None]
    acc += bias[:, None, None]
    want = np.vectorize(lambda v, o: _ref_qdm(int(v), int(mult[o]), int(shift[o])))(
        acc, np.arange(c)[:, None, None])
    np.testing.assert_array_equal(got[0], np.clip(want, -128, 127))


def test_matrix_qm_with_a_32_bit_bias_against_numpy():
    """cls_sound's fully connected layer: (1, 128) @ (128, 16) + int32 bias (four byte planes one
    row apart), quan_m and opt_right_shift."""
    rec = _record("tiu.matrix_mac")
    f = dict(rec.fields, cmd_id_gdma=0)
    rng = np.random.default_rng(3)
    left = rng.integers(-128, 128, (1, 128))
    right = rng.integers(-128, 128, (128, 16))
    bias = rng.integers(-(1 << 20), 1 << 20, 16)
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(f["opd0_addr"], left.reshape(1, 8, 1, 16), (16, 16, 16, 1), "int8")
    m.lmem_write_array(f["opd1_addr"], right.reshape(128, 1, 1, 16), (16, 16, 16, 1), "int8")
    planes = bias.astype(np.int32).view(np.uint8).reshape(16, 4).T         # plane k: byte k of each
    for k in range(4):
        m.lmem_write_array(f["opd2_addr"] + 16 * k, planes[k].reshape(1, 1, 1, 16), (16, 16, 16, 1), "uint8")
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(f["res0_addr"], (1, 1, 1, 16), (16, 16, 16, 1), "int8").reshape(16)
    acc = left[0] @ right + bias
    want = [_ref_qdm(int(v), f["quan_m"], f["opt_right_shift"]) for v in acc]
    np.testing.assert_array_equal(got, np.clip(want, -128, 127))


def test_mul_qm_against_numpy():
    """cvikernel tiu_mul_qm: res = qdm(a * b, quan_m, opt_right_shift)."""
    from tests.chips.cv181x.test_sim import R, SHAPE, _eltwise, _operands
    m, st, a, b = _operands("cv181x", 11)
    mult, rs = 1_500_000_000, 3
    m.run([_eltwise("cv181x", 0, opt_chl_quan=1, quan_m=mult, opt_right_shift=rs)], races=False)
    want = np.vectorize(lambda p: _ref_qdm(int(p), mult, rs))(a.astype(np.int64) * b)
    np.testing.assert_array_equal(m.lmem_read_array(R, SHAPE, st, "int8"), np.clip(want, -128, 127))


def test_a_conv_reads_weights_and_records_on_its_output_channels_npus():
    """A grouped convolution's second group as the vendor's CV181X compiler writes it (tdl_models
    yolov8n_det_hand: 9 -> 4 channels a group): the result on lanes 4..7 (res0_addr on lane 4), the
    weights and per-channel records addressed on lane 0, where group 0's are, after loading
    output channel k's on lane k % 8. Each output channel reads them on its own NPU (bm1880
    common.npu_local): lanes 4..7 hold group 1's; lanes 0..3 hold other values, which would give
    another result."""
    cin, cout, h, w = 9, 4, 3, 5
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (1, cin, h, w))
    wt = rng.integers(-128, 128, (2 * cout, cin, 1, 1))                 # output channels of groups 0 and 1
    bias = rng.integers(-2000, 2000, 2 * cout)
    mult = rng.integers(1 << 29, 1 << 31, 2 * cout)
    shift = rng.integers(6, 12, 2 * cout)
    lane = 32768
    X, W, RQ, R = 0x0, 0x200, 0x400, 4 * lane + 0x600
    rec = _record("tiu.conv")
    f = dict(rec.fields, cmd_id_gdma=0, opd0_addr=X, opd1_addr=W, opd2_addr=RQ, res0_addr=R, opt_relu=0,
             tsk_opd_num=3, opd0_n=1, opd0_c=cin, opd0_h=h, opd0_w=w, opd1_n=cin, opd1_c=cout, opd1_h=1, opd1_w=1,
             opd2_c=cout, res0_n=1, res0_c=cout, res0_h=h, res0_w=w, res0_n_str=16, res0_c_str=16, res0_h_str=w,
             res0_w_str=1, double_conv=0, conv_opd0_up_pad=0, conv_opd0_dn_pad=0, conv_opd0_lf_pad=0,
             conv_opd0_rt_pad=0, conv_op_y_str=1, conv_op_x_str=1)
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(X, x, _aligned(x.shape), "int8")
    m.lmem_write_array(W, wt.transpose(1, 0, 2, 3), (1, cin, cin, cin), "int8")   # channel k on lane k
    _write_records(m, RQ, _pack(bias, mult, shift))
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(R, (1, cout, h, w), (16, 16, w, 1), "int8")
    acc = np.einsum("chw,oc->ohw", x[0], wt[cout:, :, 0, 0]) + bias[cout:, None, None]
    want = np.array([[[_ref_qdm(int(acc[o, i, j]), int(mult[cout + o]), int(shift[cout + o])) for j in range(w)]
                      for i in range(h)] for o in range(cout)])
    np.testing.assert_array_equal(got[0], np.clip(want, -128, 127))
