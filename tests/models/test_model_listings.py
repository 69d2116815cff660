"""A model's listing (issue 23 items 2 and 4): `bmk-disasm MODEL | bmk-asm --dir DIR` gives back
every group's bytes as `bmk extract` writes them (one listing per core: each core's group is
its own `.group` section), the listing reads back as itself, and bmk-diff pairs its groups
(cores) by label with a model's or another listing's."""
import re

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import asm, bmk as bmk_cmd, diff, disasm
from bmk.models.chips import decodable
from tests.models import files as F

DECODABLE = [p for p in F.ALL if decodable(bmk.load_model(p).chip)]


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


@pytest.mark.parametrize("path", DECODABLE, ids=lambda p: p.name)
def test_model_listing_assembles_back_into_every_group(runner, path):
    res = runner.invoke(disasm, [str(path), "-o", "m.s"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(asm, ["m.s", "--dir", "asm"])
    assert res.exit_code == 0, res.output
    assert runner.invoke(bmk_cmd, ["extract", str(path), "-o", "ext"]).exit_code == 0
    m = bmk.load_model(path)
    for g in m.groups():
        stem = g.label.replace("/", ".")
        parts = {"cmdbuf": g.cmdbuf} if g.cmdbuf is not None else g.streams
        for engine, data in parts.items():
            name = f"{stem}.{engine}.bin"
            assert open(f"asm/{name}", "rb").read() == data == open(f"ext/{name}", "rb").read(), name


def test_listing_per_core_with_messages_and_opaque_streams(runner):
    res = runner.invoke(disasm, [str(F.YOLO_1690)])
    lines = res.output.splitlines()
    assert lines[0] == ".chip bm1690"
    groups = [line for line in lines if line.startswith(".group ")]
    assert groups == [f".group net0/stage0/subnet0/core{c}/group0" for c in range(8)]
    assert lines[1] == f"# {F.YOLO_1690} net0/stage0/subnet0/core0/group0: tiu 1277, gdma 356, sdma 121, hau ?"
    first = lines[3]
    assert first.split()[2:] == ["tiu.system.send_msg", "id=1", "wait.gdma=0", "send.msg=48", "msg.count=32",
                                 "tsk_typ=SYS"]
    hau = [line for line in lines if " hau.data " in line]
    assert len(hau) == 8 and all(" size=9600 hex=" in line for line in hau)


def test_listing_reads_back_as_itself_and_diffs_by_label(runner):
    assert runner.invoke(disasm, [str(F.YOLO_1688_CORE2), "-o", "m.s"]).exit_code == 0
    res = runner.invoke(disasm, ["m.s", "-o", "again.s"])
    assert res.exit_code == 0, res.output
    def strip(path):          # the same lines; only the location column differs (text has no streams)
        return [re.sub(r"^\s*\d+ @\S+\s+", "", line) for line in open(path) if not line.startswith("#")]
    assert strip("again.s") == strip("m.s")
    assert runner.invoke(diff, ["m.s", str(F.YOLO_1688_CORE2)]).exit_code == 0
    assert runner.invoke(diff, ["m.s", "again.s"]).exit_code == 0
    text = open("m.s").read().splitlines()
    core1 = text.index(".group net0/stage0/subnet0/core1/group0")
    line = next(i for i in range(core1, len(text)) if " gdma.dma.tensor " in text[i])
    text[line] = text[line].replace(" src_nsize=1", " src_nsize=2", 1)
    open("edited.s", "w").write("\n".join(text) + "\n")
    res = runner.invoke(diff, [str(F.YOLO_1688_CORE2), "edited.s"])
    assert res.exit_code == 1, res.output
    out = res.output.splitlines()
    assert "net0/stage0/subnet0/core0/group0: equal (494 instructions)" in out
    assert "net0/stage0/subnet0/core1/group0: 1 changed, 0 inserted, 0 deleted; 102 equal" in out
    assert "      src_nsize: 1 -> 2" in out
    res = runner.invoke(diff, [str(F.YOLO_1688), "edited.s"])        # one core against two
    assert res.exit_code == 1 and "net0/stage0/subnet0/core1/group0: only in B" in res.output


def test_a_listing_of_several_groups_needs_dir(runner):
    assert runner.invoke(disasm, [str(F.RESNET_1688), "-o", "m.s"]).exit_code == 0
    res = runner.invoke(asm, ["m.s", "-o", "x.bin"])
    assert res.exit_code == 2 and "a listing of several command groups (.group lines): write them with --dir DIR" \
        in res.stderr
    text = open("m.s").read()
    open("ids.s", "w").write(text.replace("id=3 ", "id=4 ", 1))
    res = runner.invoke(asm, ["ids.s", "--dir", "d"])
    assert res.exit_code == 2
    assert ("ids are implicit (a command's id is its position in its stream), and this is gdma command 3 of group "
            "net0/stage0/subnet0/core0/group0; drop id= or renumber") in res.stderr
