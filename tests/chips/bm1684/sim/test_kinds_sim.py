"""Every bm1684 kind simulated (issue 20 item 2) and no silent field (item 1).

Hand-made commands (spec defaults + the kind + the fields under test) and commands cut from
the real face_detection stream, run through bytes, against numpy references written from
the field meanings each module's docstring states (bmk/sim/bm1684/*.py).
"""
import functools

import numpy as np
import pytest

import bmk
from bmk.isa import load_chip
from bmk.bm1684.lowering import common as lo
from bmk.encoders import Record
from bmk.errors import SimulationError
from bmk.sim.bm1684 import SEMANTICS
from bmk.sim.semantics import spec_kinds
from tests.chips.bm1684.sim import real
from tests.chips.bm1684.helpers import aligned, get, npu_addr, put
from tests.models import files as F

f32 = np.float32
chip = functools.partial(load_chip, "bm1684")
rng = np.random.default_rng(2020)
LOCAL, G = 0x8000000, 0x100000000


def tiu(kind, **fields):
    fmt = chip().engine("tiu").format
    return Record("tiu", fmt.name, kind, {**fmt.defaults, **chip().kind("tiu", kind), "cmd_en": 1, "cmd_id_en": 1, **fields})


def gdma(kind, **fields):
    fmt = chip().engine("gdma").format
    return Record("gdma", fmt.name, kind, {**fmt.defaults, **chip().kind("gdma", kind), "pio_gdma_enable": 1,
                                           "barrier_enable": 1, "stride_enable": 1, "chw_copy": 0, **fields})


def run(records, sim=None):
    sim = sim or bmk.Simulator("bm1684")
    sim.run(bmk.encode("bm1684", real.cut(records), raw=True))
    return sim


def operand(f, slot, addr, shape=None, **kw):
    lo.tensor(chip(), f, slot, addr, None, shape=shape, **kw)
    return f


# -- every kind, every field ----------------------------------------------------------------------
def test_every_kind_has_semantics_that_state_their_fields():
    kinds = spec_kinds(chip())
    assert len(kinds) == 143 and SEMANTICS.missing(chip()) == []
    assert all(hasattr(SEMANTICS.kinds[k], "contract") for k in kinds)


@pytest.mark.parametrize("engine, kind", spec_kinds(chip()))
def test_a_field_no_kind_executes_is_refused_by_name(engine, kind):
    """No kind reads the h/w shift fields: a non-zero one is refused before anything runs,
    naming the instruction, the field and the value (the no-silent-field rule)."""
    field = "opd0_h_shift" if engine == "tiu" else "src_hshift"
    rec = (tiu if engine == "tiu" else gdma)(kind, **{field: 3})
    fn = SEMANTICS.kinds[(engine, kind)]
    match = ".*(has no public meaning|not simulated|no public)" if getattr(fn, "refused", False) else \
        rf"field {field} = 0x3 is not modelled"          # a refused kind says why it is, whatever the fields
    with pytest.raises(SimulationError, match=rf"instruction 0 .*{kind}: ({match})"):
        bmk.Simulator("bm1684").run([rec])


def test_reserved_bits_and_relu_off_are_refused():
    with pytest.raises(SimulationError, match="field rsvd0 = 0x1 is reserved"):
        bmk.Simulator("bm1684").run([tiu("arith.add", rsvd0=1)])
    f = operand(operand(operand({}, "res0", 0, (1, 2, 1, 4)), "opd0", 4096), "opd1", 8192)
    with pytest.raises(SimulationError, match="field opt_relu = 0 is not modelled"):
        run([tiu("arith.add", **f, opt_relu=0)])


def test_tsk_lane_num_keeps_disabled_lanes():
    shape = (1, 70, 2, 3)                                # 70 channels from NPU 0: lanes 0..63, then 0..5
    a, b, old = (rng.standard_normal(shape).astype(f32) for _ in range(3))
    sim = bmk.Simulator("bm1684")
    for addr, v in ((0, a), (4096, b), (8192, old)):
        put(sim, addr, v)
    mask = chip().all_lanes & ~(1 << 3) & ~(1 << 40)
    f = operand(operand(operand({}, "res0", 8192, shape), "opd0", 0), "opd1", 4096)
    got = get(run([tiu("arith.add", **f, tsk_lane_num=mask)], sim), 8192, shape)
    lanes = np.arange(70) % 64
    on = np.array([(mask >> int(k)) & 1 for k in lanes], bool).reshape(1, 70, 1, 1)
    assert np.array_equal(got, np.where(on, a + b, old))


