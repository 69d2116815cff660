"""bm1684x lowering (op record -> TIU/GDMA field dicts), one module per seed group."""
