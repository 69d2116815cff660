"""bm1684 lowering (op record -> TIU/GDMA field dicts), one module per seed group."""
