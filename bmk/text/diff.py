"""Instruction-level diff of two listings: LCS alignment, then field-by-field differences.

The alignment is difflib's SequenceMatcher (autojunk off) over whole-instruction keys, so one
inserted instruction is one insertion. Inside a replaced block the instructions are aligned
again by (engine, kind), and aligned pairs are reported as changed, field by field. Field
lists are those of each record's class: only records of one (engine, class) pair up as
"changed"; otherwise the difference is a deletion and an insertion.
"""
import difflib

import attrs

from bmk.encoders.framing import PAD
from bmk.text.asm import PAD_FIELD, format_record, format_value, kind_of, record_class
from bmk.errors import BmkError

IGNORE_ALIASES = ("id", "wait", "sync")


@attrs.frozen
class Entry:
    op: str                        # "changed", "inserted" or "deleted"
    a_index: "int | None"
    b_index: "int | None"
    engine: str
    cls: "str | None"              # the instruction class (changed: both sides')
    kind_a: "str | None"
    kind_b: "str | None"
    fields: tuple = ()             # (name, a, b) for changed fields; header ones are "hdr.<name>"


@attrs.frozen
class Diff:
    a: object                      # Listing
    b: object
    ignored: tuple
    entries: tuple
    equal_count: int

    @property
    def equal(self):
        return not self.entries

    def counts(self):
        c = {"changed": 0, "inserted": 0, "deleted": 0}
        for e in self.entries:
            c[e.op] += 1
        c["equal"] = self.equal_count
        return c

    def summary(self):
        c = self.counts()
        if self.equal:
            return f"{self.a.name} and {self.b.name} are equal ({self.equal_count} instructions)"
        return (f"{self.a.name} and {self.b.name} differ: {c['changed']} changed, {c['inserted']} inserted, "
                f"{c['deleted']} deleted; {c['equal']} equal")

    def _value(self, engine, cls, name, v):
        chip = self.a.chip
        if name == PAD_FIELD:
            return "rule" if v is None else str(v)
        if name.startswith("hdr."):
            return format_value(chip.header.by_name[name[4:]], v)
        return format_value(chip.engine(engine).cls(cls).by_name[name], v)

    def to_text(self, limit=None):
        out = [f"--- {self.a.name}", f"+++ {self.b.name}"]
        chip = self.a.chip
        for n, e in enumerate(self.entries):
            if limit is not None and n >= limit:
                out.append(f"... {len(self.entries) - limit} more differences")
                break
            if e.op == "changed":
                kind = f"{e.engine}.{e.kind_a}" + (f" -> {e.engine}.{e.kind_b}" if e.kind_b != e.kind_a else "")
                out.append(f"~ A#{e.a_index} B#{e.b_index} {kind} ({self.a.where(e.a_index)} | "
                           f"{self.b.where(e.b_index)})")
                for name, va, vb in e.fields:
                    out.append(f"    {name}: {self._value(e.engine, e.cls, name, va)} -> {self._value(e.engine, e.cls, name, vb)}")
            elif e.op == "inserted":
                out.append(f"+ B#{e.b_index} ({self.b.where(e.b_index)})")
                out.append(f"    {format_record(chip, self.b.records[e.b_index])}")
            else:
                out.append(f"- A#{e.a_index} ({self.a.where(e.a_index)})")
                out.append(f"    {format_record(chip, self.a.records[e.a_index])}")
        out.append(self.summary())
        return "\n".join(out)

    def to_dict(self):
        chip = self.a.chip
        entries = []
        for e in self.entries:
            d = {"op": e.op, "engine": e.engine, "class": e.cls}
            if e.a_index is not None:
                d.update(a_index=e.a_index, a_where=self.a.where(e.a_index), a_kind=e.kind_a)
            if e.b_index is not None:
                d.update(b_index=e.b_index, b_where=self.b.where(e.b_index), b_kind=e.kind_b)
            if e.op == "changed":
                d["fields"] = {name: {"a": va, "b": vb} for name, va, vb in e.fields}
            elif e.op == "inserted":
                d["text"] = format_record(chip, self.b.records[e.b_index])
            else:
                d["text"] = format_record(chip, self.a.records[e.a_index])
            entries.append(d)
        return {"equal": self.equal, "chip": chip.name,
                "a": {"name": self.a.name, "instructions": len(self.a.records)},
                "b": {"name": self.b.name, "instructions": len(self.b.records)},
                "ignored": list(self.ignored), "summary": self.counts(), "entries": entries}


