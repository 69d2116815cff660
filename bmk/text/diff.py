"""Instruction-level diff of two listings: LCS alignment, then field-by-field differences.

The alignment is over whole-instruction keys, so one inserted instruction is one insertion.
Inside a replaced block the instructions are aligned again by (engine, kind), and aligned
pairs are reported as changed, field by field. Field lists are those of each record's class:
only records of one (engine, class) pair up as "changed"; otherwise the difference is a
deletion and an insertion.

Alignment (`opcodes`): difflib's SequenceMatcher (autojunk off) when the two sequences are
small (len(a) * len(b) <= SMALL); on longer ones, time and memory stay linear (issue 12.10,
13.4): equal runs are walked; at a difference, the nearest point where both sides agree again
for RUN instructions (`_resync`, searched within WINDOW instructions) closes a differing
window, which SequenceMatcher aligns when it is small; a window with no such point within
WINDOW is handed on as a replaced block, up to its last pair of equal kinds (so that the next
window continues that alignment), and aligned again (by kind) the same way.
Keys are 64-bit hashes of an instruction's bytes (ignored fields cleared), not the records:
a listing is decoded lazily, one record at a time.

Order (`order`): "program" aligns the two listings as they are laid out (one program order);
"engine" aligns each engine's instructions on their own (per core), since each engine's
order is what the hardware sees and raw streams merged by their sync ids may interleave the
engines in another valid order (issue 22.2). Engine order leaves the sync ids (own ids and
waits) out of the instructions' comparison and compares what they mean instead: for each
pair of aligned instructions, the instruction of another engine each waits for, through that
engine's alignment (`Dependency`: reported apart from the instruction differences), and
an own id is compared by how far it is from its stream's sequence (an insertion moves every
later id and changes none; one changed id is one change, shown as `id`). It is the default
when either side is raw streams.
Field names are the disassembly's: a sync field is `id` or `wait.<engine>` (bmk/text/asm.py).
"""
import bisect
import difflib
from array import array
from collections.abc import Sequence

import attrs

from bmk.encoders.codec import codec_for
from bmk.encoders.fields import as_dict
from bmk.encoders.framing import PAD, frame_at
from bmk.text.asm import (PAD_FIELD, format_record, format_value, kind_of, mnemonic, record_class, sync_fields,
                          view_changes, wrap)
from bmk.text.views import Text
from bmk.errors import BmkError, quoted

IGNORE_ALIASES = ("id", "wait", "sync")
ORDERS = ("program", "engine")
SMALL = 100_000          # len(a) * len(b) up to which SequenceMatcher aligns (today's exact result)
WINDOW = 16_384          # how far ahead a difference looks for the point where the sides agree again
RUN = 16                 # ... agree for this many instructions (fewer at an end)
NEAR = 16                # differences this short are searched for exhaustively, diagonal by diagonal
CAP = 16                 # positions kept per key in a window's index
OPS = ("changed", "inserted", "deleted")


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
class Dependency:
    """A pair of aligned instructions (engine order) that wait for different instructions of
    another engine: `a_target`/`b_target` the index (in A, in B) of the instruction each waits
    for, None when it waits for nothing (or for an id no instruction of that engine has:
    `a_id`/`b_id` give the wait values); `a_target_in_b`: the counterpart in B of A's target
    (None: it has none, or A's waits for nothing)."""

    engine: str
    a_index: int
    b_index: int
    kind: str
    on: str                        # the engine waited for
    a_target: "int | None"
    b_target: "int | None"
    a_target_in_b: "int | None"
    a_id: int = 0
    b_id: int = 0


