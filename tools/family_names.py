#!/usr/bin/env python3
"""Family names (issue 28 item 1): derive tools/facts/families.json's rename rows and report what
still differs between a chip and its family's reference chip.

Dev-only tool, never imported by the package. A family (tools/facts/families.json `families`)
names a reference chip whose field and kind names every member takes for the same register
(bm1684x for bm1688 / bm1690 / cv184x). The rows are derived from the generated specs (the
member's vendor spellings: `Field.spelling`, `Instruction.spelling`) by these rules:

fields, per engine (the name must be a field of the reference's same engine, and not already a
field of the member's class):
  1. the vendor's name is the reference's: no row;
  2. `opt_X` where the reference has `X` (opt_opd0_prec -> opd0_prec): the same register, the
     vendor's newer sheets prefix option bits with opt_ (target_1688/opparam.py reads
     reg.opt_opd0_prec where target_1684x reads reg.opd0_prec);
  3. `short_X` where the reference has `X` (short_res0_str -> res0_str: both opparams read it as
     the operand's layout code);
  4. the family's `explicit.fields` rows;
kinds, per class (the member's class paired with the reference's class of the same name, or the
`explicit.classes` pair): a member kind and the reference kind of the same selector values (or
the only kind of each class), when the names are the same up to case, '_' and '.'
(arith.select_great -> arith.selectGreat), or the pair is one of `explicit.kinds` (add_satu ->
adds: tpu-mlir names both the saturating add of tsk_eu_typ 15).

    python tools/family_names.py            # report: per shared kind, the fields that still differ
    python tools/family_names.py --by-class # the same, one line per class
    python tools/family_names.py --write    # rewrite families.json's per-chip rows from the rules
    python tools/specgen.py                 # then regenerate the specs

The report lists, for every kind a member shares with the reference (by family name), the
fields of the member's class whose name the reference class lacks (`only <chip>`), the reference
fields the member lacks (`only <ref>`), and same-named fields at another bit or width (`moved`):
real layout differences or registers without a counterpart.
"""
import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FAMILIES = ROOT / "tools" / "facts" / "families.json"

from bmk.isa.spec import load_chip  # noqa: E402  (the clone's bmk, not an installed one)

RESERVED = re.compile(r"^(rsvd|reserved|resered|reserve)", re.I)


def _norm(kind):
    return re.sub(r"[_.]", "", kind.lower())


def derive(ref, member, explicit):
    """{"fields": {engine: {vendor: family}}, "kinds": {engine: {vendor: family}}} for `member`
    (ChipSpecs), and a list of notes (rows the rules could not confirm)."""
    fields, kinds, notes = {}, {}, []
    ex_fields = explicit.get("fields", {})
    ex_kinds = explicit.get("kinds", {})
    ex_classes = explicit.get("classes", {})
    ref_engines = {e.name: e for e in ref.engines if not e.opaque}
    for eng in member.engines:
        reng = ref_engines.get(eng.name)
        if eng.opaque or reng is None:
            continue
        rnames = {f.name for c in reng.classes for f in c.fields if not f.reserved}
        rows = {}
        for c in eng.classes:
            spelled = {f.spelling for f in c.fields}
            for f in c.fields:
                v = f.spelling
                if f.reserved or v in rnames or v in eng.selector:
                    continue
                new = ex_fields.get(eng.name, {}).get(v)
                if new is None:
                    for prefix in ("opt_", "short_"):
                        if v.startswith(prefix) and v[len(prefix):] in rnames:
                            new = v[len(prefix):]
                if new is None:
                    continue
                if new in spelled:
                    notes.append(f"{member.name} {eng.name} {c.name}: {v} -> {new} collides with its own {new}")
                    continue
                if rows.setdefault(v, new) != new:
                    notes.append(f"{member.name} {eng.name}: {v} -> {rows[v]} and {new}")
        if rows:
            fields[eng.name] = dict(sorted(rows.items()))
        rcls = {c.name: c for c in reng.classes}
        krows = {}
        for c in eng.classes:
            rc = rcls.get(ex_classes.get(c.name, c.name))
            if rc is None:
                continue
            by_match = {ins.match: ins.name for ins in rc.instructions}
            only = rc.instructions[0].name if len(rc.instructions) == 1 and len(c.instructions) == 1 else None
            for ins in c.instructions:
                v = ins.spelling
                r = by_match.get(ins.match, only)
                if r is None or r == v:
                    continue
                wanted = ex_kinds.get(eng.name, {}).get(v)
                if _norm(r) == _norm(v) or wanted == r:
                    krows[v] = r
                elif wanted is not None:
                    notes.append(f"{member.name} {eng.name} {c.name}: explicit kind row {v} -> {wanted}, but the "
                                 f"same selector values are {r} in {ref.name}: not applied")
        for v, new in ex_kinds.get(eng.name, {}).items():
            if v not in krows and any(i.spelling == v for c in eng.classes for i in c.instructions):
                notes.append(f"{member.name} {eng.name}: explicit kind row {v} -> {new} not confirmed by a "
                             f"paired class: not applied")
        if krows:
            kinds[eng.name] = dict(sorted(krows.items()))
    return {"fields": fields, "kinds": kinds}, notes


