"""The text assembly syntax: one printer and one parser, both derived from the specs.

    .chip bm1684x
    0 @gdma+0x0   gdma.dma.tensor  id=1 wait.tiu=0  cmd_short=0 ...   # comment
    1 @tiu+0x0    tiu.arith.cast   id=1 wait.gdma=1 tsk_typ=AR ...

A line is a directive (`.chip NAME`, `.fields changed|nonzero|all`), an instruction
`<engine>.<kind> name=value ...`, or empty; `#` and `;` start a comment. The kind is the
spec's instruction name (its constant fields are implied) or `raw` (nothing implied).
Omitted fields keep their reset default (`.fields nonzero`: they are 0). `id` and
`wait.<engine>` are the engine's sync-id fields; `hdr.<name>` are cmd_hdr_t fields;
`stream.pad=N` is a raw stream's zero padding after its last command, when not the rule's.
An instruction line may start with a location column `N @WHERE` (index, byte offset), which
the parser skips. An engine with several instruction classes (bm1684x) gets the class from the
selector fields (`framing.class_of`); the printer always shows the selector fields that differ
from the head defaults, so the text names the class. See docs/asm.md. The text is lossless: every descriptor and header bit survives.
"""
import difflib
import re

import attrs

from bmk.encoders.framing import (PAD, Record, class_of, encode_cmdbuf, encode_stream, encode_streams,
                                  make_record)
from bmk.errors import BmkError
from bmk.isa import load_chip

FIELD_MODES = ("changed", "nonzero", "all")
RAW = "raw"
# Header fields the text may set: the rest (magic, engine_id, a non-zero len) follow from the line.
_HDR_FIXED = ("magic", "engine_id")
PAD_FIELD = "stream." + PAD      # the text name of a raw stream's non-standard end padding
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
    if _is_address(field.name) or field.name in ("mask", "flags"):
        return hex(value)
    return str(value)


def record_class(chip, record):
    """The instruction class (Format) of a record."""
    return class_of(chip, record.engine, record.fields, record.cls)


def kind_of(chip, record):
    """The record's kind (vendor op name), or 'raw'."""
    ins = record_class(chip, record).instruction_of(record.fields)
    return ins.name if ins is not None else RAW


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


def location(index, record):
    """The location column: 'N @0x80' (cmd_hdr_t buffer) or 'N @tiu+0x80' (raw stream)."""
    where = f"{record.stream}+{record.offset:#x}" if record.stream else f"{record.offset:#x}"
    return f"{index} @{where}"


def format_record(chip, record, fields="changed"):
    """One instruction line (no trailing newline, no location column)."""
    if fields not in FIELD_MODES:
        raise ValueError(f"fields must be one of {FIELD_MODES}, not {fields!r}")
    eng = chip.engine(record.engine)
    fmt = record_class(chip, record)
    ins = fmt.instruction_of(record.fields)
    kind = ins.name if ins is not None else RAW
    parts = [f"{record.engine}.{kind}".ljust(16)]
    sync = sync_fields(eng)
    for alias, fname in sync:      # always shown, so ordering is visible in the text
        if fname in record.fields:
            parts.append(f"{alias}={record.fields[fname]}")
    synced = {fname for _, fname in sync}
    base = _base(fmt, fields, None if fields == "nonzero" else ins)
    implied = dict(ins.match) if ins is not None else {}
    # selector fields that differ from the head default are always shown: they name the class
    heads = {f.name: f.default for f in eng.selector_fields if f.name not in implied}
    for f in fmt.fields:
        if f.name in synced:
            continue
        v = record.fields[f.name]
        if fields == "all" or v != base[f.name] or (f.name in heads and v != heads[f.name]):
            parts.append(f"{f.name}={format_value(f, v)}")
    hdr = chip.header
    for k, v in record.header.items():
        if k == PAD:
            parts.append(f"{PAD_FIELD}={v}")
        else:
            parts.append(f"hdr.{k}={format_value(hdr.by_name[k], v)}")
    return " ".join(parts).rstrip()


def disassemble(chip, records, fields="changed", comment=None, locations=False):
    """Records -> assembly text (with the `.chip` header line), ending in a newline.

    locations=True starts each instruction line with its location column (`location`),
    padded to one width; the parser skips it.
    """
    lines = []
    if comment:
        lines += [f"# {c}" for c in comment.splitlines()]
    lines.append(f".chip {chip.name}")
    if fields != "changed":
        lines.append(f".fields {fields}")
    body = [format_record(chip, r, fields) for r in records]
    if locations and records:
        locs = [location(i, r) for i, r in enumerate(records)]
        n = len(str(len(records) - 1))
        locs = [f"{i:>{n}} {loc.split(' ', 1)[1]}" for i, loc in enumerate(locs)]
        width = max(len(loc) for loc in locs)
        body = [f"{loc.ljust(width)}  {line}" for loc, line in zip(locs, body)]
    lines += body
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- parsing

