"""What a chip's instructions do and cost: one explicit `Semantics` object per chip.

    SEMANTICS = Semantics(kinds={("tiu", "add"): add, ...}, check=check, cycles=cycles, init=init)

- kinds: {(engine, kind): fn(m, fields)}; kind names are the spec's instruction kinds, m is
  the Simulator (memories, access log, chip parameters), fields the decoded field dict. The
  simulator runs instructions equal but for their sync ids (own id, waits) with one dict,
  whose sync ids are those of the first of them: what an instruction does must not depend on
  its sync ids (they only order it), and fn must not change the dict. While fn runs, m.memo
  is a dict shared by those instructions, for values fn derives from the fields alone, and
  numpy's floating-point errors are ignored (np.errstate(all="ignore"): inf and NaN are
  results). A callable fn leaves in m.memo["run"] is the plan's own runner: the simulator
  calls run(m) instead of fn(m, fields) for the plan's later instructions, so it must do
  exactly what fn does for those fields (`planned(build)` below makes such an fn).
- check(chip, engine, fields): raise SimulationError for fields the semantics do not model
  (chip: the simulator's ChipSpec, where every fact is read).
- cycles(engine, kind, fields, m) -> int: the cost model.
- check and cycles must be pure functions of the fields other than the sync ids (and of the
  chip): the simulator checks, and costs, instructions equal but for their ids once.
- prepare(chip, records) -> records: what the chip's commands mean only in order, resolved
  before anything is checked or planned (default: the records as they are). BM1688's
  system_tr_wr.wr_imm writes TIU registers that later commands read as operands: its prepare
  gives each reading command the register values as fields (bmk/sim/bm1688/registers.py), so
  a command's meaning stays a function of its fields.
- init(m): fills what a fresh chip holds before any command runs (e.g. the lookup tables in
  L2 SRAM); called once at the end of `Simulator.__init__`. Default: nothing (zeroed memories).

`Simulator(chip)` finds a chip's Semantics through the chip registry (bmk/isa/registry.py: the
package `bmk.sim.<chip>` when it exists, imported lazily on first use; it exports `SEMANTICS`);
`Simulator(chip, semantics=...)` takes any Semantics (tests, chips under construction).
"""
import importlib

import attrs

from bmk.errors import SimulationError
from bmk.isa.registry import chips_with


def simulated_chips():
    """The chips with simulator semantics (a `bmk.sim.<chip>` package: bmk/isa/registry.py)."""
    return chips_with("simulator")


def planned(build):
    """A kind's fn(m, fields) from build(m, fields) -> run(m): the plan's runner is built on its
    first instruction and kept in m.memo["run"], where the simulator finds it for the rest."""
    def fn(m, fields):
        run = m.memo.get("run")
        if run is None:
            run = m.memo["run"] = build(m, fields)
        run(m)
    return fn


def _no_check(chip, engine, fields):
    return None


def _one_cycle(engine, kind, fields, m):
    return 1


def _zeroed(m):
    return None


def _as_is(chip, records):
    return records


@attrs.frozen
class Semantics:
    kinds: dict = attrs.field(converter=dict)
    check: object = _no_check
    cycles: object = _one_cycle
    init: object = _zeroed
    prepare: object = _as_is

    def function(self, engine, kind):
        try:
            return self.kinds[(engine, kind)]
        except KeyError:
            raise SimulationError(f"{engine} kind {kind!r} must have simulator semantics; this chip's semantics "
                                  f"model {self.modelled(engine) or 'no kind'} on {engine}") from None

    def modelled(self, engine):
        return sorted(k for e, k in self.kinds if e == engine)

    def missing(self, chip):
        """(engine, kind) pairs of the chip's specs that have no function here."""
        return [k for k in spec_kinds(chip) if k not in self.kinds]


def spec_kinds(chip):
    """Every (engine, kind) of a ChipSpec's instruction classes, once each, in spec order."""
    return list(dict.fromkeys((e.name, ins.name) for e in chip.encoded_engines
                              for c in e.classes for ins in c.instructions))


def semantics_for(chip_name):
    """The registered Semantics of a chip (its module imported on first use)."""
    simulated = simulated_chips()
    if chip_name not in simulated:
        raise SimulationError(f"chip must have simulator semantics (one of {sorted(simulated)}), not {chip_name!r}")
    path = f"bmk.sim.{chip_name}"
    sem = getattr(importlib.import_module(path), "SEMANTICS", None)
    if not isinstance(sem, Semantics):
        raise SimulationError(f"{path}.SEMANTICS must be a Semantics, not {sem!r}")
    return sem
