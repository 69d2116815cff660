"""Running a compiled model on bmk's simulator: `m.run(inputs)`.

Plumbing only; what each instruction computes is the chip's simulator semantics
(bmk/sim/<chip>). The steps, all checks before any work:
1. the stage's subnets are all static TPU subnets on one core, the chip has a decoder and a
   simulator, every instruction of every group decodes, has semantics and passes the
   semantics' field checks (a kind without semantics, a CPU or dynamic subnet, a multi-core
   group, an engine the specs do not decode: ModelError naming it);
2. every input is given, with the tensor's logical shape and a dtype that casts to its own;
3. coefficients are written at their device address (CoeffMem.address) and inputs at theirs,
   in their storage mode (bmk.models.storage: 4N/2N);
4. every group runs, in file order (subnet by subnet), on one Simulator, so later subnets see
   what earlier ones wrote;
5. outputs are read back at their device addresses, in their logical shape and dtype.

Device addresses: BM1684/BM1684X bmodels carry absolute global-memory addresses (coefficients
at CoeffMem.address, activations from NetParameter.ctx_addr: every GDMA address of the shared
models' streams falls inside those two regions), which the simulator takes as they are.

A model run again does not decode or check again: step 1's result (`Prepared`: the groups'
compiled Programs, bmk.sim.core: one fields dict per distinct instruction, not the decoded
records) is kept on the Model (`Model.kept`) per net and stage, as long as the chip's spec and
semantics are the same objects. `m.run` also keeps the Simulator it ran on (one per model,
whatever the stage: any Program of its chip runs on it) and takes it again, reset to a fresh
chip's state (Simulator.reset), so its views and per-instruction plans are made once per model;
`simulate` (bmk-run) runs on a new Simulator it hands back.
"""
import json
import typing

import numpy as np

from bmk.errors import BmkError, ModelError, SimulationError
from bmk.models import storage
from bmk.models.chips import spec_for
from bmk.models.decoding import split_engines


def _stage(model, net, stage):
    if not 0 <= net < len(model.nets):
        raise ModelError(f"run: net must be in [0, {len(model.nets) - 1}], not {net}", model.path)
    stages = model.nets[net].stages
    if not 0 <= stage < len(stages):
        raise ModelError(f"run: stage must be in [0, {len(stages) - 1}] for net {net}, not {stage}", model.path)
    return stages[stage]


class Prepared(typing.NamedTuple):
    """A stage made ready to run (prepare): its groups, in run order, and their Programs."""
    stage: object               # the Stage
    semantics: object           # the chip's Semantics
    groups: list                # [Group], in run order
    programs: list              # a bmk.sim.core.Program per group
    spec: object                # the ChipSpec the programs were compiled for


IDLE = "simulator"              # Model.kept[IDLE]: (Simulator, clean), the one m.run takes again
                                # (clean: it never ran since it was made or reset)


def _idle(model, prepared):
    """The model's kept Simulator, taken (a run in another thread makes its own), reset if it
    ran; None when there is none for this chip spec and semantics."""
    sim, clean = model.kept.pop(IDLE, (None, True))
    if sim is None or sim.chip is not prepared.spec or sim.semantics is not prepared.semantics:
        return None
    if not clean:
        sim.reset()
    return sim