# -- element-wise eu types the OKKernel API does not emit ----------------------------------------
def test_md_sum_sums_n_h_w_per_channel():
    x = rng.standard_normal((2, 5, 3, 4)).astype(f32)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, x)
    f = operand(operand({}, "res0", 65536, (1, 5, 1, 1)), "opd0", 0, x.shape)
    f.update(opd0_n=2, opd0_h=3, opd0_w=4)
    got = get(run([tiu("md_sum", **f)], sim), 65536, (1, 5, 1, 1))
    assert np.array_equal(got, x.astype(np.float64).sum(axis=(0, 2, 3), keepdims=True).astype(f32))


def test_md_cmp_select_pair():
    shape = (1, 3, 2, 2)
    a, b, c, d = (rng.standard_normal(shape).astype(f32) for _ in range(4))
    sim = bmk.Simulator("bm1684")
    for k, v in enumerate((a, b, c, d)):
        put(sim, k * 4096, v)
    f = operand(operand(operand(operand({}, "res0", 32768, shape), "opd0", 0), "opd1", 4096), "opd2", 8192)
    f.update(opd3_addr=LOCAL + 12288, res1_addr=LOCAL + 36864)
    run([tiu("md_cmp.cmp_select", **f)], sim)
    assert np.array_equal(get(sim, 32768, shape), np.where(a > b, a, b))
    assert np.array_equal(get(sim, 36864, shape), np.where(a > b, c, d))


def test_normalize_split_and_squares():
    x = np.array([6.0, -0.75, 1.0, 3e-39, 0.0], f32).reshape(1, 1, 1, 5)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, x)
    norm = operand(operand({}, "res0", 4096, x.shape), "opd0", 0)
    expo = operand(operand({}, "res0", 8192, x.shape, prec="int32"), "opd0", 0)
    run([tiu("md_sfu.fp32_normalize", **norm), tiu("md_sfu.int_normalize", **expo)], sim)
    assert np.array_equal(get(sim, 4096, x.shape).ravel(), np.array([1.5, -1.5, 1.0, 3e-39, 0.0], f32))  # subnormal, 0: as is
    assert get(sim, 8192, x.shape, dtype="int32").ravel().tolist() == [129, 126, 127, 0, 0]
    b = rng.standard_normal(x.shape).astype(f32)
    put(sim, 12288, b)
    sq = operand(operand(operand({}, "res0", 16384, x.shape), "opd0", 0), "opd1", 12288)
    got = get(run([tiu("md_linear.square_diff", **sq)], sim), 16384, x.shape)
    assert np.array_equal(got, (x - b) * (x - b))


def test_vc_outer_operation_and_cc_correlation():
    left, right = rng.standard_normal(7).astype(f32), rng.standard_normal(6).astype(f32)
    sim = bmk.Simulator("bm1684")
    put(sim, 0, np.pad(left, (0, 1)).reshape(1, 2, 1, 4))             # L: 2 channels of w 4, last one 3 columns
    put(sim, 4096, right.reshape(1, 3, 1, 2))
    f = operand(operand(operand({}, "res0", 8192, (7, 3, 1, 2)), "opd0", 0, (1, 2, 1, 4)), "opd1", 4096)
    f.update(opd0_c=2, opd0_w=4, opd1_w=3)
    got = get(run([tiu("vc.sub", **f)], sim), 8192, (7, 3, 1, 2)).reshape(7, 6)
    assert np.array_equal(got, left[:, None] - right[None, :])
    x, k = rng.standard_normal((1, 2, 5, 5)).astype(f32), rng.standard_normal((1, 3, 2, 2)).astype(f32)
    put(sim, 16384, x)
    put(sim, 20480, k)
    f = operand(operand(operand({}, "res0", 24576, (2, 3, 4, 4)), "opd0", 16384), "opd1", 20480)
    f.update(opd0_h=5, opd0_w=5, opd1_h=2, opd1_w=2)
    run([tiu("cc.mul", **f)], sim)
    compact = bmk.bm1684.compact_stride(0, (2, 3, 4, 4))
    got = get(sim, 24576, (2, 3, 4, 4), compact)
    win = np.lib.stride_tricks.sliding_window_view(x[0].astype(np.float64), (2, 2), axis=(1, 2))   # (2, 4, 4, 2, 2)
    assert np.array_equal(got, np.einsum("iyxpq,opq->ioyx", win, k[0].astype(np.float64)).astype(f32))


