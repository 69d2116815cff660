"""Steady-state `m.run` CPU time per compiled model, beside onnxruntime on one thread where the
model's onnx exists, and beside a base commit's `m.run` in the same run (issue 34 item 2).

    python bench/model_speed.py [--base COMMIT] [--runs 5] [--rounds 2] [--models NAME ...]

Per model, a child process (bench/worktree.py: a fresh interpreter with the tree's bmk first on
the path) loads it (bmk.load_model), runs it once to warm up (imports, plans) and
then `--runs` times, each timed in the process's CPU time; its figure is the best run. numpy's
BLAS runs on one thread (the simulator's own bmk/sim/blas.py while a buffer runs, and
OPENBLAS_NUM_THREADS=1 for the rest of the child). The input is fixed: retinaface's face photo
(tests/models/bm1684/retinaface_face4_input.npz), else a seeded random array per input tensor in
its dtype (floats in [-1, 1), integers over their range). The child also prints the sha256 of
the outputs (every output's bytes, in output order), so `--base` says whether this tree's
outputs are byte-identical to the base's. Rounds interleave base and this tree per model; the
figure per side is the minimum over rounds (the machine is shared: CPU time, minima, ratios in
one run; still noisy, by 10-20%).

onnxruntime (a dev tool, never a dependency of bmk: imported here only, and only when a model
has an onnx) runs the same onnx on the same input with intra_op_num_threads=1 and
inter_op_num_threads=1, best of the same number of runs after one warm-up, in this process; if
it is not installed the column says so.

    python bench/model_speed.py --kinds [--models NAME ...]

splits one more run of this tree per model by instruction kind (each plan's runner wrapped in
a timer after the warm-up; what is left is the reset, the coefficients and inputs written, the
run loop and the outputs read).

Figures (issue 34 item 2), `--base 47cbbfd --runs 3 --rounds 2`, HEAD d274b29, shared 2-core
machine, CPU ms (base in brackets), outputs identical on all twelve:

    retinaface                    73.5 (72.9)   onnxruntime 1 thread 8.3: 8.9x
    face_detection_fp32           27.9 (28.4)   yolov5s_bm1684      648.4 (666.8)
    yolov5s_bm1684x              528.9 (692.1)  yolov5s_bm1690_f16 3618.9 (4134.7)
    tdl_cls_attribute_face_bm1684x 26.2 (32.9)  tdl_cls_attribute_face_bm1688 17.7 (23.0)
    tdl_hand_keypoint_cls_bm1684x  2.7 (3.1)    tdl_yolov8n_fire_smoke_bm1688 309.0 (384.5)
    tdl_yolov8n_coco80_cv184x    315.5 (374.6)  tdl_topformer_pfv_cv184x 1160.0 (1365.6)
    tdl_yolov8n_coco80_cv181x    377.3 (544.9)

`--gemm-floor` (same tree): retinaface's 49 conv GEMMs, 568 M multiply-adds, alone: float64
27.1 ms, float32 12.7 ms; onnxruntime's whole run 7.9 ms. bmk's fp32 conv sums exact products in
float64 and rounds once, so its GEMMs alone are 3.4x onnxruntime: the item's 3x is out of reach
without other bits.

Earlier (against e6553cb, a tree keeping converted conv weights and im2col buffers across runs:
tried, not merged, no measurable change): retinaface 273.5 ms beside onnxruntime's 21.0 (13x) on a
busy machine; in quieter moments 222 ms (base 220) beside onnxruntime's 28.5 (7.8x). Where it went
(`--kinds`, 341 ms that run): conv 26% (49 commands), pord.depthwise 12% (19), and the ~2,800
small commands of the softmax loop over 158 tiles of
(1, 64, 1, 2) (max / average pooling, exp as fp32_to_int + lut + a 32-term fp32 taylor whose
first Horner steps are subnormal for small inputs, md_scalar and arith) about half; 12% outside
the commands (the reset zeroes 32 MiB of local memory).
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from worktree import ROOT, base_tree, env, measure  # noqa: E402

SHARED = Path("/work/shared/models")
TESTS = ROOT / "tests" / "models" / "bm1684"
FACE = TESTS / "retinaface_face4_input.npz"
# (name, model path, onnx path or None)
MODELS = [
    ("retinaface", TESTS / "retinaface_mobilenet0.25_384x640_fp32_b1.bmodel",
     SHARED / "bm1684" / "retinaface_mobilenet0.25.onnx"),
    ("face_detection_fp32", TESTS / "face_detection_fp32_b1.bmodel", None),
    ("yolov5s_bm1684", TESTS / "yolov5s_bm1684_f32.bmodel", None),
    ("yolov5s_bm1684x", ROOT / "tests" / "models" / "bm1684x" / "yolov5s_bm1684x_int8_sym.bmodel", None),
    ("tdl_cls_attribute_face_bm1684x", SHARED / "tdl" / "bm1684x" / "cls_attribute_face_112_112_INT8_bm1684x.bmodel",
     None),
    ("tdl_hand_keypoint_cls_bm1684x", SHARED / "tdl" / "bm1684x" / "hand_keypoint_cls_bm1684x.bmodel", None),
    ("tdl_cls_attribute_face_bm1688", SHARED / "tdl" / "bm1688" / "cls_attribute_face_112_112_INT8_bm1688.bmodel",
     None),
    ("tdl_yolov8n_fire_smoke_bm1688", SHARED / "tdl" / "bm1688" / "yolov8n_det_fire_smoke_384_640_INT8_bm1688.bmodel",
     None),
    ("tdl_yolov8n_coco80_cv184x", SHARED / "tdl" / "cv184x" / "yolov8n_det_coco80_640_640_INT8_cv184x.bmodel", None),
    ("tdl_topformer_pfv_cv184x",
     SHARED / "tdl" / "cv184x" / "topformer_seg_person_face_vehicle_384_640_INT8_cv184x.bmodel", None),
    ("tdl_yolov8n_coco80_cv181x", SHARED / "tdl" / "cv181x" / "yolov8n_det_coco80_640_640_INT8_cv181x.cvimodel", None),
    ("yolov5s_bm1690_f16", ROOT / "tests" / "models" / "bm1690" / "yolov5s_bm1690_f16_core8.bmodel", None),
]

CHILD = r"""
import hashlib, sys, time
import numpy as np
import bmk
path, face, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = bmk.load_model(path)
st = m.nets[0].stages[0]
rng = np.random.default_rng(0)
inputs = {}
for t in st.inputs:
    dt = np.dtype(t.dtype)
    if face != "-" and t.name == "input":
        inputs[t.name] = np.load(face)["input"].astype(dt)
    elif dt.kind == "f":
        inputs[t.name] = rng.uniform(-1, 1, t.shape).astype(dt)
    else:
        info = np.iinfo(dt)
        inputs[t.name] = rng.integers(info.min, int(info.max) + 1, t.shape).astype(dt)
