"""A program built through the bm1684x API (every function, short and long forms) disassembles
with `bmk-disasm --chip bm1684x --raw tiu A --raw gdma B` and `bmk-asm` gives back its bytes."""
import pytest
from click.testing import CliRunner

from bmk import bm1684x as x
from bmk.cli.main import asm, disasm
from tests.chips.bm1684x.calls import CALLS


def program(long_form):
    ctx = x.Context(long_form=long_form)
    for name, (args, _) in sorted(CALLS.items()):
        getattr(ctx, name)(*args)
    return ctx.acquire_streams()


@pytest.mark.parametrize("long_form", [False, True])
def test_api_streams_disassemble_and_reassemble(tmp_path, monkeypatch, long_form):
    monkeypatch.chdir(tmp_path)
    streams = program(long_form)
    for engine, data in streams.items():
        (tmp_path / f"{engine}.bin").write_bytes(data)
    runner = CliRunner()
    res = runner.invoke(disasm, ["--chip", "bm1684x", "--raw", "tiu", "tiu.bin", "--raw", "gdma", "gdma.bin",
                                 "-o", "k.s"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "k.s").read_text()
    for kind in ("arith.selectGreat", "vc.select_lt", "arith.ashift", "dma.tensor", "sys.end", "dma.sys"):
        assert kind in text
    body = [line for line in text.splitlines() if " tiu.arith." in line or " tiu.vc." in line]
    assert len(body) == sum(len(k) for n, (_, k) in CALLS.items() if n.startswith("bdc_"))
    assert all(("cmd_short=1" in line) != long_form for line in body)
    assert all(("tsk_lane_num=" in line) == long_form for line in body)
    res = runner.invoke(asm, ["k.s", "--chip", "bm1684x", "--raw", "tiu", "t2.bin", "--raw", "gdma", "g2.bin"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "t2.bin").read_bytes() == streams["tiu"]
    assert (tmp_path / "g2.bin").read_bytes() == streams["gdma"]
