"""`bmk info MODEL`: what a compiled model holds, as a dict (`--json`) or as text.

JSON keys (API.md "Compiled models"): chip, nets [name, stages [inputs/outputs [name, dtype,
shape, address, ...], groups [label, counts {engine: n}, bytes {engine: n}]]], plus the file's
facts around them (format, target chip string, subnets, coefficients, neuron memory, kernel
module). Counts come from the file where it states them (bdc_num, gdma_num): nothing is
decoded for those, so a multi-megabyte model lists in milliseconds. A count bmk cannot know
(a stream of a chip without specs) is null, and `missing` says which chip's decoder is absent.
"""
from bmk.models.chips import decodable
from bmk.models.decoding import group_counts
from bmk.util import printable


def simulator_for(chip):
    from bmk.isa.registry import chips_with
    return chip in chips_with("simulator")


def missing_decoder(model):
    """None, or the sentence saying which chip's decoder this build lacks."""
    if decodable(model.chip):
        return None
    from bmk.isa import chips
    return (f"bmk has no decoder for chip {model.chip} (no specs/{model.chip}; chips with one: "
            f"{', '.join(chips())}): groups are listed with their byte sizes and the file's own counts")


def _region(r):
    if r is None:
        return None
    d = {"address": r.address, "size": r.size}
    if r.check_code:
        d["check_code"] = r.check_code
    if r.encrypted:
        d["encrypted"] = True
    return d


def _coefficients(model, st):
    """A stage's coefficient region, with whether its bytes hash to the recorded sha256
    ("verified": true / false; absent when the file records none)."""
    d = _region(st.coeff)
    ok = model.verified(st)
    if d is not None and ok is not None:
        d["verified"] = ok
    return d


def _function(sn):
    """A cvimodel CPU subnet's function: {"function": {"name", "params": {key: value}}} ({} otherwise)."""
    fn = sn.function
    if fn is None:
        return {}
    return {"function": {"name": fn.name, "params": {p.key: list(p.value) if isinstance(p.value, tuple) else p.value
                                                     for p in fn.params}}}


def info_dict(model):
    """The model as plain data (json.dumps takes it)."""
    nets = []
    for net in model.nets:
        stages = []
        for st in net.stages:
            groups = [{"label": g.label, "counts": group_counts(model, g), "bytes": g.sizes}
                      for sn in st.subnets for g in sn.groups]
            stages.append({
                "index": st.index, "core_num": st.core_num,
                "inputs": [t.to_dict() for t in st.inputs], "outputs": [t.to_dict() for t in st.outputs],
                "coefficients": _coefficients(model, st), "neuron": _region(st.neuron),
                **({"extra": st.extra} if st.extra else {}),
                "subnets": [{"index": sn.index, "id": sn.id, "kind": sn.kind, "detail": sn.detail,
                             "groups": [g.label for g in sn.groups], **_function(sn)} for sn in st.subnets],
                "groups": groups})
        nets.append({"name": net.name, "stages": stages})
    km = model.kernel_module
    return {"file": model.path, "format": model.format, "chip": model.chip, "target": model.target,
            "version": model.version, "time": model.time, "decodable": decodable(model.chip),
            "simulator": simulator_for(model.chip), "missing": missing_decoder(model),
            "neuron_size": model.neuron_size, "device_num": model.device_num,
            "kernel_module": {"name": km[0], "size": km[1].size} if km else None, "nets": nets}


def _tensor_line(role, t):
    q = f" scale {t.scale:g}" + (f" zero_point {t.zero_point:g}" if t.zero_point else "")
    return (f"{role:<6} {printable(t.name)}  {t.type.name} {tuple(t.shape)}  @0x{t.address:x}  {t.storage}{q}")


def _counts_text(counts, sizes):
    """'tiu 3122 (399616 bytes), gdma ...'; a cvimodel buffer: 'cmdbuf 5544 bytes: tiu 24, tdma 37'."""
    if "cmdbuf" in sizes:
        inside = ", ".join(f"{e} {n}" for e, n in counts.items() if e != "cmdbuf")
        return f"cmdbuf {sizes['cmdbuf']} bytes" + (f": {inside}" if inside else " (not counted: no decoder)")
    parts = []
    for engine, size in sizes.items():
        n = counts.get(engine)
        parts.append(f"{engine} {'?' if n is None else n} ({size} bytes)")
    return ", ".join(parts) or "empty"


def _verdict(model, st):
    """'ok', or 'MISMATCH (...)' when the coefficients do not hash to the recorded sha256."""
    if model.verified(st):
        return "ok"
    return f"MISMATCH (the bytes hash to {model.coefficients_sha256(st)[:16]}...)"


def info_lines(model):
    """`bmk info` text, one line at a time."""
    d = info_dict(model)
    sim = "decodes, simulates" if d["decodable"] and d["simulator"] else "decodes" if d["decodable"] else "no decoder"
    yield f"{model.path}: {model.format} {printable(model.version)} for {printable(model.target)} (bmk chip {model.chip}: {sim})"
    if model.time:
        yield f"built {printable(model.time)}"
    km = model.kernel_module
    yield (f"neuron memory {model.neuron_size} bytes; kernel module "
           f"{f'{km[0]!r} ({km[1].size} bytes)' if km else 'none'}"
           + (f"; device_num {model.device_num}" if model.device_num else ""))
    if d["missing"]:
        yield f"note: {d['missing']}"
    for net, nd in zip(model.nets, d["nets"]):
        yield f"net{net.index} {net.name!r}: {len(net.stages)} stage{'s' * (len(net.stages) != 1)}"
        for st, sd in zip(net.stages, nd["stages"]):
            coeff = (f"coefficients @0x{st.coeff.address:x} {st.coeff.size} bytes"
                     + (f" sha256 {st.coeff.check_code[:16]}... {_verdict(model, st)}" if st.coeff.check_code else "")
                     + (" (encrypted)" if st.coeff.encrypted else "")) if st.coeff else "no coefficients"
            neuron = ("no neuron memory" if st.neuron is None else f"neuron {st.neuron.size} bytes" if
                      st.neuron.address is None else f"neuron @0x{st.neuron.address:x} {st.neuron.size} bytes")
            extra = "".join(f"; {k} {v}" for k, v in st.extra.items())
            yield f"  stage{st.index}: {st.core_num} core{'s' * (st.core_num != 1)}; {coeff}; {neuron}{extra}"
            for t in st.inputs:
                yield "    " + _tensor_line("input", t)
            for t in st.outputs:
                yield "    " + _tensor_line("output", t)
            groups = {g["label"]: g for g in sd["groups"]}
            for sn in st.subnets:
                detail = f", {printable(sn.detail)}" if sn.detail else ""
                yield (f"    subnet{sn.index} (id {sn.id}): {sn.kind}{detail}"
                       + (f", {len(sn.groups)} group{'s' * (len(sn.groups) != 1)}" if sn.groups else ""))
                for g in sn.groups:
                    gd = groups[g.label]
                    yield f"      {g.label}: {_counts_text(gd['counts'], gd['bytes'])}"
