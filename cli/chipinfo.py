"""`bmk chips`: what works on each chip of this build, found by looking, not by a list.

- encode API: an API module `bmk.<chip>` exists (`bmk.chips()`);
- decode, disasm, asm, diff: every chip with specs (`bmk.isa.chips()`): they are spec-driven;
- simulate: the simulator has semantics for the chip (a module `bmk.sim.<chip>`, which is
  how `bmk.Simulator` finds them).
"""
import importlib.util


def _has_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def chip_rows():
    """[(chip, {capability: "yes" | "no" ...})] for every spec chip."""
    import bmk
    from bmk.isa import chips, load_chip
    api = set(bmk.chips())
    rows = []
    for name in chips():
        spec = load_chip(name)
        engines = ", ".join(e.name + (f" ({'/'.join(e.aliases)})" if e.aliases else "") for e in spec.encoded_engines)
        sim = _has_module(f"bmk.sim.{name}")
        rows.append((name, {
            "encode API": f"yes (bmk.{name})" if name in api else "no (no bmk." + name + " module)",
            "decode/disasm/asm/diff": f"yes: cmd_hdr_t (magic 0x{spec.magic:02X}) and raw streams; engines {engines}",
            "simulate": f"yes (bmk.sim.{name})" if sim else f"no (no bmk.sim.{name} semantics)",
        }))
    return rows


def chip_table():
    lines = []
    for name, caps in chip_rows():
        lines.append(name)
        width = max(len(k) for k in caps)
        lines += [f"  {k.ljust(width)}  {v}" for k, v in caps.items()]
    return "\n".join(lines)
