"""`bmk chips`: what works on each chip of this build, found by looking, not by a list.

- encode API: an API module `bmk.<chip>` exists (`bmk.chips()`);
- decode, disasm, asm, diff: every chip with specs (`bmk.isa.chips()`): they are spec-driven;
- simulate: the chip's registered semantics (`bmk.sim.semantics.REGISTRY`) and how many of
  its spec's instruction kinds they model.
"""
from bmk.errors import BmkError


def _simulate(spec):
    from bmk.sim.semantics import semantics_for, spec_kinds
    try:
        sem = semantics_for(spec.name)
    except BmkError:
        return f"no (no bmk.sim.{spec.name} semantics)"
    total = len(spec_kinds(spec))
    done = total - len(sem.missing(spec))
    if not done:
        return f"no (bmk.sim.{spec.name} models no instruction kind yet)"
    return f"yes (bmk.sim.{spec.name})" + ("" if done == total else f": {done} of {total} kinds")


def chip_rows():
    """[(chip, {capability: "yes" | "no" ...})] for every spec chip."""
    import bmk
    from bmk.isa import chips, load_chip
    api = set(bmk.chips())
    rows = []
    for name in chips():
        spec = load_chip(name)
        engines = ", ".join(e.name + (f" ({'/'.join(e.aliases)})" if e.aliases else "") for e in spec.encoded_engines)
        rows.append((name, {
            "encode API": f"yes (bmk.{name})" if name in api else "no (no bmk." + name + ".Context yet)",
            "decode/disasm/asm/diff": f"yes: cmd_hdr_t (magic 0x{spec.magic:02X}) and raw streams; engines {engines}",
            "simulate": _simulate(spec),
        }))
    return rows


def chip_table():
    lines = []
    for name, caps in chip_rows():
        lines.append(name)
        width = max(len(k) for k in caps)
        lines += [f"  {k.ljust(width)}  {v}" for k, v in caps.items()]
    return "\n".join(lines)
