"""bm1684x instruction semantics for the simulator. Under construction (issue 11)."""
from bmk.sim.semantics import Semantics

# Kinds are added family by family; an unmodelled kind raises SimulationError naming it.
SEMANTICS = Semantics(kinds={})