@attrs.frozen
class Diff:
    a: object                      # Listing
    b: object
    ignored: tuple
    entries: "Sequence[Entry]"     # an Entries (made on access) or a tuple
    equal_count: int
    order: str = "program"         # "program" or "engine" (module docstring)
    dependencies: tuple = ()       # Dependency records (engine order)

    @property
    def equal(self):
        return not self.entries and not self.dependencies

    def counts(self):
        c = self.entries.counts() if isinstance(self.entries, Entries) else \
            {op: sum(e.op == op for e in self.entries) for op in OPS}
        if self.order == "engine":
            c["dependencies"] = len(self.dependencies)
        c["equal"] = self.equal_count
        return c

    def summary(self):
        c = self.counts()
        how = " in each engine's order" if self.order == "engine" else ""
        if self.equal:
            return f"{self.a.name} and {self.b.name} are equal ({self.equal_count} instructions{how})"
        n = c.get("dependencies", 0)
        deps = f", {n} {'dependency' if n == 1 else 'dependencies'} changed" if n else ""
        return (f"{self.a.name} and {self.b.name} differ{how}: {c['changed']} changed, {c['inserted']} inserted, "
                f"{c['deleted']} deleted{deps}; {c['equal']} equal")

    def _value(self, engine, cls, name, v):
        chip = self.a.chip
        if isinstance(v, Text):            # a readable value (bmk/text/views.py), already its text
            return v
        if name == PAD_FIELD:
            return "rule" if v is None else str(v)
        if name.startswith("hdr."):
            return format_value(chip.header.by_name[name[4:]], v)
        if chip.engine(engine).opaque or name == CORE_FIELD:
            return v
        fname = dict(sync_fields(chip.engine(engine))).get(name, name)
        fmt = chip.engine(engine).cls(cls)
        # changes are named as listings spell them: the vendor's spelling where the field has one
        return format_value(fmt.by_name[fmt.by_vendor.get(fname, fname)], v)

    def _target(self, listing, index, on, wait):
        if index is None:
            return "nothing" if not wait else f"{on} id {wait} (no such {on} command)"
        return f"{'A' if listing is self.a else 'B'}#{index} {mnemonic(self.a.chip, listing.records[index])}"

    def dependency_text(self, d):
        """One dependency change as a line of text."""
        was = self._target(self.a, d.a_target, d.on, d.a_id)
        if d.a_target is not None:
            was += f" (B#{d.a_target_in_b})" if d.a_target_in_b is not None else " (not in B)"
        return (f"! A#{d.a_index} B#{d.b_index} {d.engine}.{d.kind} waits for {d.on}: {was} -> "
                f"{self._target(self.b, d.b_target, d.on, d.b_id)}")

    def to_text(self, limit=None, width=None):
        return "\n".join(self.iter_text(limit, width))

    def iter_text(self, limit=None, width=None):
        """The lines of `to_text`, one at a time (a long diff is written as it is made); width:
        an inserted or deleted instruction's line wrapped to it (bmk.text.asm.wrap)."""
        yield f"--- {self.a.name}"
        yield f"+++ {self.b.name}"
        chip = self.a.chip
        out = []
        for n, e in enumerate(self.entries):
            if limit is not None and n >= limit:
                yield f"... {len(self.entries) - limit} more differences"
                break
            if e.op == "changed":
                kind = f"{e.engine}.{e.kind_a}" + (f" -> {e.engine}.{e.kind_b}" if e.kind_b != e.kind_a else "")
                out.append(f"~ A#{e.a_index} B#{e.b_index} {kind} ({self.a.where(e.a_index)} | "
                           f"{self.b.where(e.b_index)})")
                for name, va, vb in e.fields:
                    out.append(f"    {name}: {self._value(e.engine, e.cls, name, va)} -> {self._value(e.engine, e.cls, name, vb)}")
            elif e.op == "inserted":
                out.append(f"+ B#{e.b_index} ({self.b.where(e.b_index)})")
                out += wrap(f"    {format_record(chip, self.b.records[e.b_index])}", width)
            else:
                out.append(f"- A#{e.a_index} ({self.a.where(e.a_index)})")
                out += wrap(f"    {format_record(chip, self.a.records[e.a_index])}", width)
            yield from out
            out.clear()
        if self.dependencies:
            yield "cross-engine dependencies (what each instruction waits for, A -> B):"
            for n, d in enumerate(self.dependencies):
                if limit is not None and n >= limit:
                    yield f"... {len(self.dependencies) - limit} more dependency changes"
                    break
                yield self.dependency_text(d)
        yield self.summary()

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
        deps = [{"engine": d.engine, "a_index": d.a_index, "b_index": d.b_index, "kind": d.kind, "on": d.on,
                 "a_target": d.a_target, "b_target": d.b_target, "a_target_in_b": d.a_target_in_b,
                 "a_id": d.a_id, "b_id": d.b_id, "text": self.dependency_text(d)} for d in self.dependencies]
        return {"equal": self.equal, "chip": chip.name, "order": self.order,
                "a": {"name": self.a.name, "instructions": len(self.a.records)},
                "b": {"name": self.b.name, "instructions": len(self.b.records)},
                "ignored": list(self.ignored), "summary": self.counts(), "entries": entries,
                "dependencies": deps}