def prepare(model, net=0, stage=0, records=None, sim=None):
    """Prepared(Stage, Semantics, [Group], [Program], ChipSpec) of a stage that can be simulated;
    ModelError naming what cannot (step 1 of the module docstring), before any work. Kept on
    the model: a second call returns the first one's answer.
    records: {group label: [Record]} run in place of those groups' own commands (e.g. streams
    changed and decoded again: tools/silent_fields.py), checked the same way; such a Prepared
    is neither kept nor taken from what is kept; sim: the Simulator to compile them on (its
    plans are made once: the one they will run on), default a new one."""
    from bmk.sim.semantics import REGISTRY, semantics_for
    st = _stage(model, net, stage)
    where = f"net{net}/stage{stage}"
    spec = spec_for(model.chip, model.path, "; run needs its decoder and simulator")
    if model.chip not in REGISTRY:
        raise ModelError(f"run: chip {model.chip} has no simulator (chips with one: {', '.join(sorted(REGISTRY))})",
                         model.path)
    sem = semantics_for(model.chip)
    kept = model.kept.get((net, stage)) if records is None else None
    if kept is not None and kept.spec is spec and kept.semantics is sem:
        return kept
    for sn in st.subnets:
        if sn.kind != "tpu":
            raise ModelError(f"run: {where}/subnet{sn.index} (id {sn.id}) is a {sn.kind.upper()} subnet "
                             f"({sn.detail}); bmk simulates static TPU subnets only", model.path)
    if not st.subnets:
        raise ModelError(f"run: {where} has no subnet to run", model.path)
    if st.coeff is not None and st.coeff.encrypted:
        raise ModelError(f"run: {where}: the coefficients are encrypted (CoeffMem.encrypt_mode)", model.path)
    planned, missing, first = [], {}, {}
    for sn in st.subnets:
        for g in sn.groups:
            if g.core:
                raise ModelError(f"run: {g.label} runs on core {g.core}: bmk simulates one core", model.path)
            if g.parts:
                _, unknown = split_engines(spec, g)
                if unknown:
                    raise ModelError(f"run: {g.label} has {', '.join(unknown)} commands, which the {spec.name} specs "
                                     "do not decode", model.path)
            recs = model.records(g) if records is None or g.label not in records else records[g.label]
            for i, r in enumerate(recs):
                key = (r.engine, r.kind)
                if key not in sem.kinds:
                    missing[key] = missing.get(key, 0) + 1
                    first.setdefault(key, (g.label, i))
            planned.append((g, recs))
    if missing:
        kinds = ", ".join(f"{e}.{k or 'raw'} ({n} instruction{'s' * (n != 1)}, first {first[(e, k)][0]} "
                          f"#{first[(e, k)][1]})" for (e, k), n in missing.items())
        raise ModelError(f"run: the {model.chip} simulator has no semantics for {kinds}; nothing was run",
                         model.path)
    # Compiling checks every distinct instruction (sync ids aside: semantics.py) and resolves
    # every wait, on a Simulator that has not run yet (kept for m.run).
    from bmk.sim import Simulator
    if records is None or sim is None or sim.chip is not spec or sim.semantics is not sem:
        sim = Simulator(spec, semantics=sem)
    programs = []
    for g, recs in planned:
        try:
            programs.append(sim.compile(recs))
        except SimulationError as e:
            i = getattr(e, "instruction", None)
            if i is None:
                raise ModelError(f"run: {g.label}: {e}; nothing was run", model.path) from None
            r = recs[i]
            raise ModelError(f"run: {g.label} instruction {i} ({r.name}, {r.stream or 'buffer'} byte {r.offset}) "
                             f"cannot be simulated: {e.reason}; nothing was run", model.path) from None
    prepared = Prepared(st, sem, [g for g, _ in planned], programs, spec)
    if records is None:
        model.kept[(net, stage)] = prepared
        model.kept.setdefault(IDLE, (sim, True))
    return prepared


def _inputs(model, st, inputs):
    """{name: logical array} checked against the stage's inputs (step 2)."""
    if not isinstance(inputs, dict):
        raise ModelError(f"run: inputs must be a dict {{name: array}}, not {type(inputs).__name__}", model.path)
    names = [t.name for t in st.inputs]
    unknown = [k for k in inputs if k not in names]
    if unknown:
        raise ModelError(f"run: no input called {unknown[0]!r} (inputs: {', '.join(names)})", model.path)
    out = {}
    for t in st.inputs:
        if t.name not in inputs:
            raise ModelError(f"run: input {t.name!r} {tuple(t.shape)} {t.type.name} must be given", model.path)
        out[t.name] = _as_array(inputs[t.name], t, model.path)
    return out


def _as_array(values, tensor, path):
    arr = np.asarray(values)
    if tuple(arr.shape) != tuple(tensor.shape):
        raise ModelError(f"run: input {tensor.name!r} must have shape {tuple(tensor.shape)}, not {tuple(arr.shape)}",
                         path)
    if arr.dtype != tensor.dtype:
        if not np.can_cast(arr.dtype, tensor.dtype, "same_kind"):
            raise ModelError(f"run: input {tensor.name!r} must have a dtype that casts to {tensor.type.name} "
                             f"({tensor.dtype}), not {arr.dtype}", path)
        arr = arr.astype(tensor.dtype)
    return arr


