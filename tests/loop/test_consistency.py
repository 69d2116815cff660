"""Issue 22.9: the chips' APIs behave alike where the seeds agree."""
import pytest

import bmk
from bmk import bm1684, bm1684x, bm1880


@pytest.mark.parametrize("make", [bm1684.Context, bm1684x.Context, lambda: bm1880.register()], ids=["bm1684", "bm1684x",
                                                                                                   "bm1880"])
@pytest.mark.parametrize("acquire", ["acquire_cmdbuf", "acquire_streams"])
def test_acquire_after_cleanup_raises(make, acquire):
    ctx = make()
    getattr(ctx, acquire)()
    ctx.cleanup()
    with pytest.raises(bmk.ArgumentError, match=f"^{acquire}: the context was cleaned up"):
        getattr(ctx, acquire)()


def test_print_report_shows_its_summary():
    from tests.loop.kernels import double_buffered
    report = bmk.Simulator("bm1684").run(double_buffered().acquire_streams())
    text = str(report)
    assert text == report.summary() and text.startswith("9 instructions, ") and "InstructionRecord" not in text
    assert repr(report).startswith("Report(chip='bm1684', instructions=(InstructionRecord(")


def test_bmk_chips_says_whether_every_kind_the_api_emits_is_simulated():
    from click.testing import CliRunner
    from bmk.cli.main import bmk as cli
    out = CliRunner().invoke(cli, ["chips"]).stdout
    for chip in ("bm1684", "bm1684x", "bm1880"):
        line = next(x for x in ("\n" + out).split(f"\n{chip}\n")[1].splitlines() if x.strip().startswith("simulate"))
        assert line.endswith(" kinds, all kinds the API emits") and " of " in line, line


def test_plain_demo_points_bm168x_users_to_chip():
    from click.testing import CliRunner
    from bmk.cli.main import bmk as cli
    out = CliRunner().invoke(cli, ["demo"]).stdout
    hint = "(this is the BM1880 demo; for BM1684, BM1684X kernels: bmk demo --chip bm1684, bmk demo --chip bm1684x)"
    assert out.splitlines()[1] == hint and out.rstrip().endswith(hint)


def test_the_distribution_is_bmk_tpu_and_the_import_name_bmk():
    import importlib.metadata
    import pathlib
    import tomllib
    from click.testing import CliRunner
    from bmk.cli.main import DISTRIBUTION, bmk as cli
    project = tomllib.loads((pathlib.Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION == "bmk-tpu"          # `bmk` on PyPI is an unrelated build runner
    assert set(project["scripts"]) == {"bmk", "bmk-asm", "bmk-disasm", "bmk-diff", "bmk-run"}
    assert project["entry-points"]["pytest11"] == {"bmk": "bmk.testing.plugin"}
    dist = importlib.metadata.distribution(DISTRIBUTION)
    assert dist.metadata["Name"] == "bmk-tpu"
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and res.stdout == f"bmk, version {dist.version}\n"


def test_strides_are_optional_in_both_chips_none_being_null():
    from bmk.bm1684 import constants as k84
    s84, sx = bm1684.dim4(4, 64, 8, 8), bm1684x.dim4(1, 64, 8, 8)
    a, b = bm1684.Context(), bm1684.Context()
    a.bdc_fixed_point_packed_add(0, 0x1000, 0x2000, s84, op_type=k84.S8_OP_S8_TO_S8, rshift=1)
    b.bdc_fixed_point_packed_add(0, 0x1000, 0x2000, s84, None, None, None, k84.S8_OP_S8_TO_S8, 1)
    assert a.acquire_cmdbuf() == b.acquire_cmdbuf()
    a, b = bm1684x.Context(), bm1684x.Context()
    a.bdc_min_C(0x1000, 0, 100, sx, dtype=bm1684x.DT_INT16)
    b.bdc_min_C(0x1000, 0, 100, sx, None, None, bm1684x.DT_INT16)
    a.gdma_cpy_S2L(0x2000, 0x100000000, sx, dtype=bm1684x.DT_INT8)
    b.gdma_cpy_S2L(0x2000, 0x100000000, sx, None, None, bm1684x.DT_INT8)
    assert a.acquire_cmdbuf() == b.acquire_cmdbuf()
    for ctx, call in ((bm1684.Context(), "bdc_fixed_point_packed_add"), (bm1684x.Context(), "bdc_min_C")):
        with pytest.raises(bmk.ArgumentError, match=r"missing; .* \(.* by name leaves the strides out\)$"):
            getattr(ctx, call)(0, 0x1000, 0x2000, s84 if "fixed" in call else sx)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_inf_and_nan_constants_are_taken_alike(value):
    from bmk.text import asm
    s84, sx = bm1684.dim4(1, 64, 8, 8), bm1684x.dim4(1, 64, 8, 8)
    a = bm1684.Context()
    a.bdc_max_C(0, 0x1000, value, s84)
    a.bdc_32bit_set_C(0x2000, value, s84)
    b = bm1684x.Context()
    b.bdc_max_C(0x1000, 0, value, sx, None, None, bm1684x.DT_FP32)
    for ctx in (a, b):
        text = ctx.listing()
        assert f"opd1={value}" in text or f"opd1=-{abs(value)}" in text or value != value
        assert asm.assemble(text) == ctx.acquire_cmdbuf()
    for call in (lambda: bm1684.Context().bdc_max_C(0, 0x1000, 1e39, s84),
                 lambda: bm1684.Context().bdc_32bit_set_C(0x2000, 1e39, s84),
                 lambda: bm1684x.Context().bdc_max_C(0x1000, 0, 1e39, sx, None, None, bm1684x.DT_FP32)):
        with pytest.raises(bmk.ArgumentError, match=r"C must be a float within the fp32 range \(\|C\| <= "
                                                   r"3.4028235e\+38\), or an inf or NaN, not 1e\+39"):
            call()
