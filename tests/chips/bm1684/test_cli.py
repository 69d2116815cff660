"""acquire_streams() output of the bm1684 API reads back with bmk-disasm --chip bm1684 --raw and
round-trips through bmk-asm (API.md "Command line"), and bmk-run executes it."""
import numpy as np
from click.testing import CliRunner

from bmk import bm1684
from bmk.cli.main import asm, disasm, run
from tests.chips.bm1684.helpers import GMEM


def program():
    ctx = bm1684.Context()
    shape = (2, 70, 3, 5)
    ctx.gdma_32bit_cpy_S2L(0, GMEM, shape)
    ctx.bdc_32bit_cpy(256 * 1024, 0, shape, None, None)
    ctx.gdma_32bit_cpy_L2S(GMEM + 0x10000, 256 * 1024, shape)
    ctx.gdma_8bit_set_C_system(GMEM + 0x20000, -1, (1, 1, 1, 16), None)
    return ctx


def test_streams_disassemble_and_reassemble(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    streams = program().acquire_streams()
    open("t.bin", "wb").write(streams["tiu"])
    open("g.bin", "wb").write(streams["gdma"])
    runner = CliRunner()
    res = runner.invoke(disasm, ["--chip", "bm1684", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin", "-o", "k.s"])
    assert res.exit_code == 0, res.stderr
    text = open("k.s").read()
    assert [line.split()[2] for line in text.splitlines()[1:]] == \
        ["gdma.dma.tensor", "tiu.arith.copy", "gdma.dma.tensor", "gdma.dma.constant"]
    res = runner.invoke(asm, ["k.s", "--chip", "bm1684", "--raw", "tiu", "t2.bin", "--raw", "gdma", "g2.bin"])
    assert res.exit_code == 0, res.stderr
    assert open("t2.bin", "rb").read() == streams["tiu"] and open("g2.bin", "rb").read() == streams["gdma"]


def test_bmk_run_executes_the_streams(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    streams = program().acquire_streams()
    open("t.bin", "wb").write(streams["tiu"])
    open("g.bin", "wb").write(streams["gdma"])
    x = np.arange(2 * 70 * 3 * 5, dtype=np.float32).reshape(2, 70, 3, 5)
    np.save("x.npy", x)
    res = CliRunner().invoke(run, ["--chip", "bm1684", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin",
                                   "--gmem", f"{GMEM:#x}=x.npy", "--dump", f"{GMEM + 0x10000:#x}:{x.nbytes}=y.npy"])
    assert res.exit_code == 0, res.stderr
    assert np.array_equal(np.load("y.npy").view(np.float32).reshape(x.shape), x)