def sync_ids(chip):
    """The field names of every engine's own id and waits."""
    return {e.own_id for e in chip.engines if e.own_id} | {f for e in chip.engines for _, f in e.wait_for}


def _wait_fields(chip, name):
    """`wait.<engine>` (engine name or alias) -> the wait fields on that engine; None if not one."""
    if not name.startswith("wait."):
        return None
    try:
        other = chip.engine(name[5:])
    except BmkError:
        return None
    if other is None:
        return None
    return {f for e in chip.engines for o, f in e.wait_for if o == other.name} or None


def _shown_names(chip):
    """{name a listing shows a value under (bmk/text/views.py): the fields behind it}: joined
    composed rows, constants, round."""
    out = {}
    for e in chip.engines:
        d = e.display
        for c in e.classes:
            for name, parts in c.composed:
                if name in d.joined:
                    out.setdefault(name, set()).update(parts)
        for name, addr, *_ in d.constants:
            out.setdefault(name, set()).add(addr)
        if d.rounding is not None:
            out.setdefault("round", set()).add(d.rounding.field)
    return out


def expand_ignore(chip, names):
    """--ignore names -> field names. Aliases: id (own ids), wait (wait ids), sync (ids, waits,
    enables), wait.<engine> (the waits for that engine, as the disassembly names them)."""
    fields = set()
    known = {f.name for c in chip.formats for f in c.fields}
    vendor = {f.vendor: f.name for c in chip.formats for f in c.fields if f.vendor}   # listings' spellings
    shown = _shown_names(chip)
    for name in names:
        name = vendor.get(name, name) if name not in known else name
        waits = _wait_fields(chip, name)
        if waits is not None:
            fields |= waits
            continue
        if name in shown and name not in known:      # a readable value's name: the fields it shows
            fields |= shown[name]
            continue
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
            raise BmkError(f"--ignore: {quoted(name)} is not a field of {chip.name} nor one of "
                           f"{', '.join(IGNORE_ALIASES)}{hint}")
    return fields


def _field_changes(chip, ra, rb, ignored):
    """(name, a, b) of each field that differs (sync fields under the disassembly's names)."""
    fmt = record_class(chip, ra)
    if fmt is None:                  # an opaque engine's bytes: their size and where they first differ
        nbytes = len(ra.data)
        out = [(DATA_FIELD, _data_summary(ra.data, rb.data), _data_summary(rb.data, ra.data))] \
            if ra.data != rb.data else []
    else:
        nbytes = fmt.nbytes
        shown = {f: alias for alias, f in sync_fields(chip.engine(ra.engine))}
        fa, fb = as_dict(ra.fields), as_dict(rb.fields)      # every field is compared
        out = [(shown.get(f.name, f.spelling), fa[f.name], fb[f.name]) for f in fmt.fields
               if f.name not in ignored and fa[f.name] != fb[f.name]]
        if out and chip.engine(ra.engine).display is not None:
            out = list(view_changes(chip, ra, rb, tuple(out)))     # readable values, as the listing shows them
    for k in sorted(set(ra.header) | set(rb.header)):
        if "hdr." + k in ignored:
            continue
        absent = nbytes if k == "len" else None if k == PAD else 0   # an absent hdr.len: the class length
        va, vb = ra.header.get(k, absent), rb.header.get(k, absent)
        if va != vb:
            out.append((PAD_FIELD if k == PAD else f"hdr.{k}", va, vb))
    if ra.core != rb.core:
        out.append((CORE_FIELD, ra.core, rb.core))
    return tuple(out)


DATA_FIELD = "data"
CORE_FIELD = "core"      # a record's core (`.core N`), when the two sides' differ


def _data_summary(data, other):
    """How an opaque record's bytes show in a diff: size, and the first byte that differs."""
    first = next((i for i, (x, y) in enumerate(zip(data, other)) if x != y), min(len(data), len(other)))
    return f"{len(data)} bytes, from byte {first}: {data[first:first + 8].hex() or '(end)'}"


