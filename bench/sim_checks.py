"""What the default checks of `Simulator.run` cost: the same run with checks on and off, per
workload, in one process (issue 34 item 4: checks on <= 1.3x checks off).

    python bench/sim_checks.py [--base COMMIT] [--rounds 5] [--only NAME,...] [--no-models]

"on" is what a user gets from `Simulator.run(buf)`: race detection and the local-memory checks
that come with it (bmk/sim/lmemcheck.py); "off" is `run(buf, races=False, checks=False)`. A model
runs through `bmk.models.run.simulate` (its groups' Programs, compiled once) with races and
checks both on or both off.

Workloads, each built once per process:
- bench/sim.py's bm1880 cases: tiled (a tiled 3x3 conv layer), golden (70,000 tiny ops), add
  (4M-element add), conv (one whole-layer conv);
- bench/races.py's racy bm1684 streams of 40 and 80 shuffled yolov5s commands;
- bench/sim_bm1684x.py's demo kernel (1024 rows) and the yolov5s int8 streams;
- every model under /work/shared/models (two folders deep: bm1684, bm1684x, bm1688, bm1690,
  cv181x, cv184x, extra, tdl/*) that runs, on seeded random inputs (a model that cannot run is
  listed with its error).

Timing: process CPU time (the machine is shared), one BLAS thread. Each round runs every
workload off then on, each on a Simulator reset to a fresh chip (what a Simulator keeps across
resets, its plans and views, is warmed by one untimed run of each side first); the figure is the
best over rounds. Each side's report digest (races, warnings, timing) and output bytes must be the
same in every round, and the outputs the same on and off. With --base, a child process per tree
(this one and a `git worktree` of COMMIT, bench/worktree.py) runs the same workloads, interleaved
round by round, and the base's reports (all but their warnings, which a fix to the checker
changes: both counts are printed, base>this) and outputs must equal this tree's.

Printed per workload: instructions, off and on ms, on/off ratio (per tree), the checker's own ms
(the time inside LmemCheck.instruction in the best checked run: steadier than the ratio, whose
two runs each move by 10-30% on a shared machine), races, warnings, and 1st/off: round 1's
checked run against the best unchecked one. A Simulator checks a program's run one instruction
at a time until a run can be kept (the second: the first cuts the checker's map), then replays
the kept run when the program runs again from the same state (bmk/sim/lmemcheck.py
_Recording); round 1 is the run checked one by one, the later rounds replay. With --base each
tree's child runs rounds // 2 rounds: give --rounds 4 or more to time a replay there.

Measured (2-core shared machine, `--base d75db3f --rounds 2`, base = the checker before issue 34
item 4; reports, races, warnings and outputs identical), on/off base -> this: bm1880 tiled 1.48 ->
1.33, golden 2.61 -> 1.63, add 2.65 -> 1.99, conv 1.48 -> 1.32; racy 40 8.73 -> 7.76, racy 80 19.6
-> 12.6; bm1684x demo 2.07 -> 1.67, yolov5s streams 1.85 -> 1.61; models: face_detection fp32
8.78 -> 9.03 (noise), int8 b4 2.23 -> 2.09, retinaface 9.84 -> 7.45, yolov5s bm1684 4.70 -> 3.41,
Yuv2rgb 1.95 -> 2.34 (30 ms runs: noise), yolov5s bm1684x 1.73 -> 1.60, tdl attribute 3.28 ->
3.00, baby cry 2.65 -> 2.37, hand keypoint 1.42 -> 1.44, topformer 3.84 -> 3.05. The goal (1.3)
is not met: a checked write still stores 4 + 1 + 1 bytes of state per local-memory byte (owner,
seen, prev), which alone costs more than the unchecked run on the large-tensor models.

Then (eb4aaec: views made lanes-last directly, a reset Simulator's LmemCheck renewed in place,
lost values cleared only where the run left some, seen tested with min), `--base e6553cb
--rounds 2` (best of 2 rounds per tree, the machine busy with other jobs: noisy, ratios move by
0.3 or more between rounds; reports, races, warnings and outputs identical), on/off base -> this:
bm1880 tiled 1.54 -> 1.67, golden 1.86 -> 1.99, add 2.10 -> 1.94, conv 1.17 -> 1.11; racy 40
6.40 -> 9.81, racy 80 13.0 -> 15.1; bm1684x demo 1.52 -> 1.47, yolov5s streams 1.40 -> 1.44;
models: face_detection fp32 8.18 -> 7.58, int8 b4 2.37 -> 1.91, retinaface 7.23 -> 7.20, yolov5s
bm1684 4.31 -> 3.01, Yuv2rgb 2.75 -> 5.61 (25 ms runs), yolov5s bm1684x 1.45 -> 1.42, tdl
attribute 2.70 -> 3.70, baby cry 2.53 -> 3.31, hand keypoint 1.59 -> 0.78, topformer 3.21 ->
2.90; bench took 799 s. In one quiet process (cProfile, reset
between runs) face_detection fp32's checked run went 1.10 -> 0.95 s (unchecked 0.13 s). The goal
is still not met; what dominates (cProfile): LmemCheck._write's passes over per-byte state
(owner 4 bytes written per byte: 57 M bytes per face_detection run; the dead-write test where
bytes are unread), then _read's owner.min() for uninitialized bytes; in the racy streams, the
dead-write bookkeeping (_distinct over every clobbered operand). Race detection itself
(races.find_races) is < 5% of a model's checked run. Interval bookkeeping is the next step.

Then (f45b01f..c830264: owner / seen / lost per segment of lane offsets and lane, bmk/sim/lanemap.py;
a read piece found all written not checked again until a reset; small race windows tested in
Python; once the warning list is full only writes recorded), `--base f8b4a4b --rounds 2` (busy
machine, 1018 s; reports, races, warnings and outputs identical), on/off base -> this: bm1880
tiled 1.39 -> 0.98, golden 1.99 -> 1.39, add 2.06 -> 1.19, conv 1.37 -> 1.11; racy 40 9.08 ->
1.61, racy 80 15.4 -> 2.11; bm1684x demo 1.70 -> 1.18, yolov5s streams 1.76 -> 1.13; models:
face_detection fp32 7.46 -> 1.77, int8 b4 1.52 -> 1.28, retinaface 6.88 -> 1.95, yolov5s bm1684
3.09 -> 1.13, Yuv2rgb 7.28 -> 1.89, yolov5s bm1684x 1.50 -> 1.18, tdl attribute 4.67 -> 1.76,
baby cry 2.71 -> 1.21, hand keypoint 1.87 -> 1.81, topformer 2.62 -> 1.34. What remains: the copy
of every written byte into prev (without it, retinaface's checked run measured ~1.4x), numpy's
per-call cost on a model's many small pieces, and the racy streams' byte compares of dead writes.

Then (a tensor's channel slots covering every lane checked as one piece, two fast paths; the
checker column new; the dead-write rule counting bytes B took from another instruction as B's
own, which drops 20 false warnings on face_detection int8 b4 and 7 + 1 + 1 + 10 on the tdl
models), `--base 57f5c92 --rounds 2` (shared machine, 496 s; reports, races and outputs
identical), on/off base -> this (checker ms): face_detection fp32 1.91 -> 1.91 (83 -> 88),
int8 b4 1.26 -> 1.06, retinaface 1.52 -> 1.78 (184 -> 204), yolov5s bm1684 1.26 -> 1.23 (551 ->
507), Yuv2rgb 2.54 -> 2.64 (18 -> 18), yolov5s bm1684x 1.07 -> 1.07 (317 -> 260), tdl attribute
1.87 -> 1.50, baby cry 1.23 -> 1.25, hand keypoint 1.53 -> 1.50, topformer 1.26 -> 1.20; bm1880
1.08-1.20; bm1684x streams 1.01-1.13; racy 1.77-2.36. Best-of-2 CPU times here move by 10-30%
per side (retinaface's checker alone measured 170-341 ms over six runs of one process, while the
sum over its instructions of each one's best time went 190 -> 95-110 ms);
bench/sim_checks_instructions.py counts instructions instead.

Then (this stop, `--base 47cbbfd --rounds 2`, 710 s; reports, races and outputs identical): the
checker's ms unchanged, several unchecked runs faster (the int8 speed-ups of issue 34 item 2), so
some ratios rose: above 1.3 face_detection fp32 1.59, retinaface 1.50, cv184x yolov8n 1.50,
topformer motion 1.47, topformer pfv 1.32, fire_smoke 1.31-1.38, cls_attribute 1.50-1.60, racy
1.77-2.03; the rest 0.86-1.28. The 35-80 ms runs of the 2-5 ms models were Gmem.clear's page
faults (it zeroed every allocated 16 MiB page; now the ranges written): after that fix, `--only
Yuv2rgb,cls_keypoint,cls_attribute,face_detection,retinaface,hand_keypoint` gives the tiny
models 1.30-1.81 (about 1 ms of checks on 2-5 ms runs).

Then (replay of a kept checked run, lmemcheck._Recording, and races taken from the last run,
Simulator._races; `--base 8bbddb7 --rounds 4`, 985 s; reports, races and outputs identical):
steady on/off, base -> this: every model 1.02-1.77 -> 1.01-1.29 (retinaface 1.47 -> 1.26,
Yuv2rgb 1.76 -> 1.29, face_detection fp32 1.37 -> 1.15), bm1880 1.01-1.20, bm1684x streams
1.00-1.05, racy 40 / 80 1.78 / 1.97 -> 1.41 / 1.38 (their dead writes' byte compares, asked
again each run); 1st/off (checked one by one) 1.04-2.04 -> 1.08-1.89.

Then (a replayed question asks first a byte each changed cell's write changed when the run was
kept, lmemcheck.LmemCheck._again; `--base c4f5b7e --rounds 4` at 4595b6b, 1,194 s; reports, races
and outputs identical): racy 80 1.41 -> 1.33 (checker 7.7 -> 6.4 ms), racy 40 1.40 -> 1.37 (3.2 ->
3.1 ms: the copies of its writes and the compares of the cells they left unchanged); every model
0.96-1.27 -> 0.97-1.27, bm1880 1.04-1.18, bm1684x streams 1.08.

Then (a replay asks no question about a write no later instruction reads, copies into prev only
what the questions it asks compare, and keeps what each compares: lmemcheck._Question.skip,
_Recording.plan_replay, _Question.again; `--base e2a16c3 --rounds 4` at 491da9e, 1,180 s;
reports, races and outputs identical): racy 40 1.33 -> 1.10 (checker 2.9 -> 0.3 ms), racy 80
1.33 -> 1.11 (6.3 -> 2.2 ms); every model 0.93-1.23 -> 0.92-1.19, bm1880 1.01-1.18, bm1684x
streams 1.05-1.06: the goal is met on every workload. 1st/off (the run being kept learns which
values are read and plans its replays) 1.06-1.76 -> 1.07-1.88 (retinaface 1.55 -> 1.88).
"""
import argparse
import glob
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = "/work/shared/models"
GOAL = 1.3


