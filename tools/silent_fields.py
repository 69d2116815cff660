"""Silent fields (issue 27 item 5): change one field of one real command, re-encode, run the
model, and see whether anything notices.

For a compiled model the simulator runs (bm1684, bm1684x), on fixed inputs:
1. the stage runs once as it is: the baseline outputs;
2. sampled commands (per instruction kind, up to `per_kind` commands of each, fixed seed) have
   each of their fields, one at a time, changed to another value in the field's range
   (`other_value`: a 1-bit field flipped, an enum field another of its names, else old + 1,
   old - 1 or one bit flipped, chosen by the seed);
3. the group's records with that one change are encoded into raw streams and decoded back
   (`bmk.encode(chip, records, raw=True)`, `bmk.decode`: what a changed file would hold), and
   the stage runs with those streams in place of the group's (bmk.models.run.prepare with
   `records`);
4. each case is classified: `changed` (some output differs, byte for byte), `refused` (a
   SimulationError or ModelError naming the changed field), `error` (another BmkError: the
   change made the program invalid some other way, e.g. an address out of memory, a wait that
   never ends), `identical` (every output byte the same) or `crash` (any other exception, or
   one the simulator reports as "cannot be simulated (TypeError ...)": a bug of bmk);
5. an identical case is run alone (`Experiment.effect`: the command's semantics on value-rich
   memories, with and without the change): "unread" when it writes other bytes or values (the
   outputs do not show it), else "none", which a rule of bmk/sim/silent.py must explain.

tests/sim/test_silent_fields.py runs a sample of this on Yuv2rgb and face_detection and
requires every identical case to be explained: a reason the field cannot change that command's
result, each shown by its own test.

    python tools/silent_fields.py MODEL [--per-kind N] [--seed S] [--all] [--json OUT]
                                        [--kind tiu.conv ...] [--field res0_h_str ...]

prints the counts per outcome and every identical case with the rule that explains it (or
"UNEXPLAINED").
"""
import argparse
import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import bmk  # noqa: E402
from bmk.errors import BmkError, ModelError, SimulationError  # noqa: E402
from bmk.models import run as model_run  # noqa: E402
from bmk.sim import silent  # noqa: E402


class Case(dict):
    """One experiment: {label, index, name, cls, field, old, new, outcome, detail, rule}."""


def default_inputs(model, net=0, stage=0, seed=0):
    """Deterministic inputs: the vendor's reference input when the model has one beside it
    (input_ref_data.dat, raw, in tensor order), else seeded random values (floats ~ N(0, 1),
    integers over their range)."""
    st = model.nets[net].stages[stage]
    ref = Path(model.path).parent / "input_ref_data.dat" if model.path else None
    if ref is not None and ref.is_file():
        data, out, at = ref.read_bytes(), {}, 0
        for t in st.inputs:
            n = int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize
            out[t.name] = np.frombuffer(data[at:at + n], t.dtype).reshape(t.shape)
            at += n
        if at == len(data):
            return out
    rng = np.random.default_rng(seed)
    out = {}
    for t in st.inputs:
        dt = np.dtype(t.dtype)
        if dt.kind == "f":
            out[t.name] = rng.standard_normal(t.shape).astype(dt)
        else:
            info = np.iinfo(dt)
            out[t.name] = rng.integers(info.min, info.max, t.shape, dtype=dt, endpoint=True)
    return out


def other_value(field, old, rng):
    """Another value of `field` in its range (module docstring, step 2)."""
    if field.width == 1:
        return 1 - old
    if field.enum:
        values = [v for _, v in field.enum if v != old]
        if values:
            return int(values[rng.integers(len(values))])
    flip = old ^ (1 << int(rng.integers(field.width)))
    choices = [v for v in (old + 1, old - 1, flip) if 0 <= v <= field.max and v != old]
    return int(choices[rng.integers(len(choices))])


def sample(records, per_kind, rng):
    """Indices of up to `per_kind` commands of each instruction kind (all: per_kind None)."""
    by_kind = collections.defaultdict(list)
    for i, r in enumerate(records):
        by_kind[r.name].append(i)
    out = []
    for name in sorted(by_kind):
        idx = by_kind[name]
        if per_kind is not None and len(idx) > per_kind:
            idx = sorted(int(i) for i in rng.choice(idx, per_kind, replace=False))
        out.extend(idx)
    return sorted(out)