def test_undefined_meanings_are_refused_with_their_reason():
    for kind, match in (("mm2", "no public formula"), ("decompress", "compression format"),
                        ("cc.taylor", "tsk_eu_typ = 13 has no public meaning"), ("arith.add_tree", "add_tree")):
        with pytest.raises(SimulationError, match=match):
            run([tiu(kind)])


# -- the vendor's deconvolution (face_detection) ---------------------------------------------------
def test_kernel_rotate_and_insertion_make_the_vendors_deconvolution():
    """face_detection's conv with opt_kernel_rotate = 1, opd0_{x,y}_ins0 = 1, pads 2, 4x4 kernel:
    a stride-2 transposed convolution (ConvTranspose, pad 1) of its 10x10 input."""
    recs = real.records(F.FACE_DETECTION)
    i = real.first(recs, "conv", opt_kernel_rotate=1)
    f = recs[i].fields
    assert (f["opd0_x_ins0"], f["opd0_up_pad"], f["opd1_h"], f["res0_h"], f["opd0_h"]) == (1, 2, 4, 20, 10)
    x = rng.standard_normal((1, 1, 10, 10)).astype(f32)
    w = rng.standard_normal((1, 1, 4, 4)).astype(f32)
    sim = bmk.Simulator("bm1684")
    put(sim, f["opd0_addr"] - LOCAL, x)
    words = np.zeros((1, 1, 4, 4, 2), f32)
    words[..., 0] = w                                      # the 2IC pair: ic 0, then padding
    pairs = (f["opd1_n_str"], f["opd1_c_str"], f["opd1_h_str"], f["opd1_w_str"])
    put(sim, f["opd1_addr"] - LOCAL, words[..., 0], tuple(2 * s for s in pairs))
    sim.run(real.cut([recs[i]]))
    got = get(sim, f["res0_addr"] - LOCAL, (1, 1, 20, 20))
    up = np.zeros((22, 22))                                # ConvTranspose2d(stride 2, pad 1): scatter, crop
    for y in range(10):
        for xx in range(10):
            up[2 * y:2 * y + 4, 2 * xx:2 * xx + 4] += x[0, 0, y, xx] * w[0, 0].astype(np.float64)
    assert np.allclose(got[0, 0], up[1:21, 1:21], rtol=1e-6, atol=1e-6)


# -- GDMA special functions ------------------------------------------------------------------------
def test_the_vendors_trans_is_the_nc_transpose():
    """face_detection's first dma.trans (S2L, chw_copy 1): src (1, 2, 200, 1) -> dst (2, 1, 200, 1)."""
    recs = real.records(F.FACE_DETECTION)
    rec = recs[real.first(recs, "dma.trans")]
    f = rec.fields
    n, c, h, w = (f[f"src_{d}size"] for d in "nchw")
    x = rng.standard_normal((n, c, h, w)).astype(f32)
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(sim.chip.compose("gdma", "src_addr", f), x)           # continuous, as its strides say
    sim.run(real.cut([rec]))
    dst = sim.chip.compose("gdma", "dst_addr", f) - LOCAL
    got = sim.lmem_read_array(dst, (c, n, h, w), tuple(f[f"dst_{d}stride"] for d in "nchw"), "fp32")
    assert np.array_equal(got, x.transpose(1, 0, 2, 3))


