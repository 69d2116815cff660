"""Every CLI failure is exit 2 and one stderr line; --debug adds the traceback (issue 12.9)."""
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from bmk.cli.main import asm, bmk, diff, disasm, run
from tests.goldens import golden

BUF = golden("sched_serial_load_load_add_store")
LONG = "9" * 5000                                  # over Python's 4300-digit int() limit


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    open("in.cmdbuf", "wb").write(BUF)
    return CliRunner()


def _one_line(res, prog):
    assert res.exit_code == 2, (res.exit_code, res.stderr)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"{prog}: "), res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("exc", [ZeroDivisionError("boom"), KeyError("k"), RecursionError("deep"), MemoryError()])
def test_unexpected_exception_is_exit_2_one_line(runner, monkeypatch, exc):
    def broken(*args, **kwargs):
        raise exc
    monkeypatch.setattr("bmk.text.asm.format_record", broken)
    res = runner.invoke(disasm, ["in.cmdbuf"])
    _one_line(res, "disasm")
    assert f"internal error: {type(exc).__name__}" in res.stderr and "--debug" in res.stderr


def test_debug_shows_the_traceback(runner, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr("bmk.text.asm.format_record", broken)
    for argv in (["--debug", "in.cmdbuf"], ["in.cmdbuf", "--debug"]):
        res = runner.invoke(disasm, argv)
        assert res.exit_code == 2
        assert "Traceback" in res.stderr and "ZeroDivisionError: boom" in res.stderr
        assert res.stderr.rstrip().splitlines()[-1] == "disasm: internal error: ZeroDivisionError: boom"
    monkeypatch.undo()
    res = runner.invoke(bmk, ["--debug", "disasm", "nope.cmdbuf"])       # a BmkError/OSError too
    assert res.exit_code == 2 and "Traceback" in res.stderr and "FileNotFoundError" in res.stderr


def test_interrupt_is_exit_2_not_1(runner, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("bmk.text.diff.diff_listings", interrupted)
    monkeypatch.setattr("bmk.text.asm.format_record", interrupted)
    for cmd, argv in ((disasm, ["in.cmdbuf"]), (diff, ["in.cmdbuf", "in.cmdbuf"])):
        res = runner.invoke(cmd, argv)
        assert res.exit_code == 2
        # click first ends the terminal's '^C' echo with a newline
        assert res.stderr.lstrip("\n") == f"{cmd.name}: interrupted\n"


@pytest.mark.parametrize("cmd,argv", [(diff, ["in.cmdbuf"]), (disasm, ["--bogus"]), (asm, ["x.s", "--raw", "tiu"]),
                                      (run, ["in.cmdbuf", "--gmem"]), (bmk, ["nope"])])
def test_usage_errors_are_one_line(runner, cmd, argv):
    _one_line(runner.invoke(cmd, argv), cmd.name)


def test_long_decimal_literal_in_every_command(runner):
    for line in (f"tiu.add res0_w={LONG}", f"tdma.load src_base_addr_low={LONG}", f"tiu.add stream.pad={LONG}",
                 f"tiu.add {LONG}", f"tiu.add cmd_id_tpu=-{LONG}"):
        open("long.s", "w").write(f".chip bm1880\n{line}\n")
        for cmd, argv in ((asm, ["long.s", "-o", "o.bin"]), (disasm, ["long.s"]), (diff, ["long.s", "in.cmdbuf"]),
                          (run, ["long.s"])):
            res = runner.invoke(cmd, argv)
            _one_line(res, cmd.name)
            assert res.stderr.startswith(f"{cmd.name}: long.s:2:") and len(res.stderr) < 200, res.stderr
    open("long.s", "w").write(f".chip bm1880\ntiu.add res0_w={LONG}\n")
    res = runner.invoke(asm, ["long.s", "-o", "o.bin"])
    assert res.stderr == "asm: long.s:2:16: res0_w must be in [0, 4095] (12 bits), not a 5000-digit number\n"


def test_long_decimal_with_leading_zeros_is_its_value(runner):
    open("zeros.s", "w").write(".chip bm1880\ntiu.add res0_w=" + "0" * 5000 + "7\n")
    assert runner.invoke(asm, ["zeros.s", "-o", "o.bin"]).exit_code == 0
    assert runner.invoke(disasm, ["o.bin"]).stdout.splitlines()[1].endswith("res0_w=7")


def test_console_scripts_long_literal(tmp_path):
    """The installed scripts, as real processes: exit 2, one line, no traceback (was: ValueError, exit 1)."""
    src = tmp_path / "long.s"
    src.write_text(f".chip bm1880\ntiu.add res0_w={LONG}\n")
    (tmp_path / "in.cmdbuf").write_bytes(BUF)
    for argv in (["bmk-asm", str(src), "-o", str(tmp_path / "o.bin")], ["bmk-disasm", str(src)],
                 ["bmk-diff", str(src), str(tmp_path / "in.cmdbuf")], ["bmk-run", str(src)]):
        exe = shutil.which(argv[0])
        assert exe is not None, f"{argv[0]} is not installed (pip install -e .)"
        res = subprocess.run([exe, *argv[1:]], capture_output=True, timeout=120)
        assert res.returncode == 2, res.stderr
        err = res.stderr.decode()
        assert err.count("\n") == 1 and err.startswith(f"{argv[0]}: ") and "Traceback" not in err


def test_closed_stdout_is_quiet_and_not_exit_1(tmp_path):
    """`bmk-disasm big.cmdbuf | head -1`: no message, and the shell's SIGPIPE status 141, never 1
    (bmk-diff's "different"; click's own EPIPE handling exits 1)."""
    (tmp_path / "big.cmdbuf").write_bytes(BUF * 5000)
    exe = shutil.which("bmk-disasm")
    assert exe is not None, "bmk-disasm is not installed (pip install -e .)"
    p = subprocess.Popen([exe, str(tmp_path / "big.cmdbuf")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline() == b".chip bm1880\n"
    p.stdout.close()
    assert p.wait(timeout=120) == 141
    assert p.stderr.read() == b""