class Entries(Sequence):
    """The differences of a Diff, kept as (op, A index, B index) in arrays; an Entry, with its
    kinds and field changes, is made when asked for (linear memory on big listings)."""

    def __init__(self, a, b, ignored, ops, ia, ib, ids=None):
        self.a, self.b, self.ignored = a, b, ignored
        self.ops, self.ia, self.ib = ops, ia, ib
        self.ids = ids       # engine order: the two sides' _Sync, whose own ids out of sequence count

    def __len__(self):
        return len(self.ops)

    def __getitem__(self, n):
        if isinstance(n, slice):
            return tuple(self[k] for k in range(*n.indices(len(self))))
        op, i, j = OPS[self.ops[n]], self.ia[n], self.ib[n]
        chip = self.a.chip
        if op == "changed":
            ra, rb = _classed(chip, self.a.records[i]), _classed(chip, self.b.records[j])
            changes = _field_changes(chip, ra, rb, self.ignored)
            if self.ids is not None:
                (sa, p), (sb, q) = self.ids[0].locate(i), self.ids[1].locate(j)
                if sa.skew(p) != sb.skew(q):
                    changes = (("id", sa.own[p], sb.own[q]),) + changes
            return Entry(op, i, j, ra.engine, ra.cls, kind_of(chip, ra), kind_of(chip, rb), changes)
        if op == "deleted":
            ra = _classed(chip, self.a.records[i])
            return Entry(op, i, None, ra.engine, ra.cls, kind_of(chip, ra), None)
        rb = _classed(chip, self.b.records[j])
        return Entry(op, None, j, rb.engine, rb.cls, None, kind_of(chip, rb))

    def counts(self):
        c = dict.fromkeys(OPS, 0)
        for code, name in enumerate(OPS):
            c[name] = self.ops.count(code)
        return c

    def __eq__(self, other):
        return isinstance(other, Sequence) and len(other) == len(self) and all(x == y for x, y in zip(self, other))

    __hash__ = None

    def __repr__(self):
        return f"Entries({tuple(self)!r})"


def _classed(chip, record):
    """A record with `cls` filled in (records built by hand may leave it to the selector)."""
    return record if record.cls else attrs.evolve(record, cls=record_class(chip, record).name)


class _Keyer:
    """Whole-instruction keys: hash((engine, class, command bytes with the ignored fields cleared,
    the header fields a Record keeps, less the ignored ones)). Equal keys <=> equal records
    under --ignore, up to a 64-bit hash collision."""

    def __init__(self, chip, ignored):
        self.chip, self.ignored = chip, ignored
        self.masks = {}
        self.hdr_ignored = {k[4:] for k in ignored if k.startswith("hdr.")}

    def mask(self, cls):
        m = self.masks.get(cls.name, cls)
        if m is cls:
            drop = [f for f in cls.fields if f.name in self.ignored]
            m = None
            if drop:
                m = (1 << (8 * cls.nbytes)) - 1
                for f in drop:
                    m &= ~(f.max << f.bit)
            self.masks[cls.name] = m
        return m

    def key(self, engine, cls, body, header, core=0):
        hdr = tuple(sorted((k, v) for k, v in header.items() if k not in self.hdr_ignored)) if header else ()
        if core:                                        # several cores in one order: whose it is counts
            engine = (core, engine)
        if cls is None:                                 # an opaque engine's bytes
            return hash((engine, None, bytes(body), hdr))
        m = self.mask(cls)
        if m is not None:
            body = (int.from_bytes(body, "little") & m).to_bytes(cls.nbytes, "little")
        return hash((engine, cls.name, body, hdr))

    def keys(self, records, sync=None):
        """array('q') of the keys of a Listing's records (a lazy buffer: read straight from its bytes).

        sync: a _Sync to fill with each record's stream, sync ids and key (engine order: the
        keys are kept there, stream by stream, and None is returned), or None."""
        chip = self.chip
        out = array("q") if sync is None else None
        put = out.append if sync is None else None
        data = getattr(records, "data", None)
        if data is not None and getattr(records, "offsets", None) is not None:
            hdr = codec_for(chip.header)
            special = getattr(records, "special", None) or {}      # what the bytes cannot carry (core, padding)
            for i, off in enumerate(records.offsets):
                eng, cls, extra, start, length = frame_at(chip, data, off, hdr)
                rec = special.get(i)
                core = rec.core if rec else 0
                body = data[start:start + length]
                key = self.key(eng.name, cls, body, rec.header if rec else extra, core)
                if sync is None:
                    put(key)
                else:
                    sync.add_bytes(core, eng, cls, body, key)
            return out
        frames = getattr(records, "frames", None)
        if frames is not None:                  # raw streams (bmk/text/raw.py): read from their bytes
            for core, eng, cls, body, header in frames():
                key = self.key(eng.name, cls, body, header, core)
                if sync is None:
                    put(key)
                else:
                    sync.add_bytes(core, eng, cls, body, key)
            return out
        for r in records:
            cls = record_class(chip, r)
            key = self.key(r.engine, cls, r.data if cls is None else codec_for(cls).pack(r.fields), r.header, r.core)
            if sync is None:
                put(key)
            else:
                sync.add_fields(r.core, chip.engine(r.engine), r.fields, key)
        return out


