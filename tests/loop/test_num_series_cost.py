"""Issue 22.10: num_series changes the cycles of taylor_exp and of exp / sigmoid / tanh (and their
_tunable forms): the md_sfu taylor command costs one multiply-add a term; the docstrings say what
num_series counts."""
import pytest

import bmk
from bmk import bm1684

SHAPE = bm1684.dim4(1, 64, 16, 16)


def cycles(name, *series):
    ctx = bm1684.Context()
    getattr(ctx, name)(0, 0x10000, *((0x20000,) if name != "bdc_taylor_exp" else ()), SHAPE, *series)
    report = bmk.Simulator("bm1684").run(ctx.acquire_streams())
    return report.engine_busy["tiu"]


@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh"])
def test_more_series_cost_more_cycles(name):
    few, default, many = (cycles(f"bdc_{name}_tunable", n) for n in (8, 32, 64))
    assert few < default < many
    assert cycles(f"bdc_{name}") == default               # bdc_<name> is the _tunable form with 32 series
    assert cycles("bdc_taylor_exp", 4) < cycles("bdc_taylor_exp", 40)


def test_docstrings_say_what_num_series_counts():
    assert "num_series taylor terms of e^f - 1 = sum_{k=1..num_series} f^k / k!" in bm1684.Context.bdc_exp_tunable.__doc__
    assert "with num_series 32" in bm1684.Context.bdc_tanh.__doc__
    assert "num_series is the number of taylor terms after the 1" in bm1684.Context.bdc_taylor_exp.__doc__
