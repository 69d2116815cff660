"""`m.run` of a compiled model in a fresh process: the first run (decode, plans with every
Record's fields copied, the run) and the best of the next runs, CPU ms, with a sha256 of the
outputs (issue 34 item 3's check that faster decoding does not slow the simulator).

Run: PYTHONPATH=<tree> python bench/sim_first_run.py MODEL [RUNS]; interleave two trees by hand.
"""
import hashlib
import sys
import time

import numpy as np

import bmk

path, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
t = time.process_time()
m = bmk.load_model(path)
load = time.process_time() - t
st = m.nets[0].stages[0]
rng = np.random.default_rng(0)
inputs = {}
for ts in st.inputs:
    dt = np.dtype(ts.dtype)
    if dt.kind == "f":
        inputs[ts.name] = rng.uniform(-1, 1, ts.shape).astype(dt)
    else:
        info = np.iinfo(dt)
        inputs[ts.name] = rng.integers(info.min, int(info.max) + 1, ts.shape).astype(dt)
c = time.process_time()
out = m.run(inputs)
first = time.process_time() - c
best = 1e9
for _ in range(runs):
    c = time.process_time()
    out = m.run(inputs)
    best = min(best, time.process_time() - c)
h = hashlib.sha256(b"".join(np.ascontiguousarray(v).tobytes() for v in out.values())).hexdigest()[:12]
print(f"load {load * 1e3:.0f} ms, first run {first * 1e3:.0f} ms, best of {runs} {best * 1e3:.0f} ms, out {h}")
