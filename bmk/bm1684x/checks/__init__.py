"""bm1684x argument checks, one module per seed group."""