def expand_ignore(chip, names):
    """--ignore names -> field names. Aliases: id (own ids), wait (wait ids), sync (ids, waits, enables)."""
    fields = set()
    known = {f.name for c in chip.formats for f in c.fields}
    for name in names:
        if name in ("id", "sync"):
            fields |= {e.own_id for e in chip.engines if e.own_id}
        if name in ("wait", "sync"):
            fields |= {f for e in chip.engines for _, f in e.wait_for}
        if name == "sync":
            fields |= {f for e in chip.engines for f, _ in e.enable}
        if name in IGNORE_ALIASES:
            continue
        if name.startswith("hdr.") and name[4:] in chip.header.by_name:
            fields.add(name)
        elif name in known:
            fields.add(name)
        else:
            close = difflib.get_close_matches(name, sorted(known) + list(IGNORE_ALIASES), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise BmkError(f"--ignore: {name!r} is not a field of {chip.name} nor one of "
                           f"{', '.join(IGNORE_ALIASES)}{hint}")
    return fields


def _key(record, ignored, names):
    fields = record.fields
    return (record.engine, record.cls,
            tuple(fields[k] for k in names[record.engine, record.cls] if k not in ignored),
            tuple(sorted((k, v) for k, v in record.header.items() if "hdr." + k not in ignored)))


def _field_changes(chip, ra, rb, ignored):
    fmt = record_class(chip, ra)
    out = [(f.name, ra.fields[f.name], rb.fields[f.name]) for f in fmt.fields
           if f.name not in ignored and ra.fields[f.name] != rb.fields[f.name]]
    for k in sorted(set(ra.header) | set(rb.header)):
        if "hdr." + k in ignored:
            continue
        absent = fmt.nbytes if k == "len" else None if k == PAD else 0   # an absent hdr.len: the class length
        va, vb = ra.header.get(k, absent), rb.header.get(k, absent)
        if va != vb:
            out.append((PAD_FIELD if k == PAD else f"hdr.{k}", va, vb))
    return tuple(out)


def _with_class(chip, records):
    """Records with `cls` filled in (records built by hand may leave it to the selector)."""
    return tuple(r if r.cls else attrs.evolve(r, cls=record_class(chip, r).name) for r in records)


def diff_listings(a, b, ignore=()):
    """Two Listings of one chip -> Diff. Raises BmkError when the chips differ or an ignore is unknown."""
    if a.chip.name != b.chip.name:
        raise BmkError(f"cannot compare a {a.chip.name} buffer ({a.name}) with a {b.chip.name} one ({b.name})")
    chip = a.chip
    a = attrs.evolve(a, records=_with_class(chip, a.records))
    b = attrs.evolve(b, records=_with_class(chip, b.records))
    ignored = expand_ignore(chip, ignore)
    names = {(e.name, c.name): [f.name for f in c.fields] for e in chip.encoded_engines for c in e.classes}
    ka = [_key(r, ignored, names) for r in a.records]
    kb = [_key(r, ignored, names) for r in b.records]
    entries, equal = [], 0

    def kind(listing, i):
        return kind_of(chip, listing.records[i])

    def changed(i, j):
        ra, rb = a.records[i], b.records[j]
        entries.append(Entry("changed", i, j, ra.engine, ra.cls, kind(a, i), kind(b, j),
                             _field_changes(chip, ra, rb, ignored)))

    def deleted(i):
        entries.append(Entry("deleted", i, None, a.records[i].engine, a.records[i].cls, kind(a, i), None))

    def inserted(j):
        entries.append(Entry("inserted", None, j, b.records[j].engine, b.records[j].cls, None, kind(b, j)))

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes():
        if tag == "equal":
            equal += i2 - i1
            continue
        if tag == "delete":
            for i in range(i1, i2):
                deleted(i)
            continue
        if tag == "insert":
            for j in range(j1, j2):
                inserted(j)
            continue
        # replace: align again by (engine, kind); pair what lines up, same engine only.
        sa = [(a.records[i].engine, a.records[i].cls, kind(a, i)) for i in range(i1, i2)]
        sb = [(b.records[j].engine, b.records[j].cls, kind(b, j)) for j in range(j1, j2)]
        for t2, x1, x2, y1, y2 in difflib.SequenceMatcher(None, sa, sb, autojunk=False).get_opcodes():
            pairs = min(x2 - x1, y2 - y1) if t2 in ("equal", "replace") else 0
            rest_a, rest_b = list(range(i1 + x1, i1 + x2)), list(range(j1 + y1, j1 + y2))
            for n in range(pairs):
                i, j = rest_a[n], rest_b[n]
                if (a.records[i].engine, a.records[i].cls) == (b.records[j].engine, b.records[j].cls):
                    changed(i, j)
                else:
                    deleted(i)
                    inserted(j)
            for i in rest_a[pairs:]:
                deleted(i)
            for j in rest_b[pairs:]:
                inserted(j)
    return Diff(a, b, tuple(sorted(ignored)), tuple(entries), equal)
