"""bm1684x: the TPU-Kernel API (seed 001). Under construction (issue 11)."""
