"""`bmk demo --chip bm1684x`: the TPU-Kernel requantize kernel runs, disassembles, matches numpy,
overlaps its loads with the TIU, and its check fails when the result is wrong."""
import numpy as np
from click.testing import CliRunner

from bmk.cli import demo_bm1684x
from bmk.cli.main import bmk


def test_demo_bm1684x():
    res = CliRunner().invoke(bmk, ["demo", "--chip", "bm1684x"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "numpy check: OK (131072 values equal the reference)" in out
    for mnemonic in ("gdma.dma.tensor", "tiu.arith.ashift", "tiu.arith.max", "tiu.arith.min",
                     "tiu.arith.selectGreat", "tiu.arith.and", "tiu.sys.end", "gdma.dma.sys"):
        assert f"    {mnemonic} " in out
    assert "races: none" in out
    overlap = int(out.split("overlap: ", 1)[1].split(" ", 1)[0])
    assert overlap > 0                  # the next tile's load runs while the TIU works
    assert res.stderr == ""


def test_reference_by_hand():
    """>> 6 rounded half away from zero, clip to int8, zero at or below 3."""
    x = np.array([-160, 160, 224, 288, 2**31 - 1, -96, -2**31], np.int64)
    # -2.5 -> -3, 2.5 -> 3 (not above 3), 3.5 -> 4, 4.5 -> 5, huge -> 127, -1.5 -> -2, -> -128
    assert demo_bm1684x.reference(x).tolist() == [0, 0, 4, 5, 127, 0, 0]


def test_wrong_result_fails_the_check(monkeypatch):
    monkeypatch.setattr(demo_bm1684x, "reference", lambda x: np.zeros(x.shape, np.int8))
    res = CliRunner().invoke(bmk, ["demo", "--chip", "bm1684x"])
    assert res.exit_code == 1
    assert "numpy check: FAILED" in res.stdout
