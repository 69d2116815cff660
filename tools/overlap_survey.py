"""Which commands of a compiled model write local bytes they also read, and how (issue 32.14).

Runs the model's first stage on the simulator with the local-memory checks on (their access
log: every instruction's reads and writes, with exact layouts) on fixed random inputs, and for
each instruction compares every local write with every local read of the same instruction:
- in place: the same bytes in the same order (lane mask and range equal, layouts equal once
  dimensions of one element are left out: bmk.sim.intervals.normal_form);
- partial: other layouts whose bytes meet on a common NPU (bmk.sim.intervals.common_range,
  the race detector's exact test; an entry without a layout counts by its range).
The counts per instruction kind, and the first partial instance of each kind, are what decided
where the simulator refuses a partial overlap (bm1684: none of the shared models has one) and
where it does not (bm1684x: narrowing casts and requantizations in place, broadcasting copies).

    python tools/overlap_survey.py MODEL [MODEL ...]
"""
import collections
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import bmk  # noqa: E402
from bmk.models.run import simulate  # noqa: E402
from bmk.sim import lmemcheck  # noqa: E402
from bmk.sim.intervals import common_range, normal_form  # noqa: E402
from bmk.sim.memory import LMEM  # noqa: E402


def _form(layout):
    """A layout's bytes in a comparable form (dims of one element and their strides left out)."""
    return None if layout is None else normal_form(layout)


def classify(entries):
    """(in place, partial) write/read pairs of one instruction's access-log entries, and the
    first partial pair."""
    local = [e for e in entries if e[0] == LMEM]
    writes, reads = [e for e in local if e[4]], [e for e in local if not e[4]]
    same = partial = 0
    first = None
    for w in writes:
        for r in reads:
            if not (w[1] & r[1]) or not (w[2] < r[3] and r[2] < w[3]):
                continue
            if (w[1], w[2], w[3]) == (r[1], r[2], r[3]) and _form(w[5]) == _form(r[5]):
                same += 1
            elif w[5] is None or r[5] is None or common_range(w[5], r[5], max(w[2], r[2]),
                                                              min(w[3], r[3])) is not None:
                partial += 1
                first = first or (w, r)
    return same, partial, first


def inputs(stage, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for t in stage.inputs:
        d = np.dtype(t.dtype)
        if d.kind == "u":
            out[t.name] = rng.integers(0, 256, t.shape).astype(d)
        elif d.kind == "i":
            out[t.name] = rng.integers(-8, 8, t.shape).astype(d)
        else:
            out[t.name] = rng.standard_normal(t.shape).astype(d)
    return out


def survey(path):
    """{"in_place": Counter(kind), "partial": Counter(kind), "first": {kind: (index, write, read)}}."""
    logged = []
    original = lmemcheck.LmemCheck.instruction

    def instruction(self, i, entries, *flags):
        logged[-1].append((i, classify(entries)))
        return original(self, i, entries, *flags)

    def start(self, n, *key, _start=lmemcheck.LmemCheck.start):
        logged.append([])
        return _start(self, n, *key)

    m = bmk.load_model(str(path))
    lmemcheck.LmemCheck.instruction, saved_start = instruction, lmemcheck.LmemCheck.start
    lmemcheck.LmemCheck.start = start
    try:
        _, reports, _ = simulate(m, inputs(m.nets[0].stages[0]), checks=True)
    finally:
        lmemcheck.LmemCheck.instruction, lmemcheck.LmemCheck.start = original, saved_start
    out = {"in_place": collections.Counter(), "partial": collections.Counter(), "first": {}}
    for (label, report), run in zip(reports, logged):
        for i, (same, partial, first) in run:
            kind = f"{report.instructions[i].engine}.{report.instructions[i].kind}"
            if same:
                out["in_place"][kind] += same
            if partial:
                out["partial"][kind] += partial
            if first is not None and kind not in out["first"]:
                out["first"][kind] = (i, first[0], first[1])
    return out


def main(argv=None):
    paths = (argv if argv is not None else sys.argv[1:])
    if not paths:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for path in paths:
        s = survey(path)
        print(f"{path}: partial {dict(sorted(s['partial'].items())) or 'none'}; "
              f"in place {dict(sorted(s['in_place'].items()))}")
        for kind, (i, w, r) in sorted(s["first"].items()):
            print(f"  {kind} instruction {i}: writes lanes {w[1]:#x} [{w[2]:#x}, {w[3]:#x}) layout {w[5]}; "
                  f"reads lanes {r[1]:#x} [{r[2]:#x}, {r[3]:#x}) layout {r[5]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