def _move(kind, src, dst, shape, src_stride, dst_stride, **fields):
    lo_src, hi_src = src & 0xFFFFFFFF, src >> 32
    lo_dst, hi_dst = dst & 0xFFFFFFFF, dst >> 32
    return gdma(kind, src_start_addr_l32=lo_src, src_start_addr_h8=hi_src, dst_start_addr_l32=lo_dst,
                dst_start_addr_h8=hi_dst, **{f"src_{d}size": v for d, v in zip("nchw", shape)},
                **{f"dst_{d}size": v for d, v in zip("nchw", fields.pop("dst_shape", shape))},
                **{f"src_{d}stride": v for d, v in zip("nchw", src_stride)},
                **{f"dst_{d}stride": v for d, v in zip("nchw", dst_stride)}, **fields)


def test_gdma_auto_strides_accumulate_mask_and_common_mode():
    shape = (1, 66, 3, 5)
    x, old = rng.standard_normal(shape).astype(f32), rng.standard_normal(shape).astype(f32)
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, x)
    put(sim, 0, old)
    mask = chip().all_lanes & ~(1 << 65 % 64) & ~(1 << 7)
    rec = _move("dma.tensor", G, LOCAL, shape, (0,) * 4, (0,) * 4, stride_enable=0, acc_write_enable=1,
                localmem_mask_l32=mask & 0xFFFFFFFF, localmem_mask_h32=mask >> 32)
    got = get(run([rec], sim), 0, shape)                   # auto: continuous system, aligned local
    on = np.array([(mask >> (k % 64)) & 1 for k in range(66)], bool).reshape(1, 66, 1, 1)
    assert np.array_equal(got, np.where(on, old + x, old))
    rec = _move("dma.tensor", G, G + 0x10000, (1, 1, 1, 1), (10, 0, 0, 1), (0, 0, 0, 1), common_mode=1,
                direction=chip().code("gdma", "direction", "S2S"))
    run([rec], sim)
    assert sim.gmem_read(G + 0x10000, 40) == x.tobytes()[:40]


def test_gdma_format_cw_trans_and_lrn_shift():
    x = (rng.standard_normal((1, 4, 1, 6)) * 100).astype(f32)
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, x)
    i8 = chip().code("gdma", "dst_data_format", "int8")
    S2S = chip().code("gdma", "direction", "S2S")
    run([_move("dma.format", G, G + 0x1000, x.shape, (24, 6, 6, 1), (24, 6, 6, 1), dst_data_format=i8, direction=S2S),
         _move("dma.cw_trans", G, G + 0x2000, x.shape, (24, 6, 6, 1), (24, 4, 4, 1), dst_shape=(1, 6, 1, 4),
               direction=S2S)], sim)
    conv = np.frombuffer(sim.gmem_read(G + 0x1000, 24), np.int8).reshape(x.shape)
    assert np.array_equal(conv, np.clip(np.rint(x), -128, 127).astype(np.int8))
    cw = np.frombuffer(sim.gmem_read(G + 0x2000, 96), f32).reshape(1, 6, 1, 4)
    assert np.array_equal(cw, x.transpose(0, 3, 2, 1))
    y = rng.standard_normal((1, 5, 2, 2)).astype(f32)
    put(sim, 0, y)
    st = aligned(0, y.shape)
    L2L = chip().code("gdma", "direction", "L2L")
    run([_move("dma.lrn_shift", LOCAL, LOCAL + 65536, y.shape, st, st, direction=L2L, lrn_shift_num=2)], sim)
    assert np.array_equal(get(sim, 65536, y.shape), np.concatenate([np.zeros((1, 2, 2, 2), f32), y[:, :3]], axis=1))
    with pytest.raises(SimulationError, match="direction = S2L does not match the addresses"):
        run([_move("dma.tensor", G, G + 64, (1, 1, 1, 4), (4, 4, 4, 1), (4, 4, 4, 1))])


def test_face_detection_softmax_pairs_sum_to_one():
    """A check that needs no reference: face_detection's class probabilities (softmax over each
    anchor's 2 classes) sum to 1 on any input."""
    m = bmk.load_model(F.FACE_DETECTION)
    out = m.run({"data": rng.standard_normal((1, 3, 320, 320)).astype(f32) * 50})
    for stride in (8, 16, 32):
        p = out[f"face_rpn_cls_prob_reshape_stride{stride}"].astype(np.float64)      # (1, 4, s, s): 2 anchors x 2
        assert p.min() >= 0 and np.abs(p[:, :2] + p[:, 2:] - 1).max() < 1e-5
