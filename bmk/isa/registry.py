"""Which chips exist and what each can do (issue 28 item 2), found by looking, never listed by hand.

    capabilities("bm1684") -> Capabilities(chip="bm1684", decode=True, api="bmk.bm1684",
                                           simulator="bmk.sim.bm1684", cost_model="bmk.sim.bm1684",
                                           demo="bmk.cli.demo_bm1684")

- decode (and disasm, asm, diff, raw encode): every chip with a spec folder
  (`bmk/specs/<chip>/chip.toml`, `bmk.isa.chips()`);
- api: the chip's kernel API package, when `bmk/<chip>/api.py` (its op table) exists;
- simulator: the chip's Semantics package, when `bmk/sim/<chip>/__init__.py` exists (it exports
  `SEMANTICS`: bmk/sim/semantics.py);
- cost_model: `bmk/timing/<chip>.py` when it exists, else the simulator's own cost model (its
  Semantics' cycles), else None (bmk/timing/models.py reads it);
- demo: `bmk/cli/demo_<chip>.py` (`bmk demo --chip <chip>`).

Discovery reads the file tree beside this package and imports nothing: asking what a chip can
do never loads its API or its simulator (tests/packaging/test_floors.py). `bmk.chips()`,
`bmk chips`, `bmk demo`, the simulator, the timing models, the README table's generator
(tools/chip_table.py) and the tests read this registry.
"""
import pathlib

import attrs

from bmk.errors import ArgumentError
from bmk.isa.spec import chips

ROOT = pathlib.Path(__file__).resolve().parent.parent          # the bmk package folder
FIELDS = ("decode", "api", "simulator", "cost_model", "demo")


@attrs.frozen
class Capabilities:
    """What works on one chip: decode is True for every spec chip; the others name the module
    that provides the capability, or are None."""

    chip: str
    decode: bool
    api: "str | None"
    simulator: "str | None"
    cost_model: "str | None"
    demo: "str | None"

    def has(self, capability):
        return bool(getattr(self, _field(capability)))


def _field(capability):
    if capability not in FIELDS:
        raise ArgumentError(f"capability must be one of {list(FIELDS)}, not {capability!r}")
    return capability


def _module(path, name):
    return name if path.is_file() else None


def capabilities(chip):
    """The Capabilities of a spec chip; ArgumentError naming the spec chips for any other name."""
    if chip not in chips():
        raise ArgumentError(f"chip must be one of {list(chips())} (a folder of bmk/specs), not {chip!r}")
    simulator = _module(ROOT / "sim" / chip / "__init__.py", f"bmk.sim.{chip}")
    return Capabilities(
        chip=chip,
        decode=True,
        api=_module(ROOT / chip / "api.py", f"bmk.{chip}") if (ROOT / chip / "__init__.py").is_file() else None,
        simulator=simulator,
        cost_model=_module(ROOT / "timing" / f"{chip}.py", f"bmk.timing.{chip}") or simulator,
        demo=_module(ROOT / "cli" / f"demo_{chip}.py", f"bmk.cli.demo_{chip}"),
    )


def registry():
    """The Capabilities of every spec chip, in `bmk.isa.chips()` order."""
    return tuple(capabilities(c) for c in chips())


def chips_with(capability):
    """The spec chips that have a capability ("decode", "api", "simulator", "cost_model", "demo")."""
    _field(capability)
    return tuple(c.chip for c in registry() if c.has(capability))
