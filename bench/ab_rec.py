"""Records of a compiled model with every Record's fields copied, as the simulator's plan building
does (issue 34 item 3's constraint: faster decoding must not slow this): CPU time of decoding every
command group of the model and copying each Record's fields dict, best of 5 in one process.

Run: PYTHONPATH=<tree> python bench/ab_rec.py MODEL; interleave two trees (e.g. this one and a
worktree of the base commit, both with their bytecode cached) several rounds.
"""
import sys
import time

import bmk

m = bmk.load_model(sys.argv[1])
best = 1e9
for _ in range(5):
    t = time.process_time()
    for g in m.groups():
        for r in m.records(g):
            d = r.fields.copy()
            d.get("res0_addr")
    best = min(best, time.process_time() - t)
print(f"records+copy best {best * 1e3:.1f} ms")
