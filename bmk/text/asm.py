"""The text assembly syntax: one printer and one parser, both derived from the specs.

    .chip bm1684x
    0 @gdma+0x0   gdma.dma.tensor  id=1 wait.tiu=0  cmd_short=0 ...   # comment
    1 @tiu+0x0    tiu.arith.cast   id=1 wait.gdma=1 tsk_typ=AR ...

A line is a directive (`.chip NAME`, `.fields changed|nonzero|all`; anywhere: `.group LABEL
[cmdbuf]` opens a command group of a model, `.core N` says whose records follow), an
instruction `<engine>.<kind> name=value ...`, or empty; `#` and `;` start a comment. The kind
is the spec's instruction name (its constant fields are implied) or `raw` (nothing implied);
an opaque engine's bytes are `<engine>.data size=N hex=...`.
Omitted fields keep their reset default (`.fields nonzero`: they are 0). `id` and
`wait.<engine>` are the engine's sync-id fields (`id` on an engine with implicit ids is the
command's position in its stream, checked, not stored); `send.msg` / `wait.msg` and
`msg.count` are bits of a multi-core message command's field; `hdr.<name>` are cmd_hdr_t
fields; `stream.pad=N` is a raw stream's zero padding after its last command, when not the rule's.
An instruction line may start with a location column `N @WHERE` (index, byte offset), which
the parser skips. An engine with several instruction classes (bm1684x) gets the class from the
selector fields (`framing.class_of`); the printer always shows the selector fields that differ
from the head defaults, so the text names the class. See docs/asm.md. The text is lossless: every descriptor and header bit survives.
"""
import re
import sys

import attrs

from bmk.encoders.framing import MAX_PAD, OPAQUE, PAD, Record, class_of, encode_cmdbuf, encode_stream, encode_streams
from bmk.encoders.fields import as_dict
from bmk.errors import BmkError
from bmk.isa import load_chip
from bmk.text.views import DirectionView, Text, ViewError, views_for

FIELD_MODES = ("changed", "nonzero", "all")
RAW = "raw"
DATA = "data"        # the mnemonic kind of an opaque engine's bytes: `hau.data size=N hex=...`
# Header fields the text may set: the rest (engine_id, a non-zero len) follow from the line; `magic`
# only on a chip with legacy magics, as one of them (a buffer written by an older bmk, read with --chip).
_HDR_FIXED = ("engine_id",)
PAD_FIELD = "stream." + PAD      # the text name of a raw stream's non-standard end padding
_MESSAGE_VIEWS = ("send.msg", "wait.msg", "msg.count")   # bits of a message command's field (Messages)
GROUP_STREAMS, GROUP_CMDBUF = "streams", "cmdbuf"          # `.group LABEL [cmdbuf]`: a group's form
_LOCATION = re.compile(r"^\d+$")


class AsmError(BmkError):
    """A line of assembly text is malformed; the message starts with FILE:LINE:COL."""

    def __init__(self, filename, line, col, message):
        super().__init__(f"{filename}:{line}:{col}: {message}")
        self.filename, self.line, self.col = filename, line, col


@attrs.frozen
class Program:
    """Parsed assembly: the chip and its instructions (Record.offset = byte offset once framed)."""

    chip: object
    records: "tuple[Record, ...]"
    lines: "tuple[int, ...]"          # source line of each record

    def to_bytes(self):
        """The cmd_hdr_t command buffer."""
        return encode_cmdbuf(self.chip, self.records)

    def raw_streams(self):
        """{engine: raw stream} by each engine's stream rule (framing.encode_streams)."""
        return encode_streams(self.chip, self.records)

    def raw_stream(self, engine):
        """One engine's raw stream (engine name or alias)."""
        name = self.chip.engine(engine).name
        return encode_stream(self.chip, name, [r for r in self.records if r.engine == name])


# ----------------------------------------------------------------------------- printing

def _is_address(name):
    return "addr" in name


def format_value(field, value):
    """A field value as the text shows it: enum name, hex for addresses, else decimal."""
    if field.enum:
        name = field.enum_name(value)
        if name is not None:
            return name
    if _is_address(field.name) or field.name in ("mask", "flags", "magic"):
        return hex(value)
    return str(value)


def record_class(chip, record):
    """The instruction class (Format) of a record (None for an opaque engine's bytes)."""
    if record.data is not None:
        return None
    return class_of(chip, record.engine, record.fields, record.cls)


def kind_of(chip, record):
    """The record's kind as listings spell it (the vendor's op name, Instruction.spelling), 'raw',
    or 'data' (an opaque engine's bytes)."""
    if record.data is not None:
        return DATA
    ins = record_class(chip, record).instruction_of(record.fields)
    return ins.spelling if ins is not None else RAW


def _base(fmt, mode, ins):
    """What an omitted field means on a line of this class and kind.

    `changed`/`all`: the reset default, except that selector fields take the class's (first)
    key values, so `tiu.arith.cast` alone is a well-formed AR; `nonzero`: 0. The kind's
    constant fields are implied in every mode.
    """
    base = dict.fromkeys(fmt.by_name, 0) if mode == "nonzero" else fmt.defaults
    if mode != "nonzero" and fmt.keys:
        base.update(fmt.keys[0])
    if ins is not None:
        base.update(ins.match)
    return base


