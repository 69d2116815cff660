"""bm1684x instruction semantics for the simulator. Under construction (issue 11)."""
