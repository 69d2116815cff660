"""bmk-run through CliRunner: gmem inputs, dumps, table / --json report, --trace, --strict, progress."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from bmk.text import asm as asmtext
from bmk.cli.main import run
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip
from tests.goldens import golden

pytest.importorskip("bmk.sim.core")
CHIP = load_chip("bm1880")
LOAD_STORE = golden("dma_load_store_tensor")   # load 0x1000 -> la 0; load 0x2000 -> la 0x1000; stores
SERIAL = golden("sched_serial_load_load_add_store")


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_table_report(runner):
    open("k.cmdbuf", "wb").write(SERIAL)
    res = runner.invoke(run, ["k.cmdbuf", "--chip", "bm1880"])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("chip bm1880: 4 instructions, ") and lines[0].endswith(" cycles")
    assert lines[1].split() == ["engine", "instructions", "busy", "cycles", "busy", "%"]
    assert lines[2].split()[:2] == ["tiu", "1"] and lines[3].split()[:2] == ["tdma", "3"]
    assert lines[-1] == "races: none"
    assert res.stderr == ""


def test_gmem_npy_and_raw_in_dump_npy_and_raw_out(runner):
    data = (np.arange(2048) % 251).astype(np.int8)
    np.save("in.npy", data)
    open("in.bin", "wb").write(bytes(range(256)) * 8)
    open("k.cmdbuf", "wb").write(LOAD_STORE)
    res = runner.invoke(run, ["k.cmdbuf", "--gmem", "0x1000=in.npy", "--gmem", "0x2000=in.bin",
                              "--dump", "0x1000:2048=g1.npy", "--dump", "0x2000:16=g2.bin", "--json"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["instruction_count"] == 4 and doc["races"] == []
    assert set(doc) >= {"total_cycles", "engine_busy", "overlap_cycles", "instructions"}
    g1 = np.load("g1.npy")
    assert g1.dtype == np.uint8 and g1.tobytes() == data.tobytes()
    assert open("g2.bin", "rb").read() == bytes(range(16))


def test_store_writes_gmem(runner):
    """The golden stores lmem 0 to gmem 0x3000: the dump there is what was loaded from 0x1000."""
    data = np.arange(2048, dtype=np.uint8)
    np.save("in.npy", data)
    open("k.cmdbuf", "wb").write(LOAD_STORE)
    res = runner.invoke(run, ["k.cmdbuf", "--gmem", "0x1000=in.npy", "--dump", "0x3000:2048=out.npy"])
    assert res.exit_code == 0, res.stderr
    assert (np.load("out.npy") == data).all()


def test_text_input_and_trace(runner):
    open("k.s", "w").write(asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, SERIAL)))
    res = runner.invoke(run, ["k.s", "--trace", "t.json"])
    assert res.exit_code == 0, res.stderr
    trace = json.load(open("t.json"))
    assert sum(e["ph"] == "X" for e in trace["traceEvents"]) == 4


def _racy():
    text = asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, SERIAL))
    return text.replace("wait.tdma=2", "wait.tdma=0")        # the add no longer waits for its loads


def test_strict_fails_on_race(runner):
    open("r.s", "w").write(_racy())
    res = runner.invoke(run, ["r.s"])
    assert res.exit_code == 0 and "races: 2" in res.stdout and "  race: instructions 0 (write) and 2" in res.stdout
    res = runner.invoke(run, ["r.s", "--strict"])
    assert res.exit_code == 1
    assert res.stderr == "run: --strict: 2 race(s)\n"
    assert runner.invoke(run, ["k.s", "--strict"]).exit_code == 2        # no such file


def test_progress_bar_over_10000_instructions(runner):
    line = _racy().splitlines()[1]                           # a tdma.load
    body = "\n".join(line.replace("id=1 ", f"id={i % 65535 + 1} ") for i in range(10_001))
    open("big.s", "w").write(".chip bm1880\n" + body + "\n")
    res = runner.invoke(run, ["big.s"])
    assert res.exit_code == 0, res.stderr
    assert "simulating" in res.stderr
    assert "simulating" not in runner.invoke(run, ["big.s", "--no-progress"]).stderr
    open("small.cmdbuf", "wb").write(SERIAL)
    assert runner.invoke(run, ["small.cmdbuf"]).stderr == ""


@pytest.mark.parametrize("args,message", [
    (["--gmem", "0x1000"], "run: --gmem must be ADDR=FILE, not '0x1000'"),
    (["--gmem", "zz=in.bin"], "run: --gmem ADDR must be an integer (e.g. 0x1000), not 'zz'"),
    (["--dump", "0x10=o.npy"], "run: --dump must be ADDR:NBYTES=OUT, not '0x10=o.npy'"),
    (["--dump", "0x10:0=o.npy"], "run: --dump NBYTES must be > 0, not '0'"),
    (["--gmem", "0x1000=missing.npy"], "run: missing.npy: No such file or directory"),
])
def test_bad_options_exit_2(runner, args, message):
    open("k.cmdbuf", "wb").write(SERIAL)
    res = runner.invoke(run, ["k.cmdbuf", *args])
    assert res.exit_code == 2
    assert res.stderr == message + "\n"


def test_corrupt_buffer_exit_2(runner):
    open("k.cmdbuf", "wb").write(SERIAL[:-5])
    res = runner.invoke(run, ["k.cmdbuf"])
    assert res.exit_code == 2 and res.stderr.startswith("run: k.cmdbuf: byte ") and res.stderr.count("\n") == 1