def sync_fields(eng):
    """(alias, field) pairs of an engine's sync ids: ('id', own) then ('wait.<engine>', field)."""
    out = [("id", eng.own_id)] if eng.own_id else []
    out += [(f"wait.{other}", fname) for other, fname in eng.wait_for]
    return out


def mnemonic(chip, record):
    return f"{record.engine}.{kind_of(chip, record)}"


_NEVER = object()     # a base value no field value equals: `.fields all` shows every field


class _Printer:
    """format_record's per-chip plans, built once per (class, kind, mode): which fields a line
    shows and how each value prints, so a line costs one pass over the record's values."""

    def __init__(self, chip):
        self.chip = chip
        self.plans = {}
        self.kinds = {}       # (class, values of the fields kinds match on) -> Instruction | None
        self.match_names = {}

    def instruction(self, fmt, values):
        names = self.match_names.get(fmt.name)
        if names is None or names[0] is not fmt:
            names = self.match_names[fmt.name] = (fmt, tuple(sorted({k for i in fmt.instructions for k, _ in i.match})))
        key = (fmt.name, tuple(values.get(k, 0) for k in names[1]))
        try:
            return self.kinds[key]
        except KeyError:
            ins = self.kinds[key] = fmt.instruction_of(values)
            return ins

    def plan(self, eng, fmt, ins, mode):
        key = (eng.name, fmt.name, ins.name if ins is not None else None, mode)
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = self._plan(eng, fmt, ins, mode)
        return plan

    def _plan(self, eng, fmt, ins, mode):
        kind = ins.spelling if ins is not None else RAW      # the vendor's spelling (family names: Record)
        sync = sync_fields(eng)
        synced = {fname for _, fname in sync}
        base = _base(fmt, mode, None if mode == "nonzero" else ins)
        implied = dict(ins.match) if ins is not None else {}
        # selector fields that differ from the head default are always shown: they name the class
        heads = {f.name: f.default for f in eng.selector_fields if f.name not in implied}
        front = set(eng.display.shown)          # shown on every line, after the sync ids
        shown, first = [], []
        for f in fmt.fields:
            if f.name in synced:
                continue
            names = {}
            for n, v in f.enum:
                names.setdefault(v, n)
            hexed = _is_address(f.name) or f.name in ("mask", "flags")
            row = (f.name, f.spelling, _NEVER if mode == "all" or f.name in front else base[f.name],
                   heads.get(f.name, _NEVER),
                   names or None, hexed)
            (first if f.name in front else shown).append(row)
        views = tuple((v, tuple((p, _NEVER if mode == "all" else base[p]) for p in v.parts))
                      for v in views_for(self.chip, eng, fmt, ins))
        return f"{eng.name}.{kind}".ljust(16), tuple(sync), tuple(first) + tuple(shown), views


def _printer(chip):
    return chip.derived(("bmk.text.asm", "printer"), lambda: _Printer(chip))


def message_role(eng, kind):
    """'send' or 'wait' when `kind` is one of the engine's multi-core message kinds, else None."""
    msg = eng.messages
    if msg is None or kind is None:
        return None
    return "send" if kind == msg.send else "wait" if kind == msg.wait else None


def format_record(chip, record, fields="changed", position=None):
    """One instruction line (no trailing newline, no location column).

    position: the record's 1-based position in its stream, shown as `id=` on an engine whose
    ids are implicit (positions). A multi-core message command shows its message id and count
    as `send.msg=M` / `wait.msg=M` and `msg.count=N` (its field shows the other bits)."""
    if fields not in FIELD_MODES:
        raise ValueError(f"fields must be one of {FIELD_MODES}, not {fields!r}")
    printer = _printer(chip)
    eng = chip.engine(record.engine)
    if record.data is not None:
        return _format_data(chip, eng, record)
    fmt = record_class(chip, record)
    values = as_dict(record.fields)     # every field is read: a dict reads them fastest
    ins = printer.instruction(fmt, values)
    head, sync, shown, views = printer.plan(eng, fmt, ins, fields)
    parts = [head]
    if position is not None and eng.implicit_ids:
        parts.append(f"id={position}")
    for alias, fname in sync:      # always shown, so ordering is visible in the text
        if fname in values:
            parts.append(f"{alias}={values[fname]}")
    role = message_role(eng, ins.name if ins is not None else None)
    if role:
        msg = eng.messages
        parts += [f"{role}.msg={msg.msg_id(values)}", f"msg.count={msg.msg_count(values)}"]
        values = dict(values)
        for fname, bit, width in (msg.id, msg.count):
            values[fname] &= ~(((1 << width) - 1) << bit)
    covered = _view_tokens(views, values, parts) if views else None
    for name, label, base, headv, names, hexed in shown:
        if covered is not None and name in covered:
            token = covered.pop(name)
            if token:                      # a view's token, at its first part; its other parts print nothing
                parts.append(token)
                for other in [k for k, t in covered.items() if t is token]:
                    covered[other] = ""
            continue
        v = values[name]
        if v != base or (headv is not _NEVER and v != headv):
            text = names.get(v) if names else None
            if text is None:
                text = hex(v) if hexed else str(v)
            parts.append(f"{label}={text}")
    if record.header:
        hdr = chip.header
        for k, v in record.header.items():
            if k == PAD:
                parts.append(f"{PAD_FIELD}={v}")
            else:
                parts.append(f"hdr.{k}={format_value(hdr.by_name[k], v)}")
    return " ".join(parts).rstrip()


