"""CV182X instruction semantics: CV181X's (bmk/sim/cv181x: the same TIU and TDMA layouts and kinds,
tools/facts/cv181x.json "also"), run on this chip's parameters (npu_num, lmem_size from its ChipSpec)."""
from bmk.sim.cv181x import SEMANTICS  # noqa: F401
