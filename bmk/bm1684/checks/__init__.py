"""bm1684 argument checks, one module per seed group."""
