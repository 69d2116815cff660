"""bmk check / bmk.check (issue 27.1): every refusal of the simulator, found without running,
grouped by kind, field and value; m.run refuses with the same facts before any work."""
import json

import attrs

import numpy as np
import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import bmk as bmk_cmd
from bmk.sim.bm1684x import EXECUTES
from bmk.sim.bm1684x.fields import head
from tests.models import files as F

CHIP = "bm1684x"


def _unexecuted(spec, rec):
    """A field of rec's class its kind does not execute (so any value but 0 is refused)."""
    cls = spec.engine(rec.engine).cls(rec.cls)
    done = EXECUTES[(rec.engine, rec.kind)]
    return next((f for f in cls.fields if not f.reserved and f.name not in head(spec, rec.engine) and f.name not in done
                 and f.name in rec.fields and f.max >= 1), None)


def three_refusals():
    """The yolov5s BM1684X streams with three commands of three kinds each setting one field
    their kind does not execute: (streams, [(kind, field, value, engine, index)])."""
    from bmk.isa import load_chip
    spec = load_chip(CHIP)
    m = bmk.load_model(F.YOLO_1684X)
    records = list(m.records(m.groups()[0]))
    picked, kinds, position = [], set(), {}
    for i, r in enumerate(records):
        index = position[r.engine] = position.get(r.engine, -1) + 1
        if r.kind in kinds or len(picked) == 3 or (r.engine, r.kind) not in EXECUTES:
            continue
        field = _unexecuted(spec, r)
        if field is None:
            continue
        records[i] = attrs.evolve(r, fields=dict(r.fields, **{field.name: 1}))
        kinds.add(r.kind)
        picked.append((f"{r.engine}.{r.kind}", field.name, 1, r.engine, index))
    return bmk.encode(CHIP, records, raw=True), picked


def test_a_stream_with_three_refusals_lists_all_three(tmp_path):
    streams, picked = three_refusals()
    findings = bmk.check(streams, chip=CHIP)
    got = sorted((f.kind, f.field, f.value, f.engine, f.index, f.count) for f in findings)
    assert got == sorted(p + (1,) for p in picked)
    assert all(f.reason.startswith(f"{f.kind.split('.', 1)[1]} (") and f"{f.field} must be 0" in f.reason
               for f in findings)
    # the same through the command line, from the raw stream files
    for engine, data in streams.items():
        (tmp_path / f"{engine}.bin").write_bytes(data)
    argv = ["check", "--chip", CHIP]
    for engine in streams:
        argv += ["--raw", engine, str(tmp_path / f"{engine}.bin")]
    res = CliRunner().invoke(bmk_cmd, argv + ["--json"])
    assert res.exit_code == 1, res.output
    [report] = json.loads(res.output)
    assert report["runs"] is False and len(report["findings"]) == 3
    assert sorted((d["kind"], d["field"], d["value"], d["engine"], d["index"]) for d in report["findings"]) \
        == sorted(picked)
    text = CliRunner().invoke(bmk_cmd, argv).output.splitlines()
    assert text[0].endswith("3 cannot be simulated, 3 refusals")
    for kind, field, value, engine, index in picked:
        assert any(line.split()[:4] == ["1", kind, field, "="] and f"{engine} #{index}" in line for line in text)


def test_a_simulator_run_refuses_the_first_finding():
    streams, picked = three_refusals()
    first = bmk.check(streams, chip=CHIP)[0]
    with pytest.raises(bmk.SimulationError) as e:
        bmk.Simulator(CHIP).run(streams)
    assert (e.value.field, e.value.value) == (first.field, first.value) and first.reason in str(e.value)