def _view_tokens(views, values, parts):
    """{part field: the token of the view that shows it} for the views a command shows (a
    view of no parts, the direction, goes straight into `parts`). A view shows when it is
    `always` or one of its parts differs from the base, and its text reads back to the
    command's values (View.text); a part already shown by an earlier view is not shown again."""
    covered = {}
    for view, bases in views:
        if any(p in covered for p, _ in bases):
            continue
        if not view.always and all(values.get(p, 0) == b for p, b in bases):
            continue
        text = view.text(values)
        if text is None:
            continue
        token = f"{view.name}={text}"
        if not bases:
            parts.append(token)
        for p, _ in bases:
            covered[p] = token
    return covered


def view_changes(chip, record, other, changes):
    """A diff's field changes (name, a, b) with each view's parts replaced by the view's text
    on both sides (views.Text), when it shows on both; other changes as they are."""
    if record.data is not None:
        return changes
    eng = chip.engine(record.engine)
    fmt = record_class(chip, record)
    views = views_for(chip, eng, fmt, _printer(chip).instruction(fmt, record.fields))
    if not views:
        return changes
    changed = {name for name, _, _ in changes}
    owner, done = {}, set()
    for view in views:
        if not view.parts or done & set(view.parts) or not changed & set(view.parts):
            continue
        ta, tb = view.text(record.fields), view.text(other.fields)
        if ta is None or tb is None:
            continue
        done |= set(view.parts)
        for p in view.parts:
            owner[p] = (view.name, Text(ta), Text(tb))
    if not owner:
        return changes
    result, placed = [], set()
    for name, a, b in changes:
        o = owner.get(name)
        if o is None:
            result.append((name, a, b))
        elif o[0] not in placed:
            placed.add(o[0])
            result.append(o)
    return tuple(result)


def _format_data(chip, eng, record):
    parts = [f"{eng.name}.{DATA}".ljust(16), f"size={len(record.data)}", f"hex={record.data.hex() or '0'}"]
    for k, v in record.header.items():
        parts.append(f"hdr.{k}={format_value(chip.header.by_name[k], v)}")
    return " ".join(parts)


def _where(record):
    """Where a record sits, for the location column 'N @WHERE': 0x80 (its byte offset in a
    cmd_hdr_t buffer) or tiu+0x80 (in a raw stream)."""
    return f"{record.stream}+{record.offset:#x}" if record.stream else f"{record.offset:#x}"


class Positions:
    """1-based stream positions of records in program order, counted per (core, engine): the ids
    of engines whose ids are implicit (a merge keeps each stream's order)."""

    def __init__(self):
        self.seen = {}

    def __call__(self, record):
        key = (record.core, record.engine)
        n = self.seen[key] = self.seen.get(key, 0) + 1
        return n


def wrap(line, width):
    """An instruction line cut into lines of at most `width` characters where it can be (a
    token longer than that stays whole): each but the last ends in ' \\' (the parser joins
    them), the next ones indented to the first field."""
    if not width or len(line) <= width:
        return [line]
    first = line.find("=")
    indent = line.rfind(" ", 0, first) + 1 if first > 0 else 4
    if indent >= width // 2:
        indent = 4
    out, cur = [], ""
    for word in line.split(" "):
        candidate = f"{cur} {word}" if cur or word == "" else word
        if word and cur.strip() and "=" in word and len(candidate) + 2 > width and len(cur) > indent:
            out.append(cur + " \\")
            cur = " " * indent + word
        else:
            cur = candidate
    out.append(cur)
    return out


def iter_disassembly(chip, records, fields="changed", comment=None, locations=False, notes=None, width=None):
    """The lines of `disassemble` (no newlines), one at a time: a long listing is written as it
    is made. `records`: any sequence (len and iteration); one with `offsets` (a cmd_hdr_t
    buffer read lazily, loading.CmdbufRecords) sizes the location column without decoding.
    `notes`: a text (or None) per record, written as a comment at the end of its line (where
    each instruction came from: bmk/origins.py). `width`: instruction lines longer than that
    continue on the next lines (`wrap`; a note then stands on a line of its own before them)."""
    if fields not in FIELD_MODES:
        raise ValueError(f"fields must be one of {FIELD_MODES}, not {fields!r}")
    if comment:
        yield from (f"# {c}" for c in comment.splitlines())
    yield f".chip {chip.name}"
    if fields != "changed":
        yield f".fields {fields}"
    position = Positions() if any(e.implicit_ids for e in chip.engines) else (lambda r: None)
    core = 0
    if locations and len(records):
        n = len(str(len(records) - 1))
        offsets = getattr(records, "offsets", None)
        widest = getattr(records, "where_width", None)
        if offsets is not None:     # a buffer: offsets grow, so the last one is the widest
            wide = len(f"{max(offsets):#x}")
        elif widest is not None:    # raw streams (bmk/text/raw.py): from their offsets, no Record made
            wide = widest()
        else:
            wide = max(len(_where(r)) for r in records)
        column = n + 2 + wide
    for i, r in enumerate(records):
        if r.core != core:                # several cores' records in one order: say whose follow
            core = r.core
            yield f".core {core}"
        line = format_record(chip, r, fields, position(r))
        if locations:
            line = f"{f'{i:>{n}} @{_where(r)}'.ljust(column)}  {line}"
        note = notes[i] if notes is not None else None
        if width and len(line) + (len(note) + 4 if note else 0) > width:
            if note:
                yield f"# {note}"
            yield from wrap(line, width)
            continue
        yield f"{line}  # {note}" if note else line


