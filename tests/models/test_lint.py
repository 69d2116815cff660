"""bmk lint / bmk.lint (bmk/models/lint.py): mutated copies of a real model are each caught by one
finding, the tests' real models lint as expected, and the CLI's report, --json and exit codes.

Mutations of tests/models/bm1688/yolov5s_bm1688_int8_sym_core2.bmodel (a two-core BM1688 yolov5s):
its chip string made CV186X (a one-core product), a message send removed (made a nop), a command
stream moved onto another's bytes, an input tensor's shape changed.
"""
import json
import struct

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import bmk as bmk_cmd
from bmk.models.lint import lint
from tests.models import files as F

SOURCE = F.YOLO_1688_CORE2


def _read(data, name="mutant.bmodel"):
    return bmk.models.read_model(data, name)


def _findings(data):
    return [(f.rule, f.group, f.engine, f.index) for f in lint(_read(data))]


def test_the_source_is_clean():
    assert lint(bmk.load_model(SOURCE)) == []


def test_two_cores_on_a_one_core_chip():
    data = SOURCE.read_bytes()
    assert data.count(b"BM1688") == 1
    found = lint(_read(data.replace(b"BM1688", b"CV186X")))
    assert [(f.rule, f.group) for f in found] == [("cores", "net0/stage0")]
    assert found[0].why == "the stage needs 2 cores, the CV186X has 1"


def test_a_send_removed():
    data = bytearray(SOURCE.read_bytes())
    m = _read(bytes(data))
    g = [g for g in m.groups() if g.core == 1][0]
    recs = [r for r in m.records(g) if r.engine == "gdma"]
    i = next(i for i, r in enumerate(recs) if r.kind == "dma.sys.sys_send")
    sent = recs[i]
    nop = type(sent)(sent.engine, sent.cls, "dma.sys.nop", {**sent.fields, "cmd_special_function": 1})
    stream = bmk.encode("bm1688", recs[:i] + [nop] + recs[i + 1:], raw=True)["gdma"]
    blob = g.parts["gdma"]
    assert len(stream) == blob.size and stream != blob.read(data)
    data[blob.offset:blob.offset + blob.size] = stream
    found = lint(_read(bytes(data)))
    assert [(f.rule, f.group, f.engine) for f in found] == [("message", g.label, "gdma")]
    # the wait that lost its partner: the first wait on the id after the removed send
    assert found[0].index == i + 1 and "1 sends" in found[0].why


def test_a_command_stream_moved_outside_its_region():
    data = SOURCE.read_bytes()
    m = _read(data)
    g0, g1 = (g for g in m.groups())
    base = g0.parts["tiu"].offset                       # the binary area starts at the first stream
    old = struct.pack("<QQ", g1.parts["gdma"].offset - base, g1.parts["gdma"].size)
    assert data.count(old) == 1
    moved = data.replace(old, struct.pack("<QQ", g0.parts["tiu"].offset - base, g1.parts["gdma"].size))
    found = lint(_read(moved))
    assert [(f.rule, f.group, f.engine) for f in found] == [("region", g1.label, "gdma")]
    assert "overlaps net0/stage0/subnet0/core0/group0 tiu" in found[0].why


def test_a_tensor_shape_changed():
    data = SOURCE.read_bytes()
    m = _read(data)
    t = m.nets[0].stages[0].inputs[0]
    assert t.shape == (1, 3, 640, 640)
    old = struct.pack("<4Q", *t.shape)
    # the stage's input and its subnet's each carry the shape: change the stage's
    at = [k for k in range(len(data)) if data.startswith(old, k)]
    assert len(at) == 2
    changed = next(c for c in (data[:k] + struct.pack("<4Q", 1, 3, 320, 640) + data[k + 32:] for k in at)
                   if _read(c).nets[0].stages[0].inputs[0].shape == (1, 3, 320, 640))
    found = lint(_read(changed))
    assert [(f.rule, f.group) for f in found] == [("tensor", "net0/stage0")]
    assert found[0].why == f"input 'images': shape (1, 3, 320, 640) 1N uint8 takes 614400 bytes, its size field says " \
                           f"{t.size}"


# Real models: clean, but for the BM1684 files whose output buffers are kept for a larger shape.
KEPT_LARGER = {F.FACE_DETECTION: 3, F.FACE_INT8: 4, F.RETINAFACE: 2}


@pytest.mark.parametrize("path", F.ALL, ids=lambda p: p.name)
def test_the_tests_models_lint_as_expected(path):
    """The f8e5m2 resnet50's waits carry bit 16 (its build's 16-bit ids, bmk/models/decoding.py
    model_spec): clean, as every other file."""
    found = lint(bmk.load_model(path))
    assert [f.rule for f in found] == ["tensor"] * KEPT_LARGER.get(path, 0)


def test_the_older_builds_waits_read_with_the_chips_mask_are_dependency_findings():
    """Read with BM1690's 20-bit mask instead, two of the f8e5m2 build's waits (65536, 65537) name
    commands its group never issues: what the older mask is for."""
    from bmk.isa import load_chip
    m = bmk.load_model(F.RESNET_1690_F8)
    m.kept[("model_spec", "bm1690")] = load_chip("bm1690")
    assert [f.rule for f in lint(m)] == ["dependency", "dependency"]


def test_the_cli_exit_codes_and_json(tmp_path):
    bad = tmp_path / "cv186x.bmodel"
    bad.write_bytes(SOURCE.read_bytes().replace(b"BM1688", b"CV186X"))
    runner = CliRunner()
    res = runner.invoke(bmk_cmd, ["lint", str(SOURCE)])
    assert res.exit_code == 0 and res.output.endswith(": clean\n")
    res = runner.invoke(bmk_cmd, ["lint", str(bad)])
    assert res.exit_code == 1
    assert res.output.splitlines()[1].split() == ["cores", "net0/stage0", "the", "stage", "needs", "2", "cores,",
                                                  "the", "CV186X", "has", "1"]
    res = runner.invoke(bmk_cmd, ["lint", "--json", str(SOURCE), str(bad)])
    got = json.loads(res.output)
    assert res.exit_code == 1 and [r["clean"] for r in got] == [True, False]
    assert got[1]["findings"][0] == {"rule": "cores", "group": "net0/stage0", "engine": None, "index": None,
                                     "why": "the stage needs 2 cores, the CV186X has 1"}
    assert got[0]["version"] == "2.2" and got[0]["time"] == "Mon Oct  9 10:41:03 2023"
    junk = tmp_path / "junk.bmodel"
    junk.write_bytes(SOURCE.read_bytes()[:100])
    res = runner.invoke(bmk_cmd, ["lint", str(junk)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "junk.bmodel" in res.output
