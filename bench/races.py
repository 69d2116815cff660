"""A run with race detection on racy streams of real vendor commands, today's code against a base
commit's (issue 32 item 7).

    python bench/races.py [--base COMMIT] [--sizes 40,80,160] [--runs 3] [--seed 1]

The streams are tests/race_stream.py's: n shuffled bm1684 yolov5s commands (half TIU, half
GDMA) that never wait, so the engines race wherever their tensors meet (40 commands: 5 KB, 43
races). They are built once here and handed to a child process per side, which imports bmk from
its own tree (the base: a `git worktree` of COMMIT in a temporary folder, removed at the end;
without --base, this tree alone). Per stream and side, on a new Simulator each:
"plain" `run(races=False)`, "races" `run(checks=False)` (the race detector alone on top), "run"
`run()` (races and the local-memory checks that come with them: what a user gets). Times are the
minimum over --runs, wall clock and the process's CPU time (what the machine's other work does not
inflate; the ratios use it); "peak" is tracemalloc's peak during one
more `run()` (numpy's arrays included), "+MB" that peak minus the plain run's. Printed: commands,
bytes, races found, warnings, the three times, instructions per CPU second of `run()`, peak and +MB,
and base / this ratios.
"""
import argparse
import json
import os
import pathlib
import pickle
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BASE = "5c4b3a3"        # main when issue 32 item 7 started
CHILD = r"""
import json, pickle, sys, time, tracemalloc
import bmk
streams = pickle.load(open(sys.argv[1], "rb"))
runs = int(sys.argv[2])
bmk.Simulator("bm1684").run(streams[0])                # warm up: imports, first-use tables
out = []
for s in streams:
    best = []
    for kw in ({"races": False}, {"checks": False}, {}):
        t = c = 1e9
        for _ in range(runs):
            sim = bmk.Simulator("bm1684")
            t0, c0 = time.perf_counter(), time.process_time()
            rep = sim.run(s, **kw)
            t, c = min(t, time.perf_counter() - t0), min(c, time.process_time() - c0)
        best.append((t, c))
    peaks = []
    for kw in ({"races": False}, {}):
        sim = bmk.Simulator("bm1684")
        tracemalloc.start()
        rep = sim.run(s, **kw)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    out.append((best, peaks, len(rep.races), len(rep.warnings)))
print(json.dumps(out))
"""


def child(tree, path, runs):
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-c", CHILD, path, str(runs)], cwd=tree, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=None, help=f"a commit to compare with (e.g. {BASE})")
    ap.add_argument("--sizes", default="40,80,160")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.race_stream import racy_stream
    sizes = [int(n) for n in args.sizes.split(",")]
    streams = [racy_stream(n, args.seed) for n in sizes]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "streams.pickle")
        with open(path, "wb") as f:
            pickle.dump(streams, f)
        sides = {}
        if args.base:
            tree = pathlib.Path(tmp) / "base"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), args.base],
                           check=True)
            try:
                sides["base"] = child(tree, path, args.runs)
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        sides["this"] = child(ROOT, path, args.runs)
    print(f"racy bm1684 streams (tests/race_stream.py, seed {args.seed}), min of {args.runs} runs:")
    for k, n in enumerate(sizes):
        nbytes = sum(map(len, streams[k].values()))
        for side, res in sides.items():
            (plain, races, run), (p0, p1), nraces, nwarn = res[k]
            print(f"  {n:4} cmds {nbytes:6} B {side:4}: {nraces:4} races {nwarn:3} warnings  "
                  + "  ".join(f"{name} {w:6.3f} s ({c:6.3f} cpu)" for name, (w, c) in
                              (("plain", plain), ("races", races), ("run", run)))
                  + f"  {n / run[1]:6.1f} instr/cpu-s  peak {p1 / 2 ** 20:6.1f} MB (+{(p1 - p0) / 2 ** 20:5.1f} MB)")
        if "base" in sides:
            b, t = sides["base"][k], sides["this"][k]
            grown = [(x[1][1] - x[1][0]) / 2 ** 20 for x in (b, t)]
            print(f"  {'':24}base / this: run cpu {b[0][2][1] / t[0][2][1]:5.2f}x  +MB {grown[0]:6.1f} -> "
                  f"{grown[1]:5.1f}  same counts of races and warnings: {b[2:] == t[2:]}")


if __name__ == "__main__":
    main()
