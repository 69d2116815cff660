"""What of a compiled model bmk's simulator cannot run, found without running it (`bmk check
MODEL`, issue 27.1), and the same facts `m.run` refuses with before any work (run.py `prepare`).

Per stage: the chip must have a decoder and a simulator, every subnet must be a static TPU
subnet or a cvimodel CPU function bmk runs (bmk/models/cpu: an unknown function, or one whose
parameters or tensors its setup refuses, is a finding; on a chip without a simulator too),
every group must run on core 0 (or on several cores of a chip whose engines order them by
messages: bmk/sim/cores.py) with engines the chip's specs decode and coefficients that are not
encrypted; then every instruction of every group goes through the simulator's
own checks (bmk/sim/check.py), all of them, grouped into Findings.
"""
from bmk.errors import ModelError
from bmk.models.decoding import model_spec
from bmk.models.decoding import split_engines


def stage_findings(model, net, stage, findings, spec, semantics, records=None):
    """Add the refusals of one stage to `findings` (bmk.sim.check.Findings); return the
    [(Group, records)] of its groups and [(Subnet, (module, config))] of its CPU subnets, in run
    order (what run.py compiles and runs). records: {group label: [Record]} checked in place of
    those groups' own commands (run.py `prepare`)."""
    from bmk.sim.check import refusals
    st = model.nets[net].stages[stage]
    where = f"net{net}/stage{stage}"
    if not st.subnets:
        findings.add(("subnet", where), "subnet", None, None, f"{where} has no subnet to run", group=where)
    if st.coeff is not None and st.coeff.encrypted:
        findings.add(("coeff", where), "coefficients", "encrypt_mode", None,
                     f"{where}: the coefficients are encrypted (CoeffMem.encrypt_mode)", group=where)
    planned = []
    for sn in st.subnets:
        if sn.kind == "cpu" and sn.function is not None:
            setup = cpu_findings(model, net, stage, sn, findings)
            if setup is not None:
                planned.append((sn, setup))
            continue
        if sn.kind != "tpu":
            reason = (f"{where}/subnet{sn.index} (id {sn.id}) is a {sn.kind.upper()} subnet ({sn.detail}); "
                      "bmk simulates static TPU subnets only")
            findings.add(("subnet", where, sn.index), "subnet", None, None, reason, group=f"{where}/subnet{sn.index}")
            continue
        for g in sn.groups:
            if g.core and not any(e.messages for e in spec.encoded_engines):
                findings.add(("core", g.label), "core", None, g.core,
                             f"{g.label} runs on core {g.core}: bmk simulates one core of {spec.name} (its "
                             "engines order no cores by messages)", group=g.label)
                continue
            if g.parts:
                _, unknown = split_engines(spec, g)
                if unknown:
                    findings.add(("engine", g.label), "engine", None, None,
                                 f"{g.label} has {', '.join(unknown)} commands, which the {spec.name} specs do not "
                                 "decode", group=g.label)
                    continue
            recs = model.records(g) if records is None or g.label not in records else records[g.label]
            if semantics is not None:
                refusals(spec, semantics, recs, findings, g.label)
            planned.append((g, recs))
    return planned


def cpu_findings(model, net, stage, sn, findings):
    """A cvimodel CPU subnet's function set up (bmk/models/cpu/runner.py): (module, config), or
    None after adding the refusal (an unknown function, parameters or tensors it refuses)."""
    from bmk.models.cpu.runner import setup_cpu_subnet
    where = f"net{net}/stage{stage}"
    try:
        return setup_cpu_subnet(model, sn, net, stage)
    except ModelError as e:
        reason = str(e).removeprefix(f"{model.path}: ").removeprefix("run: ")
        findings.add(("cpu", where, sn.index), "subnet", "function", sn.function.name, reason,
                     group=f"{where}/subnet{sn.index}")
        return None


def chip_semantics(model, purpose):
    """(ChipSpec, Semantics) of the model's chip; ModelError when it has no decoder or no simulator."""
    from bmk.sim.check import no_simulator
    from bmk.sim.semantics import semantics_for, simulated_chips
    spec = model_spec(model, purpose)
    if model.chip not in simulated_chips():
        raise ModelError(f"run: {no_simulator(model.chip)}", model.path)
    return spec, semantics_for(model.chip)


def check_model(model):
    """(findings, instructions) of every net and stage of a model: bmk.check's answer for a model.
    A chip without a decoder or a simulator is one finding (model chip = its name)."""
    from bmk.sim.check import Findings
    findings = Findings()
    try:
        spec, semantics = chip_semantics(model, "; check needs its decoder and simulator")
    except ModelError as e:
        groups = model.groups()
        n = sum(sum(g.counts.values()) for g in groups)
        reason = str(e).removeprefix(f"{model.path}: ").removeprefix("run: ")
        findings.add(("chip",), "model", "chip", model.chip, reason, count=n, group=groups[0].label if groups else None)
        for i, net in enumerate(model.nets):         # what the host would run is checked all the same
            for st in net.stages:
                for sn in st.subnets:
                    if sn.kind == "cpu" and sn.function is not None:
                        cpu_findings(model, i, st.index, sn, findings)
        return findings.result(), n
    n = 0
    for i, net in enumerate(model.nets):
        for s in range(len(net.stages)):
            n += sum(len(records) for g, records in stage_findings(model, i, s, findings, spec, semantics)
                     if not is_cpu_subnet(g))
    return findings.result(), n


def refusal_message(findings):
    """What m.run says when a stage cannot run: the first refusal (one that is not an
    instruction's, a subnet or a core, before those of instructions) and how many more."""
    first = min(findings, key=lambda f: f.index is not None)
    count = sum(f.count for f in findings if f.index is not None)
    more = f" ({len(findings)} refusals: `bmk check` lists them all)" if len(findings) > 1 else ""
    if first.index is None:
        return f"run: {first.line()}{more}; nothing was run"
    return (f"run: {count} instruction{'s' * (count != 1)} cannot be simulated{more}; the first: {first.line()}; "
            "nothing was run")


def is_cpu_subnet(item):
    """A CPU Subnet among a stage's groups (a Group has no kind; bmk.models.model is not imported
    here: it imports models/run.py, which imports this module)."""
    return getattr(item, "kind", None) == "cpu"
