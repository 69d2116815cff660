"""Write the README's chip table (between its `chip table` markers) from the chip registry
(bmk/isa/registry.py: what bmk can do per chip, found by looking), the specs (magic, ids,
cores, engines without a public layout) and tools/facts/boards.json (boards, other names,
the vendor's API name). Run by hand after adding a chip or a capability, read the diff,
commit; tests/packaging/test_chip_table.py fails while the README's table is stale.

    python tools/chip_table.py           # rewrite README.md's table
    python tools/chip_table.py --check   # exit 1 when README.md's table differs
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bmk.isa import load_chip, magic_owners  # noqa: E402
from bmk.isa.registry import registry  # noqa: E402

README = ROOT / "README.md"
FACTS = ROOT / "tools" / "facts" / "boards.json"
BEGIN = "<!-- chip table: written by tools/chip_table.py from bmk/isa/registry.py -->"
END = "<!-- end of chip table -->"
HEAD = ("| chip | boards, models | decode, disasm, asm, diff | encode API | simulate | time | demo |\n"
        "|---|---|---|---|---|---|---|")


def _decode(spec):
    """The decode cell: cmd_hdr_t magic (and whose it is when the chip does not detect), ids, cores."""
    text = f"cmd_hdr_t (0x{spec.magic:02X}), raw streams"
    if not spec.detect:
        text += f"; 0x{spec.magic:02X} is {magic_owners().get(spec.magic, 'another chip')}'s: `--chip {spec.name}`"
    if any(e.implicit_ids for e in spec.engines):
        text += "; ids are positions"
    if any(e.messages for e in spec.engines):
        text += f"; {dict(spec.params).get('cores', 'several')} cores ordered by messages"
    opaque = [e.name.upper() for e in spec.engines if e.opaque]
    if opaque:
        text += f"; {', '.join(opaque)} kept as bytes (no public layout)"
    return text


def _simulate(caps, spec):
    if caps.simulator is None:
        return "no"
    from bmk.sim.semantics import semantics_for, spec_kinds
    total = len(spec_kinds(spec))
    return f"yes: {total - len(semantics_for(caps.chip).missing(spec))} of {total} kinds"


def _time(caps):
    if caps.cost_model is None:
        return "no"
    from bmk.timing.models import basis
    return "yes, checked against hardware" if basis(caps.chip).checked else "yes (not checked against hardware)"


def table():
    """The table's markdown lines, one row per spec chip (bmk.isa.chips() order)."""
    facts = json.loads(FACTS.read_text())["chips"]
    rows = [HEAD]
    for caps in registry():
        spec, fact = load_chip(caps.chip), facts.get(caps.chip, {})
        name = caps.chip + (f" ({fact['also']})" if fact.get("also") else "")
        api = (f"`{caps.api}`" + (f" ({fact['api']})" if fact.get("api") else "")) if caps.api else "no (decode-only)"
        demo = f"`bmk demo --chip {caps.chip}`" if caps.demo else "no"
        rows.append(f"| {name} | {fact.get('boards', '')} | {_decode(spec)} | {api} | {_simulate(caps, spec)} | "
                    f"{_time(caps)} | {demo} |")
    return "\n".join(rows)


def rewritten(text):
    """README text with the table between the markers replaced by table()."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table() + "\n" + text[end:]


def main(argv):
    text = README.read_text()
    new = rewritten(text)
    if "--check" in argv:
        return 0 if new == text else 1
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