class _Stream:
    """One stream's records of a listing (engine order): listing indices, keys, own ids (-1:
    none) and wait values (-1: the class has none), one array each: ~24 bytes a record."""

    __slots__ = ("core", "eng", "index", "keys", "own", "waits", "_restarts")

    def __init__(self, core, eng, nwaits, ids):
        self.core, self.eng = core, eng
        self.index, self.keys, self.own = array("I"), array("q"), array(ids)
        self.waits = [array(ids) for _ in range(nwaits)]
        self._restarts = None

    def __len__(self):
        return len(self.index)

    def widen(self):
        """Own ids and waits as 64-bit arrays (a value a record built by hand holds past 32 bits)."""
        self.own = array("q", self.own)
        self.waits = [array("q", w) for w in self.waits]

    def skew(self, p):
        """How far the own id at position p is from its place in its stream's sequence (ids count
        1, 2, 3 ... from the stream's start or from a restart at 1: bmk/scheduler.py), so that an
        insertion, which moves every later id, changes none, and one changed id changes one."""
        own = self.own[p]
        if own < 0:
            return 0
        if self._restarts is None:
            self._restarts = array("I", (q for q, v in enumerate(self.own) if v == 1))
        k = bisect.bisect_right(self._restarts, p)
        return own - (p - (self._restarts[k - 1] if k else 0) + 1)

    def skewed_keys(self):
        """The keys with each record's skew folded in (hash((key, skew)) where it is not 0), in place."""
        keys, start = self.keys, 0
        for p, own in enumerate(self.own):
            if own < 0:
                continue
            if own == 1:
                start = p
            d = own - (p - start + 1)
            if d:
                keys[p] = hash((keys[p], d))
        return keys


