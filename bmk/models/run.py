"""Running a compiled model on bmk's simulator: `m.run(inputs)`.

Plumbing only; what each instruction computes is the chip's simulator semantics
(bmk/sim/<chip>). The steps, all checks before any work:
1. the stage's subnets are all static TPU subnets on one core or cvimodel CPU functions bmk
   runs in numpy (bmk/models/cpu: known by name, their parameters and tensors set up), the chip
   has a decoder and a simulator, every instruction of every group decodes, has semantics and passes the
   semantics' field checks (a kind without semantics, a CPU or dynamic subnet, a group on
   another core of a chip whose engines order no cores by messages, an engine the specs do not
   decode: ModelError naming it); a group on several cores of a chip whose messages order them
   runs as one step, round by round (bmk/sim/cores.py);
2. every input is given, with the tensor's logical shape and a dtype that casts to its own;
3. coefficients are written at their device address (CoeffMem.address) and inputs at theirs,
   in their storage mode (bmk.models.storage: 4N/2N);
4. every group runs, in file order (subnet by subnet), on one Simulator, so later subnets see
   what earlier ones wrote; a CPU subnet runs in its place in that order, reading its inputs
   from the Simulator's global memory at their addresses and writing its outputs back there
   (bmk/models/cpu/runner.py, as the vendor's runtime hands neurons between routines);
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

from bmk.errors import ArgumentError, BmkError, ModelError, SimulationError
from bmk.models import storage
from bmk.models.cpu.runner import run_cpu_in_memory
from bmk.models.regions import device_address


def _stage(model, net, stage):
    if not 0 <= net < len(model.nets):
        raise ModelError(f"run: net must be in [0, {len(model.nets) - 1}], not {net}", model.path)
    stages = model.nets[net].stages
    if not 0 <= stage < len(stages):
        raise ModelError(f"run: stage must be in [0, {len(stages) - 1}] for net {net}, not {stage}", model.path)
    return stages[stage]


class Prepared(typing.NamedTuple):
    """A stage made ready to run (prepare): its groups, in run order, and their Programs; steps:
    the run order of TPU groups and CPU subnets, ("tpu", index in groups) or ("cpu", Subnet,
    (module, config)) (None: the groups in order)."""
    stage: object               # the Stage
    semantics: object           # the chip's Semantics
    groups: list                # [Group], in run order
    programs: list              # a bmk.sim.core.Program per group
    spec: object                # the ChipSpec the programs were compiled for
    steps: "list | None" = None


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
    ModelError naming what cannot (step 1 of the module docstring: the facts `bmk check` lists,
    bmk/models/check.py), before any work. Kept on the model: a second call returns the first
    one's answer.
    records: {group label: [Record]} run in place of those groups' own commands (e.g. streams
    changed and decoded again: tools/silent_fields.py), checked the same way; such a Prepared
    is neither kept nor taken from what is kept; sim: the Simulator to compile them on (its
    plans are made once: the one they will run on), default a new one."""
    from bmk.models.check import chip_semantics, is_cpu_subnet, refusal_message, stage_findings
    from bmk.sim.check import Findings
    st = _stage(model, net, stage)
    spec, sem = chip_semantics(model, "; run needs its decoder and simulator")
    kept = model.kept.get((net, stage)) if records is None else None
    if kept is not None and kept.spec is spec and kept.semantics is sem:
        return kept
    findings = Findings()
    planned = stage_findings(model, net, stage, findings, spec, sem, records)
    if findings:
        raise ModelError(refusal_message(findings.result()), model.path)
    # Compiling checks every distinct instruction (sync ids aside: semantics.py) and resolves
    # every wait, on a Simulator that has not run yet (kept for m.run).
    from bmk.sim import Simulator
    if records is None or sim is None or sim.chip is not spec or sim.semantics is not sem:
        sim = Simulator(spec, semantics=sem)
    programs, groups, steps = [], [], []
    together = {}                       # (subnet, group index) -> [(Group, records)] of its cores
    for g, recs in planned:
        if not is_cpu_subnet(g):
            together.setdefault((g.subnet, g.index), []).append((g, recs))
    for g, recs in planned:
        if is_cpu_subnet(g):            # set up by stage_findings: run between the groups
            steps.append(("cpu", g, recs))
            continue
        cores = together[(g.subnet, g.index)]
        if len(cores) > 1:
            if g.core != cores[0][0].core:
                continue                # one step runs every core of the group
            steps.append(("cores", len(groups)))
            groups.append(tuple(c for c, _ in cores))
            programs.append(_compile_cores(model, sim, spec, sem, cores))
            continue
        steps.append(("tpu", len(groups)))
        groups.append(g)
        programs.append(_compile(model, sim, g, recs))
    prepared = Prepared(st, sem, groups, programs, spec, steps)
    if records is None:
        model.kept[(net, stage)] = prepared
        model.kept.setdefault(IDLE, (sim, True))
    return prepared