def disassemble(chip, records, fields="changed", comment=None, locations=False, notes=None, width=None):
    """Records -> assembly text (with the `.chip` header line), ending in a newline.

    locations=True starts each instruction line with its location column (`N @WHERE`),
    padded to one width; the parser skips it. width: wrap longer instruction lines (`wrap`).
    """
    return "\n".join(iter_disassembly(chip, records, fields, comment, locations, notes, width)) + "\n"


# ----------------------------------------------------------------------------- parsing

def _tokens(text):
    """(col, token) of a line with its comment removed; col is 1-based."""
    return [(m.start() + 1, m.group()) for m in re.finditer(r"\S+", text[:_code_end(text)])]


def _code_end(text):
    """Where a line's comment starts (`#` or `;`), or its length."""
    cut = len(text)
    for ch in "#;":
        i = text.find(ch)
        if i >= 0:
            cut = min(cut, i)
    return cut


def _logical_lines(lines):
    """(number of its first line, text) of each logical line: a line whose code (before any
    comment) ends in a backslash continues on the next (wrapped listings; a column in an error
    then counts in the joined text)."""
    start, parts = 0, []
    for n, raw in enumerate(lines, 1):
        code = raw[:_code_end(raw)].rstrip()
        if code.endswith("\\"):
            if not parts:
                start = n
            parts.append(code[:-1])
            continue
        if parts:
            parts.append(raw)
            yield start, " ".join(parts)
            parts = []
        else:
            yield n, raw
    if parts:
        yield start, " ".join(parts)


