"""The bm1684 op table against the seed and the spec."""
import inspect
import re

from bmk import bm1684
from bmk.bm1684.layout import chip
from bmk.sim import semantics


def spec_kinds():
    return {f"{engine}.{kind}" for engine, kind in semantics.spec_kinds(chip())}


def test_rows_are_well_formed():
    names = [n for row in bm1684.Context.OPS for n in row.names]
    assert len(names) == len(set(names))
    kinds = spec_kinds()
    for row in bm1684.Context.OPS:
        assert row.c_name == f"okk_{row.name}"
        assert row.seed.startswith("003 ") and row.seed.endswith("Functions")
        assert row.kinds and set(row.kinds) <= kinds, row.name
        method = getattr(bm1684.Context, row.name)
        assert method.__doc__.startswith(f"okk_{row.name} (seed 003 ")
        # keywords are the C parameter names, in C order (API.md)
        params = list(inspect.signature(method).parameters)[1:]
        assert params and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) for p in params)


def test_signatures_follow_the_seed():
    """Each method's parameters are the C function's, in C order (seed 003 signatures)."""
    from tests.bm1684.seed import signatures
    sig = signatures()
    for row in bm1684.Context.OPS:
        c_params = sig[row.c_name]
        ours = list(inspect.signature(getattr(bm1684.Context, row.name)).parameters)[1:]
        assert ours == c_params, (row.name, ours, c_params)