def _inputs(model, st, inputs, exact=True):
    """{name: logical array} checked against the stage's inputs (step 2; exact: _as_array)."""
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
        out[t.name] = _as_array(inputs[t.name], t, model.path, exact)
    return out


def _as_array(values, tensor, path, exact=True):
    """The array of one input in the tensor's dtype: values are checked, never wrapped. An
    integer value outside the tensor's integer type is an ArgumentError naming the first
    (uint16 300 would reach a uint8 input as 44); a float (or an integer into a float type)
    must convert exactly unless `exact` is False (then rounded to the nearest); a masked array
    must mask nothing (its mask would be lost)."""
    if isinstance(values, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(values)
        if masked.any():
            raise ArgumentError(f"run: input {tensor.name!r} must be plain values, not a masked array with masked "
                                f"elements (the first at index {_index(masked)})")
        values = values.data
    arr = np.asarray(values)
    if tuple(arr.shape) != tuple(tensor.shape):
        raise ModelError(f"run: input {tensor.name!r} must have shape {tuple(tensor.shape)}, not {tuple(arr.shape)}",
                         path)
    if arr.dtype == tensor.dtype:
        return arr
    if not np.can_cast(arr.dtype, tensor.dtype, "same_kind"):
        raise ModelError(f"run: input {tensor.name!r} must have a dtype that casts to {tensor.type.name} "
                         f"({tensor.dtype}), not {arr.dtype}", path)
    target = np.dtype(tensor.dtype)
    if target.kind in "iu":
        info = np.iinfo(target)
        bad = (arr < info.min) | (arr > info.max)
        if bad.any():
            i = _index(bad)
            raise ArgumentError(f"run: input {tensor.name!r} ({target}) values must be in [{info.min}, {info.max}], "
                                f"not {arr[i]!r} (index {i}, the first of {int(bad.sum())})")
        return arr.astype(target)
    out = arr.astype(target)
    if exact and arr.dtype.kind in "iuf":
        with np.errstate(all="ignore"):
            back = out.astype(arr.dtype) if arr.dtype.kind == "f" else out.astype(np.float64)
            same = (back == arr) | (np.isnan(back) & np.isnan(arr)) if arr.dtype.kind == "f" else back == arr
        if not same.all():
            i = _index(~same)
            raise ArgumentError(f"run: input {tensor.name!r} ({target}) must convert exactly from {arr.dtype}, but "
                                f"{arr[i]!r} (index {i}, the first of {int((~same).sum())}) becomes {out[i]!r}; "
                                "run(..., exact=False) rounds to the nearest")
    return out


def _index(mask):
    """The first True position of a boolean array, as a tuple of ints."""
    return tuple(int(k) for k in np.unravel_index(int(np.argmax(mask)), mask.shape))


def _check_region(model, spec, what, address, size):
    glob = spec.space("global")
    if size > glob.size:        # a damaged shape: its size may have hundreds of digits
        raise ModelError(f"run: {what} must fit in {spec.name}'s {glob.size}-byte global memory, but its shape takes "
                         f"{size if size < 1 << 64 else f'about 2**{size.bit_length() - 1}'} bytes", model.path)
    if size and not (glob.base <= address and address + size <= glob.base + glob.size):
        raise ModelError(f"run: {what} [0x{address:x}, 0x{address + size:x}) must lie inside {spec.name} global "
                         f"memory [0x{glob.base:x}, 0x{glob.base + glob.size:x})", model.path)


def _compile(model, sim, g, recs, done=None, what=None):
    """A group's (or a round's) Program; ModelError naming the instruction it cannot run."""
    try:
        return sim.compile(recs, done=done)
    except SimulationError as e:
        label = what or g.label
        i = getattr(e, "instruction", None)
        if i is None:
            raise ModelError(f"run: {label}: {e}; nothing was run", model.path) from None
        r = recs[i]
        raise ModelError(f"run: {label} instruction {i} ({r.name}, {r.stream or 'buffer'} byte {r.offset}) "
                         f"cannot be simulated: {e.reason}; nothing was run", model.path) from None


def _compile_cores(model, sim, spec, sem, cores):
    """[[(core, Program)] per round] of one group run on several cores (bmk/sim/cores.py)."""
    from bmk.sim.cores import rounds
    label = cores[0][0].label
    try:
        plan = rounds(spec, {g.core: sem.prepare(spec, recs) for g, recs in cores})
    except SimulationError as e:
        raise ModelError(f"run: {label} and its other cores: {e}; nothing was run", model.path) from None
    by_core = {g.core: g for g, _ in cores}
    return [[(part.core, _compile(model, sim, by_core[part.core], part.records, part.done,
                                  f"{by_core[part.core].label} round {s}"))
             for part in row if part.records] for s, row in enumerate(plan)]


def _core_sims(sim, spec, sem, cores):
    """A Simulator per core (core 0's is `sim`), each with its own local and static memories,
    all sharing `sim`'s global memory and the spaces the chip marks shared (BM1690's L2 SRAM);
    kept in `sim.cores` across the steps of a run and across runs (sim.reset() resets them with
    it, so a program a core runs again keeps its plans, views and checks)."""
    from bmk.sim import Simulator
    out = {}
    for c in cores:
        other = sim.cores.get(c) if c else sim
        if other is None or other.chip is not spec or other.semantics is not sem:
            other = sim.cores[c] = Simulator(spec, semantics=sem)
        if other.gmem is not sim.gmem:
            other.gmem = sim.gmem
            for name in _shared_spaces(spec):
                other.memories[name] = sim.memories[name]
        out[c] = other
    return out


def _shared_spaces(spec):
    """The names of the spaces every core sees: global memory and those the chip marks shared."""
    return [sp.name for sp in spec.memory if sp.name == "global" or sp.shared]


def _no_cross_core_race(model, spec, label, s, parts):
    """ModelError when two cores of a round touch common global bytes, one writing: their order
    is free between barriers, and bmk runs them in one order only (bmk/sim/cores.py)."""
    from bmk.sim.cores import cross_core_races
    from bmk.sim.memory import GMEM
    found = []
    for name in _shared_spaces(spec):
        found += cross_core_races(s, parts, GMEM if name == "global" else name, name)
    if found:
        raise ModelError(f"run: {label}: {len(found)}{'+' * (len(found) >= 10)} race{'s' * (len(found) != 1)} "
                         f"across cores; the first: {found[0]}", model.path)


def _nbytes(t, path):
    try:
        return storage.device_nbytes(t.shape, t.dtype, t.storage, t.name)
    except ModelError as e:
        raise ModelError(str(e), path) from None


def simulate(model, inputs, net=0, stage=0, progress=None, prepared=None, sim=None, races=True, checks=False,
             strict=False, exact=True, verify=True):
    """Steps 1-5: -> (outputs {name: ndarray}, [(group label, Report)], Simulator).
    prepared: what `prepare(model, net, stage)` returned, when the caller checked first;
    sim: a Simulator in a fresh chip's state to run on (default: a new one); races: detect
    races (Simulator.run) for the reports; checks, strict: the local-memory checks
    (bmk/sim/lmemcheck.py), off by default for a compiled model: the vendor's Yuv2rgb reads
    local bytes it never wrote (a stride-2 read of twice the row it converted) and the next
    row overwrites, unread, half of what it computed from them (values its output never
    uses), so a model's warnings are for whoever asks for them (bmk-run MODEL --strict)."""
    from bmk.sim import Simulator
    st, sem, groups, programs, spec, steps = prepared or prepare(model, net, stage)
    values = _inputs(model, st, inputs, exact)
    if sim is None:
        sim = Simulator(spec, semantics=sem)
    # a cvimodel's addresses carry their memory region: bmk/models/regions.py
    at = {t.name: device_address(sim, t.address, f"tensor {t.name!r}", model.path) for t in st.inputs + st.outputs}
    coeff = None
    if st.coeff is not None and st.coeff.size:
        coeff = device_address(sim, st.coeff.address, "coefficients", model.path)
        _check_region(model, spec, "coefficients", coeff, st.coeff.size)
    for t in st.inputs + st.outputs:
        _check_region(model, spec, f"tensor {t.name!r}", at[t.name], _nbytes(t, model.path))
    if coeff is not None:
        sim.gmem_write(coeff, model.coefficients(st, verify=verify))
    for t in st.inputs:
        sim.gmem_write(at[t.name], storage.to_device(values[t.name], t.storage, t.name))
    reports = []
    for step in steps or [("tpu", i) for i in range(len(groups))]:
        if step[0] == "cpu":
            _, sn, setup = step
            try:
                run_cpu_in_memory(model, sn, sim, net, stage, setup)
            except BmkError as e:
                raise ModelError(f"run: net{net}/stage{stage}/subnet{sn.index}: {e}", model.path) from None
            continue
        g, program = groups[step[1]], programs[step[1]]
        if step[0] == "cores":
            sims = _core_sims(sim, spec, sem, [c.core for c in g])
            by_core = {c.core: c for c in g}
            for s, row in enumerate(program):
                parts = []
                for core, prog in row:
                    try:
                        reports.append((f"{by_core[core].label} round {s}",
                                        sims[core].run(prog, races=races, progress=progress, checks=checks,
                                                       strict=strict)))
                    except BmkError as e:
                        raise ModelError(f"run: {g[0].label} (core {core}, round {s}): {e}", model.path) from None
                    if races:
                        parts.append((core, prog.kinds, sims[core].last_accesses))
                if races:
                    _no_cross_core_race(model, spec, g[0].label, s, parts)
            continue
        try:
            reports.append((g.label, sim.run(program, races=races, progress=progress, checks=checks,
                                             strict=strict)))
        except BmkError as e:
            raise ModelError(f"run: {g.label}: {e}", model.path) from None
    outputs = {}
    for t in st.outputs:
        data = sim.gmem_read(at[t.name], _nbytes(t, model.path))
        outputs[t.name] = storage.from_device(data, t.shape, t.dtype, t.storage, t.name)
    return outputs, reports, sim


def run_model(model, inputs, net=0, stage=0, trace=None, progress=None, exact=True, verify=True):
    """m.run: {input name: array} -> {output name: ndarray}; trace: a path for a Chrome/Perfetto
    trace of every group (write_trace); exact: a float input must convert exactly to its
    tensor's type (False: rounded to the nearest; integers out of range are refused always);
    verify: the coefficients must hash to the sha256 the file records (Model.coefficients).
    It returns the outputs only, so it does not look for races (bmk-run and `simulate` report
    them)."""
    prepared = prepare(model, net, stage)
    sim = _idle(model, prepared)
    outputs, reports, sim = simulate(model, inputs, net, stage, progress, prepared=prepared, sim=sim, races=False,
                                     exact=exact, verify=verify)
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