def _check_region(model, spec, what, address, size):
    glob = spec.space("global")
    if size and not (glob.base <= address and address + size <= glob.base + glob.size):
        raise ModelError(f"run: {what} [0x{address:x}, 0x{address + size:x}) must lie inside {spec.name} global "
                         f"memory [0x{glob.base:x}, 0x{glob.base + glob.size:x})", model.path)


def _nbytes(t, path):
    try:
        return storage.device_nbytes(t.shape, t.dtype, t.storage, t.name)
    except ModelError as e:
        raise ModelError(str(e), path) from None


def simulate(model, inputs, net=0, stage=0, progress=None, prepared=None, sim=None, races=True, checks=False,
             strict=False):
    """Steps 1-5: -> (outputs {name: ndarray}, [(group label, Report)], Simulator).
    prepared: what `prepare(model, net, stage)` returned, when the caller checked first;
    sim: a Simulator in a fresh chip's state to run on (default: a new one); races: detect
    races (Simulator.run) for the reports; checks, strict: the local-memory checks
    (bmk/sim/lmemcheck.py), off by default for a compiled model: the vendor's Yuv2rgb reads
    local bytes it never wrote (a stride-2 read of twice the row it converted) and the next
    row overwrites, unread, half of what it computed from them (values its output never
    uses), so a model's warnings are for whoever asks for them (bmk-run MODEL --strict)."""
    from bmk.sim import Simulator
    st, sem, groups, programs, spec = prepared or prepare(model, net, stage)
    values = _inputs(model, st, inputs)
    if st.coeff is not None and st.coeff.size:
        _check_region(model, spec, "coefficients", st.coeff.address, st.coeff.size)
    for t in st.inputs + st.outputs:
        _check_region(model, spec, f"tensor {t.name!r}", t.address, _nbytes(t, model.path))
    if sim is None:
        sim = Simulator(spec, semantics=sem)
    if st.coeff is not None and st.coeff.size:
        sim.gmem_write(st.coeff.address, model.coefficients(st))
    for t in st.inputs:
        sim.gmem_write(t.address, storage.to_device(values[t.name], t.storage, t.name))
    reports = []
    for g, program in zip(groups, programs):
        try:
            reports.append((g.label, sim.run(program, races=races, progress=progress, checks=checks,
                                             strict=strict)))
        except BmkError as e:
            raise ModelError(f"run: {g.label}: {e}", model.path) from None
    outputs = {}
    for t in st.outputs:
        data = sim.gmem_read(t.address, _nbytes(t, model.path))
        outputs[t.name] = storage.from_device(data, t.shape, t.dtype, t.storage, t.name)
    return outputs, reports, sim


def run_model(model, inputs, net=0, stage=0, trace=None, progress=None):
    """m.run: {input name: array} -> {output name: ndarray}; trace: a path for a Chrome/Perfetto
    trace of every group (write_trace). It returns the outputs only, so it does not look for
    races (bmk-run and `simulate` report them)."""
    prepared = prepare(model, net, stage)
    sim = _idle(model, prepared)
    outputs, reports, sim = simulate(model, inputs, net, stage, progress, prepared=prepared, sim=sim, races=False)
    model.kept[IDLE] = (sim, False)
    if trace:
        write_trace(reports, trace)
    return outputs


def write_trace(reports, path):
    """One trace of several groups' Reports: a process per group, each starting where the one
    before ended (the groups run one after another)."""
    events, shift = [], 0
    for pid, (label, report) in enumerate(reports):
        for ev in report.trace_events():
            ev = dict(ev, pid=pid)
            if ev.get("name") == "process_name":
                ev["args"] = {"name": f"{label} ({report.chip} simulator)"}
            if "ts" in ev:
                ev["ts"] += shift
            events.append(ev)
        shift += report.total_cycles
    with open(path, "w") as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"time_unit": "1 us = 1 cycle", "groups": [label for label, _ in reports]}}, fh)
