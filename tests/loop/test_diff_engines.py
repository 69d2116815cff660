"""Issue 22.2: bmk-diff compares each engine's order on its own (the default when either side is
raw streams) and reports changes of what an instruction waits for apart; field names are the
disassembly's; equal programs are said to be equal; a swapped --raw file is an error."""
import json

import pytest
from click.testing import CliRunner

from bmk.cli.main import diff
from bmk.text import diff as diffing
from bmk.text import loading
from tests.loop.kernels import double_buffered


def streams_listing(ctx, name):
    return loading.load_streams(ctx.acquire_streams(), None, name)


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def write(ctx, name):
        open(f"{name}.cmdbuf", "wb").write(ctx.acquire_cmdbuf())
        for engine, data in ctx.acquire_streams().items():
            open(f"{name}.{engine}.bin", "wb").write(data)
        return f"{name}.cmdbuf", f"tiu={name}.tiu.bin,gdma={name}.gdma.bin"
    return write


def run(*args):
    return CliRunner().invoke(diff, list(args))


def test_a_program_equals_its_own_streams(files):
    buf, raw = files(double_buffered(), "k")
    res = run(buf, raw, "--chip", "bm1684")
    assert res.exit_code == 0, res.output
    assert res.output == f"{buf} and {raw} are equal (9 instructions in each engine's order)\n"
    res = run(buf, raw, "--chip", "bm1684", "--order", "program")        # the one order: another valid merge
    assert res.exit_code == 1 and "0 changed, 2 inserted, 2 deleted; 7 equal" in res.output


def test_ignore_sync_of_equal_programs_says_equal(files):
    buf, raw = files(double_buffered(), "k")
    for a, b in ((buf, buf), (buf, raw)):
        res = run(a, b, "--chip", "bm1684", "--ignore", "sync")
        assert res.exit_code == 0 and res.output.startswith(f"{a} and {b} are equal (9 instructions"), res.output


def test_an_inserted_load_is_one_insertion_and_one_dependency(files):
    a = streams_listing(double_buffered(), "A")
    b = streams_listing(double_buffered(extra_load=True), "B")
    d = diffing.diff_listings(a, b)
    assert d.order == "engine" and d.counts() == {"changed": 0, "inserted": 1, "deleted": 0, "dependencies": 1,
                                                  "equal": 9}
    lines = d.to_text().splitlines()
    assert lines[2] == "+ B#1 (B:gdma: gdma stream byte 128)"
    assert lines[4:] == [
        "cross-engine dependencies (what each instruction waits for, A -> B):",
        "! A#1 B#2 tiu.arith.max waits for gdma: A#0 gdma.dma.tensor (B#0) -> B#1 gdma.dma.tensor",
        "A and B differ in each engine's order: 0 changed, 1 inserted, 0 deleted, 1 dependency changed; 9 equal"]
    # the ids after the insertion all moved, yet no instruction shows as changed for it
    assert all(e.op == "inserted" for e in d.entries)


def test_a_lost_overlap_is_a_dependency_change_only():
    a = streams_listing(double_buffered(), "A")
    b = streams_listing(double_buffered(parallel=False), "B")
    d = diffing.diff_listings(a, b)
    assert not d.entries and not d.equal
    assert [d.dependency_text(x) for x in d.dependencies] == [
        "! A#1 B#2 tiu.arith.max waits for gdma: A#0 gdma.dma.tensor (B#0) -> B#1 gdma.dma.tensor",
        "! A#4 B#5 tiu.arith.max waits for gdma: A#3 gdma.dma.tensor (B#3) -> B#4 gdma.dma.tensor"]
    assert diffing.diff_listings(a, b, ["wait"]).equal           # --ignore wait: dependencies are not compared
    j = diffing.diff_listings(a, b).to_dict()
    assert j["order"] == "engine" and j["dependencies"][0]["a_target"] == 0 and j["dependencies"][0]["b_target"] == 1


def test_changed_pairs_stay_within_an_engine_stream_and_fields_use_disassembly_names(files):
    ka, _ = files(double_buffered(), "a")
    kb, rawb = files(double_buffered(relu_at={1: 0x100}), "b")
    res = run(ka, rawb, "--chip", "bm1684")
    assert res.exit_code == 1
    assert "~ A#5 B#4 tiu.arith.max (a.cmdbuf: byte 680 | b.tiu.bin: tiu stream byte 128)" in res.output
    assert "    opd0_addr: lmem:0x8000(npu0+0x8000) -> lmem:0x100(npu0+0x100)" in res.output
    # program order: a sync field is named as the disassembly names it
    a = loading.load(double_buffered().acquire_cmdbuf(), None, "A")
    b = loading.load(double_buffered(parallel=False).acquire_cmdbuf(), None, "B")
    text = diffing.diff_listings(a, b).to_text()
    assert "    wait.gdma: 1 -> 2" in text and "cmd_id_gdma" not in text
    assert "eng0_sync_id" not in text
    assert diffing.diff_listings(a, b, ["wait.gdma", "wait.tiu"]).equal


def test_json_of_an_engine_order_diff(files):
    _, raw = files(double_buffered(), "a")
    _, rawb = files(double_buffered(extra_load=True), "b")
    res = run(raw, rawb, "--chip", "bm1684", "--json")
    d = json.loads(res.output)
    assert res.exit_code == 1 and d["order"] == "engine" and d["summary"]["dependencies"] == 1
    assert d["dependencies"][0]["text"].startswith("! A#1 B#2 tiu.arith.max waits for gdma")


def test_a_swapped_raw_stream_is_an_error(files):
    files(double_buffered(), "k")
    for args in (["--raw", "tiu", "k.gdma.bin", "k.tiu.bin"], ["tiu=k.gdma.bin,gdma=k.tiu.bin", "k.cmdbuf"]):
        res = run(*args, "--chip", "bm1684")
        assert res.exit_code == 2 and res.stdout == "", res.output
        assert ("k.gdma.bin: tiu stream byte 128: tiu command 1 has id 16518 after id 8326, but a stream's ids "
                "count up by one; is it a gdma stream given as tiu?") in res.stderr