def _suggest(name, names):
    import difflib  # lazy: ~5 ms of start-up, needed only for a misspelt name's hint
    close = difflib.get_close_matches(name, list(names), n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def parse_int(token):
    """Python integer literal syntax (0x, 0b, 0o, _ separators; a sign), plus decimals with leading zeros.

    None when the token is not an integer, or is a decimal literal longer than Python converts
    (sys.get_int_max_str_digits(): no field is that wide, `_value` says so)."""
    if not token.isascii():
        return None
    try:
        if token.isdigit():
            return int(token.lstrip("0") or "0")      # leading zeros do not count against int()'s digit limit
        return int(token, 0)
    except ValueError:
        return None


def _long_decimal(token):
    """The number of significant digits of a decimal literal too long for int(), else 0."""
    limit = sys.get_int_max_str_digits()
    digits = token.lstrip("+-").replace("_", "").lstrip("0")
    return len(digits) if limit and len(digits) > limit and token.isascii() and digits.isdigit() else 0


def _shown(text, most=40):
    """A token as an error message quotes it: long ones cut short (messages stay one short line)."""
    return repr(text) if len(text) <= most else f"{text[:most // 2]!r}... ({len(text)} characters)"


class _Parser:
    def __init__(self, text, filename, chip):
        self.text, self.filename = text, filename
        self.chip = chip
        self.mode = "changed"
        self._bases, self._aliases, self._engines = {}, {}, {}
        self._values = {}         # (field, text, prefix) -> value: most values repeat in a long text
        self._tokens = {}         # {(engine, class): {token: (name, field, value)}}: so do whole tokens
        self.group = None         # the label of the current `.group` section
        self.group_form = GROUP_STREAMS   # how the group's commands are kept: raw streams or a cmd_hdr_t buffer
        self.groups = 0           # `.group` lines read so far
        self.core = 0             # the core of the records that follow (`.core N`)
        self._positions = {}      # (core, engine) -> commands so far in this group (implicit ids)
        self._view_maps = {}      # (engine, class, kind) -> {name: View}

    def error(self, line, col, message):
        raise AsmError(self.filename, line, col, message)

    def parse(self):
        records, lines = [], []
        for lineno, rec in self.records(self.text.removeprefix("\ufeff").splitlines()):
            records.append(rec)
            lines.append(lineno)
        return Program(self.chip, tuple(records), tuple(lines))

    def records(self, lines):
        """(line number, Record) of each instruction line of `lines` (the text's lines, as
        str.splitlines gives them), one at a time; `self.chip` is known from the first."""
        offset, seen_chip, started = 0, False, False
        for lineno, raw in _logical_lines(lines):
            toks = _tokens(raw)
            if not toks:
                continue
            if _LOCATION.match(toks[0][1]):            # a location column 'N @WHERE': skipped
                if len(toks) < 3 or not toks[1][1].startswith("@"):
                    c = toks[1][0] if len(toks) > 1 and not toks[1][1].startswith("@") else toks[-1][0]
                    self.error(lineno, c, "expected '<index> @<offset> <engine>.<kind> ...' after the index "
                               f"{toks[0][1]}")
                toks = toks[2:]
            col, head = toks[0]
            if head == ".group":
                if len(toks) not in (2, 3) or (len(toks) == 3 and toks[2][1] != GROUP_CMDBUF):
                    c = toks[2][0] if len(toks) > 2 else col + len(head)
                    self.error(lineno, c, "expected a label after .group (e.g. net0/stage0/subnet0/core0/group0), "
                               f"and '{GROUP_CMDBUF}' or nothing after it")
                self.group, self.core = toks[1][1], 0
                self.group_form = GROUP_CMDBUF if len(toks) == 3 else GROUP_STREAMS
                self.groups += 1
                self._positions = {}
                offset = 0
                continue
            if head == ".core":
                core = parse_int(toks[1][1]) if len(toks) == 2 else None
                if core is None or core < 0:
                    c = toks[1][0] if len(toks) > 1 else col + len(head)
                    self.error(lineno, c, "expected one core number >= 0 after .core")
                self.core = core
                continue
            if head.startswith("."):
                if started:
                    self.error(lineno, col, f"directive {head} must come before the first instruction")
                if head == ".chip":
                    seen_chip = self._chip(lineno, toks, seen_chip)
                elif head == ".fields":
                    if len(toks) != 2 or toks[1][1] not in FIELD_MODES:
                        c = toks[1][0] if len(toks) > 1 else col + len(head)
                        self.error(lineno, c, f"expected one of {', '.join(FIELD_MODES)} after .fields")
                    self.mode = toks[1][1]
                else:
                    self.error(lineno, col, f"unknown directive {_shown(head)} (expected .chip, .fields, .group or .core)")
                continue
            if self.chip is None:
                self.error(lineno, col, "expected a '.chip NAME' line before the first instruction (or pass --chip)")
            rec = self._instruction(lineno, toks, offset)
            started = True
            yield lineno, rec
            size = len(rec.data) if rec.data is not None else self.chip.engine(rec.engine).cls(rec.cls).nbytes
            offset += self.chip.header.nbytes + size
        if self.chip is None:
            self.error(1, 1, "expected a '.chip NAME' line (or pass --chip)")

    def _chip(self, lineno, toks, seen):
        from bmk.isa import chips
        if len(toks) != 2:
            c = toks[2][0] if len(toks) > 2 else toks[0][0] + len(".chip")
            self.error(lineno, c, f"expected one chip name after .chip (one of {', '.join(chips())})")
        col, name = toks[1]
        if seen:
            self.error(lineno, toks[0][0], "expected one .chip line, found a second")
        if name not in chips():
            self.error(lineno, col, f"unknown chip {_shown(name)} (expected one of {', '.join(chips())})")
        if self.chip is not None and self.chip.name != name:
            self.error(lineno, col, f"the text says chip {_shown(name)} but {self.chip.name!r} was asked for")
        self.chip = load_chip(name)
        return True

    def _engine(self, lineno, col, name):
        eng = self._engines.get(name)
        if eng is None:
            eng = self._engines[name] = self._find_engine(lineno, col, name)
        return eng

    def _find_engine(self, lineno, col, name):
        chip = self.chip
        engines = chip.stream_engines
        for e in engines:
            if name == e.name or name in e.aliases:
                return e
        names = [e.name for e in engines]
        self.error(lineno, col, f"unknown engine {_shown(name)} (expected one of {', '.join(names)})")

    def _class(self, lineno, col, eng, kind, toks):
        """The class and Instruction of a line: by the selector fields (head defaults, then the
        kind's constant fields, then the line's own values), else the first class with the kind."""
        if kind == RAW:
            cands = [(c, None) for c in eng.classes]
        else:
            cands = eng.kinds(kind)
            if not cands:
                kinds = sorted({i.spelling for c in eng.classes for i in c.instructions})     # as listings spell them
                full = [f"{eng.name}.{k}" for k in kinds] + [f"{eng.name}.{RAW}"]
                self.error(lineno, col, f"unknown mnemonic '{eng.name}.{kind}'"
                           f"{_suggest(f'{eng.name}.{kind}', full) or ' (expected one of ' + ', '.join(full) + ')'}")
        if len(eng.classes) == 1:
            return cands[0]
        given = {}
        for tcol, tok in toks[1:]:
            name, eq, text = tok.partition("=")
            if name in eng.selector and text:
                f = next(h for h in eng.head if h.name == name)
                value = parse_int(text)
                given[name] = value if value is not None else f.enum_value(text)
        given = {k: v for k, v in given.items() if v is not None}
        for cls, ins in cands:
            sel = {**(dict(ins.match) if ins else {}), **given}
            try:
                if class_of(self.chip, eng.name, sel) is cls:
                    return cls, ins
            except BmkError:
                pass
        for cls, ins in cands:            # the line leaves the selector open: the class's own defaults
            sel = {**_base(cls, "changed", ins), **given}     # noqa: the class's own key values
            try:
                if class_of(self.chip, eng.name, sel) is cls:
                    return cls, ins
            except BmkError:
                pass
        sel = " ".join(f"{k}={v}" for k, v in given.items())
        self.error(lineno, col, f"no instruction class of {eng.name} has {eng.name}.{kind} with {sel or 'these fields'}"
                   f" (classes with it: {', '.join(c.name for c, _ in cands)})")

    def _instruction(self, lineno, toks, offset):
        col, head = toks[0]
        if "." not in head or "=" in head:
            self.error(lineno, col, f"expected an instruction '<engine>.<kind>', not {_shown(head)}")
        ename, kind = head.split(".", 1)
        eng = self._engine(lineno, col, ename)
        key = (self.core, eng.name)
        position = self._positions[key] = self._positions.get(key, 0) + 1
        if eng.opaque:
            rec = self._data(lineno, col, eng, kind, toks, offset)
            return attrs.evolve(rec, core=self.core) if self.core else rec
        fmt, ins = self._class(lineno, col, eng, kind, toks)
        key = (eng.name, fmt.name, self.mode, kind)
        if key not in self._bases:
            self._bases[key] = _base(fmt, self.mode, ins)
            self._aliases[eng.name] = self._sync_aliases(eng)
        fields = dict(self._bases[key])
        header, given = {}, {}
        aliases = self._aliases[eng.name]
        hdr = self.chip.header
        known = self._tokens.get((eng.name, fmt.name))
        if known is None or len(known) >= 1024:       # bounded: addresses rarely repeat
            known = self._tokens[eng.name, fmt.name] = {}
        views = {}
        shown_views = self._shown_views(eng, fmt, ins)     # readable values (bmk/text/views.py)
        pending = []
        for tcol, tok in toks[1:]:
            if shown_views:
                name, eq, text = tok.partition("=")
                view = shown_views.get(name)
                if view is not None and eq and text:
                    if name in views or any(v is view for v, *_ in pending):
                        first = next(c for v, _, c, _ in pending if v is view)
                        self.error(lineno, tcol, f"field {_shown(name)} given twice (first at column {first})")
                    pending.append((view, text, tcol, tcol + len(name) + 1))
                    continue
            hit = known.get(tok)
            if hit is not None:             # a field token seen before on this class: its field and value
                name, fname, value = hit
                if fname in given:
                    first, fcol = given[fname]
                    same = f"field {name!r} given twice" if first == name else f"{first} and {name} name the same field"
                    self.error(lineno, tcol, f"{same} (first at column {fcol})")
                given[fname] = (name, tcol)
                fields[fname] = value
                continue
            name, eq, text = tok.partition("=")
            if not eq or not name:
                self.error(lineno, tcol, f"expected NAME=VALUE, not {_shown(tok)}")
            vcol = tcol + len(name) + 1
            if not text:
                self.error(lineno, vcol, f"expected a value after {name}=")
            if name == PAD_FIELD:
                if name in given:
                    self.error(lineno, tcol, f"field {name!r} given twice (first at column {given[name][1]})")
                given[name] = (name, tcol)
                value = parse_int(text)
                if value is None or not 0 <= value <= MAX_PAD:
                    self.error(lineno, vcol, f"{name} must be a byte count in [0, {MAX_PAD}], not {_shown(text)}")
                header[PAD] = value
                continue
            if name.startswith("hdr."):
                if name in given:
                    self.error(lineno, tcol, f"field {name!r} given twice (first at column {given[name][1]})")
                given[name] = (name, tcol)
                hname = name[4:]
                fixed = _HDR_FIXED if self.chip.legacy_magics else _HDR_FIXED + ("magic",)
                if hname not in hdr.by_name or hname in fixed:
                    allowed = [f.name for f in hdr.fields if f.name not in fixed]
                    self.error(lineno, tcol, f"unknown header field {_shown(hname)} "
                               f"(expected one of {', '.join('hdr.' + a for a in allowed)})")
                header[hname] = self._value(lineno, vcol, hdr.by_name[hname], text, "hdr.")
                if hname == "magic" and not self.chip.reads_magic(header[hname]):
                    magics = ", ".join(f"0x{m:02x}" for m in (self.chip.magic, *self.chip.legacy_magics))
                    self.error(lineno, vcol, f"hdr.magic must be one of {magics} for {self.chip.name}, "
                               f"not {text}")
                continue
            if name == "id" and eng.implicit_ids:
                self._implicit_id(lineno, tcol, vcol, eng, text, position, given)
                continue
            if name in _MESSAGE_VIEWS and eng.messages is not None:
                if name in views:
                    self.error(lineno, tcol, f"field {name!r} given twice (first at column {views[name][1]})")
                views[name] = (self._view_value(lineno, vcol, eng, name, text), tcol)
                continue
            fname = aliases.get(name, name)
            fname = fmt.by_vendor.get(fname, fname) if fname not in fmt.by_name else fname
            if fname not in fmt.by_name:
                where = f"{eng.name}" + (f" class {fmt.name}" if len(eng.classes) > 1 else "")
                self.error(lineno, tcol, f"unknown field {_shown(name)} for {where}"
                           f"{_suggest(name, [f.spelling for f in fmt.fields] + [a for a, _ in sync_fields(eng)])}")
            if fname in given:
                first, fcol = given[fname]
                same = f"field {name!r} given twice" if first == name else f"{first} and {name} name the same field"
                self.error(lineno, tcol, f"{same} (first at column {fcol})")
            given[fname] = (name, tcol)
            fields[fname] = self._value(lineno, vcol, fmt.by_name[fname], text,
                                        vendor=name != fname and name in fmt.by_vendor)
            known[tok] = (name, fname, fields[fname])
        if views:
            self._apply_views(lineno, col, eng, kind, views, fields)
        if pending:
            self._apply_shown(lineno, pending, fields, given)
        try:
            picked = class_of(self.chip, eng.name, fields)
        except BmkError:
            picked = None
        if len(eng.classes) > 1 and picked is not fmt:
            sel = " ".join(f"{k}={format_value(fmt.by_name[k], fields[k])}" for k in eng.selector if k in fields)
            what = f"class {picked.name}" if picked is not None else "no class"
            self.error(lineno, col, f"the selector fields ({sel}) pick {what}, not {fmt.name} "
                       f"which has {eng.name}.{kind}")
        got = _printer(self.chip).instruction(fmt, fields)
        if ins is not None:
            if got is None or kind not in (got.name, got.vendor):
                what = f"{eng.name}.{got.spelling}" if got else f"{eng.name}.raw"
                self.error(lineno, col, f"the fields make this a {what}, not {eng.name}.{kind} "
                           f"(expected {' '.join(f'{k}={format_value(fmt.by_name[k], v)}' for k, v in ins.match)} "
                           f"or the mnemonic {what})")
        if "len" in header:
            nbytes = fmt.nbytes
            what = f"{eng.name} {fmt.name}" if len(eng.classes) > 1 else eng.name
            if header["len"] == nbytes:
                del header["len"]          # the normal case: len is derived from the class
            elif header["len"] != 0:
                self.error(lineno, given["hdr.len"][1], f"hdr.len must be 0 or {nbytes} for {what}, "
                           f"not {header['len']}")
            elif header.get("mask", 0) != nbytes:
                self.error(lineno, given["hdr.len"][1], f"hdr.len=0 means the length is in hdr.mask, "
                           f"so expected hdr.mask={hex(nbytes)}")
        if header.get("magic") == self.chip.magic:
            del header["magic"]            # the chip's own magic is implied
        header = {k: v for k, v in header.items() if v or k in ("len", PAD)}
        return Record(eng.name, fmt.name, got.name if got else None, fields, None, offset, header, self.core)

    def _shown_views(self, eng, fmt, ins):
        """{text name: View} of a class and kind (bmk/text/views.py), built once."""
        key = (eng.name, fmt.name, ins.name if ins is not None else None)
        got = self._view_maps.get(key)
        if got is None:
            got = self._view_maps[key] = {v.name: v for v in views_for(self.chip, eng, fmt, ins)}
        return got

    def _apply_shown(self, lineno, pending, fields, given):
        """Set the fields of the readable values on a line (after its other fields: a constant
        reads its precision from them); check a derived one (dir=) against the result."""
        checks = []
        for view, text, tcol, vcol in pending:
            if isinstance(view, DirectionView):
                checks.append((view, text, vcol))
                continue
            try:
                values = view.read(text, fields)
            except ViewError as e:
                self.error(lineno, vcol, f"{view.name}={_shown(text)}: {e}")
            for part in values:
                if part in given:
                    first, fcol = given[part]
                    self.error(lineno, tcol, f"{first} and {view.name} name the same field {part} "
                               f"(first at column {fcol})")
                given[part] = (view.name, tcol)
            fields.update(values)
        for view, text, vcol in checks:
            message = view.check(text, fields)
            if message:
                self.error(lineno, vcol, message)

    def _implicit_id(self, lineno, tcol, vcol, eng, text, position, given):
        """`id=N` on an engine whose ids are positions: N must be this command's position."""
        if "id" in given:
            self.error(lineno, tcol, f"field 'id' given twice (first at column {given['id'][1]})")
        given["id"] = ("id", tcol)
        value = parse_int(text)
        if value != position:
            where = f" of group {self.group}" if self.group else ""
            self.error(lineno, vcol, f"id={_shown(text)}: {self.chip.name} {eng.name} ids are implicit (a command's "
                       f"id is its position in its stream), and this is {eng.name} command {position}{where}; "
                       f"drop id= or renumber")

    def _view_value(self, lineno, vcol, eng, name, text):
        fname, bit, width = eng.messages.count if name == "msg.count" else eng.messages.id
        value = parse_int(text)
        if value is None or not 0 <= value < 1 << width:
            self.error(lineno, vcol, f"{name} must be in [0, {(1 << width) - 1}] ({width} bits of {fname}), "
                       f"not {_shown(text)}")
        return value

    def _apply_views(self, lineno, col, eng, kind, views, fields):
        """send.msg / wait.msg / msg.count: bits of a field of a message command (Messages)."""
        msg = eng.messages
        role = message_role(eng, kind)
        for name, (value, tcol) in views.items():
            if role is None or (name != "msg.count" and name != f"{role}.msg"):
                want = f"{eng.name}.{msg.send} (send.msg=, msg.count=) or {eng.name}.{msg.wait} (wait.msg=, msg.count=)"
                self.error(lineno, tcol, f"{name}= belongs on {want}, not {eng.name}.{kind}")
            fname, bit, width = msg.count if name == "msg.count" else msg.id
            fields[fname] = (fields[fname] & ~(((1 << width) - 1) << bit)) | (value << bit)

    def _data(self, lineno, col, eng, kind, toks, offset):
        """`<engine>.data size=N hex=...` of an opaque engine (no layout: its bytes)."""
        if kind != DATA:
            self.error(lineno, col, f"{self.chip.name} {eng.name} has no public layout: its commands are written "
                       f"'{eng.name}.{DATA} size=N hex=...', not {eng.name}.{kind}")
        given, header = {}, {}
        for tcol, tok in toks[1:]:
            name, eq, text = tok.partition("=")
            if not eq or not name or not text:
                self.error(lineno, tcol, f"expected NAME=VALUE, not {_shown(tok)}")
            if name in given:
                self.error(lineno, tcol, f"field {name!r} given twice (first at column {given[name]})")
            given[name] = tcol
            vcol = tcol + len(name) + 1
            if name == "hex":
                try:
                    data = bytes.fromhex(text) if text != "0" else b""
                except ValueError:
                    self.error(lineno, vcol, f"expected an even number of hex digits for hex, not {_shown(text)}")
                header.setdefault("_data", data)
            elif name == "size":
                size = parse_int(text)
                if size is None or size < 0:
                    self.error(lineno, vcol, f"expected a byte count >= 0 for size, not {_shown(text)}")
                header.setdefault("_size", (size, vcol))
            elif name.startswith("hdr.") and name[4:] in self.chip.header.by_name and name[4:] not in \
                    ("magic", "engine_id"):
                header[name[4:]] = self._value(lineno, vcol, self.chip.header.by_name[name[4:]], text, "hdr.")
            else:
                self.error(lineno, tcol, f"unknown field {_shown(name)} for {eng.name}.{DATA} (expected size=, hex=, hdr.*)")
        if "_data" not in header:
            self.error(lineno, col, f"{eng.name}.{DATA} needs hex=<its bytes>")
        data = header.pop("_data")
        if "_size" in header:
            size, vcol = header.pop("_size")
            if size != len(data):
                self.error(lineno, vcol, f"size={size} but hex= holds {len(data)} bytes")
        header = {k: v for k, v in header.items() if v or k == "len"}
        return Record(eng.name, OPAQUE, None, {}, None, offset, header, 0, data)

    def _sync_aliases(self, eng):
        """'id' and 'wait.<engine>' (also 'wait.<alias>') -> the sync-id field names."""
        out = dict(sync_fields(eng))
        for other, fname in eng.wait_for:
            for a in self.chip.engine(other).aliases:
                out.setdefault(f"wait.{a}", fname)
        return out

    def _value(self, lineno, col, field, text, prefix="", vendor=False):
        """vendor: the line spelled the field the vendor's way (messages say it so)."""
        key = (field, text, prefix, vendor)
        value = self._values.get(key)
        if value is None:
            value = self._read_value(lineno, col, field, text, prefix, field.vendor if vendor else field.name)
            if len(self._values) >= 1024:          # bounded: addresses rarely repeat
                self._values.clear()
            self._values[key] = value
        return value

    def _read_value(self, lineno, col, field, text, prefix, label):
        value = parse_int(text)
        if value is None and _long_decimal(text):
            self.error(lineno, col, f"{prefix}{label} must be in [0, {field.max}] ({field.width} bits), "
                       f"not a {_long_decimal(text)}-digit number")
        if value is None and field.enum:
            value = field.enum_value(text)
            if value is None:
                names = ", ".join(n for n, _ in field.enum)
                self.error(lineno, col, f"expected an integer or one of {names} for {label}, not {_shown(text)}")
        if value is None:
            self.error(lineno, col, f"expected an integer for {label}, not {_shown(text)}")
        if not 0 <= value <= field.max:
            self.error(lineno, col, f"{prefix}{label} must be in [0, {field.max}] ({field.width} bits), "
                       f"not {text if len(text) <= 40 else _shown(text)}")
        return value


def parse(text, chip=None, filename="<text>"):
    """Assembly text -> Program. `chip` (a name or ChipSpec) is used when the text has no .chip line."""
    if isinstance(chip, str):
        chip = load_chip(chip)
    return _Parser(text, filename, chip).parse()


def text_lines(chunks):
    """str chunks of one text -> its lines, as text.removeprefix(BOM).splitlines() gives them,
    without holding the whole text (a line break may fall between two chunks)."""
    rest, first = "", True
    for chunk in chunks:
        if first and chunk:
            chunk, first = chunk.removeprefix("\ufeff"), False
        parts = (rest + chunk).splitlines(keepends=True)
        rest = parts.pop() if parts else ""
        # the last part is whole once it ends in a line break, unless that is '\r' (half of '\r\n'?)
        if rest and rest[-1] != "\r" and rest.splitlines()[0] != rest:
            parts.append(rest)
            rest = ""
        for part in parts:
            yield part.splitlines()[0]
    if rest:
        yield from rest.splitlines()


def iter_parse(lines, chip=None, filename="<text>"):
    """Assembly lines (e.g. `text_lines`) -> (parser, generator of (line number, Record)): the
    streaming form of `parse` for long texts. `parser.chip` is set once the `.chip` line is read."""
    if isinstance(chip, str):
        chip = load_chip(chip)
    parser = _Parser(None, filename, chip)
    return parser, parser.records(lines)


def assemble(text, chip=None, filename="<text>"):
    """Assembly text -> command buffer bytes."""
    return parse(text, chip, filename).to_bytes()

