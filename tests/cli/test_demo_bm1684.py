"""`bmk demo --chip bm1684`: the OKKernel conv + bias + ReLU + max pool kernel, tiled through
local memory, disassembled, simulated without races and checked against numpy."""
import numpy as np
from click.testing import CliRunner

from bmk.cli import demo_bm1684
from bmk.cli.main import bmk


def test_demo_bm1684():
    res = CliRunner().invoke(bmk, ["demo", "--chip", "bm1684"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "== conv2d 3x3 + bias + ReLU + max pool 2x2: (1,8,32,32) -> (1,32,16,16), 4 tiles of 8 rows ==" in out
    for kind in ("tiu.conv ", "tiu.arith.max ", "tiu.pord.maxpooling ", "gdma.dma.tensor "):
        assert out.count(f"    {kind}") >= 4, kind
    assert "chip bm1684: 22 instructions" in out and "races: none" in out
    assert "overlap: " in out                                       # the parallel groups overlap GDMA and BDC
    assert "numpy check: OK (8192 values within the fp32 summation bound" in out
    assert res.stderr == ""


def test_demo_bm1684_check_fails_on_a_wrong_weight_layout(monkeypatch):
    """The check is real: weight pairs stored high word first (not the 2IC-mode) fail it."""
    right = demo_bm1684.weight_2ic
    monkeypatch.setattr(demo_bm1684, "weight_2ic", lambda w: np.ascontiguousarray(right(w)[..., ::-1]))
    res = CliRunner().invoke(bmk, ["demo", "--chip", "bm1684"])
    assert res.exit_code == 1 and "numpy check: FAILED" in res.stdout


def test_demo_chip_choice():
    res = CliRunner().invoke(bmk, ["demo", "--chip", "nochip"])
    assert res.exit_code == 2 and "bm1684" in res.output