def _footprint(entries):
    """The bytes an instruction wrote, from its access log: {(space, lane mask): sorted offsets}
    (the exact bytes where the entry gives its layout, else its [lo, hi) bounds). Two commands
    writing other bytes did different things, whatever values those bytes held."""
    out = {}
    for space, mask, lo, hi, write, layout in entries:
        if not write:
            continue
        if layout is None:
            offs = np.arange(lo, hi, dtype=np.int64)
        else:
            base, dims, strides = layout
            offs = np.full((), base, np.int64)
            for d, st in zip(dims, strides):
                offs = np.add.outer(offs, np.arange(d, dtype=np.int64) * st)
            offs = offs.ravel()
        key = (getattr(space, "name", space), mask)
        out[key] = np.union1d(out[key], offs) if key in out else np.unique(offs)
    return {k: v.tobytes() for k, v in out.items()}


def _same_memories(a, b):
    if a.keys() != b.keys():
        return False
    for name, x in a.items():
        y = b[name]
        if isinstance(x, dict):
            if x.keys() != y.keys() or not all(np.array_equal(x[i], y[i]) for i in x):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def _same(a, b):
    return a.keys() == b.keys() and all(a[k].tobytes() == b[k].tobytes() for k in a)


def _names_field(message, field):
    import re
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9_])", message) is not None


BLOCK = 1_000_003 * 4
ROLLS = (0, 28)         # Experiment._random_memory's variants


def corner_bytes(rng, n):
    """n bytes of memory that tell values apart: each 32-bit word is, at random, an fp32 of
    k / 2 (k in [-600, 600]: ties for every rounding mode, values in and out of 8-bit
    ranges), two fp16 or two bf16 of k / 2 (k in [-60, 60]), or random bits."""
    if n > BLOCK:                       # a block tiled: its period is no stride a command uses
        block = corner_bytes(rng, BLOCK)
        return np.resize(block, n)
    words = n // 4
    pick = rng.integers(0, 4, words)
    k = rng.integers(-600, 601, words)
    out = rng.integers(0, 1 << 32, words, dtype=np.uint64).astype(np.uint32)
    out = np.where(pick == 0, (k / 2).astype(np.float32).view(np.uint32), out)
    h = rng.integers(-60, 61, (words, 2)) / 2
    f16 = h.astype(np.float16).view(np.uint16).astype(np.uint32)
    out = np.where(pick == 1, f16[:, 0] | (f16[:, 1] << 16), out)
    b16 = h.astype(np.float32).view(np.uint32) >> 16
    out = np.where(pick == 2, b16[:, 0] | (b16[:, 1] << 16), out)
    data = np.zeros(n, np.uint8)
    data[:words * 4] = out.astype("<u4").view(np.uint8)
    return data