def model_paths():
    pats = ("*/*.bmodel", "*/*.cvimodel", "*/*/*.bmodel", "*/*/*.cvimodel")
    return sorted(p for pat in pats for p in glob.glob(os.path.join(MODELS, pat)))


def _digest(report_or_reports, out):
    import numpy as np
    reps = report_or_reports if isinstance(report_or_reports, list) else [report_or_reports]
    h = hashlib.sha256()
    for r in reps:      # every report field but the warnings, which a tree's checker may word or count otherwise
        d = r.to_dict()
        d.pop("warnings", None)
        h.update(json.dumps(d, sort_keys=True, default=str).encode())
    races = sum(len(r.races) for r in reps)
    warns = sum(len(r.warnings) for r in reps)
    o = hashlib.sha256(b"".join(np.ascontiguousarray(v).tobytes() for v in out)).hexdigest()
    return h.hexdigest(), o, races, warns, sum(len(r.instructions) for r in reps)


# -- workloads: name -> go(checked) -> (report digest, output digest, races, warnings, instructions) --
def buffer_workload(chip, buf, gmem, out):
    import bmk
    sim = bmk.Simulator(chip)

    def go(checked):
        sim.reset()
        for addr, data in gmem.items():
            sim.gmem_write(addr, data)
        rep = sim.run(buf) if checked else sim.run(buf, races=False, checks=False)
        return rep, [sim.gmem_read(*out)] if out else []
    return go