class _Sync:
    """A listing's records stream by stream (engine order): per stream (a code of (core,
    engine), shared by both sides of a diff) a _Stream of their listing indices, keys and sync
    ids, read from the bytes or the fields."""

    def __init__(self, chip, streams):
        self.chip, self.streams = chip, streams        # streams: {(core, engine name): code}, shared
        self.by_code = {}                               # code -> _Stream
        self.nwaits = max((len(e.wait_for) for e in chip.engines), default=0)
        widths = [f.width for e in chip.engines for c in e.classes for f in c.fields
                  if f.name == e.own_id or f.name in {n for _, n in e.wait_for}]
        self.ids = "i" if max(widths, default=0) <= 30 else "q"     # -1 and -2 - id (targets) fit
        self._fields = {}
        self._count = 0

    def _of(self, core, eng):
        key = (core, eng.name)
        code = self.streams.get(key)
        if code is None:
            code = self.streams[key] = len(self.streams)
        s = self.by_code.get(code)
        if s is None:
            s = self.by_code[code] = _Stream(core, eng, self.nwaits, self.ids)
        s.index.append(self._count)
        self._count += 1
        return s

    def _fields_of(self, eng, cls):
        key = (eng.name, cls.name)
        got = self._fields.get(key)
        if got is None:
            names = [eng.own_id] + [f for _, f in eng.wait_for]
            got = self._fields[key] = [cls.by_name.get(n) if n else None for n in names]
        return got

    def add_bytes(self, core, eng, cls, body, key):
        s = self._of(core, eng)
        s.keys.append(key)
        if cls is None:
            return self._put(s, ())
        word = int.from_bytes(body, "little")
        self._put(s, [-1 if f is None else (word >> f.bit) & f.max for f in self._fields_of(eng, cls)])

    def add_fields(self, core, eng, fields, key):
        s = self._of(core, eng)
        s.keys.append(key)
        if eng.opaque:
            return self._put(s, ())
        names = [eng.own_id] + [f for _, f in eng.wait_for]
        self._put(s, [fields.get(n, -1) if n else -1 for n in names])

    def _put(self, s, values):
        try:
            s.own.append(values[0] if values else -1)
        except OverflowError:
            s.widen()
            s.own.append(values[0])
        for j, w in enumerate(s.waits):
            v = values[j + 1] if j + 1 < len(values) else -1
            try:
                w.append(v)
            except OverflowError:
                s.widen()
                s.waits[j].append(v)

    def locate(self, i):
        """(its _Stream, its position there) of listing index i."""
        for s in self.by_code.values():
            p = bisect.bisect_left(s.index, i)
            if p < len(s.index) and s.index[p] == i:
                return s, p
        raise IndexError(i)

    def order(self):
        """Per listing index: its stream code (bytes while there are fewer than 256 streams)."""
        codes = bytearray(self._count) if len(self.streams) < 256 else array("H", bytes(2 * self._count))
        for code, s in self.by_code.items():
            for i in s.index:
                codes[i] = code
        return codes

    def targets(self):
        """{(stream code, wait slot): array of what each of its records waits for}: the position
        in the waited-for stream, -1 for nothing, -2 - id for an id no command there has."""
        chip, out = self.chip, {}
        for code, s in self.by_code.items():                # missing waits: "next" fills them backwards
            if s.eng.missing_wait != "next":
                continue
            for w in s.waits[:len(s.eng.wait_for)]:
                later = 0
                for p in range(len(w) - 1, -1, -1):
                    if w[p] < 0:
                        w[p] = later
                    else:
                        later = w[p]
        last = {code: {} for code in self.by_code}          # own id -> its latest position
        pos = dict.fromkeys(self.by_code, 0)
        plan = {}
        for code, s in self.by_code.items():
            eng = s.eng
            slots = []
            for j, (other, _) in enumerate(eng.wait_for):
                ocode = self.streams.get((s.core, other))
                count = len(self.by_code[ocode]) if ocode in self.by_code else 0
                out[code, j] = array("q" if s.own.typecode == "q" else self.ids)
                slots.append((s.waits[j], out[code, j], ocode, chip.engine(other).implicit_ids, count))
            plan[code] = (s, slots, eng.wait_mask, None if eng.implicit_ids else last[code])
        for code in self.order():
            s, slots, mask, mine = plan[code]
            p = pos[code]
            pos[code] = p + 1
            for w, dest, ocode, implicit, count in slots:
                v = w[p]
                if v > 0 and mask is not None:
                    v &= mask
                if v <= 0:
                    target = -1
                elif ocode not in last:
                    target = -2 - v
                elif implicit:
                    target = v - 1 if v <= count else -2 - v
                else:
                    target = last[ocode].get(v, -2 - v)
                dest.append(target)
            if mine is not None and s.own[p] >= 0:
                mine[s.own[p]] = p
        return out


class _Kinds:
    """(engine, class, kind) of a listing's records lo..hi of a sequence (`index`: listing
    indices of the sequence, None: the listing itself); the last window's are kept for `cut`."""

    def __init__(self, chip, listing, index=None):
        self.chip, self.listing, self.index = chip, listing, index
        self.start, self.known = 0, ()

    def __call__(self, lo, hi):
        if self.start <= lo and hi <= self.start + len(self.known):
            return self.known[lo - self.start:hi - self.start]
        chip, records, index = self.chip, self.listing.records, self.index
        out = []
        for k in range(lo, hi):
            r = _classed(chip, records[k if index is None else index[k]])
            out.append((r.engine, r.cls, kind_of(chip, r)))
        self.start, self.known = lo, out
        return out


def _run_ok(ka, kb, x, y):
    r = min(RUN, len(ka) - x, len(kb) - y)
    return r > 0 and ka[x:x + r] == kb[y:y + r]


def _resync(ka, kb, i, j):
    """(di, dj): the nearest point after a difference at (i, j) where the sides agree for RUN
    instructions (or up to an end), searched within WINDOW; None when there is none."""
    n, m = len(ka), len(kb)
    for d in range(1, NEAR + 1):                       # short differences: every diagonal
        for di in range(max(0, d - (m - j - 1)), min(d, n - i - 1) + 1):
            dj = d - di
            if ka[i + di] == kb[j + dj] and _run_ok(ka, kb, i + di, j + dj):
                return di, dj
    pos = {}                                           # longer ones: an index of B's window
    for y in range(j, min(j + WINDOW, m)):
        lst = pos.setdefault(kb[y], [])
        if len(lst) < CAP:
            lst.append(y - j)
    best, bd = None, 2 * WINDOW + 1
    for di in range(min(WINDOW, n - i)):
        if di >= bd:
            break
        for dj in pos.get(ka[i + di], ()):
            if di + dj >= bd:
                break
            if (di or dj) and _run_ok(ka, kb, i + di, j + dj):
                best, bd = (di, dj), di + dj
                break
    return best


