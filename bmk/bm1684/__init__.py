"""bm1684: the OKKernel API (seeds 003, 004). Under construction (issue 10)."""
