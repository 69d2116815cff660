"""`bmk demo --chip bm1684`: the OKKernel conv + bias + ReLU + max pool kernel over an input
larger than local memory, tiled with its loads and stores overlapping the BDC, disassembled,
simulated without races and checked against numpy."""
import numpy as np
from click.testing import CliRunner

import bmk as bmk_pkg
from bmk import bm1684
from bmk.cli import demo_bm1684
from bmk.cli.main import bmk
from bmk.isa import load_chip


def test_demo_bm1684():
    res = CliRunner().invoke(bmk, ["demo", "--chip", "bm1684"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "== conv2d 3x3 + bias + ReLU + max pool 2x2: (1,8,640,224) -> (1,16,320,112), 40 tiles of 16 rows ==" in out
    assert "the input needs 573440 bytes of local memory per NPU, which has 524288: tiled by rows" in out
    assert "disassembly (the first 16 of 202 instructions):" in out
    for kind in ("tiu.conv ", "tiu.arith.max ", "tiu.pord.maxpooling ", "gdma.dma.tensor "):
        assert f"  {kind}" in out, kind
    assert "chip bm1684: 202 instructions" in out and "races: none" in out
    assert "numpy check: OK (573440 values within the fp32 summation bound" in out
    assert res.stderr == ""


def test_demo_bm1684_is_really_tiled_with_loads_and_stores_overlapped():
    """The input does not fit local memory, and both some S2L and some L2S run while the BDC works."""
    assert demo_bm1684.input_bytes_per_npu() > bm1684.local_mem_size_per_npu()
    ctx = bm1684.Context()
    demo_bm1684.build(ctx)
    streams = ctx.acquire_streams()
    records = bmk_pkg.decode("bm1684", streams)
    report = bmk_pkg.Simulator("bm1684").run(streams)
    assert not report.races
    tiu = [(i.start, i.end) for i in report.instructions if i.engine == "tiu"]
    chip = load_chip("bm1684")
    directions = {d: chip.code("gdma", "direction", d) for d in ("S2L", "L2S")}
    for name, code in directions.items():
        moves = [ins for ins in report.instructions
                 if ins.engine == "gdma" and records[ins.index].fields["direction"] == code]
        overlapped = [m for m in moves if any(s < m.end and m.start < e for s, e in tiu)]
        assert len(overlapped) >= len(moves) - 3, (name, len(overlapped), len(moves))


def test_demo_bm1684_check_fails_on_a_wrong_weight_layout(monkeypatch):
    """The check is real: weight pairs stored high word first (not the 2IC-mode) fail it."""
    right = demo_bm1684.weight_2ic
    monkeypatch.setattr(demo_bm1684, "weight_2ic", lambda w: np.ascontiguousarray(right(w)[..., ::-1]))
    res = CliRunner().invoke(bmk, ["demo", "--chip", "bm1684"])
    assert res.exit_code == 1 and "numpy check: FAILED" in res.stdout


def test_demo_chip_choice():
    res = CliRunner().invoke(bmk, ["demo", "--chip", "nochip"])
    assert res.exit_code == 2 and "bm1684" in res.output


def test_demo_streams_round_trip_through_the_text_tools(tmp_path, monkeypatch):
    """The kernel's streams (conv, arith.max, pord.maxpooling, dma.tensor) read back with
    bmk-disasm --raw and reassemble byte for byte with bmk-asm."""
    from bmk import bm1684
    from bmk.cli.main import asm, disasm
    monkeypatch.chdir(tmp_path)
    ctx = bm1684.Context()
    demo_bm1684.build(ctx)
    streams = ctx.acquire_streams()
    open("t.bin", "wb").write(streams["tiu"])
    open("g.bin", "wb").write(streams["gdma"])
    runner = CliRunner()
    res = runner.invoke(disasm, ["--chip", "bm1684", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin", "-o", "k.s"])
    assert res.exit_code == 0, res.stderr
    kinds = [line.split()[2] for line in open("k.s").read().splitlines()[1:]]
    assert kinds[:7] == ["gdma.dma.tensor"] * 3 + ["tiu.conv", "tiu.arith.max", "tiu.pord.maxpooling",
                                                    "gdma.dma.tensor"]
    res = runner.invoke(asm, ["k.s", "--chip", "bm1684", "--raw", "tiu", "t2.bin", "--raw", "gdma", "g2.bin"])
    assert res.exit_code == 0, res.stderr
    assert open("t2.bin", "rb").read() == streams["tiu"] and open("g2.bin", "rb").read() == streams["gdma"]
