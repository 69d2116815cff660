"""The text tools on the vendor's real BM1684 / BM1684X streams: disasm -> asm gives back the
same bytes (raw streams and cmd_hdr_t), the listing shows vendor op names, and bmk-diff takes
raw-stream sides."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bmk.cli.main import asm, bmk, diff, disasm
from bmk import chips as bmk_chips
from bmk.isa import chips as spec_chips, load_chip
from bmk.text import asm as asmtext, loading
from tests.vectors import vendor

CHIPS = vendor.CHIPS


def _raw_args(chip):
    return [a for engine, path in vendor.STREAMS[chip].items() for a in ("--raw", engine, str(path))]


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


@pytest.mark.parametrize("chip", CHIPS)
def test_raw_disasm_asm_round_trip(runner, chip):
    res = runner.invoke(disasm, ["--chip", chip, *_raw_args(chip), "-o", "k.s"])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(asm, ["k.s", "--chip", chip, "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin", "-o", "k.cmdbuf"])
    assert res.exit_code == 0, res.stderr
    streams = vendor.streams(chip)
    assert open("t.bin", "rb").read() == streams["tiu"]
    assert open("g.bin", "rb").read() == streams["gdma"]
    # cmd_hdr_t: the buffer disassembles (chip by magic) and reassembles to the same bytes
    res = runner.invoke(disasm, ["k.cmdbuf", "-o", "k2.s"])
    assert res.exit_code == 0, res.stderr
    assert open("k2.s").readline() == f".chip {chip}\n"
    res = runner.invoke(asm, ["k2.s", "-o", "k2.cmdbuf", "--raw", "dma", "g2.bin"])
    assert res.exit_code == 0, res.stderr
    assert open("k2.cmdbuf", "rb").read() == open("k.cmdbuf", "rb").read()
    assert open("g2.bin", "rb").read() == streams["gdma"]
    # the two texts list the same instructions, only the location column differs
    def strip(path):
        return [re.sub(r"^\s*\d+ @\S+\s+", "", line) for line in open(path).read().splitlines()[1:]]
    assert strip("k.s") == strip("k2.s")


def test_bm1684x_lines_show_vendor_names(runner):
    res = runner.invoke(disasm, ["--chip", "bm1684x", *_raw_args("bm1684x")])
    lines = res.stdout.splitlines()
    assert lines[0] == ".chip bm1684x"
    assert lines[1].startswith("  0 @gdma+0x0     gdma.dma.tensor.broadcast id=1 wait.tiu=0 ")
    first_tiu = next(line for line in lines if " tiu." in line)
    assert first_tiu.startswith("  4 @tiu+0x0      tiu.tsbc.s_distribute id=1 wait.gdma=4 cmd_short=1 tsk_typ=TRANS_BC ")
    assert lines[6].startswith("  5 @tiu+0x20     tiu.arith.cast   id=2 wait.gdma=4 cmd_short=1 tsk_typ=AR ")
    assert lines[-1].split()[2] in ("tiu.sys.end", "gdma.dma.sys")
    assert sum(" tiu.sys.end " in line + " " for line in lines) == 1


def test_bm1684_lines_show_vendor_names(runner):
    res = runner.invoke(disasm, ["--chip", "bm1684", *_raw_args("bm1684")])
    lines = res.stdout.splitlines()
    assert lines[1].startswith("   0 @gdma+0x0     gdma.dma.tensor  id=1 wait.tiu=0 ")
    assert lines[4].startswith("   3 @tiu+0x0      tiu.conv         id=1 wait.gdma=3 ")


def test_short_and_long_class_of_one_kind():
    """bm1684x arith.cast is in AR (long) and sAR (short): the selector fields pick the class."""
    long = asmtext.parse(".chip bm1684x\ntiu.arith.cast\n").records[0]
    short = asmtext.parse(".chip bm1684x\ntiu.arith.cast cmd_short=1\n").records[0]
    assert (long.cls, long.kind, short.cls, short.kind) == ("AR", "arith.cast", "sAR", "arith.cast")
    text = asmtext.disassemble(asmtext.parse(".chip bm1684x\n").chip, [long, short])
    assert [(r.cls, r.kind, r.fields) for r in asmtext.parse(text).records] == \
        [(r.cls, r.kind, r.fields) for r in (long, short)]
    with pytest.raises(asmtext.AsmError, match="hdr.len must be 0 or 64 for tiu sAR"):
        asmtext.parse(".chip bm1684x\ntiu.arith.cast cmd_short=1 hdr.len=128\n")
    with pytest.raises(asmtext.AsmError, match="no instruction class of tiu has tiu.arith.cast with cmd_short=1"):
        asmtext.parse(".chip bm1684x\ntiu.arith.cast cmd_short=1 tsk_typ=CONV\n")


def test_raw_needs_chip_and_aliases(runner):
    res = runner.invoke(disasm, _raw_args("bm1684x"))
    assert res.exit_code == 2 and res.stderr.startswith("disasm: --raw needs --chip") and res.stderr.count("\n") == 1
    res = runner.invoke(disasm, ["--chip", "bm1684x", "--raw", "bdc", str(vendor.stream_path("bm1684x", "tiu")),
                                 "--raw", "dma", str(vendor.stream_path("bm1684x", "gdma"))])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(disasm, ["--chip", "bm1684x", "--raw", "tdma", "x.bin"])
    assert res.exit_code == 2 and "engine must be one of tiu, gdma" in res.stderr


def test_empty_buffer_needs_chip(runner):
    open("e.bin", "wb").close()
    res = runner.invoke(disasm, ["e.bin"])
    assert res.exit_code == 2 and "empty buffer; say which chip with --chip" in res.stderr
    res = runner.invoke(disasm, ["e.bin", "--chip", "bm1684x"])
    assert res.exit_code == 0 and res.stdout == ".chip bm1684x\n"


@pytest.mark.parametrize("chip", CHIPS)
def test_diff_raw_sides(runner, chip):
    side = ",".join(f"{engine}={path}" for engine, path in vendor.STREAMS[chip].items())
    t = next(iter(vendor.STREAMS[chip].values()))
    first = next(iter(vendor.STREAMS[chip]))
    res = runner.invoke(diff, ["--chip", chip, side, side])
    assert res.exit_code == 0, res.stderr
    assert runner.invoke(disasm, ["--chip", chip, *_raw_args(chip), "-o", "k.s"]).exit_code == 0
    assert runner.invoke(asm, ["k.s", "-o", "k.cmdbuf"]).exit_code == 0
    assert runner.invoke(diff, ["--chip", chip, side, "k.cmdbuf"]).exit_code == 0
    assert runner.invoke(diff, [ "k.s", "--chip", chip, side]).exit_code == 0
    text = open("k.s").read().splitlines()
    # one changed own id, or where ids are stream positions (not in the text), one changed wait
    if not any(e.implicit_ids for e in load_chip(chip).encoded_engines):
        assert " id=" in text[5]
        text[5], ignore = text[5].replace(" id=", " id=9", 1), "id"
    else:
        wait = re.search(r" (wait\.\w+)=(\S+)", text[5])
        text[5], ignore = text[5].replace(wait[0], f" {wait[1]}={8 if wait[2] == '9' else 9}", 1), "wait"
    open("k2.s", "w").write("\n".join(text) + "\n")
    res = runner.invoke(diff, ["--chip", chip, side, "k2.s"])
    # raw sides align each engine on its own: a changed wait is a changed dependency there
    assert res.exit_code == 1 and ("1 changed" if ignore == "id" else "1 dependency changed") in res.stdout
    assert runner.invoke(diff, ["--chip", chip, "--ignore", ignore, side, "k2.s"]).exit_code == 0
    assert runner.invoke(diff, ["--chip", chip, "--raw", first, str(t), str(t)]).exit_code == 0
    res = runner.invoke(diff, [side, side])
    assert res.exit_code == 2 and res.stderr.startswith("diff: --raw needs --chip")


def test_listing_where_names_the_stream_file():
    chip = "bm1684x"
    listing = loading.load_raw([("tiu", vendor.stream_path(chip, "tiu")), ("gdma", vendor.stream_path(chip, "gdma"))],
                               chip)
    assert listing.where(0) == f"{vendor.stream_path(chip, 'gdma')}: gdma stream byte 0"


def test_chips_command(runner):
    res = runner.invoke(bmk, ["chips"])
    assert res.exit_code == 0
    out = res.stdout
    for chip in bmk_chips():
        assert f"\n{chip}\n" in "\n" + out
    assert "simulate                yes (bmk.sim.bm1880)" in out
    for chip in spec_chips():           # a chip under construction says how far its simulator is
        assert f"simulate                yes (bmk.sim.{chip})" in out or f"no (bmk.sim.{chip} models" in out \
            or f"no (no bmk.sim.{chip} semantics)" in out
    assert "chips" in runner.invoke(bmk, ["--help"]).stdout


def test_subprocess_raw_round_trip(tmp_path):
    here = Path(sys.executable).parent          # the venv's console scripts, also when not on PATH
    exe = tuple(shutil.which(n) or (str(here / n) if (here / n).exists() else None) for n in ("bmk-disasm", "bmk-asm"))
    if None in exe:
        pytest.skip("console scripts not installed (pip install -e .)")
    chip = "bm1684x"
    res = subprocess.run([exe[0], "--chip", chip, *_raw_args(chip), "-o", str(tmp_path / "k.s")],
                         capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([exe[1], str(tmp_path / "k.s"), "--chip", chip, "--raw", "tiu", str(tmp_path / "t.bin"),
                          "--raw", "gdma", str(tmp_path / "g.bin")], capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    streams = vendor.streams(chip)
    assert (tmp_path / "t.bin").read_bytes() == streams["tiu"]
    assert (tmp_path / "g.bin").read_bytes() == streams["gdma"]
    (tmp_path / "bad.bin").write_bytes(streams["tiu"][:390])
    res = subprocess.run([exe[0], "--chip", chip, "--raw", "tiu", str(tmp_path / "bad.bin")], capture_output=True,
                         timeout=120)
    assert res.returncode == 2 and res.stdout == b""
    err = res.stderr.decode()
    assert err.count("\n") == 1 and err.startswith(f"bmk-disasm: {tmp_path / 'bad.bin'}: tiu stream byte ")


def test_bm1684_mnemonics_are_the_vendor_spellings(runner):
    """Issue 18 item 4: md_scalar, md_sfu (the vendor's opdef and the .reg.test names
    md_scalar_op, md_sfu_op), never bmk's former mdscalar / mdsfu."""
    res = runner.invoke(disasm, ["--chip", "bm1684", *_raw_args("bm1684")])
    mnemonics = {line.split()[2] for line in res.stdout.splitlines()[1:] if line.strip()}
    assert {"tiu.md_scalar.add", "tiu.md_scalar.mul", "tiu.md_sfu.taylor"} <= mnemonics
    assert not any(m.startswith(("tiu.mdscalar", "tiu.mdsfu", "tiu.mdlinear", "tiu.mdcmp", "tiu.mdsum"))
                   for m in mnemonics)
    vendor_text = (vendor.stream_path("bm1684", "tiu").parent / "yolov5s_bm1684_f32.reg.test").read_text()
    for name in ("md_scalar", "md_sfu"):
        assert f'"name": "{name}_op"' in vendor_text