def opcodes(ka, kb, cut=None):
    """SequenceMatcher-style opcodes (tag, i1, i2, j1, j2) aligning two key sequences; see the
    module docstring. Consecutive opcodes may share a tag.

    `cut(i1, i2, j1, j2) -> (i, j)`: where a window with no point of agreement should end, so
    that the next one starts on the same alignment (diff_listings: after the last pair of equal
    kinds); default: the whole window."""
    n, m = len(ka), len(kb)
    if n * m <= SMALL:
        yield from difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes()
        return
    i = j = 0
    while True:
        i0, j0 = i, j
        while i < n and j < m and ka[i] == kb[j]:
            i += 1
            j += 1
        if i > i0:
            yield "equal", i0, i, j0, j
        if i == n or j == m:
            if i < n:
                yield "delete", i, n, j, j
            if j < m:
                yield "insert", i, i, j, m
            return
        step = _resync(ka, kb, i, j)
        if step is not None:
            i2, j2 = i + step[0], j + step[1]
        else:
            i2, j2 = i + min(WINDOW, n - i), j + min(WINDOW, m - j)
            if cut is not None:
                ie, je = cut(i, i2, j, j2)
                if ie > i or je > j:
                    i2, j2 = ie, je
        yield from _window(ka, kb, i, i2, j, j2)
        i, j = i2, j2


def _window(ka, kb, i1, i2, j1, j2):
    if i1 == i2:
        yield "insert", i1, i1, j1, j2
    elif j1 == j2:
        yield "delete", i1, i2, j1, j1
    elif (i2 - i1) * (j2 - j1) <= SMALL:
        for tag, x1, x2, y1, y2 in difflib.SequenceMatcher(None, ka[i1:i2], kb[j1:j2], autojunk=False).get_opcodes():
            yield tag, i1 + x1, i1 + x2, j1 + y1, j1 + y2
    else:
        yield "replace", i1, i2, j1, j2


def _align(ka, kb, kinds_a, kinds_b, add, match):
    """Align two key sequences (opcodes, replaced blocks aligned again by (engine, kind), pairs
    of one engine and class "changed"); add(op, i, j) each difference (positions in the
    sequences), match[i] = j for each aligned pair (equal or changed). Returns the equal count."""
    equal = 0

    def cut(i1, i2, j1, j2):
        end = (i1, j1)
        for t2, x1, x2, y1, y2 in opcodes(kinds_a(i1, i2), kinds_b(j1, j2)):
            if t2 == "equal":
                end = (i1 + x2, j1 + y2)
        return end

    for tag, i1, i2, j1, j2 in opcodes(ka, kb, cut):
        if tag == "equal":
            equal += i2 - i1
            if match is not None:
                for k in range(i2 - i1):
                    match[i1 + k] = j1 + k
            continue
        if tag == "delete":
            for i in range(i1, i2):
                add(2, i, None)
            continue
        if tag == "insert":
            for j in range(j1, j2):
                add(1, None, j)
            continue
        # replace: align again by (engine, kind); pair what lines up, same engine only.
        sa, sb = kinds_a(i1, i2), kinds_b(j1, j2)
        for t2, x1, x2, y1, y2 in opcodes(sa, sb):
            pairs = min(x2 - x1, y2 - y1) if t2 in ("equal", "replace") else 0
            for k in range(pairs):
                if sa[x1 + k][:2] == sb[y1 + k][:2]:
                    add(0, i1 + x1 + k, j1 + y1 + k)
                    if match is not None:
                        match[i1 + x1 + k] = j1 + y1 + k
                else:
                    add(2, i1 + x1 + k, None)
                    add(1, None, j1 + y1 + k)
            for i in range(x1 + pairs, x2):
                add(2, i1 + i, None)
            for j in range(y1 + pairs, y2):
                add(1, None, j1 + j)
    return equal


def default_order(a, b):
    """"engine" when either listing is raw streams, else "program"."""
    return "engine" if "raw" in (a.source, b.source) else "program"


