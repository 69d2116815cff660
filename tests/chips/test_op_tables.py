"""One op-table test over every chip with an API (found, never listed): the rows' shape, their
generated methods, their family functions, and the instruction kinds they declare against the
chip's spec and its simulator. What each chip adds (its seed's signatures, the kinds a call
really emits) is in tests/chips/<chip>/api/."""
import functools
import importlib

import pytest

import bmk
from bmk.isa import load_chip
from bmk.optable import OpRow
from bmk.program import Program
from bmk.sim.semantics import semantics_for, spec_kinds

CHIPS = bmk.chips()
ROWS = [(chip, row) for chip in CHIPS for row in importlib.import_module(f"bmk.{chip}.api").OPS]


def _context(chip):
    """The chip's Context class: the Program subclass whose op table holds the rows."""
    module = importlib.import_module(f"bmk.{chip}")
    return next(c for c in vars(module).values() if isinstance(c, type) and issubclass(c, Program)
                and c.OPS is importlib.import_module(f"bmk.{chip}.api").OPS)


def _function(fn):
    return fn.func if isinstance(fn, functools.partial) else fn


def test_the_chips_are_found():
    assert {"bm1880", "bm1684", "bm1684x"} <= set(CHIPS)


@pytest.mark.parametrize("chip", CHIPS)
def test_names_are_unique_rows(chip):
    rows = [row for c, row in ROWS if c == chip]
    assert rows and all(isinstance(row, OpRow) for row in rows)
    names = [n for row in rows for n in row.names]
    assert len(names) == len(set(names)), "a name appears in two rows"


@pytest.mark.parametrize("chip, row", ROWS, ids=[f"{c}.{r.name}" for c, r in ROWS])
def test_every_name_is_a_generated_method_citing_the_seed(chip, row):
    context = _context(chip)
    assert row.c_name.endswith(row.name)
    for name in row.names:
        method = getattr(context, name)
        assert method.op_row is row
        assert method.__doc__.startswith(f"{row.c_name} (seed {row.seed})")


@pytest.mark.parametrize("chip, row", ROWS, ids=[f"{c}.{r.name}" for c, r in ROWS])
def test_rows_carry_family_check_and_lowering(chip, row):
    """No one-line wrapper named after the API function: the row holds a family function of the
    chip's checks/ and one of its lowering/ (with their parameters)."""
    check, lower = _function(row.check), _function(getattr(row.lower, "__wrapped__", row.lower))
    assert check.__module__.startswith(f"bmk.{chip}.checks.")
    assert check.__name__ != row.name
    if lower.__module__ != f"bmk.{chip}.lowering.common":        # bm1684x's long forms wrap their lowering
        assert lower.__module__.startswith(f"bmk.{chip}.lowering.")
        assert lower.__name__ != row.name


@pytest.mark.parametrize("chip, row", ROWS, ids=[f"{c}.{r.name}" for c, r in ROWS])
def test_declared_kinds_exist_in_the_spec_and_the_simulator(chip, row):
    kinds = {f"{engine}.{kind}" for engine, kind in spec_kinds(load_chip(chip))}
    modelled = {f"{engine}.{kind}" for engine, kind in semantics_for(chip).kinds}
    assert row.kinds, f"{row.name} declares no instruction kinds"
    assert set(row.kinds) <= kinds, sorted(set(row.kinds) - kinds)
    assert set(row.kinds) <= modelled, sorted(set(row.kinds) - modelled)
