"""The BM1684 simulator on real compiled networks (issue 20).

- retinaface (the vendor compiler's output for retinaface_mobilenet0.25.onnx, weights
  included) on a face photo gives onnxruntime's answers (tests/models/bm1684/
  retinaface_face4_onnx_output.npz, computed once with onnxruntime as a dev tool);
- each semantics bug the real network exposed is pinned by the real commands that showed it,
  replayed with operands written here and a numpy reference written from the field meanings.
"""
import numpy as np
import pytest

import bmk
from tests.chips.bm1684.sim import real
from tests.models import files as F

f32 = np.float32
rng = np.random.default_rng(20)


def test_retinaface_matches_onnxruntime_on_the_face_photo():
    m = bmk.load_model(F.RETINAFACE)
    x = np.load(F.HERE / "bm1684" / "retinaface_face4_input.npz")
    ref = np.load(F.HERE / "bm1684" / "retinaface_face4_onnx_output.npz")
    out = m.run({"input": x["input"]})
    for name in ("loc", "cls", "land"):
        assert out[name].shape == ref[name].shape
        assert real.cosine(out[name], ref[name]) >= 0.9999, name
    assert abs(out["cls"][..., 1].max() - ref["cls"][..., 1].max()) <= 1e-3
    assert ref["cls"][..., 1].max() > 0.999                               # a face, found
    assert np.abs(out["cls"] - ref["cls"]).max() < 1e-5                   # softmax to fp32 rounding
    for name in ("loc", "land"):
        assert np.abs(out[name] - ref[name]).max() < 1e-3


def _depthwise(x, w, b, pad):
    n, c, h, wd = x.shape
    kh, kw = w.shape[1:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, c, h, wd))
    for i in range(kh):
        for j in range(kw):
            out += xp[:, :, i:i + h, j:j + wd] * w[None, :, i, j, None, None]
    return out + b[None, :, None, None]


def test_pord_kernel_is_compact_past_64_channels():
    """Bug 1 (field short_opd1_str = aligned on pord.depthwise with res0_c = 128): the kernel of
    a pord command is in the compact layout (bm1684_defs.py reads it with is_aligned False):
    the vendor's GDMA puts channel 64 + c's 9 taps 9 words after channel c's, not 32. Replayed:
    the weight and bias loads and the depthwise of retinaface's 128-channel 3x3 layer."""
    recs = real.records()
    i = real.first(recs, "pord.depthwise", res0_c=128)
    wload, bload, dw = recs[i - 2:i + 1]
    assert (wload.kind, bload.kind) == ("dma.tensor", "dma.tensor") and dw.fields["short_opd1_str"] == 0
    c, kh, kw = 128, dw.fields["opd1_h"], dw.fields["opd1_w"]
    x = rng.standard_normal((1, c, dw.fields["opd0_h"], dw.fields["opd0_w"])).astype(f32)
    w = rng.standard_normal((c, kh, kw)).astype(f32)
    b = rng.standard_normal(c).astype(f32)
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(sim.chip.compose("gdma", "src_addr", wload.fields), w)          # (C, kh * kw) as stored
    sim.gmem_write(sim.chip.compose("gdma", "src_addr", bload.fields), b)
    sim.lmem_write_array(dw.fields["opd0_addr"] - real.LOCAL, x, (64 * 32 * 30, 32 * 30, 40, 1), "fp32")
    sim.run(real.cut([wload, bload, dw]))
    got = sim.lmem_read_array(dw.fields["res0_addr"] - real.LOCAL, x.shape, (64 * 32 * 30, 32 * 30, 40, 1), "fp32")
    assert np.abs(got - _depthwise(x, w, b, 1)).max() < 1e-4


def test_the_vendor_softmax_reads_the_exp_int_table():
    """Bug 2 (field opd1_addr = 0x300000 of lut): the vendor's exp is
    e^x = lut_exp[int(x)] * (1 + taylor(x - lut_exp_int[int(x)])), and its first lut reads the
    EX_INT table (float(i) at index i & 0xff) at L2 SRAM offset 0x300000, which the simulator
    did not place (it read zeros, so the 32-term taylor series ran on x itself: cls off by 9e-3).
    Replayed: retinaface's 2-class softmax block (max pooling, subtract, clamp to [-103, 88],
    fp32_to_int, two luts, taylor, sum pooling, reciprocal, multiply), on 64 x 2 logits."""
    recs = real.records()
    j = real.first(recs, "lut", opd1_addr=0x300000)
    block = [r for r in recs[j - 8:j + 11] if r.engine == "tiu"]
    assert [r.kind for r in block][:3] == ["pord.maxpooling", "md_scalar.mul", "arith.add"]
    assert block[-1].kind == "arith.mul"
    logits = (rng.standard_normal((1, 64, 2, 1)) * 8).astype(f32)
    logits[0, :4, 0, 0] = [-150.0, 120.0, 0.0, 95.0]                       # clamped to [-103, 88] after the max
    sim = bmk.Simulator("bm1684")
    stride = (64 * 32, 32, 1, 1)                                          # what the block's GDMA load writes
    sim.lmem_write_array(0, logits, stride, "fp32")
    sim.run(real.cut(block))
    got = sim.lmem_read_array(0, logits.shape, stride, "fp32")
    z = logits.astype(np.float64)
    e = np.exp(np.maximum(z - z.max(axis=2, keepdims=True), -103))
    assert np.abs(got - e / e.sum(axis=2, keepdims=True)).max() < 2e-6