def diff_listings(a, b, ignore=(), order=None):
    """Two Listings of one chip -> Diff. `order`: "program", "engine" or None (engine when
    either side is raw streams; module docstring). Raises BmkError when the chips differ, an
    ignore is unknown or the order is not one of ORDERS."""
    if a.chip.name != b.chip.name:
        raise BmkError(f"cannot compare a {a.chip.name} buffer ({a.name}) with a {b.chip.name} one ({b.name})")
    if order is None:
        order = default_order(a, b)
    if order not in ORDERS:
        raise BmkError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    chip = a.chip
    ignored = expand_ignore(chip, ignore)
    ops, ia, ib = array("b"), array("q"), array("q")
    if order == "program":
        keyer = _Keyer(chip, ignored)
        ka, kb = keyer.keys(a.records), keyer.keys(b.records)

        def add(op, i, j):
            ops.append(op)
            ia.append(-1 if i is None else i)
            ib.append(-1 if j is None else j)
        equal = _align(ka, kb, _Kinds(chip, a), _Kinds(chip, b), add, None)
        return Diff(a, b, tuple(sorted(ignored)), Entries(a, b, ignored, ops, ia, ib), equal)
    # engine order: each stream aligned on its own, sync ids compared as the dependencies they make
    deps = not ({"wait", "sync"} & set(ignore)) and not (sync_ids(chip) - {e.own_id for e in chip.engines} <= ignored)
    compared = ignored | sync_ids(chip)
    keyer, streams = _Keyer(chip, compared), {}
    sa, sb = _Sync(chip, streams), _Sync(chip, streams)
    keyer.keys(a.records, sa)
    keyer.keys(b.records, sb)
    ids = None
    if not ({"id", "sync"} & set(ignore)) and not ({e.own_id for e in chip.engines if e.own_id} <= ignored):
        ids = (sa, sb)             # an own id out of its stream's sequence is a change of that instruction
    equal, matches, index = 0, {}, {}
    for code in sorted(streams.values()):
        xs, ys = (side.by_code.get(code) or _Stream(0, None, 0, "i") for side in (sa, sb))
        xa, xb = xs.index, ys.index
        index[code] = (xa, xb)
        match = matches[code] = array("i", [-1]) * len(xa)

        def add(op, i, j, xa=xa, xb=xb):
            ops.append(op)
            ia.append(-1 if i is None else xa[i])
            ib.append(-1 if j is None else xb[j])
        ka, kb = (xs.skewed_keys(), ys.skewed_keys()) if ids else (xs.keys, ys.keys)
        equal += _align(ka, kb, _Kinds(chip, a, xa), _Kinds(chip, b, xb), add, match)
        xs.keys = ys.keys = None           # aligned: the keys are not needed again
    dependencies = _dependencies(chip, a, b, streams, sa, sb, matches, index) if deps else ()
    return Diff(a, b, tuple(sorted(ignored)), Entries(a, b, compared, ops, ia, ib, ids), equal, order, dependencies)


def _dependencies(chip, a, b, streams, sa, sb, matches, index):
    """The Dependency changes of aligned pairs (engine order)."""
    ta, tb = sa.targets(), sb.targets()
    out = []
    for (core, name), code in sorted(streams.items(), key=lambda kv: kv[1]):
        eng = chip.engine(name)
        xa, xb = index[code]
        for j, (other, _) in enumerate(eng.wait_for):
            ocode = streams.get((core, other))
            wa, wb = ta.get((code, j)), tb.get((code, j))
            if wa is None or wb is None:
                continue
            ws, wt = sa.by_code[code].waits[j], sb.by_code[code].waits[j]
            omatch = matches.get(ocode)
            oxa, oxb = index.get(ocode, ((), ()))
            for p, q in enumerate(matches[code]):
                if q < 0:
                    continue
                t_a, t_b = wa[p], wb[q]
                mapped = (omatch[t_a] if omatch is not None else -1) if t_a >= 0 else t_a
                if t_a >= 0 and mapped < 0:
                    mapped = None          # A's target has no counterpart in B
                if mapped == t_b:
                    continue
                r = _classed(chip, a.records[xa[p]])
                out.append(Dependency(
                    name, xa[p], xb[q], kind_of(chip, r), other,
                    oxa[t_a] if t_a >= 0 else None, oxb[t_b] if t_b >= 0 else None,
                    oxb[mapped] if mapped is not None and mapped >= 0 else None,
                    ws[p] if t_a < -1 else 0, wt[q] if t_b < -1 else 0))
    out.sort(key=lambda d: (d.b_index, d.a_index))
    return tuple(out)
