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
                                    (5, np.minimum), (11, lambda a, b: (a >= b).astype(np.float32))])
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


def _hand_tiu(kind, index=0):
    from tests.chips.cv181x.test_sim import HAND_181X
    model = bmk.load_model(HAND_181X)
    return [r for g in model.groups() for r in model.records(g) if r.name == kind][index]


def test_bf16_max_and_avg_pool_over_a_window_with_the_bf16_pad_value():
    """The hand-gesture model's bf16 pools (1 x 9 windows over w 9), made 3 x 3 windows, pad 1,
    over (1, 3, 4, 5): max pads with opd0_ins_val's bf16, avg multiplies by opd1_addr's bf16."""
    rng = np.random.default_rng(5)
    x = fp32_to_bf16(rng.normal(0, 4, (1, 3, 4, 5)).astype(np.float32))
    xs = (2 * 32, 32, 10, 2)
    pad = int(fp32_to_bf16(np.array([-7.0], np.float32))[0])
    for kind in ("tiu.max_pool", "tiu.avg_pool"):
        rec = _hand_tiu(kind)
        c = int(fp32_to_bf16(np.array([1 / 9], np.float32))[0])
        f = dict(rec.fields, cmd_id_gdma=0, opd0_addr=0x40, res0_addr=0x200, opd0_n=1, opd0_c=3, opd0_h=4, opd0_w=5,
                 res0_n=1, res0_c=3, res0_h=4, res0_w=5, opd1_h=3, opd1_w=3, conv_opd0_up_pad=1, conv_opd0_dn_pad=1,
                 conv_opd0_lf_pad=1, conv_opd0_rt_pad=1, opd0_ins_val=pad, short_opd0_str=3, short_res0_str=3,
                 **{f"{s}_{d}_str": v for s in ("opd0", "res0") for d, v in zip("nchw", xs)})
        if kind == "tiu.avg_pool":
            f.update(opd1_addr=c, opt_opd1_const=1)
        m = bmk.Simulator("cv181x")
        m.lmem_write_array(0x40, x, tuple(s // 2 for s in xs), "uint16")
        m.run([attrs.evolve(rec, fields=f)], races=False)
        got = m.lmem_read_array(0x200, (1, 3, 4, 5), tuple(s // 2 for s in xs), "uint16")
        fill = np.float32(-7.0)                         # both pad with opd0_ins_val (cvikernel: ins_fp)
        p = np.pad(bf16_to_fp32(x), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=fill)
        win = np.stack([p[:, :, i:i + 4, j:j + 5] for i in range(3) for j in range(3)])
        if kind == "tiu.max_pool":
            want = fp32_to_bf16(win.max(axis=0))
        else:
            want = fp32_to_bf16(win.sum(axis=0, dtype=np.float32) * bf16_to_fp32(np.array([c], np.uint16))[0])
        np.testing.assert_array_equal(got, want)


def test_bf16_lut_indexes_each_lane_table_by_the_low_byte():
    """(1, 8, 32, 8) tables, one per lane, each entry k holding lane * 1000 + k; indices in the low
    byte of 2-byte elements (the high byte must not matter)."""
    rec = _hand_tiu("tiu.lut")
    m = bmk.Simulator("cv181x")
    table = fp32_to_bf16((np.arange(8)[:, None] * 1000 + np.arange(256)[None, :]).astype(np.float32))
    m.lmem_write_array(0x200, table.reshape(1, 8, 32, 8), (256, 256, 8, 1), "uint16")
    idx = np.random.default_rng(6).integers(0, 256, (1, 2, 1, 8))
    raw = (idx | (np.random.default_rng(7).integers(0, 256, idx.shape) << 8)).astype(np.uint16)
    m.lmem_write_array(0x40, raw, (8, 8, 8, 1), "uint16")
    f = dict(rec.fields, cmd_id_gdma=0, opd0_addr=0x40, opd1_addr=0x200, res0_addr=0x80)
    assert (f["opd0_c"], f["opd0_w"], f["short_opd0_str"]) == (2, 8, 0)
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = bf16_to_fp32(m.lmem_read_array(0x80, (1, 2, 1, 8), (8, 8, 8, 1), "uint16"))
    want = bf16_to_fp32(fp32_to_bf16((np.arange(2)[None, :, None, None] * 1000 + idx).astype(np.float32)))
    np.testing.assert_array_equal(got, want)


def _exponent_index_reference(x):
    """tpu-mlir Support LutFunc bf16_lut_mantissa ("align cmodel"): the exponent table's index is
    floor(log2(x)) + 62 + 1 for x > 0, floor(log2(-x)) + 62 + 129 for x < 0, 0 for x == 0."""
    x = bf16_to_fp32(fp32_to_bf16(np.asarray(x, np.float32))).astype(np.float64)
    out = np.zeros(x.shape, np.int64)
    nz = x != 0
    out[nz] = np.floor(np.log2(np.abs(x[nz]))).astype(np.int64) + np.where(x[nz] > 0, 63, 191)
    return out


def test_mv_lut_idx_writes_the_exponent_index_in_both_bytes():
    """The index tpu-mlir's cmodel-aligned reference reads the exponent table at (reciprocal,
    rsqrt tables start at 2^-62, index 1; negatives from 129), in both bytes of each element
    (TgLutKernel: "set low and height bits with idx at same time"). 65.0 must index 69, where the
    reciprocal table holds 2^-6 (the high byte, 0x42 = 66, would read 2^-3: softmax rows summing
    to 8 in the person/face/vehicle topformer)."""
    rec = _tdma("tdma.copy_lmem")
    assert rec.fields["src_fmt"] == rec.fields["dst_fmt"] == 2
    vals = np.array([65.0, 3.0, -0.5, 1.0, 1e10, -7e-3, 0.0, 2.0 ** -62], np.float32)
    x = fp32_to_bf16(vals)
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(0x40, x.reshape(1, 1, 1, 8), (16, 16, 8, 1), "uint16")
    f = dict(rec.fields, mv_lut_idx=1, src_n=1, src_c=1, src_h=1, src_w=8, dst_c=1, dst_h=1, dst_w=8,
             src_n_stride=16, src_c_stride_low=16, src_h_stride=16, dst_n_stride=16, dst_c_stride_low=16,
             dst_h_stride=16, src_base_addr_low=0x40, dst_base_addr_low=0x80)
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(0x80, (1, 1, 1, 8), (16, 16, 8, 1), "uint16").ravel().astype(np.int64)
    want = _exponent_index_reference(vals)
    assert want[0] == 69
    np.testing.assert_array_equal(got & 0xFF, want)
    np.testing.assert_array_equal(got >> 8, want)
    with pytest.raises(bmk.errors.SimulationError, match="mv_lut_base must be 0"):
        bmk.Simulator("cv181x").run([attrs.evolve(rec, fields=dict(f, mv_lut_base=1, mv_lut_idx=0))], races=False)


def test_bf16_reciprocal_by_exponent_and_mantissa_tables():
    """cvikernel's reciprocal (mv_lut_idx copy, exponent-table lut, mantissa-table lut, mul) on
    tpu-mlir's tables (bf16_gen_reciprocal: index 0 0x7F7F, 1.. 2^-(i-63), negatives from 129;
    mantissa 1 / (1 + k/128) for the low 7 bits, either exponent parity) gives 1/x to bf16."""
    from bmk.sim.cv181x.tdma import exponent_index
    exp_t = np.zeros(256, np.float32)
    exp_t[1:128] = 2.0 ** -(np.arange(1, 128) - 63.0)
    exp_t[129:256] = -(2.0 ** -(np.arange(129, 256) - 191.0))
    mant_t = np.tile(1 / (1 + np.arange(128) / 128), 2).astype(np.float32)
    x = np.array([65.0, 95.0, 11.3125, 16.5, 240.0, 0.75, 3e-5, -7.5], np.float32)
    bits = fp32_to_bf16(x)
    idx = exponent_index(bits) & 0xFF
    got = bf16_to_fp32(fp32_to_bf16(bf16_to_fp32(fp32_to_bf16(exp_t[idx])) *
                                    bf16_to_fp32(fp32_to_bf16(mant_t[bits & 0xFF]))))
    np.testing.assert_allclose(got, 1 / bf16_to_fp32(bits), rtol=2 ** -7)


def test_bf16_matrix_with_an_fp32_bias_split_high_then_low():
    """cls_sound's matrix descriptor made bf16: (1, 128) @ (128, 16) + bias, the fp32 bias as two
    bf16 rows (high halves, then low halves; tpu-mlir transposeBiasFp32), the sum rounded to bf16."""
    from tests.chips.cv181x.test_quant import _record
    rec = _record("tiu.matrix_mac")
    L, RT, BI, RES = 0x0, 0x100, 0x1200, 0x1300
    f = dict(rec.fields, cmd_id_gdma=0, opd_typ=1, opt_chl_quan=0, quan_m=0, opt_right_shift=0, opd0_addr=L,
             opd1_addr=RT, opd2_addr=BI, res0_addr=RES)
    rng = np.random.default_rng(8)
    left = fp32_to_bf16(rng.normal(0, 1, (1, 128)).astype(np.float32))
    right = fp32_to_bf16(rng.normal(0, 1, (128, 16)).astype(np.float32))
    bias = rng.normal(0, 3, 16).astype(np.float32)
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(L, left.reshape(1, 8, 1, 16), (16, 16, 16, 1), "uint16")
    m.lmem_write_array(RT, right.reshape(128, 1, 1, 16), (16, 16, 16, 1), "uint16")
    halves = bias.view(np.uint32)
    m.lmem_write_array(BI, np.stack([halves >> 16, halves & 0xFFFF]).astype(np.uint16).reshape(2, 1, 1, 16),
                       (16, 16, 16, 1), "uint16")
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(RES, (1, 1, 1, 16), (16, 16, 16, 1), "uint16").reshape(16)
    want = fp32_to_bf16(bf16_to_fp32(left) @ bf16_to_fp32(right) + bias)
    np.testing.assert_array_equal(got, want.reshape(16))


# -- bf16 convolution and depthwise (bf16.py conv, depthwise) ------------------------------------
X, W, BIAS, OUT = 0x0, 0x400, 0x800, 0xA00


def _plate_conv():
    """The license-plate model's first bf16 conv (tiu_pt_convolution: weight layout, bias in halves)."""
    from tests.models.files import PLATE_181X
    model = bmk.load_model(PLATE_181X)
    return next(r for g in model.groups() for r in model.records(g) if r.name == "tiu.conv" and r.fields["opd_typ"])


def _bits(v):
    return fp32_to_bf16(np.asarray(v, np.float32))


def _conv_record(**fields):
    from bmk.isa import load_chip
    rec = _plate_conv()
    f = dict(rec.fields, cmd_id_gdma=0, opd0_addr=X, opd1_addr=W, opd2_addr=BIAS, res0_addr=OUT)
    f.update(fields)
    kind = load_chip("cv181x").fmt("tiu").instruction_of(f).name
    return attrs.evolve(rec, fields=f, kind=kind)


def _reference(x, w, bias, fill, pads, stride, dil, ins=(0, 0, 0, 0), relu=False, depthwise=False, raw=False):
    """cviruntime test_181x_bf16_conv.c conv_ref, written here: x padded and inserted with `fill`,
    products summed (exactly: the test's values are multiples of 1/32 below 2^10), the fp32 sum plus
    the fp32 bias, relu, rounded to bf16 to nearest even. w (Cout, Cin, kh, kw), or (C, kh, kw)."""
    n, c, h, wd = x.shape
    yi, xi, yl, xl = ins
    up, dn, lf, rt = pads
    hi, wi = (h - 1) * (yi + 1) + 1 + yl, (wd - 1) * (xi + 1) + 1 + xl
    p = np.full((n, c, up + hi + dn, lf + wi + rt), fill, np.float64)
    p[:, :, up:up + (h - 1) * (yi + 1) + 1:yi + 1, lf:lf + (wd - 1) * (xi + 1) + 1:xi + 1] = x
    kh, kw = w.shape[-2:]
    sy, sx = stride
    dy, dx = dil
    ho = (p.shape[2] - (kh - 1) * dy - 1) // sy + 1
    wo = (p.shape[3] - (kw - 1) * dx - 1) // sx + 1
    cout = w.shape[0]
    acc = np.zeros((n, cout, ho, wo))
    for oy in range(ho):
        for ox in range(wo):
            for ky in range(kh):
                for kx in range(kw):
                    v = p[:, :, oy * sy + ky * dy, ox * sx + kx * dx]          # (n, c)
                    acc[:, :, oy, ox] += v * w[:, ky, kx] if depthwise else v @ w[:, :, ky, kx].T
    out = acc.astype(np.float32) + bias.astype(np.float32)[None, :, None, None]
    if raw:
        return out
    return fp32_to_bf16(np.maximum(out, np.float32(0)) if relu else out)


def _write_bias(m, bias, c):
    """The fp32 bias as (2, C, 1, 1) bf16: high halves at BIAS, low halves b_str bytes on (cvikernel.h)."""
    bits = bias.astype(np.float32).view(np.uint32)
    per_lane = -(-c // 8)
    m.lmem_write_array(BIAS, (bits >> 16).astype(np.uint16).reshape(1, c, 1, 1), (per_lane, 1, 1, 1), "uint16")
    m.lmem_write_array(BIAS + 2 * per_lane, (bits & 0xFFFF).astype(np.uint16).reshape(1, c, 1, 1),
                       (per_lane, 1, 1, 1), "uint16")
    return 2 * per_lane


@pytest.mark.parametrize("case", ["pad_stride_dilation_relu", "insertion"])
def test_bf16_conv_sums_in_fp32_adds_the_fp32_bias_and_rounds_once(case):
    """(1, 11, 5, 7) bf16 input, (11, 10, 3, 2) weight in the conv weight layout, an fp32 bias per
    output channel: against the vendor test's reference formula (cviruntime test_181x_bf16_conv.c)."""
    rng = np.random.default_rng(11)
    cin, cout, kh, kw = 11, 10, 3, 2
    x = rng.integers(-8, 9, (1, cin, 5, 7)) / 4
    w = rng.integers(-8, 9, (cout, cin, kh, kw)) / 8
    bias = rng.normal(0, 3, cout).astype(np.float32)
    if case == "insertion":
        fill, pads, stride, dil, ins, relu = 0.0, (0, 1, 0, 0), (1, 2), (1, 1), (1, 0, 0, 1), False
    else:
        fill, pads, stride, dil, ins, relu = -0.5, (1, 0, 1, 1), (2, 1), (1, 2), (0, 0, 0, 0), True
    want = _reference(x, w, bias, fill, pads, stride, dil, ins, relu)
    _, _, ho, wo = want.shape
    m = bmk.Simulator("cv181x")
    cs_x = -(-(2 * 5 * 7) // 16) * 16                                   # eu-aligned channel stride, bytes
    m.lmem_write_array(X, _bits(x), (cs_x, cs_x // 2, 7, 1), "uint16")
    # weight (Cin, Cout, kh, kw) held as (1, Cout, kh*kw, Cin): element strides (1, Cin*kh*kw, Cin*kw, Cin)
    m.lmem_write_array(W, _bits(w.transpose(1, 0, 2, 3)), (1, cin * kh * kw, cin * kw, cin), "uint16")
    b_str = _write_bias(m, bias, cout)
    out_st = (2 * 2 * ho * wo, 2 * ho * wo, 2 * wo, 2)                  # bytes, explicit
    rec = _conv_record(
        opd0_n=1, opd0_c=cin, opd0_h=5, opd0_w=7, opd1_n=cin, opd1_c=cout, opd1_h=kh, opd1_w=kw,
        opd2_n=1, opd2_c=cout, opd2_h=1, opd2_w=1, opd2_b_str=b_str, res0_n=1, res0_c=cout, res0_h=ho, res0_w=wo,
        **{f"res0_{d}_str": s for d, s in zip("nchw", out_st)}, opd0_ins_val=int(_bits(fill)),
        conv_opd0_up_pad=pads[0], conv_opd0_dn_pad=pads[1], conv_opd0_lf_pad=pads[2], conv_opd0_rt_pad=pads[3],
        conv_op_y_str=stride[0], conv_op_x_str=stride[1], conv_opd1_y_ins0=dil[0] - 1, conv_opd1_x_ins0=dil[1] - 1,
        conv_opd0_y_ins0=ins[0], conv_opd0_x_ins0=ins[1], conv_opd0_y_ins0_last=ins[2],
        conv_opd0_x_ins0_last=ins[3], opt_relu=int(relu))
    assert (rec.fields["short_opd1_str"], rec.fields["short_opd2_str"], rec.fields["tsk_opd_num"]) == (1, 2, 3)
    m.run([rec], races=False)
    got = m.lmem_read_array(OUT, want.shape, tuple(s // 2 for s in out_st), "uint16")
    np.testing.assert_array_equal(got, want)
    # the bias's low halves count: with its high halves alone some results round elsewhere
    high_only = (bias.view(np.uint32) & 0xFFFF0000).view(np.float32)
    assert (_reference(x, w, high_only, fill, pads, stride, dil, ins, relu) != want).any()


@pytest.mark.parametrize("const", [False, True])
def test_bf16_depthwise_per_channel_with_bias_and_a_constant_weight(const):
    """tiu_pt_depthwise_convolution (bf16): (1, 11, 5, 7) input, (1, 11, 3, 3) weight eu-aligned or
    one bf16 constant in opd1_addr; opt_right_shift 5 is not read (the vendor's test draws it at random
    and its reference ignores it)."""
    rng = np.random.default_rng(12)
    c, kh, kw = 11, 3, 3
    x = rng.integers(-8, 9, (1, c, 5, 7)) / 4
    w = rng.integers(-8, 9, (c, kh, kw)) / 8
    if const:
        w = np.full((c, kh, kw), 0.375)
    bias = rng.normal(0, 3, c).astype(np.float32)
    want = _reference(x, w, bias, 0.25, (1, 1, 1, 1), (1, 1), (1, 1), relu=True, depthwise=True)
    m = bmk.Simulator("cv181x")
    m.lmem_write_array(X, _bits(x), (80, 40, 7, 1), "uint16")
    m.lmem_write_array(W, _bits(w[None]), (32, 16, 3, 1), "uint16")       # eu-aligned: 18 bytes -> 32
    b_str = _write_bias(m, bias, c)
    out_st = (2 * 80, 80, 14, 2)
    rec = _conv_record(
        tsk_typ=1, tsk_eu_typ=2, opt_right_shift=5, opd0_n=1, opd0_c=c, opd0_h=5, opd0_w=7, opd1_n=1, opd1_c=c,
        opd1_h=kh, opd1_w=kw, short_opd1_str=0, opt_opd1_const=int(const),
        opd1_addr=int(_bits(0.375)) if const else W, opd2_n=1, opd2_c=c, opd2_h=1, opd2_w=1, opd2_b_str=b_str,
        res0_n=1, res0_c=c, res0_h=5, res0_w=7, **{f"res0_{d}_str": s for d, s in zip("nchw", out_st)},
        opd0_ins_val=int(_bits(0.25)), conv_opd0_up_pad=1, conv_opd0_dn_pad=1, conv_opd0_lf_pad=1,
        conv_opd0_rt_pad=1, opt_relu=1)
    assert rec.kind == "tiu.depthwise" or rec.name == "tiu.depthwise"
    m.run([rec], races=False)
    got = m.lmem_read_array(OUT, want.shape, tuple(s // 2 for s in out_st), "uint16")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("field, value", [("double_conv", 1), ("opt_right_shift", 3), ("fp_round_typ", 1),
                                          ("opt_res_add", 1), ("opt_opd1_const", 1), ("opt_opd2_seg", 1),
                                          ("opt_res0_seg", 0), ("short_nchwstr_same", 1),
                                          ("quan_m", 7)])
def test_bf16_conv_refuses_what_it_does_not_model_by_name(field, value):
    rec = _conv_record(**{field: value})
    with pytest.raises(bmk.errors.SimulationError, match=f"tiu.conv: {field} must be"):
        bmk.Simulator("cv181x").run([rec], races=False)


def test_bf16_conv_partial_sums_in_fp32_halves_over_three_input_slices():
    """The input channels in three slices (cviruntime test_181x_bf16_conv_ps32.c): ps32_md 2 stores
    the first slice's fp32 sum as high halves at res0_addr and low halves res0_b_str on, 3 adds the
    second's, 1 adds the third's, the bias, relu and rounds to bf16: the whole conv's result."""
    rng = np.random.default_rng(13)
    cin, cout, kh, kw, h, w = 11, 10, 3, 2, 5, 7
    x = rng.integers(-8, 9, (1, cin, h, w)) / 4
    wt = rng.integers(-8, 9, (cout, cin, kh, kw)) / 8
    bias = rng.normal(0, 3, cout).astype(np.float32)
    pads = (1, 1, 0, 1)
    want = _reference(x, wt, bias, 0.0, pads, (1, 1), (1, 1), relu=True)
    _, _, ho, wo = want.shape
    out_st = (2 * 2 * ho * wo, 2 * ho * wo, 2 * wo, 2)
    m = bmk.Simulator("cv181x")
    b_str = _write_bias(m, bias, cout)
    recs, slices = [], [(0, 4), (4, 8), (8, 11)]
    for k, ((lo, hi), mode) in enumerate(zip(slices, (2, 3, 1))):
        xa, wa, c = 0x2000 + 0x400 * k, 0x3000 + 0x400 * k, hi - lo
        cs = -(-(2 * h * w) // 16) * 16
        m.lmem_write_array(xa, _bits(x[:, lo:hi]), (cs, cs // 2, w, 1), "uint16")
        m.lmem_write_array(wa, _bits(wt[:, lo:hi].transpose(1, 0, 2, 3)), (1, c * kh * kw, c * kw, c), "uint16")
        last = mode == 1
        recs.append(_conv_record(
            cmd_id_tpu=k + 1, opd0_addr=xa, opd1_addr=wa, ps32_md=mode, res0_b_str=out_st[0],
            opd0_n=1, opd0_c=c, opd0_h=h, opd0_w=w, opd1_n=c, opd1_c=cout, opd1_h=kh, opd1_w=kw,
            tsk_opd_num=3 if last else 2, opt_relu=int(last), opd2_n=1, opd2_c=cout, opd2_h=1, opd2_w=1,
            opd2_b_str=b_str, res0_n=1, res0_c=cout, res0_h=ho, res0_w=wo,
            **{f"res0_{d}_str": s for d, s in zip("nchw", out_st)}, opd0_ins_val=0, conv_opd0_up_pad=pads[0],
            conv_opd0_dn_pad=pads[1], conv_opd0_lf_pad=pads[2], conv_opd0_rt_pad=pads[3], conv_op_y_str=1,
            conv_op_x_str=1, conv_opd1_y_ins0=0, conv_opd1_x_ins0=0))
    st = tuple(s // 2 for s in out_st)
    m.run(recs[:1], races=False)
    first = _reference(x[:, :4], wt[:, :4], np.zeros(cout, np.float32), 0.0, pads, (1, 1), (1, 1), raw=True)
    high = m.lmem_read_array(OUT, want.shape, st, "uint16").astype(np.uint32)
    low = m.lmem_read_array(OUT + out_st[0], want.shape, st, "uint16").astype(np.uint32)
    sums = ((high << 16) | low).view(np.float32)
    assert (low != 0).any()                                 # the low halves are stored, not only bf16
    np.testing.assert_array_equal(sums, first)
    m.run(recs[1:], races=False)
    np.testing.assert_array_equal(m.lmem_read_array(OUT, want.shape, st, "uint16"), want)


@pytest.mark.parametrize("fields, message", [
    ({"ps32_md": 2}, "tiu.conv: opt_relu must be 0 with ps32_md 2"),
    ({"ps32_md": 3, "opt_relu": 0}, "tiu.conv: tsk_opd_num must be 2 with ps32_md 3"),
    ({"ps32_md": 1, "tsk_typ": 1, "tsk_eu_typ": 2}, "tiu.depthwise: ps32_md must be 0")])
def test_bf16_partial_sums_without_the_encoders_rules_are_refused(fields, message):
    with pytest.raises(bmk.errors.SimulationError, match=message):
        bmk.Simulator("cv181x").run([_conv_record(**fields)], races=False)
