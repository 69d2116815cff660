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