def bm1880_workloads():
    sys.path.insert(0, str(ROOT / "bench"))
    import sim as bench_sim
    got = {}
    for name, (buf, gmem, out, _, _) in bench_sim.cases(1).items():
        got[f"bm1880 {name}"] = buffer_workload("bm1880", buf, gmem, out)
    return got


def racy_workloads():
    sys.path.insert(0, str(ROOT))
    from tests.race_stream import racy_stream
    return {f"bm1684 racy {n}": buffer_workload("bm1684", racy_stream(n, 1), {}, None) for n in (40, 80)}


def bm1684x_workloads():
    import numpy as np
    import bmk
    import bmk.bm1684x  # noqa: F401
    from bmk.cli import demo_bm1684x as demo
    got = {}
    demo.SHAPE = (1, 128, 1024, 32)
    demo.G_OUT = demo.G_IN + 128 * 1024 * 32 * 4
    ctx = bmk.bm1684x.Context()
    demo.build(ctx)
    x = np.random.default_rng(0).integers(-12000, 12000, demo.SHAPE, dtype=np.int32)
    got["bm1684x demo 1024"] = buffer_workload("bm1684x", ctx.acquire_streams(), {demo.G_IN: x.tobytes()},
                                               (demo.G_OUT, x.size))
    golden = ROOT / "tests" / "golden" / "bm1684x"
    streams = {e: (golden / f"yolov5s_bm1684x_int8_sym.{e}.bin").read_bytes() for e in ("tiu", "gdma")}
    got["bm1684x yolov5s streams"] = buffer_workload("bm1684x", streams, {}, None)
    return got


