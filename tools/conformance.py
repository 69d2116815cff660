"""The conformance table of docs/models.md (issue 27 item 6): for every compiled model bmk
reads in its tests (tests/models/**), and with --shared DIR every model under DIR too, per
model:

  decodes   every group decodes and encodes back to the file's own bytes (raw streams, or a
            cvimodel's cmd_hdr_t buffer); "no decoder" for a chip without specs;
  check     `bmk.check`: every instruction has simulator semantics and passes their field
            checks ("no simulator" for a chip without one);
  runs      `m.run` to the end on deterministic inputs (zeros);
  agrees    the outputs against the model's reference, whichever applies (`REFERENCES`):
            onnxruntime's outputs (retinaface), the vendor's own reference data (Yuv2rgb, also
            its earlier compile; the BM1690 MatMul's model_runner output), the vendor's cmodel
            on a photo (tests/models/vendor_cmodel.json), the fp32 twin (face_detection int8 b4
            against fp32 b1 on the same pixels); "n/a" otherwise.

    python tools/conformance.py [--shared /work/shared/models] [--check]

rewrites the table between the marker comments of docs/models.md (--check: exits 1 when
the doc differs instead). tests/models/test_conformance.py runs `row` on the tests' small
files and checks the doc's rows for them.
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import bmk  # noqa: E402
from bmk.errors import BmkError  # noqa: E402

DOC = ROOT / "docs" / "models.md"
TESTS = ROOT / "tests" / "models"
BEGIN = "<!-- conformance table: tools/conformance.py writes this; do not edit by hand -->"
END = "<!-- end of conformance table -->"
COLUMNS = ("model", "chip", "decodes", "check", "runs", "agrees")


def _short(e, n=100):
    """An error's message for a cell: without the file's path, the group label and the byte
    offset (the instruction's number and kind stay), at most n characters."""
    import re
    s = str(e).replace("|", "/").replace("\n", " ")
    if getattr(e, "path", None):
        s = s.replace(f"{e.path}: ", "")
    s = re.sub(r"run: net\S+: instruction (\d+) \([^)]*\): ", r"#\1 ", s)
    s = re.sub(r"run: net\S+ instruction (\d+) \(([\w.]+)[^)]*\)( cannot be simulated)?:? ", r"#\1 \2: ", s)
    s = s.replace("; nothing was run", "")
    return s if len(s) <= n else s[:n - 3] + "..."


def decodes(m):
    """'yes (N instructions)', 'no decoder' or 'no: why'."""
    from bmk.models.decoding import split_engines
    if not m.decodable:
        return "no decoder"
    spec = bmk.isa.load_chip(m.chip)
    n = 0
    try:
        for g in m.groups():
            if g.cmdbuf is not None:
                records = bmk.decode(m.chip, g.cmdbuf)
                if bmk.encode(m.chip, records) != g.cmdbuf:
                    return f"no: {g.label} does not encode back to its bytes"
            else:
                known, unknown = split_engines(spec, g)
                streams = {e: g.streams[e] for e in known}
                records = bmk.decode(m.chip, streams)
                back = bmk.encode(m.chip, records, raw=True)
                if {e: back.get(spec.engine(e).name, b"") for e in known} != streams:
                    return f"no: {g.label} does not encode back to its bytes"
                if unknown:
                    return f"partly: {', '.join(unknown)} streams have no specs"
            n += len(records)
    except BmkError as e:
        return f"no: {_short(e)}"
    return f"yes ({n} instructions)"


def check(m):
    """'clean', 'no decoder', 'no simulator' or 'N refused (K refusals), first: ...' (bmk.check)."""
    from bmk.sim.semantics import simulated_chips
    if not m.decodable:
        return "no decoder"
    if m.chip not in simulated_chips():
        return "no simulator"
    try:
        findings = bmk.check(m)
    except BmkError as e:
        return f"no: {_short(e)}"
    if not findings:
        return "clean"
    n = sum(f.count for f in findings)
    return f"{n} refused ({len(findings)} refusal{'s' * (len(findings) > 1)}), first: {_short(findings[0].line(), 70)}"


def zeros(m, net=0, stage=0):
    st = m.nets[net].stages[stage]
    return {t.name: np.zeros(t.shape, t.dtype) for t in st.inputs}


def runs(m):
    """('yes' | 'no simulator' | 'no: why', outputs or None)."""
    from bmk.sim.semantics import simulated_chips
    if not m.decodable:
        return "no decoder", None
    if m.chip not in simulated_chips():
        return "no simulator", None
    try:
        t = time.perf_counter()
        out = m.run(zeros(m))
        return f"yes ({time.perf_counter() - t:.1f} s)", out
    except BmkError as e:
        return f"no: {_short(e)}", None


# -- references ------------------------------------------------------------------------------------
def _cos(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    d = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / d) if d else float(np.array_equal(a, b))


def _vendor_data(m, folder):
    """The vendor's raw input and output bytes (input_ref_data.dat, output_ref_data.dat, in
    tensor order) -> agreement of m's outputs with them."""
    st = m.nets[0].stages[0]
    data, ins, at = (folder / "input_ref_data.dat").read_bytes(), {}, 0
    for t in st.inputs:
        n = int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize
        ins[t.name] = np.frombuffer(data[at:at + n], t.dtype).reshape(t.shape)
        at += n
    out = m.run(ins)
    want, at = (folder / "output_ref_data.dat").read_bytes(), 0
    same = True
    for t in st.outputs:
        n = int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize
        same &= out[t.name].tobytes() == want[at:at + n]
        at += n
    return "yes (the vendor's output, byte for byte)" if same else "no (differs from the vendor's output)"


def _onnx(m, folder):
    x = np.load(folder / "retinaface_face4_input.npz")
    want = np.load(folder / "retinaface_face4_onnx_output.npz")
    out = m.run({k: x[k] for k in x.files})
    cos = min(_cos(out[k], want[k]) for k in want.files)
    err = max(float(np.abs(out[k] - want[k]).max()) for k in want.files)
    ok = cos >= 0.9999
    return f"{'yes' if ok else 'no'} (onnxruntime: cosine {cos:.6f}, max abs diff {err:.2g})"


def _twin(m, twin_path):
    """face_detection int8 b4 against its fp32 b1 twin on the same real photos (the four of
    tests/models/bm1684/face_photos_320.npz, one per batch item: raw RGB pixels for the twin,
    round(pixel * scale) for the int8 input), each int8 output dequantized by its scale: the
    worst cosine over the outputs and photos."""
    twin = bmk.load_model(str(twin_path))
    (x8,), (x32,) = m.nets[0].stages[0].inputs, twin.nets[0].stages[0].inputs
    with np.load(Path(twin_path).parent / "face_photos_320.npz") as photos:
        pixels = np.stack([photos[k] for k in sorted(photos.files)][:x8.shape[0]]).astype(np.float32)
    q = np.clip(np.round(pixels * x8.scale), -128, 127).astype(x8.dtype)
    out8 = m.run({x8.name: q})
    cos = []
    for b in range(len(pixels)):
        out32 = twin.run({x32.name: pixels[b:b + 1]})
        for t in m.nets[0].stages[0].outputs:
            if t.name in out32:
                v = out8[t.name][b:b + 1].astype(np.float64) * (t.scale if np.issubdtype(t.dtype, np.integer) else 1)
                cos.append(_cos(v, out32[t.name]))
    if not cos:
        return "n/a (no output in common with its twin)"
    return (f"{'yes' if min(cos) >= 0.98 else 'no'} (fp32 twin on 4 photos: worst cosine {min(cos):.4f} over "
            f"{len(cos)} outputs)")


def _model_runner(m, want):
    """The vendor's 8-core MatMul against its model_runner input and output."""
    with np.load(want) as ref:
        out = m.run({m.nets[0].stages[0].inputs[0].name: ref["input"]})
        same = np.array_equal(next(iter(out.values())), ref["output"])
    return "yes (the vendor's model_runner output, byte for byte)" if same else "no (differs from model_runner's output)"


def _cmodel(m, name):
    """A tests/models file against the vendor cmodel's outputs on the crowd photo (tests/models/vendor_cmodel.py)."""
    from tests.models import vendor_cmodel as V
    recorded, _ = V.recorded()
    if V.digests(m.run(V.inputs(m))) == recorded[name]:
        return "yes (the vendor's cmodel on a photo, byte for byte)"
    return "no (differs from the vendor's cmodel on a photo)"


def reference(path):
    """(what, function(m) -> text) of a model's reference, or None."""
    path = Path(path)
    if path.name == "MM_0_f16_bm1690.bmodel" and (path.parent / "MM_0_f16_bm1690_reference.npz").is_file():
        return lambda m: _model_runner(m, path.parent / "MM_0_f16_bm1690_reference.npz")
    if path.parent.name == "Yuv2rgb_0_int8" and (path.parent / "output_ref_data.dat").is_file():
        return lambda m: _vendor_data(m, path.parent)
    if path.name.startswith("Yuv2rgb_0_int8_2024-07"):
        folder = path.parent.parent / "bm1684x" / "Yuv2rgb_0_int8"
        if (folder / "output_ref_data.dat").is_file():
            return lambda m: _vendor_data(m, folder)
    onnx = path.parent / "retinaface_face4_onnx_output.npz"
    if path.name.startswith("retinaface_mobilenet0.25") and onnx.is_file():
        return lambda m: _onnx(m, path.parent)
    if path.name == "face_detection_int8_b4.bmodel" and (path.parent / "face_detection_fp32_b1.bmodel").is_file():
        return lambda m: _twin(m, path.parent / "face_detection_fp32_b1.bmodel")
    try:
        name = str(path.resolve().relative_to(TESTS.resolve()))
    except ValueError:
        name = None
    from tests.models import vendor_cmodel as V
    if name is not None and V.DIGESTS.is_file() and name in V.recorded()[0]:
        return lambda m: _cmodel(m, name)
    return None


def agrees(path, m, ran):
    ref = reference(path)
    if ref is None:
        return "n/a"
    if not ran.startswith("yes"):
        return "not run"
    try:
        return ref(m)
    except BmkError as e:
        return f"no: {_short(e)}"


def row(path, base=ROOT):
    """The table's cells for one model file."""
    path = Path(path)
    try:
        name = str(path.relative_to(base))
    except ValueError:
        name = str(path)
    try:
        m = bmk.load_model(str(path))
    except BmkError as e:
        return (name, "?", f"no: {_short(e)}", "", "", "")
    ran, _ = runs(m)
    return (name, m.chip, decodes(m), check(m), ran, agrees(path, m, ran))


def models(shared=None):
    """[(path, base)]: the tests' models, then those under `shared` that are not one of them
    (a copy of a tests' file is listed once, under tests/)."""
    import hashlib
    out = [(p, ROOT) for p in sorted(TESTS.rglob("*")) if p.suffix in (".bmodel", ".cvimodel")]
    if shared:
        shared = Path(shared)
        seen = {hashlib.sha256(p.read_bytes()).digest() for p, _ in out}
        out += [(p, shared.parent.parent) for p in sorted(shared.rglob("*")) if p.suffix in (".bmodel", ".cvimodel")
                and hashlib.sha256(p.read_bytes()).digest() not in seen]
    return out


def _timeless(cell):
    """A cell without its run time (the doc's rows must not change from run to run)."""
    import re
    return re.sub(r"yes \(\d+\.\d s\)", "yes", cell)


def table(rows):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_timeless(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def section(rows, shared=False):
    intro = ("Every compiled model bmk reads in its tests (tests/models), and the other shared networks "
             "(--shared)" if shared else "Every compiled model bmk reads in its tests (tests/models)")
    return "\n".join([BEGIN, "", intro + ": whether it decodes (and encodes back to its bytes), passes the "
                      "simulator's static check, runs to the end on zero inputs, and agrees with its reference "
                      "(onnxruntime, the vendor's data, an fp32 twin; n/a when it has none). Regenerate with "
                      "`python tools/conformance.py [--shared /work/shared/models]`; tests/models/test_conformance.py "
                      "checks the rows of the tests' models.", "", table(rows), "", END])


def replace(doc, text):
    if BEGIN in doc and END in doc:
        return doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END):]
    return doc.rstrip("\n") + "\n\n## Conformance\n\n" + text + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", help="also every model under this folder (e.g. /work/shared/models)")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/models.md differs")
    ap.add_argument("--print", action="store_true", help="print the table, write nothing")
    a = ap.parse_args(argv)
    rows = []
    for path, base in models(a.shared):
        r = row(path, base)
        print(" | ".join(r), file=sys.stderr)
        rows.append(r)
    text = section(rows, bool(a.shared))
    if a.print:
        print(text)
        return 0
    doc = DOC.read_text()
    new = replace(doc, text)
    if a.check:
        return 0 if new == doc else 1
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