class Experiment:
    """One model on fixed inputs, its baseline, and `case(...)` for one changed field."""

    def __init__(self, path, inputs=None, net=0, stage=0):
        self.model = bmk.load_model(str(path))
        self.net, self.stage = net, stage
        self.inputs = default_inputs(self.model, net, stage) if inputs is None else inputs
        self.prepared = model_run.prepare(self.model, net, stage)
        self.spec = self.prepared.spec
        self.records = {g.label: self.model.records(g) for g in self.prepared.groups}
        self.sim = None
        self._before, self._image = {}, None
        self.baseline = self._run(self.prepared)

    def _run(self, prepared):
        if self.sim is None:
            self.sim = bmk.sim.Simulator(self.spec, semantics=prepared.semantics)
        else:
            self.sim.reset()
        outputs, _, _ = model_run.simulate(self.model, self.inputs, self.net, self.stage, prepared=prepared,
                                           sim=self.sim, races=False)
        return outputs

    def _random_memory(self, variant=0):
        """The Simulator with the memories of a fresh chip with the stage's coefficients and
        inputs written, then every byte of local memory and of every global page they occupy
        value-rich (corner_bytes, fixed seed); variant k > 0: the same bytes moved on by
        ROLLS[k] bytes (other values at every address)."""
        if self._image is None:
            sim = self.sim
            sim.reset()
            st = self.prepared.stage
            if st.coeff is not None and st.coeff.size:
                sim.gmem_write(st.coeff.address, self.model.coefficients(st))
            for t in st.inputs:
                sim.gmem_write(t.address, b"\x01" * model_run._nbytes(t, self.model.path))
            rng = np.random.default_rng(1234)
            image = {}
            for name, mem in sim.memories.items():
                if mem is sim.lmem or mem is sim.gmem:
                    arrays = ([mem.data] if hasattr(mem, "data") else list(mem.pages.values()))
                    for a in arrays:
                        a[:] = corner_bytes(rng, a.size)
                image[name] = (mem.data.copy() if hasattr(mem, "data")
                               else {i: p.copy() for i, p in mem.pages.items()})
            self._image = image
        sim = self.sim
        for name, mem in sim.memories.items():
            saved = self._image[name]
            if isinstance(saved, dict):
                for i in [i for i in mem.pages if i not in saved]:
                    mem.pages[i].fill(0)
                for i, p in saved.items():
                    mem._page(i)[:] = np.roll(p, ROLLS[variant]) if variant else p
            else:
                mem.data[:] = np.roll(saved, ROLLS[variant]) if variant else saved
        return sim

    def _alone(self, rec, variant=0, against=None):
        """Every memory after `rec` runs alone on value-rich memories (_random_memory): its
        semantics function, as the simulator's run loop calls it. against: a state _alone
        returned: whether the memories equal it (nothing copied)."""
        from bmk.sim.memory import AccessLog
        sim = self._random_memory(variant)
        sem = self.prepared.semantics
        sem.check(self.spec, rec.engine, rec.fields)
        fn = sem.function(rec.engine, rec.kind)
        log = AccessLog()
        sim.memo, sim.trail.log = {}, log
        try:
            with np.errstate(all="ignore"):
                fn(sim, dict(rec.fields))
        finally:
            sim.memo = sim.trail.log = None
        if against is not None:
            return _footprint(log.entries) == against["written"] and _same_memories(
                {name: (mem.data if hasattr(mem, "data") else {i: p for i, p in mem.pages.items() if p.any()})
                 for name, mem in sim.memories.items()}, against["memories"])
        return {"written": _footprint(log.entries),
                "memories": {name: (mem.data.copy() if hasattr(mem, "data") else
                                    {i: p.copy() for i, p in mem.pages.items() if p.any()})
                             for name, mem in sim.memories.items()}}

    def effect(self, label, index, decoded):
        """"none" when the command, run alone on random memories (_alone), leaves the same
        memories with the change (decoded: the group's changed records) as without; "unread"
        when they differ: the command does something else, which the outputs do not show (a
        result nobody reads, or overwritten before it is, or rounded away downstream)."""
        rec = self.records[label][index]
        # the changed command: the one at the same place of the same stream (a changed sync id
        # can move it in the program order the records are merged in)
        changed = next((r for r in decoded if (r.engine, r.stream, r.offset) == (rec.engine, rec.stream, rec.offset)),
                       decoded[index])
        for variant in range(len(ROLLS)):   # several memories: a change one's values happen to hide
            key = (label, index, variant)
            if key not in self._before:
                if variant == 0:
                    self._before = {}       # one command's states kept at a time
                self._before[key] = self._alone(self.records[label][index], variant)
            if not self._alone(changed, variant, against=self._before[key]):
                return "unread"
        return "none"

    def field_of(self, rec, name):
        return self.spec.field(rec.engine, name, rec.cls)

    def case(self, label, index, name, value):
        """Case of records[label][index] with field `name` set to `value`."""
        records = list(self.records[label])
        rec = records[index]
        case = Case(label=label, index=index, name=rec.name, cls=rec.cls, field=name, old=rec.fields[name],
                    new=value, outcome=None, detail="", rule=None)
        try:
            records[index] = rec.__class__(rec.engine, rec.cls, rec.kind, dict(rec.fields, **{name: value}),
                                           rec.stream, rec.offset, dict(rec.header), rec.core, rec.data)
            chip = self.model.chip
            decoded = bmk.decode(chip, bmk.encode(chip, records, raw=True))
            case["new_name"] = decoded[index].name if index < len(decoded) else None
            prepared = model_run.prepare(self.model, self.net, self.stage, records={label: decoded}, sim=self.sim)
            outputs = self._run(prepared)
        except (SimulationError, ModelError) as e:
            msg = str(e)
            crashed = re.search(r"cannot be simulated \(\w+: ", msg)     # core.py: a non-bmk exception
            case["outcome"] = ("crash" if crashed else
                               "refused" if _names_field(msg, name) else "error")
            case["detail"] = msg
            return case
        except BmkError as e:
            case["outcome"], case["detail"] = "error", f"{type(e).__name__}: {e}"
            return case
        except Exception as e:      # a bug of bmk: the tool reports it, the test fails on it
            case["outcome"], case["detail"] = "crash", f"{type(e).__name__}: {e}"
            return case
        case["outcome"] = "identical" if _same(outputs, self.baseline) else "changed"
        if case["outcome"] == "identical":
            try:
                case["effect"] = self.effect(label, index, decoded)
            except BmkError as e:
                case["effect"] = f"not measured ({e})"
            if case["effect"] == "unread":
                case["rule"] = silent.UNREAD
            else:
                case["rule"] = silent.explain(self.spec, rec, name, case["old"], value)
        return case

    def run(self, per_kind=2, seed=0, fields=None, kinds=None):
        """[Case] over sampled commands (per_kind of each kind, or of `kinds` only; None: every
        command), each of their fields (or only `fields`) changed once."""
        rng = np.random.default_rng(seed)
        cases = []
        for label, records in self.records.items():
            for i in sample(records, per_kind, rng):
                rec = records[i]
                if kinds is not None and rec.name not in kinds:
                    continue
                for name in sorted(rec.fields):
                    if fields is not None and name not in fields:
                        continue
                    value = other_value(self.field_of(rec, name), rec.fields[name], rng)
                    cases.append(self.case(label, i, name, value))
        return cases