def model_workload(path):
    import numpy as np
    import bmk
    from bmk.models.run import prepare, simulate
    m = bmk.load_model(path)
    prepared = prepare(m)
    st = prepared[0]
    rng = np.random.default_rng(0)
    inputs = {}
    for t in st.inputs:
        dt = np.dtype(t.dtype)
        if dt.kind == "f":
            inputs[t.name] = rng.standard_normal(tuple(t.shape)).astype(dt)
        else:
            info = np.iinfo(dt)
            inputs[t.name] = rng.integers(max(info.min, -100), min(info.max, 100) + 1, tuple(t.shape)).astype(dt)
    sims = {}

    def go(checked):
        sim = sims.get(checked)
        if sim is None:
            sim = sims[checked] = bmk.Simulator(prepared[4], semantics=prepared[1])
        sim.reset()
        outs, reports, _ = simulate(m, inputs, prepared=prepared, sim=sim, races=checked, checks=checked)
        return [r for _, r in reports], [outs[k] for k in sorted(outs)]
    return go


def child(rounds, only, models):
    """Times every workload; prints one JSON line {name: {...} or {"error": text}}."""
    import gc
    import bmk
    builders = [bm1880_workloads, racy_workloads, bm1684x_workloads]
    work, result = {}, {}
    for b in builders:
        work.update(b())
    if models:
        for p in model_paths():
            name = "model " + os.path.relpath(p, MODELS)
            try:
                work[name] = model_workload(p)
            except bmk.BmkError as e:
                result[name] = {"error": str(e)[:160]}
    if only:
        work = {k: v for k, v in work.items() if any(o in k for o in only)}
    # the checker's own share of a checked run: the time inside LmemCheck.instruction (a
    # perf_counter pair per instruction, ~0.1 us, is all the wrapper adds to the checked run)
    from bmk.sim import lmemcheck
    inside = [0.0]
    instruction = lmemcheck.LmemCheck.instruction

    def timed(self, i, entries, *copies):         # copies: newer trees' third argument
        c = time.perf_counter()
        try:
            return instruction(self, i, entries, *copies)
        finally:
            inside[0] += time.perf_counter() - c
    lmemcheck.LmemCheck.instruction = timed
    for name, go in work.items():
        t = {False: [], True: [], "checker": []}
        seen = {}
        try:
            for r in range(rounds + 1):             # round 0 warms up, untimed
                for checked in (False, True):
                    gc.collect()
                    inside[0] = 0.0
                    c = time.process_time()
                    rep, out = go(checked)
                    dt = time.process_time() - c
                    d = _digest(rep, out)
                    if seen.setdefault(checked, d) != d:
                        raise SystemExit(f"{name}: checked={checked} differs between rounds")
                    if r:
                        t[checked].append(dt)
                        if checked:
                            t["checker"].append(inside[0])
        except bmk.BmkError as e:
            result[name] = {"error": str(e)[:160]}
            continue
        if seen[False][1] != seen[True][1]:
            raise SystemExit(f"{name}: outputs differ with checks on and off")
        rep, out, races, warns, n = seen[True]
        # "first": round 1's checked run, the first after the warm-up: every instruction checked
        # one by one (a kept run replays from round 2 on: lmemcheck._Recording)
        result[name] = {"off": min(t[False]), "on": min(t[True]), "checker": min(t["checker"]), "first": t[True][0],
                        "report": rep, "out": out, "races": races, "warnings": warns, "n": n}
        print(f"# {name}: off {min(t[False]) * 1e3:.1f} ms on {min(t[True]) * 1e3:.1f} ms (checker "
              f"{min(t['checker']) * 1e3:.1f} ms)", file=sys.stderr, flush=True)
    print(json.dumps(result))