def report(ref, member, out=sys.stdout, pairs=None, by_class=False):
    """Per kind `member` shares with `ref` (by family name): the fields that still differ.
    Returns (shared kinds, kinds with identical field names, (only member, only ref, moved) totals)."""
    shared = same = 0
    totals = [0, 0, 0]
    pairs = pairs or {}
    for eng in member.engines:
        if eng.opaque or eng.name not in {e.name for e in ref.engines}:
            continue
        reng = ref.engine(eng.name)
        rkinds = {}
        for c in reng.classes:
            for ins in c.instructions:
                rkinds.setdefault(ins.name, []).append(c)
        for c in eng.classes:
            for ins in c.instructions:
                rcs = rkinds.get(ins.name)
                if rcs is None:
                    continue
                rc = next((r for r in rcs if r.name == pairs.get(c.name, c.name)), rcs[0])
                shared += 1
                mine = {f.name: f for f in c.fields if not f.reserved}
                theirs = {f.name: f for f in rc.fields if not f.reserved}
                only_m = sorted(set(mine) - set(theirs))
                only_r = sorted(set(theirs) - set(mine))
                moved = sorted(n for n in set(mine) & set(theirs)
                               if (mine[n].bit, mine[n].width) != (theirs[n].bit, theirs[n].width))
                for i, x in enumerate((only_m, only_r, moved)):
                    totals[i] += len(x)
                same += not only_m and not only_r
                if by_class:
                    if ins is not c.instructions[0]:
                        continue
                    print(f"{eng.name} {c.name} / {rc.name} ({len(c.instructions)} kinds): "
                          f"{len(set(mine) & set(theirs))} common; only {member.name}: {' '.join(only_m) or '-'}; "
                          f"only {ref.name}: {' '.join(only_r) or '-'}; moved: {' '.join(moved) or '-'}", file=out)
                    continue
                print(f"{eng.name}.{ins.name} ({c.name} / {rc.name}): {len(set(mine) & set(theirs))} common; "
                      f"only {member.name}: {' '.join(only_m) or '-'}; only {ref.name}: {' '.join(only_r) or '-'}; "
                      f"moved: {len(moved)}", file=out)
    return shared, same, tuple(totals)


def main(argv):
    ap = argparse.ArgumentParser(prog="tools/family_names.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite families.json's per-chip rows from the rules")
    ap.add_argument("--quiet", action="store_true", help="print the summary lines only")
    ap.add_argument("--by-class", action="store_true", help="one line per class instead of per kind")
    args = ap.parse_args(argv[1:])
    table = json.loads(FAMILIES.read_text())
    for fname, fam in table["families"].items():
        ref = load_chip(fam["reference"])
        for chip in fam["chips"]:
            member = load_chip(chip)
            rows, notes = derive(ref, member, fam.get("explicit", {}))
            for n in notes:
                print("note:", n)
            if args.write:
                fam["chips"][chip] = rows
            nf = sum(len(m) for m in rows["fields"].values())
            nk = sum(len(m) for m in rows["kinds"].values())
            sink = open("/dev/null", "w") if args.quiet else sys.stdout
            shared, same, (om, orf, mv) = report(ref, member, sink, fam.get("explicit", {}).get("classes"), args.by_class)
            print(f"{chip} -> {fam['reference']}: {nf} field rows, {nk} kind rows; {shared} kinds shared by "
                  f"family name, {same} with the same field names; differing names: {om} only {chip}, "
                  f"{orf} only {fam['reference']}; {mv} same-named fields at another bit/width")
    if args.write:
        FAMILIES.write_text(json.dumps(table, indent=1) + "\n")
        print("wrote", FAMILIES.relative_to(ROOT), "-- now run tools/specgen.py")


if __name__ == "__main__":
    main(sys.argv)