# -- checks that need no reference ------------------------------------------------------------------
LANE_SLOT = 131072                     # each operand gets a quarter of NPU 0's lane (and the same in every NPU)
BATCHED = {"conv": ("opd0",), "pord.depthwise": ("opd0",), "pord.maxpooling": ("opd0",),
           "pord.avgpooling": ("opd0",)}


def _layout(f, slot, shape):
    """(n, c, h, w) element strides of a 32-bit local operand as its fields give them."""
    if f[f"short_{slot}_str"] == 3:                                    # free
        return tuple(f[f"{slot}_{d}_str"] for d in "nchw")
    from tests.chips.bm1684.helpers import aligned
    return tuple(aligned(f[f"{slot}_addr"] - real.LOCAL, shape))


def _operand_shapes(f, kind):
    n, c, h, w = real.shape(f, "res0")
    shapes = {"res0": (n, c, h, w)}
    if kind in BATCHED:
        shapes["opd0"] = (n, f["opd0_c"] if kind == "conv" else c, f["opd0_h"], f["opd0_w"])
    else:
        for slot in ("opd0", "opd1"):
            if not f[f"opt_{slot}_const"] and (slot == "opd0" or kind.split(".")[-1] in ("sub", "add", "mul", "max",
                                                                                      "min", "divide")):
                shapes[slot] = (n, c, h, w)
    return shapes


def _fits(f, kind):
    """The command's batch 2 fits a quarter lane per operand and does not overlap batch 1 (the
    vendor's softmax commands give n stride 1: with one batch it is never used)."""
    for slot, shape in _operand_shapes(f, kind).items():
        if f[f"short_{slot}_str"] == 3 and f[f"{slot}_n_str"] < f[f"{slot}_c_str"]:
            return False
        st = _layout({**f, f"{slot}_addr": real.LOCAL}, slot, (2,) + shape[1:])
        if 4 * (2 * st[0] + (shape[1] - 1) // 64 * st[1]) > LANE_SLOT:
            return False
    return True


def _batch_cases():
    recs = real.records()
    seen, cases = set(), []
    for r in recs:
        if r.engine != "tiu" or r.kind in seen or r.fields["res0_n"] != 1 or not _fits(r.fields, r.kind):
            continue
        seen.add(r.kind)
        cases.append(r)
    return cases


@pytest.mark.parametrize("rec", _batch_cases(), ids=lambda r: r.kind)
def test_a_batch_of_identical_inputs_gives_identical_outputs(rec):
    """Every TIU kind of retinaface, on one of its real commands made batch 2 (res0_n = 2; the
    vendor's batch is res0_n): both batches hold the same input, so both outputs are the same,
    and equal the batch-1 command's output on that input."""
    f = dict(rec.fields)
    shapes = _operand_shapes(f, rec.kind)
    for k, slot in enumerate(("res0", "opd0", "opd1")):
        if slot in shapes:
            f[f"{slot}_addr"] = real.LOCAL + k * LANE_SLOT
    data = rng.standard_normal(32 * 1024 * 1024 // 4).astype(f32)
    outs = []
    for n in (1, 2):
        g = {**f, "res0_n": n, **({"opd0_n": n} if rec.kind == "conv" and f["opd0_n"] != 1 else {})}
        sim = bmk.Simulator("bm1684")
        sim.lmem.data[:] = data.view(np.uint8)
        for slot, shape in shapes.items():
            if slot == "res0" and not g["opt_res_add"]:
                continue
            addr, st = g[f"{slot}_addr"] - real.LOCAL, _layout(g, slot, (n,) + shape[1:])
            one = sim.lmem_read_array(addr, (1,) + shape[1:], st, "fp32")
            sim.lmem_write_array(addr, np.repeat(one, n, axis=0), st, "fp32")
        sim.run(real.cut([bmk.encoders.Record("tiu", rec.cls, rec.kind, g)]))
        dt = "int32" if g["opt_res0_prec"] == 4 else "fp32"
        outs.append(sim.lmem_read_array(g["res0_addr"] - real.LOCAL, (n,) + shapes["res0"][1:],
                                        _layout(g, "res0", (n,) + shapes["res0"][1:]), dt))
    one, two = outs
    assert np.array_equal(two[0], two[1], equal_nan=True) and np.array_equal(two[:1], one, equal_nan=True)


@pytest.mark.parametrize("path", [F.RETINAFACE, F.FACE_DETECTION, F.FACE_INT8, F.YOLO_1684])
def test_every_shared_bm1684_model_runs_to_the_end_without_a_race(path):
    """Every instruction of every shared BM1684 model executes (no SimulationError) and no two
    instructions of different engines touch the same bytes unordered (yolov5s's coefficients are
    stripped: it runs on zeros, for its commands, not its numbers)."""
    from bmk.models.run import simulate
    m = bmk.load_model(path)
    st = m.nets[0].stages[0]
    inputs = {t.name: rng.standard_normal(t.shape).astype(t.dtype) for t in st.inputs}
    out, reports, _ = simulate(m, inputs)
    ((label, report),) = reports
    assert len(report.instructions) == sum(g.counts["tiu"] + g.counts["gdma"] for g in m.groups())
    assert report.races == () and not report.races_truncated
    assert all(np.isfinite(v).all() for v in out.values())
