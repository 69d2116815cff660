"""Every chip's cost model, by chip name: `cost_model(chip)` -> an object with
`cycles(engine, kind, fields)` (cycles of the engine's clock), `freq` ({engine: MHz}, or {}
when the chip's clocks are not in its facts: then a cycle counts as 1 ns) and `basis` (what
the model rests on, whether it is checked against a real chip: `bmk chips` prints it).

Which model a chip has is the chip registry's `cost_model` (bmk/isa/registry.py: a module
`bmk/timing/<chip>.py`, else the chip's simulator). BM1688: bmk/timing/bm1688.py (checked
against the chip's measured cycles). BM1684X, BM1684, BM1880 and their sister chips (BM1690,
CV184X; CV18xx): the simulator's cost models (bmk/sim/<chip>/__init__.py `cycles`), the same
functions its reports use, read here through a ChipView (the chip parameters they ask a
Simulator for); none of them is checked against a real chip (BASES says what each rests on).
"""
import importlib

from bmk.errors import ArgumentError
from bmk.timing.basis import Basis

BASES = {
    "bm1684x": Basis(False, "TIU formulas made up (startup + work / EU width, monotone in the work); GDMA rate "
                            "and startup set from the vendor compiler's per-command estimate (sophgo/tpu-mlir "
                            "regression/profile/bmprofile_data-1_bm1684x/net_stat.sim: 54 bytes a cycle, 37 "
                            "cycles); cycles of the 1 GHz clock that estimate counts (bmk/sim/bm1684x)"),
    "bm1684": Basis(False, "made-up formulas monotone in the work (startup + work / EU width, bytes / a "
                           "bandwidth; bmk/sim/bm1684); no public per-command estimate as text; its clocks are "
                           "not in its facts, so 1 cycle counts as 1 ns"),
    "bm1880": Basis(False, "made-up formulas monotone in the work (startup + work / EU width, bytes / a "
                           "bandwidth; bmk/sim/bm1880); its clock is not in its facts, so 1 cycle counts as 1 ns"),
}
_FAMILY_1684X = ("BM1684X's formulas (bmk/sim/bm1684x: TIU made up, monotone in the work; GDMA from the "
                 "vendor's BM1684X estimate) on this chip's lanes and EU width; its clocks are not used, so 1 "
                 "cycle counts as 1 ns")
_FAMILY_1880 = ("bm1880's made-up formulas (bmk/sim/bm1880) on this chip's NPUs and EU width; 1 cycle counts "
                "as 1 ns")
BASES.update({"bm1690": Basis(False, _FAMILY_1684X), "cv184x": Basis(False, _FAMILY_1684X),
              **{c: Basis(False, _FAMILY_1880) for c in ("cv180x", "cv181x", "cv182x", "cv183x")}})
NOT_DESCRIBED = Basis(False, "the simulator's cost model (bmk/sim/<chip>), not described in bmk/timing/models.py")


class ChipView:
    """What a simulator cost model reads of its Simulator `m`, without memories: the chip,
    npu_num, eu_num, lmem.lane_size and space(name)."""

    class _Lanes:
        def __init__(self, lane_size):
            self.lane_size = lane_size

    def __init__(self, chip):
        self.chip = chip
        self.npu_num, self.eu_num = chip.param("npu_num"), chip.param("eu_num")
        local = [sp for sp in chip.memory if sp.lane_bytes]
        self.lmem = self._Lanes(local[0].lane_bytes if local else 1)

    def space(self, name):
        return self.chip.space(name)


class SimModel:
    """A simulated chip's cost model: its Semantics' cycles(engine, kind, fields, m)."""

    def __init__(self, chip, semantics):
        self.chip, self.view, self.fn = chip, ChipView(chip), semantics.cycles
        self.freq = {}
        self.basis = BASES.get(chip.name, NOT_DESCRIBED)  # freq {}: 1 cycle = 1 ns (bm1684x: its estimate's 1 GHz)

    def cycles(self, engine, kind, fields):
        return self.fn(engine, kind, fields, self.view)


def _module(name):
    """The module of a chip's cost model (the registry's cost_model), or None."""
    from bmk.isa.registry import chips_with, capabilities
    return capabilities(name).cost_model if name in chips_with("cost_model") else None


def has_cost_model(name):
    return _module(name) is not None


def basis(name):
    """The Basis of a chip's cost model, or None when it has none (no module imported)."""
    module = _module(name)
    if module is None:
        return None
    if module.startswith("bmk.timing."):
        return importlib.import_module(module).BASIS
    return BASES.get(name, NOT_DESCRIBED)


def cost_model(chip):
    """The cost model of a ChipSpec; ArgumentError naming the chips that have one."""
    module = _module(chip.name)
    if module is not None and module.startswith("bmk.timing."):
        return importlib.import_module(module).Model(chip)
    if module is not None:
        from bmk.sim.semantics import semantics_for
        return SimModel(chip, semantics_for(chip.name))
    from bmk.isa.registry import chips_with
    raise ArgumentError(f"timeline: chip must have a cost model (one of {sorted(chips_with('cost_model'))}), "
                        f"not {chip.name!r}")
