"""`bmk time` and `bmk profile` (issue 31), and the timeline sharing the simulator's cost model
and scheduler: the same start and end for every instruction."""
import json
import pathlib

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import bmk as cli
from tests.goldens import golden
from tests.perf import DATA, STREAMS as PERF_STREAMS

# --streams CORE ENGINE FILE of every core's streams
STREAMS = [(str(core), engine, name) for core, pair in enumerate(PERF_STREAMS)
           for engine, name in zip(("tiu", "gdma"), pair)]
YOLO_1684X = pathlib.Path(__file__).parent.parent / "golden" / "bm1684x" / "yolov5s_bm1684x_int8_sym."


def streams_args():
    out = []
    for core, engine, name in STREAMS:
        out += ["--streams", core, engine, str(DATA / name)]
    return out


@pytest.mark.parametrize("name", ["sched_add_dependency_parallel", "sched_parallel_seed_example",
                                  "sched_two_streams_seed_example", "sched_serial_load_load_add_store"])
def test_timeline_is_the_simulators_schedule_bm1880(name):
    buf = golden(name)
    report = bmk.Simulator("bm1880").run(buf, races=False)
    want = sorted((i.engine, i.start, i.end) for i in report.instructions)
    assert want and sorted((e.engine, e.start, e.end) for e in bmk.timeline("bm1880", buf)) == want


def test_timeline_is_the_simulators_schedule_bm1684x_model_streams():
    streams = {e: (pathlib.Path(str(YOLO_1684X) + f"{e}.bin")).read_bytes() for e in ("tiu", "gdma")}
    report = bmk.Simulator("bm1684x").run(streams, races=False)
    tl = bmk.timeline("bm1684x", streams)
    assert len(tl) == 572
    assert sorted((e.engine, e.start, e.end) for e in tl) == sorted((i.engine, i.start, i.end)
                                                                   for i in report.instructions)


def test_timeline_is_the_simulators_schedule_cv184x_model():
    """CV184X's waits carry bit 20 over the id (wait mask 0xFFFFF): a wait on id 0 is none. The
    timeline once took it for the other engine's last command, and every CV184X model deadlocked."""
    from tests.models.files import BABY_CRY_184X
    m = bmk.load_model(BABY_CRY_184X)
    group = m.nets[0].stages[0].subnets[0].groups[0]
    report = bmk.Simulator("cv184x").run(group.streams, races=False)
    tl = bmk.timeline("cv184x", group)
    assert len(tl) == 138
    assert sorted((e.engine, e.start, e.end) for e in tl) == sorted((i.engine, i.start, i.end)
                                                                   for i in report.instructions)
    res = CliRunner().invoke(cli, ["time", str(BABY_CRY_184X)])
    assert res.exit_code == 0, res.output
    assert "138 commands" in res.output


def test_bmk_time_streams_and_trace(tmp_path):
    out = tmp_path / "t.json"
    res = CliRunner().invoke(cli, ["time", "--chip", "bm1688", *streams_args(), "--per-kind", "--trace", str(out)])
    assert res.exit_code == 0, res.output
    assert "497 commands, span" in res.output and "core 1: busy" in res.output and "conv.normal" in res.output
    events = json.loads(out.read_text())["traceEvents"]
    xs = [e for e in events if e["ph"] == "X"]
    assert len(xs) == 497 and {e["pid"] for e in xs} == {0, 1}
    assert {e["tid"] for e in xs} == {0, 1, 2, 3}
    names = [e["args"]["name"] for e in events if e["name"] == "process_name"]
    assert names == ["bm1688 core 0", "bm1688 core 1"]


def test_bmk_profile_table_figures_and_measured_trace(tmp_path):
    out = tmp_path / "p.json"
    res = CliRunner().invoke(cli, ["profile", str(DATA / "iter0.profile"), *streams_args(), "--net-stat",
                                   str(DATA / "net_stat.sim"), "--layers", str(DATA / "global.profile"),
                                   "--trace", str(out)])
    assert res.exit_code == 0, res.output
    assert "times the chip measured" in res.output
    assert "core 0 TIU span: measured 1958442, bmk" in res.output
    row = next(line for line in res.output.splitlines() if line.startswith("tiu    conv.normal"))
    assert row.split()[2:4] == ["62", "1243047"]             # 53 + 9 convolutions, their measured cycles
    conv = next(line for line in res.output.splitlines() if line.strip().startswith("Conv2D_18 "))
    # sys_tr_wr, then the first conv once its loads are in: busy 4 + 312,030 cycles at 900 MHz = 346.7 us,
    # window 11,169 cycles more (the TIU waiting for the loads)
    assert conv.split()[1:6] == ["2", "359.1", "us", "346.7", "us"]
    xs = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 471                                     # every measured command, none of the system ones
    first = next(e for e in xs if e["pid"] == 0 and e["name"] == "conv.normal")
    assert first["args"]["cycles"] == 312030 and first["dur"] == pytest.approx(312030 / 900)


def test_bmk_time_on_a_model(tmp_path):
    from tests.models import files as F
    res = CliRunner().invoke(cli, ["time", str(F.YOLO_1688_CORE2), "--per-layer"])
    assert res.exit_code == 0, res.output
    assert "bm1688 model" in res.output and "597 commands" in res.output
    assert "per layer: the input maps no command to a layer" in res.output


@pytest.mark.parametrize("args, words", [
    (["profile", "{DATA}/net_stat.sim", "--streams", "0", "tiu", "{DATA}/cmd_125ada000_0_0.dat"],
     ["net_stat.sim: byte 0"]),
    (["time", "--chip", "bm1688", "--streams", "0", "npu", "{DATA}/cmd_125ada000_0_0.dat"],
     ["--streams", "'npu'"]),
    (["time", "--streams", "0", "tiu", "{DATA}/cmd_125ada000_0_0.dat"], ["--chip"]),
    (["time", "--chip", "cv183x", "--raw", "tiu", "{DATA}/cmd_125ada000_0_0.dat"], []),
    (["time", "--chip", "bm9999", "--raw", "tiu", "{DATA}/cmd_125ada000_0_0.dat"], ["bm9999"]),
    (["profile", "{DATA}/iter0.profile", "--streams", "0", "tiu", "{DATA}/cmd_125ade000_0_1.dat"],
     ["cmd_125ade000_0_1.dat: byte 3200"]),              # a GDMA stream given as TIU
])
def test_bad_input_is_one_line_exit_2(args, words):
    args = [a.replace("{DATA}", str(DATA)) for a in args]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines


def test_bmk_chips_says_whether_each_cost_model_is_checked_against_hardware():
    res = CliRunner().invoke(cli, ["chips"])
    assert res.exit_code == 0, res.output
    rows = {}
    chip = None
    for line in res.output.splitlines():
        if not line.startswith(" "):
            chip = line.strip()
        elif line.split()[0] == "time":
            rows[chip] = line.split(None, 1)[1]
    assert rows["bm1688"].startswith("yes, checked against hardware: BM1688 measured cycles")
    for name in ("bm1684x", "bm1684", "bm1880"):
        assert rows[name].startswith("yes, not checked against hardware"), name
    assert "net_stat.sim" in rows["bm1684x"]
    assert rows["bm1690"].startswith("yes, not checked against hardware: BM1684X's formulas")
