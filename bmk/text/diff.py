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
"""
import difflib
from array import array
from collections.abc import Sequence

import attrs

from bmk.encoders.codec import codec_for
from bmk.encoders.framing import PAD, frame_at
from bmk.text.asm import PAD_FIELD, format_record, format_value, kind_of, record_class
from bmk.errors import BmkError

IGNORE_ALIASES = ("id", "wait", "sync")
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
class Diff:
    a: object                      # Listing
    b: object
    ignored: tuple
    entries: "Sequence[Entry]"     # an Entries (made on access) or a tuple
    equal_count: int

    @property
    def equal(self):
        return not self.entries

    def counts(self):
        c = self.entries.counts() if isinstance(self.entries, Entries) else \
            {op: sum(e.op == op for e in self.entries) for op in OPS}
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
        if chip.engine(engine).opaque or name == CORE_FIELD:
            return v
        return format_value(chip.engine(engine).cls(cls).by_name[name], v)

    def to_text(self, limit=None):
        return "\n".join(self.iter_text(limit))

    def iter_text(self, limit=None):
        """The lines of `to_text`, one at a time (a long diff is written as it is made)."""
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
                out.append(f"    {format_record(chip, self.b.records[e.b_index])}")
            else:
                out.append(f"- A#{e.a_index} ({self.a.where(e.a_index)})")
                out.append(f"    {format_record(chip, self.a.records[e.a_index])}")
            yield from out
            out.clear()
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


def _field_changes(chip, ra, rb, ignored):
    fmt = record_class(chip, ra)
    if fmt is None:                  # an opaque engine's bytes: their size and where they first differ
        nbytes = len(ra.data)
        out = [(DATA_FIELD, _data_summary(ra.data, rb.data), _data_summary(rb.data, ra.data))] \
            if ra.data != rb.data else []
    else:
        nbytes = fmt.nbytes
        out = [(f.name, ra.fields[f.name], rb.fields[f.name]) for f in fmt.fields
               if f.name not in ignored and ra.fields[f.name] != rb.fields[f.name]]
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

    def __init__(self, a, b, ignored, ops, ia, ib):
        self.a, self.b, self.ignored = a, b, ignored
        self.ops, self.ia, self.ib = ops, ia, ib

    def __len__(self):
        return len(self.ops)

    def __getitem__(self, n):
        if isinstance(n, slice):
            return tuple(self[k] for k in range(*n.indices(len(self))))
        op, i, j = OPS[self.ops[n]], self.ia[n], self.ib[n]
        chip = self.a.chip
        if op == "changed":
            ra, rb = _classed(chip, self.a.records[i]), _classed(chip, self.b.records[j])
            return Entry(op, i, j, ra.engine, ra.cls, kind_of(chip, ra), kind_of(chip, rb),
                         _field_changes(chip, ra, rb, self.ignored))
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

    def keys(self, records):
        """array('q') of the keys of a Listing's records (a lazy buffer: read straight from its bytes)."""
        chip, out = self.chip, array("q")
        data = getattr(records, "data", None)
        if data is not None and getattr(records, "offsets", None) is not None:
            hdr = codec_for(chip.header)
            special = getattr(records, "special", None) or {}      # what the bytes cannot carry (core, padding)
            for i, off in enumerate(records.offsets):
                eng, cls, extra, start, length = frame_at(chip, data, off, hdr)
                rec = special.get(i)
                out.append(self.key(eng.name, cls, data[start:start + length], rec.header if rec else extra,
                                    rec.core if rec else 0))
            return out
        for r in records:
            cls = record_class(chip, r)
            out.append(self.key(r.engine, cls, r.data if cls is None else codec_for(cls).pack(r.fields), r.header,
                                r.core))
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


def diff_listings(a, b, ignore=()):
    """Two Listings of one chip -> Diff. Raises BmkError when the chips differ or an ignore is unknown."""
    if a.chip.name != b.chip.name:
        raise BmkError(f"cannot compare a {a.chip.name} buffer ({a.name}) with a {b.chip.name} one ({b.name})")
    chip = a.chip
    ignored = expand_ignore(chip, ignore)
    keyer = _Keyer(chip, ignored)
    ka, kb = keyer.keys(a.records), keyer.keys(b.records)
    ops, ia, ib = array("b"), array("q"), array("q")
    equal = 0

    def add(op, i, j):
        ops.append(op)
        ia.append(-1 if i is None else i)
        ib.append(-1 if j is None else j)

    cache = {}

    def kinds(listing, lo, hi):
        """(engine, class, kind) of records lo..hi; the last window's are kept for `cut`."""
        start, known = cache.get(listing is b, (0, ()))
        if start <= lo and hi <= start + len(known):
            return known[lo - start:hi - start]
        out = []
        for k in range(lo, hi):
            r = _classed(chip, listing.records[k])
            out.append((r.engine, r.cls, kind_of(chip, r)))
        cache[listing is b] = (lo, out)
        return out

    def cut(i1, i2, j1, j2):
        end = (i1, j1)
        for t2, x1, x2, y1, y2 in opcodes(kinds(a, i1, i2), kinds(b, j1, j2)):
            if t2 == "equal":
                end = (i1 + x2, j1 + y2)
        return end

    for tag, i1, i2, j1, j2 in opcodes(ka, kb, cut):
        if tag == "equal":
            equal += i2 - i1
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
        sa, sb = kinds(a, i1, i2), kinds(b, j1, j2)
        for t2, x1, x2, y1, y2 in opcodes(sa, sb):
            pairs = min(x2 - x1, y2 - y1) if t2 in ("equal", "replace") else 0
            for k in range(pairs):
                if sa[x1 + k][:2] == sb[y1 + k][:2]:
                    add(0, i1 + x1 + k, j1 + y1 + k)
                else:
                    add(2, i1 + x1 + k, None)
                    add(1, None, j1 + y1 + k)
            for i in range(x1 + pairs, x2):
                add(2, i1 + i, None)
            for j in range(y1 + pairs, y2):
                add(1, None, j1 + j)
    return Diff(a, b, tuple(sorted(ignored)), Entries(a, b, ignored, ops, ia, ib), equal)