def sampled_pairs(ex, n, seed=0):
    """n (label, index, field) drawn at random (fixed seed) from every field of every command
    of the experiment's groups: a bounded sample for tests."""
    rng = np.random.default_rng(seed)
    every = [(label, i, name) for label, records in ex.records.items() for i, r in enumerate(records)
             for name in sorted(r.fields)]
    picks = rng.choice(len(every), min(n, len(every)), replace=False)
    return [every[int(k)] for k in sorted(picks)]


def run_pairs(ex, pairs, seed=0):
    """[Case] of each (label, index, field) changed once (other_value, fixed seed)."""
    rng = np.random.default_rng(seed)
    out = []
    for label, i, name in pairs:
        rec = ex.records[label][i]
        out.append(ex.case(label, i, name, other_value(ex.field_of(rec, name), rec.fields[name], rng)))
    return out


def summary(cases):
    return collections.Counter(c["outcome"] for c in cases)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--per-kind", type=int, default=2)
    ap.add_argument("--all", action="store_true", help="every command (not a sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write every case here")
    ap.add_argument("--kind", action="append", help="only commands of this kind (e.g. tiu.conv; repeatable)")
    ap.add_argument("--field", action="append", help="only this field (repeatable)")
    a = ap.parse_args(argv)
    ex = Experiment(a.model)
    cases = ex.run(None if a.all else a.per_kind, a.seed, set(a.field) if a.field else None,
                   set(a.kind) if a.kind else None)
    counts = summary(cases)
    print(f"{a.model}: {len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for c in cases:
        if c["outcome"] in ("identical", "crash"):
            why = (c["rule"] or "UNEXPLAINED") if c["outcome"] == "identical" else c["detail"]
            print(f"  {c['outcome']:9} {c['label']} #{c['index']} {c['name']} {c['field']} "
                  f"{c['old']:#x} -> {c['new']:#x}: {why}")
    if a.json:
        Path(a.json).write_text(json.dumps(cases, indent=1, default=str))
    return 1 if counts.get("crash") or any(c["outcome"] == "identical" and not c["rule"] for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