out = m.run(inputs)                                    # warm up: imports, plans
best = None
for _ in range(runs):
    c = time.process_time()
    out = m.run(inputs)
    c = time.process_time() - c
    best = c if best is None else min(best, c)
h = hashlib.sha256()
for k, v in out.items():
    h.update(k.encode()); h.update(np.ascontiguousarray(v).tobytes())
print(f"{best:.6f}", h.hexdigest())
if len(sys.argv) > 4:                                   # --kinds: one more run, each plan's runner timed
    import collections, json
    from bmk.models.run import IDLE
    spent, count = collections.Counter(), collections.Counter()
    sim = m.kept[IDLE][0]

    def timed(fn, kind):
        def run(*a):
            c = time.process_time()
            try:
                return fn(*a)
            finally:
                spent[kind] += time.process_time() - c
                count[kind] += 1
        return run
    for plan, memo in sim._memos.items():
        if "run" in memo:
            memo["run"] = timed(memo["run"], plan.kind)
        else:
            plan.run = timed(plan.run, plan.kind)
    c = time.process_time()
    m.run(inputs)
    total = time.process_time() - c
    print(json.dumps({"total": total, "spent": spent, "count": count}))
"""


def child(tree, path, face, runs, kinds=False):
    e = dict(env(tree), OPENBLAS_NUM_THREADS="1")
    res = measure([sys.executable, "-c", CHILD, str(path), face, str(runs), *(["kinds"] if kinds else [])], e, 3600)
    if res is None or res[3]:
        err = b"timeout" if res is None else res[5]
        return None, err.decode(errors="replace").strip().splitlines()[-1][:100]
    lines = res[4].decode().splitlines()
    cpu, digest = lines[0].split()
    if kinds:
        return float(cpu), json.loads(lines[1])
    return float(cpu), digest


def show_kinds(name, split, top=12):
    """Where one m.run of this tree spends its CPU time, per instruction kind."""
    total, spent, count = split["total"], split["spent"], split["count"]
    print(f"{name}: one m.run {total * 1e3:.1f} ms CPU ({sum(count.values())} instructions; each runner timed, "
          f"which adds about 1 us an instruction)")
    for kind, t in sorted(spent.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {kind:24} {t * 1e3:8.1f} ms {t / total:6.1%} {count[kind]:6} x {t / count[kind] * 1e6:7.1f} us")
    rest = total - sum(spent.values())
    print(f"  {'outside instructions':24} {rest * 1e3:8.1f} ms {rest / total:6.1%}   (reset, coefficients and inputs "
          f"written, the run loop, outputs read)")


def onnx_time(onnx, face, runs):
    """Best CPU seconds of onnxruntime on one thread, or a string saying why there is none."""
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError:
        return "onnxruntime not installed"
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: np.load(face)["input"]}
    sess.run(None, feed)
    best = None
    for _ in range(runs):
        c = time.process_time()
        sess.run(None, feed)
        c = time.process_time() - c
        best = c if best is None else min(best, c)
    return best


def gemm_floor(runs):
    """retinaface's float64 GEMMs alone (the conv products bmk's fp32 conv semantics needs: exact
    products summed in float64, bmk/sim/bm1684/nn.py), timed outside the simulator on the shapes
    one m.run multiplies, beside the same GEMMs in float32 and onnxruntime's whole run."""
    import numpy as np

    import bmk
    import bmk.sim.bm1684.nn as nn
    shapes = []

    class Spy:          # numpy for nn.py, its matmul recording the operand shapes
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def matmul(a, b, out=None):
            shapes.append((a.shape, b.shape))
            return np.matmul(a, b, out=out)
    m = bmk.load_model(MODELS[0][1])
    inputs = {"input": np.load(FACE)["input"]}
    m.run(inputs)
    real, nn.np = nn.np, Spy()
    try:
        m.run(inputs)
    finally:
        nn.np = real
    rng = np.random.default_rng(0)
    macs = sum(int(np.prod(a)) * (b[-1] * (b[0] if len(b) == 3 else 1)) for a, b in shapes)
    line = f"retinaface: {len(shapes)} conv GEMMs, {macs / 1e6:.0f} M multiply-adds a run;"
    for dtype in (np.float64, np.float32):
        ops = [(rng.standard_normal(a).astype(dtype), rng.standard_normal(b).astype(dtype)) for a, b in shapes]
        best = None
        for _ in range(runs):
            c = time.process_time()
            for a, b in ops:
                np.matmul(a, b)
            c = time.process_time() - c
            best = c if best is None else min(best, c)
        line += f" {np.dtype(dtype).name} {best * 1e3:.1f} ms"
    t = onnx_time(MODELS[0][2], str(FACE), runs)
    print(line + (f"; onnxruntime's whole run {t * 1e3:.1f} ms" if isinstance(t, float) else f"; {t}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="a commit to time beside this tree, outputs compared byte for byte")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--models", nargs="*", help="names to run (default: all)")
    ap.add_argument("--kinds", action="store_true", help="this tree only: one more run per model, its CPU time "
                    "split by instruction kind")
    ap.add_argument("--gemm-floor", action="store_true", help="this tree only: retinaface's conv GEMMs alone, "
                    "float64 and float32, beside onnxruntime's whole run")
    args = ap.parse_args()
    if args.gemm_floor:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        gemm_floor(args.runs)
        return
    if args.kinds:
        for name, path, _ in MODELS:
            if (not args.models or name in args.models) and path.exists():
                cpu, split = child(ROOT, path, str(FACE) if name == "retinaface" else "-", args.runs, kinds=True)
                if cpu is None:
                    print(f"{name}: does not run: {split}")
                    continue
                show_kinds(name, split)
        return
    trees = {"this": ROOT}
    if args.base:
        trees = {"base": base_tree(args.base), "this": ROOT}
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    print(f"best of {args.runs} m.run (CPU ms), min over {args.rounds} rounds; base {args.base or '-'}")
    head = f"{'model':32} {'this':>9}"
    if args.base:
        head += f" {'base':>9} {'base/this':>9} {'outputs':>10}"
    head += f" {'onnxrt 1t':>9} {'this/ort':>8}"
    print(head, flush=True)
    for name, path, onnx in MODELS:
        if args.models and name not in args.models:
            continue
        if not path.exists():
            print(f"{name:32} missing: {path}")
            continue
        face = str(FACE) if name == "retinaface" else "-"
        best, digest, why = {}, {}, {}
        for _ in range(args.rounds):
            for label, tree in trees.items():
                cpu, d = child(tree, path, face, args.runs)
                if cpu is None:
                    why[label] = d
                    continue
                best[label] = min(best.get(label, cpu), cpu)
                digest[label] = d
        if "this" not in best:
            print(f"{name:32} does not run: {why.get('this')}")
            continue
        line = f"{name:32} {best['this'] * 1e3:9.1f}"
        if args.base:
            if "base" in best:
                same = "identical" if digest["base"] == digest["this"] else "DIFFERENT"
                line += f" {best['base'] * 1e3:9.1f} {best['base'] / best['this']:8.2f}x {same:>10}"
            else:
                line += f" {'fails':>9} {'':9} {'':10}"
        if onnx is not None and onnx.exists():
            t = onnx_time(onnx, face, args.runs)
            line += f" {t * 1e3:9.1f} {best['this'] / t:7.1f}x" if isinstance(t, float) else f" {t}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
