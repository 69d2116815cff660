"""bm1684 instruction semantics for the simulator. Under construction (issue 10)."""