def _tokens(text):
    """(col, token) of a line with its comment removed; col is 1-based."""
    cut = len(text)
    for ch in "#;":
        i = text.find(ch)
        if i >= 0:
            cut = min(cut, i)
    return [(m.start() + 1, m.group()) for m in re.finditer(r"\S+", text[:cut])]


def _suggest(name, names):
    close = difflib.get_close_matches(name, list(names), n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def parse_int(token):
    """Python integer literal syntax (0x, 0b, 0o, _ separators; a sign), plus decimals with leading zeros."""
    if not token.isascii():
        return None
    if token.isdigit():
        return int(token)
    try:
        return int(token, 0)
    except ValueError:
        return None


class _Parser:
    def __init__(self, text, filename, chip):
        self.text, self.filename = text, filename
        self.chip = chip
        self.mode = "changed"
        self._bases, self._aliases, self._engines = {}, {}, {}

    def error(self, line, col, message):
        raise AsmError(self.filename, line, col, message)

    def parse(self):
        records, lines, offset = [], [], 0
        seen_chip = False
        for lineno, raw in enumerate(self.text.removeprefix("\ufeff").splitlines(), 1):
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
            if head.startswith("."):
                if records:
                    self.error(lineno, col, f"directive {head} must come before the first instruction")
                if head == ".chip":
                    seen_chip = self._chip(lineno, toks, seen_chip)
                elif head == ".fields":
                    if len(toks) != 2 or toks[1][1] not in FIELD_MODES:
                        c = toks[1][0] if len(toks) > 1 else col + len(head)
                        self.error(lineno, c, f"expected one of {', '.join(FIELD_MODES)} after .fields")
                    self.mode = toks[1][1]
                else:
                    self.error(lineno, col, f"unknown directive {head!r} (expected .chip or .fields)")
                continue
            if self.chip is None:
                self.error(lineno, col, "expected a '.chip NAME' line before the first instruction (or pass --chip)")
            rec = self._instruction(lineno, toks, offset)
            records.append(rec)
            lines.append(lineno)
            offset += self.chip.header.nbytes + self.chip.engine(rec.engine).cls(rec.cls).nbytes
        if self.chip is None:
            self.error(1, 1, "expected a '.chip NAME' line (or pass --chip)")
        return Program(self.chip, tuple(records), tuple(lines))

    def _chip(self, lineno, toks, seen):
        from bmk.isa import chips
        if len(toks) != 2:
            c = toks[2][0] if len(toks) > 2 else toks[0][0] + len(".chip")
            self.error(lineno, c, f"expected one chip name after .chip (one of {', '.join(chips())})")
        col, name = toks[1]
        if seen:
            self.error(lineno, toks[0][0], "expected one .chip line, found a second")
        if name not in chips():
            self.error(lineno, col, f"unknown chip {name!r} (expected one of {', '.join(chips())})")
        if self.chip is not None and self.chip.name != name:
            self.error(lineno, col, f"the text says chip {name!r} but {self.chip.name!r} was asked for")
        self.chip = load_chip(name)
        return True

    def _engine(self, lineno, col, name):
        eng = self._engines.get(name)
        if eng is None:
            eng = self._engines[name] = self._find_engine(lineno, col, name)
        return eng

    def _find_engine(self, lineno, col, name):
        chip = self.chip
        engines = chip.encoded_engines
        for e in engines:
            if name == e.name or name in e.aliases:
                return e
        names = [e.name for e in engines]
        self.error(lineno, col, f"unknown engine {name!r} (expected one of {', '.join(names)})")

    def _class(self, lineno, col, eng, kind, toks):
        """The class and Instruction of a line: by the selector fields (head defaults, then the
        kind's constant fields, then the line's own values), else the first class with the kind."""
        if kind == RAW:
            cands = [(c, None) for c in eng.classes]
        else:
            cands = eng.kinds(kind)
            if not cands:
                kinds = sorted({i.name for c in eng.classes for i in c.instructions})
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
            self.error(lineno, col, f"expected an instruction '<engine>.<kind>', not {head!r}")
        ename, kind = head.split(".", 1)
        eng = self._engine(lineno, col, ename)
        fmt, ins = self._class(lineno, col, eng, kind, toks)
        key = (eng.name, fmt.name, self.mode, kind)
        if key not in self._bases:
            self._bases[key] = _base(fmt, self.mode, ins)
            self._aliases[eng.name] = self._sync_aliases(eng)
        fields = dict(self._bases[key])
        header, given = {}, {}
        aliases = self._aliases[eng.name]
        hdr = self.chip.header
        for tcol, tok in toks[1:]:
            name, eq, text = tok.partition("=")
            if not eq or not name:
                self.error(lineno, tcol, f"expected NAME=VALUE, not {tok!r}")
            vcol = tcol + len(name) + 1
            if not text:
                self.error(lineno, vcol, f"expected a value after {name}=")
            if name == PAD_FIELD:
                if name in given:
                    self.error(lineno, tcol, f"field {name!r} given twice (first at column {given[name][1]})")
                given[name] = (name, tcol)
                value = parse_int(text)
                if value is None or value < 0:
                    self.error(lineno, vcol, f"expected a byte count >= 0 for {name}, not {text!r}")
                header[PAD] = value
                continue
            if name.startswith("hdr."):
                if name in given:
                    self.error(lineno, tcol, f"field {name!r} given twice (first at column {given[name][1]})")
                given[name] = (name, tcol)
                hname = name[4:]
                if hname not in hdr.by_name or hname in _HDR_FIXED:
                    allowed = [f.name for f in hdr.fields if f.name not in _HDR_FIXED]
                    self.error(lineno, tcol, f"unknown header field {hname!r} "
                               f"(expected one of {', '.join('hdr.' + a for a in allowed)})")
                header[hname] = self._value(lineno, vcol, hdr.by_name[hname], text, "hdr.")
                continue
            fname = aliases.get(name, name)
            if fname not in fmt.by_name:
                where = f"{eng.name}" + (f" class {fmt.name}" if len(eng.classes) > 1 else "")
                self.error(lineno, tcol, f"unknown field {name!r} for {where}"
                           f"{_suggest(name, list(fmt.by_name) + [a for a, _ in sync_fields(eng)])}")
            if fname in given:
                first, fcol = given[fname]
                same = f"field {name!r} given twice" if first == name else f"{first} and {name} name the same field"
                self.error(lineno, tcol, f"{same} (first at column {fcol})")
            given[fname] = (name, tcol)
            fields[fname] = self._value(lineno, vcol, fmt.by_name[fname], text)
        try:
            picked = class_of(self.chip, eng.name, fields)
        except BmkError:
            picked = None
        if len(eng.classes) > 1 and picked is not fmt:
            sel = " ".join(f"{k}={format_value(fmt.by_name[k], fields[k])}" for k in eng.selector if k in fields)
            what = f"class {picked.name}" if picked is not None else "no class"
            self.error(lineno, col, f"the selector fields ({sel}) pick {what}, not {fmt.name} "
                       f"which has {eng.name}.{kind}")
        if ins is not None:
            got = fmt.instruction_of(fields)
            if got is None or got.name != kind:
                what = f"{eng.name}.{got.name}" if got else f"{eng.name}.raw"
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
        header = {k: v for k, v in header.items() if v or k in ("len", PAD)}
        return make_record(self.chip, eng.name, fmt, fields, None, offset, header)

    def _sync_aliases(self, eng):
        """'id' and 'wait.<engine>' (also 'wait.<alias>') -> the sync-id field names."""
        out = dict(sync_fields(eng))
        for other, fname in eng.wait_for:
            for a in self.chip.engine(other).aliases:
                out.setdefault(f"wait.{a}", fname)
        return out

    def _value(self, lineno, col, field, text, prefix=""):
        value = parse_int(text)
        if value is None and field.enum:
            value = field.enum_value(text)
            if value is None:
                names = ", ".join(n for n, _ in field.enum)
                self.error(lineno, col, f"expected an integer or one of {names} for {field.name}, not {text!r}")
        if value is None:
            self.error(lineno, col, f"expected an integer for {field.name}, not {text!r}")
        if not 0 <= value <= field.max:
            self.error(lineno, col, f"{prefix}{field.name} must be in [0, {field.max}] ({field.width} bits), "
                       f"not {text}")
        return value


def parse(text, chip=None, filename="<text>"):
    """Assembly text -> Program. `chip` (a name or ChipSpec) is used when the text has no .chip line."""
    if isinstance(chip, str):
        chip = load_chip(chip)
    return _Parser(text, filename, chip).parse()


def assemble(text, chip=None, filename="<text>"):
    """Assembly text -> command buffer bytes."""
    return parse(text, chip, filename).to_bytes()

