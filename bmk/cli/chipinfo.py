"""`bmk chips`: what works on each chip of this build, from the chip registry
(bmk/isa/registry.py: found by looking, not by a list).

- encode API: the chip's API package `bmk.<chip>` (`bmk.chips()`); the others are decode-only;
- decode, disasm, asm, diff: every chip with specs (`bmk.isa.chips()`): they are spec-driven
  (the row says the chip's cmd_hdr_t magic, engines, implicit ids and cores, from its spec);
- simulate: the chip's semantics (`bmk.sim.<chip>`), how many of its spec's instruction kinds
  they model, and whether they model every kind its API emits (the kinds its op-table rows
  declare);
- time: the chip's cost model (bmk/timing/models.py), what it rests on and whether it is
  checked against a real chip's measured cycles;
- demo: `bmk demo --chip <chip>` when bmk/cli/demo_<chip>.py exists.
"""


def _simulate(spec, caps):
    from bmk.sim.semantics import semantics_for, spec_kinds
    if caps.simulator is None:
        return f"no (no bmk.sim.{spec.name} semantics)"
    sem = semantics_for(spec.name)
    total = len(spec_kinds(spec))
    done = total - len(sem.missing(spec))
    if not done:
        return f"no (bmk.sim.{spec.name} models no instruction kind yet)"
    text = f"yes (bmk.sim.{spec.name}): {done} of {total} kinds"
    emitted = _api_kinds(caps)
    if emitted is not None:
        modelled = {f"{e}.{k}" for e, k in sem.kinds}
        lacking = sorted(emitted - modelled)
        text += (", all kinds the API emits" if not lacking else
                 f", not {len(lacking)} of the {len(emitted)} kinds the API emits ({', '.join(lacking[:5])}"
                 f"{', ...' if len(lacking) > 5 else ''})")
    return text


def _api_kinds(caps):
    """The "engine.kind"s a chip's API may emit (its op-table rows' kinds); None without an API."""
    import importlib
    if caps.api is None:
        return None
    return {k for row in importlib.import_module(caps.api).Context.OPS for k in row.kinds}


def _decode(spec):
    """What the decode path reads for a chip: its cmd_hdr_t magic, engines, ids and cores."""
    from bmk.isa import magic_owners
    engines = ", ".join(e.name + (f" ({'/'.join(e.aliases)})" if e.aliases else "") for e in spec.encoded_engines)
    engines += "".join(f", {e.name} (no public layout: kept as bytes)" for e in spec.engines if e.opaque)
    magic = f"magic 0x{spec.magic:02X}"
    if not spec.detect:
        magic += f", also {magic_owners().get(spec.magic, 'another chip')}'s: name the chip (--chip {spec.name})"
    magic += "".join(f"; legacy 0x{m:02X} with --chip" for m in spec.legacy_magics)
    notes = []
    if any(e.implicit_ids for e in spec.engines):
        notes.append("ids are stream positions")
    if any(e.messages for e in spec.engines):
        cores = spec.param("cores", None)
        notes.append(f"{f'up to {cores} cores' if cores else 'several cores'}, ordered across cores by messages")
    return (f"yes: cmd_hdr_t ({magic}) and raw streams; engines {engines}"
            + "".join(f"; {n}" for n in notes))


def _time(name):
    from bmk.timing.models import basis
    b = basis(name)
    if b is None:
        return "no (no cost model: bmk/timing/models.py)"
    return ("yes, checked against hardware: " if b.checked else "yes, not checked against hardware: ") + b.text


def chip_rows():
    """[(chip, {capability: "yes" | "no" ...})] for every spec chip (bmk.isa.registry)."""
    from bmk.isa import load_chip
    from bmk.isa.registry import registry
    rows = []
    for caps in registry():
        name, spec = caps.chip, load_chip(caps.chip)
        rows.append((name, {
            "encode API": f"yes ({caps.api})" if caps.api else "no (decode-only: specs, no API)",
            "decode/disasm/asm/diff": _decode(spec),
            "simulate": _simulate(spec, caps),
            "time": _time(name),
            "demo": f"yes (bmk demo --chip {name})" if caps.demo else "no",
        }))
    return rows


def chip_table():
    lines = []
    for name, caps in chip_rows():
        lines.append(name)
        width = max(len(k) for k in caps)
        lines += [f"  {k.ljust(width)}  {v}" for k, v in caps.items()]
    return "\n".join(lines)