def test_models_that_run_check_clean():
    res = CliRunner().invoke(bmk_cmd, ["check", str(F.RETINAFACE), str(F.YUV2RGB), str(F.YOLO_1684X)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        f"{F.RETINAFACE}: bm1684 model, 3925 instructions: every one can be simulated",
        f"{F.YUV2RGB}: bm1684x model, 101 instructions: every one can be simulated",
        f"{F.YOLO_1684X}: bm1684x model, 572 instructions: every one can be simulated"]
    assert bmk.check(str(F.FACE_DETECTION)) == []


def test_a_kind_without_semantics_is_one_finding_and_what_run_says(monkeypatch):
    from tests.models.test_run import without_trans
    without_trans(monkeypatch)
    m = bmk.load_model(F.FACE_DETECTION)
    [f] = bmk.check(m)
    assert (f.kind, f.field, f.count, f.group, f.engine) == ("gdma.dma.trans", None, 6,
                                                              "net0/stage0/subnet0/core0/group0", "gdma")
    with pytest.raises(bmk.ModelError) as e:
        m.run({"data": np.zeros((1, 3, 320, 320), np.float32)})
    assert str(e.value) == f"{F.FACE_DETECTION}: run: 6 instructions cannot be simulated; the first: {f.line()}; " \
                           "nothing was run"
    assert f.line().startswith("gdma.dma.trans: gdma kind 'dma.trans' must have simulator semantics")
    assert f.line().endswith(f"(6 instructions, first net0/stage0/subnet0/core0/group0 gdma #{f.index} "
                             f"(byte {f.offset}))")


def test_a_chip_without_a_simulator_is_one_finding(monkeypatch):
    """Every chip bmk decodes simulates now: bm1690's simulator is hidden to see the finding."""
    from bmk.sim import semantics
    monkeypatch.setattr(semantics, "simulated_chips", lambda: ["bm1684x"])
    [f] = bmk.check(F.YOLO_1690)
    assert (f.kind, f.field, f.value) == ("model", "chip", "bm1690")
    assert "chip bm1690 has no simulator" in f.reason
    res = CliRunner().invoke(bmk_cmd, ["check", str(F.YOLO_1690)])
    assert res.exit_code == 1 and "model chip = 'bm1690'" in res.output


def test_bad_input_is_exit_2_and_one_line(tmp_path):
    bad = tmp_path / "cut.bmodel"
    bad.write_bytes(F.YUV2RGB.read_bytes()[:1000])
    res = CliRunner().invoke(bmk_cmd, ["check", str(bad)])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and str(bad) in res.stderr
    res = CliRunner().invoke(bmk_cmd, ["check", str(bad), str(F.YUV2RGB), str(bad)])
    assert res.exit_code == 2 and res.stderr.count("\n") == 2     # each bad file a line; the good one checked
    assert res.stdout == f"{F.YUV2RGB}: bm1684x model, 101 instructions: every one can be simulated\n"
    res = CliRunner().invoke(bmk_cmd, ["check"])
    assert res.exit_code == 2 and "missing MODEL|FILE" in res.stderr
    with pytest.raises(bmk.ArgumentError, match="check: chip must be a chip name"):
        bmk.check(b"\0" * 16)


def test_bmk_run_names_a_refused_instruction_where_the_user_wrote_it(tmp_path):
    """Issue 32.10: bmk-run bad.s / --raw named `instruction 5 (byte 456, tiu)`, an offset in an
    internal re-encoding; it names the listing's line or the stream file's byte."""
    streams, picked = three_refusals()
    for engine, data in streams.items():
        (tmp_path / f"bad.{engine}.bin").write_bytes(data)
    raw = []
    for engine in streams:
        raw += ["--raw", engine, str(tmp_path / f"bad.{engine}.bin")]
    runner = CliRunner()
    res = runner.invoke(bmk_cmd, ["run", "--chip", CHIP] + raw)
    first = bmk.check(streams, chip=CHIP)[0]
    assert res.exit_code == 2 and res.stderr == (f"bmk: {tmp_path / 'bad.tiu.bin'}: tiu stream byte {first.offset}: "
                                                 f"{first.reason}\n")
    listing = tmp_path / "bad.s"
    assert runner.invoke(bmk_cmd, ["disasm", "--chip", CHIP, "-o", str(listing)] + raw).exit_code == 0
    line = next(k for k, text in enumerate(listing.read_text().splitlines(), 1)
                if f"{first.kind} " in text and f"{first.field}=" in text)
    res = runner.invoke(bmk_cmd, ["run", str(listing)])
    assert res.exit_code == 2 and res.stderr == f"bmk: {listing}:{line}: {first.reason}\n"
    assert f"{first.kind.split('.', 1)[1]} (" in first.reason and res.stderr.count(first.kind.split(".", 1)[1]) == 2