def run_child(tree, rounds, only, models):
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = [sys.executable, str(ROOT / "bench" / "sim_checks.py"), "--child", "--rounds", str(rounds)]
    if only:
        args += ["--only", ",".join(only)]
    if not models:
        args.append("--no-models")
    res = subprocess.run(args, cwd=tree, env=env, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-models", action="store_true")
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    only = [o for o in a.only.split(",") if o]
    if a.child:
        child(a.rounds, only, not a.no_models)
        return
    t0 = time.perf_counter()
    trees = {"this": ROOT}
    if a.base:
        sys.path.insert(0, str(ROOT / "bench"))
        from worktree import base_tree
        trees = {"base": base_tree(a.base), "this": ROOT}
    # the sides take turns: a child per tree runs all its rounds, the trees alternate twice
    res = {}
    for half in range(2 if a.base else 1):
        for side, tree in trees.items():
            got = run_child(tree, max(1, a.rounds // (2 if a.base else 1)), only, not a.no_models)
            for k, v in got.items():
                old = res.setdefault(side, {}).get(k)
                if old and "on" in v:
                    v = {**v, **{t: min(v[t], old[t]) for t in ("on", "off", "checker", "first") if t in old}}
                res[side][k] = v
    head = f"{'workload':52} {'instrs':>7} {'races':>5} {'warns':>5}"
    for side in trees:
        head += f" | {side + ' off ms':>11} {side + ' on ms':>11} {'on/off':>6} {'checker':>7} {'1st/off':>7}"
    print(f"Simulator.run checks on vs off; CPU ms, best of {a.rounds} rounds; goal on/off <= {GOAL}"
          + (f"; base = {a.base}" if a.base else ""))
    print(head)
    worst = {side: 0.0 for side in trees}
    worst_first = {side: 0.0 for side in trees}
    for name, v in res["this"].items():
        if "error" in v:
            print(f"{name:52} not run: {v['error']}")
            continue
        base_warns = res.get("base", {}).get(name, {}).get("warnings", v["warnings"])
        warns = f"{v['warnings']}" if base_warns == v["warnings"] else f"{base_warns}>{v['warnings']}"
        line = f"{name:52} {v['n']:7d} {v['races']:5d} {warns:>5}"
        for side in trees:
            w = res[side].get(name, {})
            if "on" not in w:
                line += f" | {'-':>11} {'-':>11} {'-':>6} {'-':>7} {'-':>7}"
                continue
            if side == "base":
                assert (w["report"], w["out"], w["races"]) == (v["report"], v["out"], v["races"]), \
                    f"{name}: base and this tree disagree"
            r = w["on"] / w["off"]
            worst[side] = max(worst[side], r)
            if "first" in w:
                worst_first[side] = max(worst_first[side], w["first"] / w["off"])
            first = f"{w['first'] / w['off']:7.2f}" if "first" in w else f"{'-':>7}"
            line += f" | {w['off'] * 1e3:11.1f} {w['on'] * 1e3:11.1f} {r:6.2f} {w['checker'] * 1e3:7.1f} {first}"
        print(line)
    print("worst on/off: " + ", ".join(f"{s} {r:.2f}" for s, r in worst.items())
          + "; worst 1st/off: " + ", ".join(f"{s} {r:.2f}" for s, r in worst_first.items())
          + (" (reports, races and outputs identical base vs this; warnings base>this where they differ)"
             if a.base else "")
          + f"; bench took {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
