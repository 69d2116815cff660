"""The installed console scripts, run as real processes (one test per command, plus python -m bmk)."""
import json
import shutil
import subprocess
import sys

import pytest

from tests.goldens import golden

BUF = golden("sched_serial_load_load_add_store")


def run(*argv, input=None):
    exe = shutil.which(argv[0])
    if exe is None:
        pytest.skip(f"{argv[0]} is not installed (pip install -e .)")
    return subprocess.run([exe, *argv[1:]], input=input, capture_output=True, timeout=120)


def test_bmk_disasm_and_bmk_asm(tmp_path):
    (tmp_path / "in.cmdbuf").write_bytes(BUF)
    res = run("bmk-disasm", str(tmp_path / "in.cmdbuf"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(b".chip bm1880\n")
    (tmp_path / "in.s").write_bytes(res.stdout)
    res = run("bmk-asm", str(tmp_path / "in.s"), "-o", str(tmp_path / "out.cmdbuf"))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out.cmdbuf").read_bytes() == BUF


def test_bmk_disasm_corrupt_is_one_line_exit_2(tmp_path):
    (tmp_path / "bad.cmdbuf").write_bytes(BUF[:-3])
    res = run("bmk-disasm", str(tmp_path / "bad.cmdbuf"))
    assert res.returncode == 2 and res.stdout == b""
    assert res.stderr.decode().count("\n") == 1
    assert res.stderr.decode().startswith(f"bmk-disasm: {tmp_path / 'bad.cmdbuf'}: byte ")
    assert b"Traceback" not in res.stderr


def test_bmk_asm_error(tmp_path):
    (tmp_path / "x.s").write_text(".chip bm1880\ntiu.add res0_w=99999\n")
    res = run("bmk-asm", str(tmp_path / "x.s"), "-o", str(tmp_path / "x.bin"))
    assert res.returncode == 2
    assert res.stderr.decode() == f"bmk-asm: {tmp_path / 'x.s'}:2:16: res0_w must be in [0, 4095] (12 bits), not 99999\n"


def test_bmk_diff_exit_codes(tmp_path):
    a, b = tmp_path / "a.cmdbuf", tmp_path / "b.cmdbuf"
    a.write_bytes(BUF)
    b.write_bytes(BUF)
    assert run("bmk-diff", str(a), str(b)).returncode == 0
    changed = bytearray(BUF)
    changed[8 + 44] ^= 0x10                     # a bit inside the first TDMA descriptor
    b.write_bytes(bytes(changed))
    res = run("bmk-diff", str(a), str(b), "--json")
    assert res.returncode == 1
    assert json.loads(res.stdout)["summary"]["changed"] == 1
    b.write_bytes(b"junk")
    assert run("bmk-diff", str(a), str(b)).returncode == 2


def test_bmk_group_and_python_m(tmp_path):
    res = run("bmk", "--help")
    assert res.returncode == 0
    for name in (b"asm", b"disasm", b"diff", b"run", b"demo"):
        assert b"  " + name + b" " in res.stdout
    (tmp_path / "in.cmdbuf").write_bytes(BUF)
    res = subprocess.run([sys.executable, "-m", "bmk", "disasm", str(tmp_path / "in.cmdbuf")],
                         capture_output=True, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith(b".chip bm1880\n")
    assert run("bmk", "disasm", str(tmp_path / "in.cmdbuf")).stdout == res.stdout


def test_bmk_run(tmp_path):
    pytest.importorskip("bmk.sim.core", reason="simulator not there yet")
    (tmp_path / "in.cmdbuf").write_bytes(BUF)
    res = run("bmk-run", str(tmp_path / "in.cmdbuf"), "--chip", "bm1880", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["instruction_count"] == 4
