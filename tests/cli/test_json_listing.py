"""--json for bmk chips, bmk-disasm and bmk-asm (issue 32 item 16): the tables and listings as
data, and a JSON listing assembles back to the same bytes."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.chipinfo import chip_rows
from bmk.cli.main import asm, bmk as bmk_cli, disasm
from bmk.isa import chips

TESTS = Path(__file__).resolve().parents[1]
YOLO = TESTS / "golden" / "bm1684x" / "yolov5s_bm1684x_int8_sym"
MODEL = TESTS / "models" / "bm1684x" / "yolov5s_bm1684x_int8_sym.bmodel"


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_chips_json_is_the_table(runner):
    res = runner.invoke(bmk_cli, ["chips", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert list(data) == list(chips()) and data == {name: caps for name, caps in chip_rows()}
    assert data["bm1684x"]["simulate"].startswith("yes") and data["bm1688"]["encode API"].startswith("no")


def test_raw_streams_json_round_trip(runner):
    args = ["--chip", "bm1684x", "--raw", "tiu", f"{YOLO}.tiu.bin", "--raw", "gdma", f"{YOLO}.gdma.bin"]
    res = runner.invoke(disasm, args + ["--json", "-o", "y.json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(Path("y.json").read_text())
    streams = {e: (YOLO.parent / f"{YOLO.name}.{e}.bin").read_bytes() for e in ("tiu", "gdma")}
    recs = bmk.decode("bm1684x", streams)
    assert doc["chip"] == "bm1684x" and len(doc["instructions"]) == len(recs) == 572
    for k in (0, 1, 300, 571):
        obj, rec = doc["instructions"][k], recs[k]
        assert (obj["index"], obj["engine"], obj["class"], obj["kind"]) == (k, rec.engine, rec.cls, rec.kind)
        assert obj["fields"] == rec.fields and obj["header"] == rec.header
    res = runner.invoke(asm, ["--json", "y.json", "--raw", "tiu", "o.tiu", "--raw", "gdma", "o.gdma"])
    assert res.exit_code == 0, res.output
    assert Path("o.tiu").read_bytes() == streams["tiu"] and Path("o.gdma").read_bytes() == streams["gdma"]


def test_cmdbuf_and_model_group_json_round_trip(runner):
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    s = bm1880.shape_t4(1, 32, 8, 8)
    a, b, r = (ctx.tl_prealloc(la, s, FMT_I8) for la in (0, 64, 128))
    ctx.gdma_load(a, 0x1000, CTRL_NULL)
    ctx.tpu_mul(res_high=None, res_low=r, a=a, b=b, rshift_width=2)
    buf = ctx.acquire_cmdbuf()
    Path("k.bin").write_bytes(buf)
    assert runner.invoke(disasm, ["k.bin", "--json", "-o", "k.json"]).exit_code == 0
    res = runner.invoke(asm, ["--json", "k.json", "-o", "k2.bin"])
    assert res.exit_code == 0, res.output
    assert Path("k2.bin").read_bytes() == buf
    m = bmk.load_model(MODEL)
    g = m.groups()[0]
    assert runner.invoke(disasm, [str(MODEL), "--json", "-o", "m.json"]).exit_code == 0
    doc = json.loads(Path("m.json").read_text())
    assert {o["group"] for o in doc["instructions"]} == {x.label for x in m.groups()}
    res = runner.invoke(disasm, [str(MODEL), "--json", "--group", g.label, "-o", "g.json"])
    assert res.exit_code == 0, res.output
    outs = sum((["--raw", e, f"g.{e}"] for e in g.streams), [])
    res = runner.invoke(asm, ["--json", "g.json"] + outs)
    assert res.exit_code == 0, res.output
    for e, data in g.streams.items():
        assert Path(f"g.{e}").read_bytes() == bytes(data), e


def test_bad_json_listing_is_one_line_naming_the_instruction(runner):
    args = ["--chip", "bm1684x", "--raw", "tiu", f"{YOLO}.tiu.bin"]
    assert runner.invoke(disasm, args + ["--json", "-o", "y.json"]).exit_code == 0
    doc = json.loads(Path("y.json").read_text())
    first = next(iter(doc["instructions"][3]["fields"]))
    cases = [
        (lambda d: d["instructions"][3]["fields"].update({first: -1}), f"instructions[3]: fields.{first} must be"),
        (lambda d: d["instructions"][5]["fields"].update(nosuch=1), "instructions[5]: tiu "),
        (lambda d: d["instructions"][0].update(engine="npu"), "instructions[0]: engine must be one of"),
        (lambda d: d["instructions"][2].update({"class": "X"}), "instructions[2]: class must be one of"),
        (lambda d: d.update(chip="bm9999"), "bm9999"),
        (lambda d: d.pop("instructions"), "document: must be"),
    ]
    for change, want in cases:
        bad = json.loads(json.dumps(doc))
        change(bad)
        Path("bad.json").write_text(json.dumps(bad))
        res = runner.invoke(asm, ["--json", "bad.json", "--raw", "tiu", "o.tiu"])
        assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, (want, res.output)
        assert want in res.stderr and "bad.json" in res.stderr, (want, res.stderr)
        assert not Path("o.tiu").exists()
    Path("bad.json").write_text("{\n  nope")
    res = runner.invoke(asm, ["--json", "bad.json", "-o", "o.bin"])
    assert res.exit_code == 2 and "bad.json:2: not JSON" in res.stderr, res.output
