"""bm1684 instruction semantics for the simulator. Under construction (issue 10)."""
from bmk.sim.semantics import Semantics

# Kinds are added family by family; an unmodelled kind raises SimulationError naming it.
SEMANTICS = Semantics(kinds={})
