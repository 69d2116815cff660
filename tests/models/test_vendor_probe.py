"""tools/vendor_probe.py: the rewritten bmodels bmk and the vendor's cmodel both run (the cmodel
itself is not here: these check that bmk reads and runs what the tool writes, as it says)."""
import importlib.util
from pathlib import Path

import numpy as np

import bmk
from bmk.encoders import Record
from bmk.models.run import prepare, simulate
from tests.models import files as F

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("vendor_probe", ROOT / "tools" / "vendor_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)

SOUND = F.HERE / "cv184x" / "cls_sound_babay_cry_188_40_INT8_cv184x.bmodel"
YOLO = F.HERE / "cv184x" / "yolov8n_det_coco80_640_640_INT8_cv184x.bmodel"


def _run(path, inputs):
    m = bmk.load_model(str(path))
    p = prepare(m)
    sim = bmk.Simulator(p.spec, semantics=p.semantics)
    simulate(m, inputs, prepared=p, sim=sim)
    return m, sim


def test_a_cut_model_runs_its_first_commands_and_dumps_a_local_tensor(tmp_path):
    m0 = bmk.load_model(str(SOUND))
    tiu = [r for r in m0.records(m0.groups()[0]) if r.engine == "tiu"]
    t = next(k for k in range(2, len(tiu)) if tiu[k - 1].kind == "conv.normal") + 1     # after the first conv
    conv = tiu[t - 2].fields
    c, h, w = conv["res0_c"], conv["res0_h"], conv["res0_w"]
    out = tmp_path / "cut.bmodel"
    probe.cut(SOUND, out, t, f"{conv['res0_addr']:#x},{c},{h},{w},0,0x1000")
    x = {i.name: np.ones(i.shape, i.dtype) for i in m0.nets[0].stages[0].inputs}
    m, sim = _run(out, x)
    st = m.nets[0].stages[0]
    counts = {e: sum(r.engine == e for r in m.records(m.groups()[0])) for e in ("tiu", "gdma")}
    assert counts["tiu"] == t and st.outputs[0].address == st.neuron.address
    assert int(np.prod(st.outputs[0].shape)) * np.dtype(st.outputs[0].dtype).itemsize == st.neuron.size
    lane = sim.lmem.lane_size
    slot = -(-(h * w) // 64) * 64
    dumped = np.frombuffer(sim.gmem_read(st.neuron.address + 0x1000, c * h * w), np.uint8).reshape(c, h * w)
    for ch in range(c):
        local = np.frombuffer(sim.lmem_read((ch % sim.npu_num) * lane + conv["res0_addr"] + ch // sim.npu_num * slot,
                                            h * w), np.uint8)
        np.testing.assert_array_equal(dumped[ch], local)


def test_one_command_runs_on_the_lane_bytes_loaded_from_the_input(tmp_path):
    m0 = bmk.load_model(str(SOUND))
    t = next(k for k, r in enumerate(r for r in m0.records(m0.groups()[0]) if r.engine == "tiu")
             if r.kind.startswith("arith.") and r.kind != "arith.copy") + 1      # reads no TIU register
    out = tmp_path / "one.bmodel"
    rec = probe.one(YOLO, out, f"{SOUND}:{t}", "{}", ["0x0,0x8000,0"], "0x8000,0x8000,0x10000")
    base = bmk.load_model(str(YOLO)).nets[0].stages[0].inputs[0]
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, base.shape).astype(base.dtype)
    m, sim = _run(out, {base.name: x})
    npu = sim.npu_num
    assert [r.kind for r in m.records(m.groups()[0]) if r.engine == "tiu"] == [rec.kind, "sys.end"]
    fresh = bmk.Simulator("cv184x")
    lane = fresh.lmem.lane_size
    raw = x.reshape(-1).view(np.uint8)[:npu * 0x8000].reshape(npu, 0x8000)
    for c in range(npu):
        fresh.lmem_write(c * lane, raw[c].tobytes())
    fresh.run([Record("tiu", rec.cls, rec.kind, dict(rec.fields, cmd_id_dep=0))])
    st = m.nets[0].stages[0]
    got = np.frombuffer(sim.gmem_read(st.neuron.address + 0x10000, npu * 0x8000), np.uint8).reshape(npu, 0x8000)
    for c in range(npu):
        np.testing.assert_array_equal(got[c], np.frombuffer(fresh.lmem_read(c * lane + 0x8000, 0x8000), np.uint8))

