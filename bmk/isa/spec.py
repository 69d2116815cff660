"""Spec records and their loader: specs/<chip>/*.toml -> frozen Field/Format/Engine/ChipSpec.

The loader refuses a bad table loudly (riscv-opcodes style): overlapping fields, gaps,
duplicate names, defaults or enum values too wide for their field, unknown references,
unknown or missing keys, class keys that select two classes. Every message names the file,
the row and the field.

An engine has one or more instruction classes (`Format`s), each with its own length. With
several classes the engine file names a common `head` (fields every class starts with) and
a `selector` (head fields whose values pick the class, e.g. bm1684x TIU: cmd_short, tsk_typ,
tsk_eu_typ); the loader builds the selector index once.
"""
import functools
import itertools
import marshal
import operator
import os
import pathlib
import zlib
from typing import NamedTuple

import attrs

from bmk.errors import SpecError

SPECS_PACKAGE = "bmk.specs"
MAX_FIELD_BITS = 64          # bitstruct packs at most 64 bits per field: wider reserved rows are split
MAX_SELECTOR_BITS = 16       # the selector index enumerates every combination of selector values


@attrs.frozen(cache_hash=True)        # fields key the text tools' memos
class Field:
    """One bit field of a command: bits [bit, bit + width), LSB first (see specs/README.md).

    name: the family name (what records, semantics and checks use); vendor: the vendor's own
    spelling when it differs (listings print it, the assembler reads both; tools/facts/families.json)."""

    name: str
    bit: int
    width: int
    default: int = 0
    reserved: bool = False
    enum: "tuple[tuple[str, int], ...]" = ()
    vendor: str = ""

    @property
    def spelling(self):
        """The name listings print: the vendor's spelling, else the name."""
        return self.vendor or self.name

    @property
    def max(self):
        return (1 << self.width) - 1

    def enum_name(self, value):
        for name, v in self.enum:
            if v == value:
                return name
        return None

    def enum_value(self, name):
        for n, v in self.enum:
            if n == name:
                return v
        return None


@attrs.frozen
class Instruction:
    """A named instruction kind of a class: the constant field values that identify it.

    name: the family name (Record.kind); vendor: the vendor's op name when it differs (the
    mnemonic listings print; the assembler reads both)."""

    name: str
    match: "tuple[tuple[str, int], ...]"
    vendor: str = ""

    @property
    def spelling(self):
        return self.vendor or self.name

    def matches(self, fields):
        return all(fields.get(k, 0) == v for k, v in self.match)


MAX_KIND_INDEX = 1 << 12


def _kind_index(fmt):
    """Memo of Format.instruction_of, kept on the Format: (getter of its match fields, {their
    values: Instruction}); decoding a buffer classifies the same few kinds again and again."""
    entry = fmt.memo.get("kind index")
    if entry is None:
        keys = sorted({k for ins in fmt.instructions for k, _ in ins.match})
        entry = fmt.memo["kind index"] = (operator.itemgetter(*keys) if keys else None, {})
    return entry


@attrs.frozen
class Format:
    """A fixed-length bit layout: one instruction class of an engine, or a frame header.

    `keys`: the selector values that pick this class (each a tuple of (field, value); a
    selector field left out matches any value); empty for single-class engines and for
    classes that decoding never selects.
    """

    name: str
    nbytes: int
    fields: "tuple[Field, ...]"
    instructions: "tuple[Instruction, ...]" = ()
    composed: "tuple[tuple[str, tuple[str, ...]], ...]" = ()
    keys: "tuple[tuple[tuple[str, int], ...], ...]" = ()
    by_name: dict = attrs.field(init=False, eq=False, repr=False)
    memo: dict = attrs.field(init=False, eq=False, repr=False)   # derived once: kind index, codec

    def __attrs_post_init__(self):
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "memo", {})

    @property
    def by_vendor(self):
        """{vendor spelling: family name} of the fields whose spelling differs (the assembler reads both)."""
        got = self.memo.get("by vendor")
        if got is None:
            got = self.memo["by vendor"] = {f.vendor: f.name for f in self.fields if f.vendor}
        return got

    @property
    def defaults(self):
        """Reset values of every field, as a dict (what an encoder starts from)."""
        return {f.name: f.default for f in self.fields}

    def field(self, name):
        try:
            return self.by_name[name]
        except KeyError:
            raise SpecError(f"format {self.name!r} has no field {name!r}") from None

    def instruction_of(self, fields):
        """Name the instruction kind of a field dict, or None when no kind matches."""
        get, memo = _kind_index(self)
        try:
            key = get(fields)               # the kind depends on the match fields' values only
            ins = memo.get(key, memo)
        except (KeyError, TypeError):       # match fields left out (they read 0), unhashable values
            return self._first_match(fields)
        if ins is memo:
            ins = self._first_match(fields)
            if len(memo) >= MAX_KIND_INDEX:
                memo.clear()
            memo[key] = ins
        return ins

    def _first_match(self, fields):
        for ins in self.instructions:
            if ins.matches(fields):
                return ins
        return None

    def instruction(self, name):
        """The kind named `name` (its family name or, failing that, its vendor spelling)."""
        for ins in self.instructions:
            if ins.name == name:
                return ins
        for ins in self.instructions:
            if ins.vendor == name:
                return ins
        return None

    def compose(self, name, fields):
        """Read a value split over several fields (low part first), e.g. a 40-bit address."""
        value, shift = 0, 0
        parts = next((p for n, p in self.composed if n == name), None)
        if parts is None:
            raise KeyError(name)
        for part in parts:
            value |= fields.get(part, 0) << shift
            shift += self.by_name[part].width
        return value

    def split(self, name, value):
        """The inverse of compose: {part field: value} for a composed value."""
        out = {}
        for part in dict(self.composed)[name]:
            width = self.by_name[part].width
            out[part] = value & ((1 << width) - 1)
            value >>= width
        return out


@attrs.frozen
class Rounding:
    """A field that holds a rounding mode on some kinds (display: shown as `round=<mode>`)."""

    field: str
    kinds: "tuple[str, ...]"
    modes: "tuple[tuple[str, int], ...]"      # (name, code)


@attrs.frozen
class Display:
    """How the text tools show an engine's fields (specs/README.md "Display"); nothing here
    changes a bit, and every value shown reads back to the same bits (bmk/text/views.py).

    addresses: how an address value reads: "device" (a device address of the memory map) or
    "local" (a local address, local_addr_t, below the local space's size; a device address at
    or above it); address_fields: single fields that hold addresses; joined: composed rows
    shown as one value; constants: (name, address field, const flag, precision field or None):
    the field holds the operand itself when the flag is 1, shown as a number when a float;
    rounding: a field holding a rounding mode; shown: fields every line shows; direction:
    (src composed row, dst composed row, ((space, letter), ...)): the derived `dir=S2L`."""

    addresses: str = "device"
    address_fields: "tuple[str, ...]" = ()
    joined: "tuple[str, ...]" = ()
    constants: "tuple[tuple[str, str, str, str], ...]" = ()
    rounding: "Rounding | None" = None
    shown: "tuple[str, ...]" = ()
    direction: "tuple | None" = None


@attrs.frozen
class StreamRule:
    """How an engine's raw stream is laid out (the vendor runtime's form, no cmd_hdr_t).

    slot: every command sits in a slot of this many bytes, zero-filled (0: back to back);
    end: the instruction kind that closes a stream (appended at acquisition; None: no end);
    pad_to: after the last command, zero bytes up to a multiple of this many bytes;
    zero_tail: a decoder accepts at most this many zero bytes after the last command;
    end_enable: whether the end command carries the engine's `enable` flags (the vendor's
    bm1684x TIU `sys.end` has cmd_id_en = 0, its GDMA `dma.sys` 1). End commands carry their
    own id and wait for nothing, as the vendor's do.
    """

    slot: int = 0
    end: "str | None" = None
    pad_to: int = 0
    zero_tail: int = 0
    end_enable: bool = True


@attrs.frozen
class Alternate:
    """A second head of an engine, tried when the head's selector picks no class: its own
    fields and selector (BM1688 SYS_TR_ACC reads a 3-bit tsk_eu_typ where the head has 5 bits,
    and its bit 0 is data, not cmd_short: newer-chips.md 1 "Framing")."""

    name: str
    head: "tuple[Field, ...]"
    selector: "tuple[str, ...]"
    index: dict = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def selector_fields(self):
        return tuple(f for f in self.head if f.name in self.selector)

    def class_for(self, values):
        return self.index.get(tuple(values.get(f.name, f.default) for f in self.selector_fields))


@attrs.frozen
class Messages:
    """Multi-core messages of an engine (newer-chips.md 1 "Multi-core messages"): the kinds that
    send and wait, and where the message id and count sit (bits of a field: BM1688 TIU `imm`
    bits 0..6 and 16..18). A message id is a barrier: the k-th wait on an id comes after the
    k-th send on it of every stream that sends it; the count says how many streams send."""

    send: str
    wait: str
    id: "tuple[str, int, int]"          # (field, first bit in it, width)
    count: "tuple[str, int, int]"

    @staticmethod
    def _read(where, fields):
        name, bit, width = where
        return (fields.get(name, 0) >> bit) & ((1 << width) - 1)

    def msg_id(self, fields):
        return self._read(self.id, fields)

    def msg_count(self, fields):
        return self._read(self.count, fields)

    def views(self):
        """(text name, (field, bit, width)) of the values a listing shows for a message command."""
        return (("msg", self.id), ("msg.count", self.count))


@attrs.frozen
class Engine:
    """An engine of the chip: its id in cmd_hdr_t, its instruction classes and sync-id fields.

    ids: "explicit" (own_id names the field) or "implicit" (a command's id is its 1-based
    position in its stream: BM1688 and later); wait_mask: the bits of a wait field that hold the
    id (None: all); missing_wait: what a command of a class without the wait field waits for
    ("none", or "next": what the next command of its stream that has the field waits for);
    messages: multi-core messages (Messages); opaque: no public layout, a raw stream is kept
    as bytes (BM1690 HAU); barrier: an opaque engine whose stream takes part in every message
    barrier (the other streams' wait counts include it) and computes nothing (bmk/sim/cores.py);
    alternates: heads tried when the head picks no class.
    """

    name: str
    id: int
    classes: "tuple[Format, ...]" = ()
    head: "tuple[Field, ...]" = ()
    selector: "tuple[str, ...]" = ()
    aliases: "tuple[str, ...]" = ()
    own_id: "str | None" = None
    wait_for: "tuple[tuple[str, str], ...]" = ()
    enable: "tuple[tuple[str, int], ...]" = ()
    inherit_wait: bool = False
    stream: StreamRule = StreamRule()
    index: dict = attrs.field(factory=dict, eq=False, repr=False)   # selector values -> class
    ids: str = "explicit"
    wait_mask: "int | None" = None
    missing_wait: str = "none"
    messages: "Messages | None" = None
    opaque: bool = False
    barrier: bool = False
    alternates: "tuple[Alternate, ...]" = ()
    display: Display = Display()
    inert: "tuple[str, ...]" = ()       # fields that never change what a command computes (power, interrupt)

    @property
    def head_fields(self):
        """Names of the fields that order or select a command but never change what it computes:
        the selector fields (of every head), the sync ids and their enable, and `inert`."""
        names = set(self.selector) | {n for a in self.alternates for n in a.selector} | set(self.inert)
        names |= {self.own_id} - {None}
        names |= {f for _, f in self.wait_for} | {f for f, _ in self.enable}
        return frozenset(names)

    @property
    def implicit_ids(self):
        return self.ids == "implicit"

    @property
    def format(self):
        """The engine's only class (bm1880, bm1684); None for multi-class engines (use classes)."""
        return self.classes[0] if len(self.classes) == 1 else None

    @property
    def head_nbytes(self):
        """Bytes to read before the class is known (the whole command for one class)."""
        if not self.selector:
            return self.classes[0].nbytes if self.classes else 0
        return -(-max(f.bit + f.width for h in (self.head, *(a.head for a in self.alternates)) for f in h) // 8)

    @property
    def id_max(self):
        """The largest own id: ids wrap after it (16 bits on bm1880/bm1684, 20 on bm1684x)."""
        if not self.own_id:
            return 0
        return next(c.by_name[self.own_id].max for c in self.classes if self.own_id in c.by_name)

    def classify(self, head):
        """The class of a command whose first head_nbytes bytes are `head` (bytes); None if none."""
        if not self.selector:
            return self.classes[0] if self.classes else None
        word = int.from_bytes(head, "little")
        found = self.index.get(tuple((word >> f.bit) & f.max for f in self.selector_fields))
        if found is None:
            for alt in self.alternates:
                found = alt.index.get(tuple((word >> f.bit) & f.max for f in alt.selector_fields))
                if found is not None:
                    break
        return found

    @property
    def selector_fields(self):
        """The head fields the selector reads, in head order (the order of the index keys)."""
        return tuple(f for f in self.head if f.name in self.selector)

    def class_for(self, values):
        """The class that selector values {field: value} pick (missing ones: the head default),
        by the head, then by each alternate head."""
        found = self.index.get(tuple(values.get(f.name, f.default) for f in self.selector_fields))
        if found is None:
            for alt in self.alternates:
                found = alt.class_for(values)
                if found is not None:
                    break
        return found

    def cls(self, name):
        for c in self.classes:
            if c.name == name:
                return c
        raise SpecError(f"engine {self.name!r} has no instruction class {name!r}")

    def kinds(self, name):
        """Every (class, Instruction) of the engine whose kind is `name` (its family name, or
        else its vendor spelling)."""
        return ([(c, ins) for c in self.classes for ins in c.instructions if ins.name == name]
                or [(c, ins) for c in self.classes for ins in c.instructions if ins.vendor == name])

    def end_command(self):
        """(class, {field: value}) of the command that closes a raw stream, or None."""
        if self.stream.end is None:
            return None
        cls, ins = self.kinds(self.stream.end)[0]
        fields = dict(cls.keys[0]) if cls.keys else {}
        fields.update(ins.match)
        return cls, fields



@attrs.frozen
class MemorySpace:
    """A named address space of the chip's memory map (local, static, l2sram, dtcm, global)."""

    name: str
    base: int
    size: int
    lane_bytes: "int | None" = None     # local memory: bytes per NPU lane
    address_mask: "int | None" = None   # bm1880: TDMA writes (addr & mask) + base
    mirror: "int | None" = None         # a second base the same bytes answer at (CV184X: tag 31 is local)
    shared: bool = False                # one per chip, seen by every core (as global memory always is)

    def contains(self, address):
        return self.base <= address < self.base + self.size or (
            self.mirror is not None and self.mirror <= address < self.mirror + self.size)

    def offset(self, address):
        """The offset in this space of an address it contains (at its base or its mirror)."""
        return address - (self.base if self.base <= address < self.base + self.size else self.mirror)


_REQUIRED = object()          # ChipSpec.param: no default given


@attrs.frozen
class ChipSpec:
    name: str
    version: int
    seed_chip_version: int
    params: "tuple[tuple[str, int], ...]"
    memory: "tuple[MemorySpace, ...]"
    header: Format
    magic: int
    engines: "tuple[Engine, ...]"
    legacy_magics: "tuple[int, ...]" = ()   # read only when the chip is named (see specs/README.md)
    detect: bool = True                     # whether a buffer's magic picks this chip when unnamed
    memo: dict = attrs.field(factory=dict, init=False, eq=False, repr=False)   # the lookups below

    def reads_magic(self, magic):
        """Whether a cmd_hdr_t record with this magic is one of this chip's (its own or a legacy magic)."""
        return magic == self.magic or magic in self.legacy_magics

    # -- the lookup vocabulary: every chip's checks, lowering and simulator read facts through
    # these, from the ChipSpec they are given (never a module-level one). Each answer is
    # computed once per (chip, question) and kept in `memo`.
    def derived(self, key, compute, *args):
        """A value derived from this spec, computed once (compute(*args)) and kept under `key`:
        the lookups below, and chip code's own derived tables (key: a tuple naming them)."""
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = compute(*args)
            return value

    def fmt(self, engine, cls=None):
        """The instruction class `cls` of an engine (None: its only class)."""
        known = self.memo.get(("fmt", engine, cls))     # the simulator's checks ask per instruction: no closure then
        if known is not None:
            return known

        def compute():
            e = self.engine(engine)
            if cls is not None:
                return e.cls(cls)
            if e.format is None:
                raise SpecError(f"{self.name} engine {engine!r} has {len(e.classes)} instruction classes: "
                                f"name one")
            return e.format
        return self.derived(("fmt", engine, cls), compute)

    def kind(self, engine, name, cls=None):
        """{field: value} that identify instruction kind `name` of an engine's class: the class's
        selector key and the kind's match (e.g. bm1684 kind("tiu", "arith.add") -> tsk_typ,
        tsk_eu_typ). A fresh dict: callers add their fields to it."""
        known = self.memo.get(("kind", engine, name, cls))     # every lowered command asks: no closure then
        if known is not None:
            return dict(known)

        def compute():
            fmt = self.fmt(engine, cls)
            ins = fmt.instruction(name)
            if ins is None:
                raise SpecError(f"{self.name} {engine} class {fmt.name!r} has no instruction kind {name!r}")
            return tuple(((fmt.keys[0] if fmt.keys else ()) + ins.match))
        return dict(self.derived(("kind", engine, name, cls), compute))

    def field(self, engine, name, cls=None):
        """The Field `name` of an engine's class; with cls None, of every class that has it
        (SpecError when those classes disagree on its width or enum: name the class then)."""
        def compute():
            e = self.engine(engine)
            if cls is not None or e.format is not None:
                return self.fmt(engine, cls).field(name)
            found = {(c.by_name[name].width, c.by_name[name].enum): c.by_name[name]
                     for c in e.classes if name in c.by_name}
            if not found:
                raise SpecError(f"{self.name} engine {engine!r} has no field {name!r}")
            if len(found) > 1:
                raise SpecError(f"{self.name} {engine} field {name!r} differs between classes: name the class")
            return next(iter(found.values()))
        return self.derived(("field", engine, name, cls), compute)

    def limit(self, engine, name, cls=None):
        """The largest value field `name` holds; for a value the spec composes from several
        fields (e.g. bm1880's 40-bit TDMA addresses), the largest its parts hold together."""
        known = self.memo.get(("limit", engine, name, cls))     # checks ask on every call: no closure then
        if known is not None:
            return known
        return self.derived(("limit", engine, name, cls), self._limit, engine, name, cls)

    def _limit(self, engine, name, cls):
        fmt = self.fmt(engine, cls) if cls is not None or self.engine(engine).format else None
        classes = (fmt,) if fmt else self.engine(engine).classes
        if any(name in dict(c.composed) for c in classes):
            return (1 << sum(width for _, width in self._parts(engine, name, cls))) - 1
        return self.field(engine, name, cls).max

    def code(self, engine, field, member, cls=None):
        """The value of enum member `member` of a field, e.g. code("tiu", "opt_res0_prec", "fp32")."""
        known = self.memo.get(("code", engine, field, member, cls))   # every lowered operand asks: no closure then
        if known is not None:
            return known

        def compute():
            value = self.field(engine, field, cls).enum_value(member)
            if value is None:
                raise SpecError(f"{self.name} {engine} field {field!r} has no enum member {member!r}")
            return value
        return self.derived(("code", engine, field, member, cls), compute)

    def member(self, engine, field, value, cls=None):
        """The enum member name of a field's value, or None when the value names none."""
        return self.members(engine, field, cls).get(value)

    def members(self, engine, field, cls=None):
        """{value: member name} of a field's enum."""
        return self.derived(("members", engine, field, cls),
                              lambda: {v: n for n, v in self.field(engine, field, cls).enum})

    def _parts(self, engine, name, cls):
        known = self.memo.get(("parts", engine, name, cls))       # every split address asks: no closure then
        if known is not None:
            return known

        def compute():
            fmt = self.fmt(engine, cls) if cls is not None or self.engine(engine).format else None
            classes = (fmt,) if fmt else self.engine(engine).classes
            parts = {tuple((p, c.by_name[p].width) for p in dict(c.composed)[name])
                     for c in classes if name in dict(c.composed)}
            if len(parts) != 1:
                raise SpecError(f"{self.name} {engine} must compose {name!r} one way, not {len(parts)}")
            return parts.pop()
        return self.derived(("parts", engine, name, cls), compute)

    def split(self, engine, name, value, cls=None):
        """{part field: value} of a value the spec composes from several fields (low part
        first), e.g. a 40-bit address."""
        out = {}
        for part, width in self._parts(engine, name, cls):
            out[part] = value & ((1 << width) - 1)
            value >>= width
        return out

    def compose(self, engine, name, fields, cls=None):
        """The value of composed `name` read from a field dict (missing parts read 0)."""
        value, shift = 0, 0
        for part, width in self._parts(engine, name, cls):
            value |= fields.get(part, 0) << shift
            shift += width
        return value

    @property
    def all_lanes(self):
        """The lane mask that selects every NPU: npu_num ones."""
        return (1 << self.param("npu_num")) - 1

    def param(self, name, default=_REQUIRED):
        """A chip parameter; `default` when the chip has none (without one: SpecError)."""
        params = self.memo.get("params")
        if params is None:          # read on every call of a chip's checks: one dict, built once
            params = self.memo["params"] = dict(self.params)
        try:
            return params[name]
        except KeyError:
            if default is not _REQUIRED:
                return default
            raise SpecError(f"chip {self.name!r} has no parameter {name!r}") from None

    def with_wait_mask(self, mask):
        """This chip as a build that keeps its dependency ids in other bits: every engine with a
        wait_mask reads `mask` instead (BM1690's Nov/Dec 2023 builds: params.older_wait_mask,
        bmk/models/decoding.py model_spec). The same object for the same mask, so Simulators and
        kept plans made for it are reused."""
        return self.derived(("wait_mask", mask), lambda: attrs.evolve(self, engines=tuple(
            attrs.evolve(e, wait_mask=mask) if e.wait_mask is not None else e for e in self.engines)))

    def space(self, name):
        spaces = self.memo.get("spaces")
        if spaces is None:
            spaces = self.memo["spaces"] = {m.name: m for m in self.memory}
        try:
            return spaces[name]
        except KeyError:
            raise SpecError(f"chip {self.name!r} has no memory space {name!r}") from None

    def space_of(self, address):
        """The memory space holding a device address, or None."""
        for m in self.memory:
            if m.contains(address):
                return m
        return None

    def engine(self, name):
        for e in self.engines:
            if e.name == name or name in e.aliases:
                return e
        raise SpecError(f"chip {self.name!r} has no engine {name!r}")

    def engine_by_id(self, engine_id):
        for e in self.engines:
            if e.id == engine_id:
                return e
        return None

    @property
    def encoded_engines(self):
        """Engines that have instruction classes (the ones commands are written for)."""
        return tuple(e for e in self.engines if e.classes)

    @property
    def stream_engines(self):
        """Engines whose streams bmk reads and writes: those with classes, then opaque ones."""
        return self.encoded_engines + tuple(e for e in self.engines if e.opaque)

    @property
    def formats(self):
        """Every instruction class of every engine."""
        return tuple(c for e in self.engines for c in e.classes)

    @property
    def gmem_addr_offset(self):
        return self.space("global").base

    @property
    def gmem_addr_mask(self):
        mask = self.space("global").address_mask
        return (1 << 64) - 1 if mask is None else mask


# ----------------------------------------------------------------------------------- checks

def _check_int(where, key, value, low=0, high=None):
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        rng = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise SpecError(f"{where}: {key} must be {rng}, not {value!r}")
    return value


def _check_keys(where, table, allowed, required=()):
    if not isinstance(table, dict):
        raise SpecError(f"{where}: must be a table, not {table!r}")
    unknown = set(table) - set(allowed)
    if unknown:
        raise SpecError(f"{where}: unknown keys {sorted(unknown)}")
    missing = [k for k in required if k not in table]
    if missing:
        raise SpecError(f"{where}: missing keys {missing}")


_PLAIN_KEYS = frozenset(("name", "bit", "width", "default", "reserved"))


def _plain_field(row, seen, top_bit):
    """The Field of a row that passes every check of _field_rows without an enum and within
    MAX_FIELD_BITS, else None (then _field_rows checks it again and says what is wrong): most
    rows, checked without building their error context (loading a chip is on every command
    line's path)."""
    if type(row) is not dict or not row.keys() <= _PLAIN_KEYS:
        return None
    name, bit, width = row.get("name"), row.get("bit"), row.get("width")
    default, reserved = row.get("default", 0), row.get("reserved", False)
    if (type(name) is not str or name in seen or not name.isidentifier() or type(bit) is not int
            or type(width) is not int or type(default) is not int or type(reserved) is not bool
            or bit < 0 or not 1 <= width <= MAX_FIELD_BITS or not 0 <= default < 1 << width
            or (top_bit is not None and bit + width > top_bit)):
        return None
    return Field(name, bit, width, default, reserved, ())


def _field_rows(where, rows, enums, nbytes=None):
    """Check field rows; split reserved rows wider than MAX_FIELD_BITS into parts."""
    if not isinstance(rows, list):
        raise SpecError(f"{where}: fields must be a list of tables")
    fields, seen = [], set()
    top_bit = nbytes * 8 if nbytes else None
    for i, row in enumerate(rows):
        plain = _plain_field(row, seen, top_bit)
        if plain is not None:
            seen.add(plain.name)
            fields.append(plain)
            continue
        at = f"{where}: fields[{i}] ({row.get('name', '?') if isinstance(row, dict) else '?'})"
        _check_keys(at, row, ("name", "bit", "width", "default", "reserved", "enum", "vendor"))
        name = row.get("name")
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(f"{at}: name must be an identifier, not {name!r}")
        if name in seen:
            raise SpecError(f"{at}: duplicate field name {name!r}")
        seen.add(name)
        vendor = row.get("vendor", "")
        if vendor and (not isinstance(vendor, str) or not vendor.isidentifier() or vendor == name):
            raise SpecError(f"{at}: vendor must be an identifier other than the name, not {vendor!r}")
        top = nbytes * 8 - 1 if nbytes else None
        bit = _check_int(at, "bit", row.get("bit"), 0, top)
        reserved = bool(row.get("reserved", False))
        width = _check_int(at, "width", row.get("width"), 1, None if reserved else MAX_FIELD_BITS)
        if nbytes and bit + width > nbytes * 8:
            raise SpecError(f"{at}: bits [{bit}, {bit + width}) run past the {nbytes}-byte format")
        default = _check_int(at, "default", row.get("default", 0), 0, (1 << width) - 1)
        enum = ()
        if "enum" in row:
            if row["enum"] not in enums:
                raise SpecError(f"{at}: enum {row['enum']!r} is not defined in [enums]")
            enum = tuple(enums[row["enum"]].items())
            for ename, ev in enum:
                _check_int(f"{at}: enum {row['enum']}.{ename}", "value", ev, 0, (1 << width) - 1)
        if width <= MAX_FIELD_BITS:
            fields.append(Field(name, bit, width, default, reserved, enum, vendor))
            continue
        if vendor:
            raise SpecError(f"{at}: a reserved row wider than {MAX_FIELD_BITS} bits takes no vendor spelling")
        for k, lo in enumerate(range(0, width, MAX_FIELD_BITS)):   # a wide reserved row
            part = f"{name}_{k}" if k else name
            if part in seen and k:
                raise SpecError(f"{at}: splitting the {width}-bit reserved row makes {part!r}, which exists")
            seen.add(part)
            w = min(MAX_FIELD_BITS, width - lo)
            fields.append(Field(part, bit + lo, w, (default >> lo) & ((1 << w) - 1), True))
    return fields


def build_format(where, table, enums=None, keys=()):
    """Check one format table (name, bytes, fields, instructions, composed) and build a Format."""
    enums = dict(enums or {})
    enums.update(table.get("enums", {}) if isinstance(table.get("enums", {}), dict) else {})
    nbytes = _check_int(where, "bytes", table.get("bytes"), 1)
    fields = _field_rows(where, table.get("fields", []), enums, nbytes)
    if not fields:
        raise SpecError(f"{where}: format has no fields")
    fields.sort(key=lambda f: f.bit)
    pos = 0
    for f in fields:
        if f.bit < pos:
            raise SpecError(f"{where}: field {f.name!r} at bit {f.bit} overlaps the previous field (ends at bit {pos})")
        if f.bit > pos:
            raise SpecError(f"{where}: bits [{pos}, {f.bit}) before field {f.name!r} are not covered (declare them reserved)")
        pos = f.bit + f.width
    if pos != nbytes * 8:
        raise SpecError(f"{where}: bits [{pos}, {nbytes * 8}) after the last field are not covered")
    by_name = {f.name: f for f in fields}
    spelled = {}
    for f in fields:        # the assembler reads names and vendor spellings alike: one field each
        for n in {f.name, f.vendor} - {""}:
            if spelled.setdefault(n, f.name) != f.name:
                raise SpecError(f"{where}: {n!r} names field {spelled[n]!r} and is the vendor spelling of {f.name!r}")
    instructions, seen = [], set()
    for i, row in enumerate(table.get("instructions", [])):
        at = f"{where}: instructions[{i}] ({row.get('name', '?')})"
        _check_keys(at, row, ("name", "match", "vendor"), ("name", "match"))
        if not isinstance(row["name"], str) or not row["name"]:
            raise SpecError(f"{at}: name must be a non-empty string, not {row['name']!r}")
        vendor = row.get("vendor", "")
        if vendor and (not isinstance(vendor, str) or vendor == row["name"]):
            raise SpecError(f"{at}: vendor must be a spelling other than the name, not {vendor!r}")
        for n in {row["name"], vendor} - {""}:      # a mnemonic names one kind, by either spelling
            if n in seen:
                raise SpecError(f"{at}: duplicate instruction kind {n!r}")
            seen.add(n)
        if not row.get("match"):
            raise SpecError(f"{at}: match must name at least one field")
        for k, v in row["match"].items():
            if k not in by_name:
                raise SpecError(f"{at}: match names unknown field {k!r}")
            _check_int(f"{at}: match", k, v, 0, by_name[k].max)
        instructions.append(Instruction(row["name"], tuple(row["match"].items()), vendor))
    composed = []
    for cname, parts in table.get("composed", {}).items():
        for p in parts:
            if p not in by_name:
                raise SpecError(f"{where}: composed value {cname!r} names unknown field {p!r}")
        composed.append((cname, tuple(parts)))
    return Format(table.get("name", where), nbytes, tuple(fields), tuple(instructions), tuple(composed), keys)


_SINGLE_KEYS = ("name", "bytes", "fields", "instructions", "composed", "enums")
_MULTI_KEYS = ("name", "selector", "head", "classes", "enums", "alternates")
_CLASS_KEYS = ("name", "bytes", "keys", "fields", "instructions", "composed", "head")
_ALTERNATE_KEYS = ("name", "selector", "head")


def build_engine_classes(where, table):
    """An engine file -> (classes, head fields, selector, index, alternates). See specs/README.md."""
    if "classes" not in table:
        _check_keys(where, table, _SINGLE_KEYS, ("bytes", "fields"))
        return (build_format(where, table, table.get("enums")),), (), (), {}, ()
    _check_keys(where, table, _MULTI_KEYS, ("selector", "head", "classes"))
    enums = table.get("enums", {})
    head, selector = _head(where, table, enums)
    alt_rows = table.get("alternates", [])
    if not isinstance(alt_rows, list):
        raise SpecError(f"{where}: alternates must be a list of tables, not {alt_rows!r}")
    alt_heads = {}
    for i, row in enumerate(alt_rows):
        at = f"{where}: alternates[{i}] ({row.get('name', '?') if isinstance(row, dict) else '?'})"
        _check_keys(at, row, _ALTERNATE_KEYS, _ALTERNATE_KEYS)
        if not isinstance(row["name"], str) or not row["name"].isidentifier() or row["name"] in alt_heads:
            raise SpecError(f"{at}: name must be a new identifier, not {row['name']!r}")
        alt_heads[row["name"]] = _head(at, row, enums)
    classes, names, head_of = [], set(), {}
    for i, ctab in enumerate(table["classes"]):
        at = f"{where}: classes[{i}] ({ctab.get('name', '?')})"
        _check_keys(at, ctab, _CLASS_KEYS, ("name", "bytes", "keys", "fields"))
        if ctab["name"] in names:
            raise SpecError(f"{at}: duplicate class name {ctab['name']!r}")
        names.add(ctab["name"])
        hname = ctab.get("head")
        if hname is not None and hname not in alt_heads:
            raise SpecError(f"{at}: head must name one of the alternates {list(alt_heads)}, not {hname!r}")
        chead, csel = alt_heads[hname] if hname is not None else (head, selector)
        by_name = {f.name: f for f in chead}
        keys = []
        for j, key in enumerate(ctab["keys"]):
            if not isinstance(key, dict) or any(k not in csel for k in key):
                raise SpecError(f"{at}: keys[{j}] must map selector fields {list(csel)} to values, not {key!r}")
            for k, v in key.items():
                _check_int(f"{at}: keys[{j}]", k, v, 0, by_name[k].max)
            keys.append(tuple(key.items()))
        cls = build_format(at, ctab, enums, tuple(keys))
        keyed = {k for key in keys for k, _ in key}
        for h in chead:
            # A class may lack a head field (bm1684x LAR has no cmd_short or ids) unless its keys
            # read it; where it has one, it sits at the head's bits.
            f = cls.by_name.get(h.name)
            if (f is None and h.name in keyed) or (f is not None and (f.bit, f.width) != (h.bit, h.width)):
                raise SpecError(f"{at}: {'head' if hname is None else hname + ' head'} field {h.name!r} must be at "
                                f"bits [{h.bit}, {h.bit + h.width}) in every class that has it or keys on it")
        classes.append(cls)
        head_of[cls.name] = hname
    index = _selector_index(where, head, selector, [c for c in classes if head_of[c.name] is None])
    alternates = []
    for name, (ahead, asel) in alt_heads.items():
        mine = [c for c in classes if head_of[c.name] == name]
        _check_not_shadowed(where, name, ahead, mine, head, [c for c in classes if head_of[c.name] is None])
        alternates.append(Alternate(name, ahead, asel, _selector_index(f"{where} alternate {name!r}", ahead, asel, mine)))
    return tuple(classes), tuple(head), tuple(selector), index, tuple(alternates)


def _head(where, table, enums):
    """(head fields, selector) of an engine file or one of its alternates."""
    head = tuple(_field_rows(f"{where} head", table["head"], enums))
    names = {f.name: f for f in head}
    selector = table["selector"]
    if not isinstance(selector, list) or not selector or any(s not in names for s in selector):
        raise SpecError(f"{where}: selector must list head fields, not {selector!r}")
    if sum(names[s].width for s in selector) > MAX_SELECTOR_BITS:
        raise SpecError(f"{where}: selector fields must total at most {MAX_SELECTOR_BITS} bits")
    return head, tuple(selector)


def _selector_index(where, head, selector, classes):
    """{selector values in head order: class}; values that pick two classes are refused (the
    first such values in enumeration order, with the first two classes in spec order).

    Each key claims the combinations it fixes (its fields at their values, the others free):
    the work follows the combinations the keys cover, not every combination times every key."""
    sel_fields = [f for f in head if f.name in selector]       # head order = key order
    index, clashes = {}, {}
    for cls in classes:
        for key in cls.keys:
            fixed = dict(key)
            ranges = [(fixed[f.name],) if f.name in fixed else range(f.max + 1) for f in sel_fields]
            for combo in itertools.product(*ranges):
                owner = index.setdefault(combo, cls)
                if owner is not cls:
                    clashes.setdefault(combo, (owner, cls))
    if clashes:
        combo = min(clashes)
        first, second = clashes[combo]
        values = dict(zip((f.name for f in sel_fields), combo))
        raise SpecError(f"{where}: selector values {values} pick two classes: {first.name!r} and {second.name!r}")
    return index


def _key_bits(head, key):
    """{bit: 0 or 1} that a class key fixes in a command (its fields at their head bits)."""
    by_name = {f.name: f for f in head}
    return {by_name[k].bit + i: (v >> i) & 1 for k, v in key for i in range(by_name[k].width)}


def _check_not_shadowed(where, name, ahead, classes, head, main_classes):
    """An alternate head is tried only when the head picks no class, so a command that both an
    alternate key and a head key fit would never reach the alternate class: refused."""
    for cls in classes:
        for j, key in enumerate(cls.keys):
            mine = _key_bits(ahead, key)
            for other in main_classes:
                for theirs in (_key_bits(head, k) for k in other.keys):
                    if all(theirs.get(b, v) == v for b, v in mine.items()):
                        raise SpecError(f"{where}: class {cls.name!r} (alternate head {name!r}) keys[{j}] is "
                                        f"shadowed by class {other.name!r}: a command both fit decodes as "
                                        f"{other.name!r}")


# ------------------------------------------------------------------------------------ chips

_CHIP_KEYS = ("name", "version", "seed_chip_version", "params", "memory", "cmd_hdr", "engines")
_CHIP_REQUIRED = ("name", "version", "params", "memory", "cmd_hdr", "engines")
_ENGINE_KEYS = ("id", "format", "aliases", "own_id", "wait_for", "enable", "inherit_wait", "stream", "ids",
                "wait_mask", "missing_wait", "messages", "opaque", "barrier", "display", "inert")
_DISPLAY_KEYS = ("addresses", "address_fields", "joined", "constants", "rounding", "shown", "direction")
_SPACE_KEYS = ("base", "size", "lane_bytes", "address_mask", "mirror", "shared")
_STREAM_KEYS = ("slot", "end", "pad_to", "zero_tail", "end_enable")
_HEADER_KEYS = ("name", "bytes", "magic", "fields", "legacy_magics", "detect")
_HEADER_REQUIRED = ("name", "bytes", "magic", "fields")


def _read_spec_file(chip, filename):
    """(path, bytes) of specs/<chip>/<filename>."""
    path = _specs_root().joinpath(chip, filename)
    try:
        return path, path.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"specs/{chip}/{filename}: file not found") from None


def _read_toml(chip, filename, path_data=None):
    path, data = path_data or _read_spec_file(chip, filename)
    cache = _cache_path(path, data)
    if cache is not None:
        try:
            return marshal.loads(cache.read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            pass
    import tomllib              # here: with the cache, a command line never needs the parser
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SpecError(f"specs/{chip}/{filename}: {e}") from None
    if cache is not None:
        _store(cache, table)
    return table


@functools.cache
def _specs_root():
    """The specs folder: a plain directory when bmk is installed as files (importlib.resources,
    slower to import, only otherwise, e.g. from a zip)."""
    import bmk.specs
    where = getattr(bmk.specs, "__file__", None)
    if where and pathlib.Path(where).parent.is_dir():
        return pathlib.Path(where).parent
    from importlib import resources
    return resources.files(SPECS_PACKAGE)


def _cached_engine_classes(chip, where, filename):
    """build_engine_classes(where, <the file's table>), kept as plain values in __pycache__
    beside the file once checked: the checks and the object building were most of the time a
    command line took to load bm1684x (2,140 fields, ~20 ms); remaking the objects takes a
    quarter of that. A file that fails its checks is never kept, so its error is raised each time."""
    path_data = _read_spec_file(chip, filename)
    cache = _cache_path(*path_data, what="built")
    if cache is not None:
        try:
            return _classes_from_plain(marshal.loads(cache.read_bytes()))
        except (OSError, ValueError, EOFError, TypeError, IndexError, KeyError):
            pass
    built = build_engine_classes(where, _read_toml(chip, filename, path_data))
    if cache is not None:
        _store(cache, _classes_to_plain(built))
    return built


def _classes_to_plain(built):
    """build_engine_classes' result -> marshal-able values: each distinct Field once (fields
    repeat across an engine's classes), referred to by position."""
    classes, head, selector, index, alternates = built
    fields = {}

    def refs(fs):
        return tuple(fields.setdefault(attrs.astuple(f, recurse=False), len(fields)) for f in fs)
    position = {c.name: i for i, c in enumerate(classes)}
    plain_classes = tuple((c.name, c.nbytes, refs(c.fields),
                           tuple(attrs.astuple(i, recurse=False) for i in c.instructions), c.composed, c.keys)
                          for c in classes)
    plain_index = {k: position[c.name] for k, c in index.items()}
    plain_alts = tuple((a.name, refs(a.head), a.selector, {k: position[c.name] for k, c in a.index.items()})
                       for a in alternates)
    return tuple(fields), plain_classes, refs(head), selector, plain_index, plain_alts


def _classes_from_plain(plain):
    rows, plain_classes, head, selector, plain_index, plain_alts = plain
    fields = [Field(*row) for row in rows]
    classes = tuple(Format(name, nbytes, tuple(fields[i] for i in refs), tuple(Instruction(*i) for i in ins),
                           composed, keys) for name, nbytes, refs, ins, composed, keys in plain_classes)
    return (classes, tuple(fields[i] for i in head), selector, {k: classes[i] for k, i in plain_index.items()},
            tuple(Alternate(name, tuple(fields[i] for i in refs), sel, {k: classes[i] for k, i in index.items()})
                  for name, refs, sel, index in plain_alts))


def _digest(data):
    return f"{len(data):x}-{zlib.crc32(data):08x}{zlib.adler32(data):08x}"     # zlib: no OpenSSL to load


def _cache_path(path, data, what="toml"):
    """Where the parsed table of a spec file is kept, as Python keeps .pyc files: __pycache__
    beside it, named by a hash of the file's bytes (so an edited spec is parsed again). TOML
    parsing is most of the time a chip takes to load (bm1684x: 45 of 60 ms; marshal: 2 ms),
    which every command-line call pays. None when the specs are not plain files.
    what="built": the checked classes of an engine file (_cached_engine_classes), named by the
    hashes of the file and of this module's source (a changed loader builds them again)."""
    if not isinstance(path, pathlib.Path):
        return None
    digest = _digest(data)
    if what == "built":
        loader = _loader_digest()
        if loader is None:
            return None
        digest += f"-{loader}"
    return path.parent / "__pycache__" / f"{path.stem}.{what}.{digest}.marshal"


@functools.cache
def _loader_digest():
    try:
        return _digest(pathlib.Path(__file__).read_bytes())
    except (OSError, NameError):
        return None


def _store(cache, table):
    """Write the cache (atomically; stale copies of the same file removed); an unwritable
    folder (an installed read-only package) is no error: the file is parsed each time."""
    try:
        cache.parent.mkdir(exist_ok=True)
        for old in cache.parent.glob(".".join(cache.name.split(".", 2)[:2]) + ".*.marshal"):
            old.unlink(missing_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps(table))
        os.replace(tmp, cache)
    except OSError:
        pass


def _memory(where, table):
    spaces = []
    for name, row in table.items():
        at = f"{where} [memory.{name}]"
        _check_keys(at, row, _SPACE_KEYS, ("base", "size"))
        if not isinstance(row.get("shared", False), bool):
            raise SpecError(f"{at}: shared must be true or false, not {row['shared']!r}")
        spaces.append(MemorySpace(name, _check_int(at, "base", row["base"]), _check_int(at, "size", row["size"], 1),
                                  row.get("lane_bytes") and _check_int(at, "lane_bytes", row["lane_bytes"], 1),
                                  row.get("address_mask") and _check_int(at, "address_mask", row["address_mask"], 1),
                                  _check_int(at, "mirror", row["mirror"]) if "mirror" in row else None,
                                  row.get("shared", False)))
    spaces.sort(key=lambda m: m.base)
    for a, b in zip(spaces, spaces[1:]):
        if a.base + a.size > b.base:
            raise SpecError(f"{where}: memory spaces {a.name!r} and {b.name!r} overlap")
    if "global" not in {m.name for m in spaces}:
        raise SpecError(f"{where}: [memory] must define a 'global' space")
    return tuple(spaces)


def _sync_field(at, classes, key, name):
    """A sync field sits at the same bits in every class that has it (ids are patched at
    acquisition); a class without it (bm1684x LAR) carries no ids."""
    places = {(c.by_name[name].bit, c.by_name[name].width) for c in classes if name in c.by_name}
    if not places:
        raise SpecError(f"{at}: {key} names field {name!r}, which no class has")
    if len(places) > 1:
        raise SpecError(f"{at}: {key} field {name!r} must sit at the same bits in every class")


def _engine(chip_name, where, ename, e, all_engines, header, engine_classes):
    at = f"{where} [engines.{ename}]"
    _check_keys(at, e, _ENGINE_KEYS, ("id",))
    classes, head, selector, index, alternates = (), (), (), {}, ()
    opaque = e.get("opaque", False)
    if not isinstance(opaque, bool):
        raise SpecError(f"{at}: opaque must be true or false, not {opaque!r}")
    barrier = e.get("barrier", False)
    if not isinstance(barrier, bool) or (barrier and not opaque):
        raise SpecError(f"{at}: barrier must be true or false and only an opaque engine's, not {barrier!r}")
    if "format" in e:
        if opaque:
            raise SpecError(f"{at}: an opaque engine has no format (its streams are kept as bytes)")
        path = f"specs/{chip_name}/{e['format']}.toml"
        classes, head, selector, index, alternates = engine_classes(path, f"{e['format']}.toml")
    elif any(k in e for k in ("own_id", "wait_for", "enable", "stream", "ids", "wait_mask", "missing_wait",
                              "messages")):
        raise SpecError(f"{at}: sync fields and stream rules need a format")
    ids = e.get("ids", "explicit")
    if ids not in ("explicit", "implicit"):
        raise SpecError(f"{at}: ids must be 'explicit' or 'implicit', not {ids!r}")
    if ids == "implicit" and e.get("own_id"):
        raise SpecError(f"{at}: own_id names a field, but ids are implicit (positions in the stream)")
    if e.get("own_id"):
        _sync_field(at, classes, "own_id", e["own_id"])
    for other, fname in e.get("wait_for", {}).items():
        if other not in all_engines:
            raise SpecError(f"{at}: wait_for names unknown engine {other!r}")
        _sync_field(at, classes, f"wait_for {other}", fname)
    for fname, value in e.get("enable", {}).items():
        _sync_field(at, classes, "enable", fname)
        _check_int(f"{at}: enable", fname, value, 0, next(c for c in classes if fname in c.by_name).by_name[fname].max)
    wait_mask = e.get("wait_mask")
    if wait_mask is not None:
        _check_int(at, "wait_mask", wait_mask, 1)
        for other, fname in e.get("wait_for", {}).items():
            width = next(c for c in classes if fname in c.by_name).by_name[fname].width
            if wait_mask >> width:
                raise SpecError(f"{at}: wait_mask 0x{wait_mask:X} is wider than the {width}-bit field {fname!r}")
    missing_wait = e.get("missing_wait", "none")
    if missing_wait not in ("none", "next"):
        raise SpecError(f"{at}: missing_wait must be 'none' or 'next', not {missing_wait!r}")
    messages = _messages(at, e["messages"], classes) if "messages" in e else None
    stream = StreamRule()
    if "stream" in e:
        _check_keys(f"{at} stream", e["stream"], _STREAM_KEYS)
        s = e["stream"]
        stream = StreamRule(_check_int(f"{at} stream", "slot", s.get("slot", 0)), s.get("end"),
                            _check_int(f"{at} stream", "pad_to", s.get("pad_to", 0)),
                            _check_int(f"{at} stream", "zero_tail", s.get("zero_tail", 0)),
                            bool(s.get("end_enable", True)))
        if stream.end is not None and not any(i.name == stream.end for c in classes for i in c.instructions):
            raise SpecError(f"{at}: stream end names unknown instruction kind {stream.end!r}")
        if stream.slot and any(c.nbytes > stream.slot for c in classes):
            raise SpecError(f"{at}: stream slot {stream.slot} is smaller than a class")
    aliases = e.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.isidentifier() for a in aliases):
        raise SpecError(f"{at}: aliases must be a list of identifiers, not {aliases!r}")
    display = _display(at, e["display"], classes) if "display" in e else Display()
    inert = e.get("inert", [])
    if not isinstance(inert, list) or not all(any(n in c.by_name for c in classes) for n in inert):
        raise SpecError(f"{at}: inert must list fields of the engine's classes, not {inert!r}")
    return Engine(ename, _check_int(at, "id", e["id"], 0, header.by_name["engine_id"].max), classes, head,
                  selector, tuple(aliases), e.get("own_id"), tuple(e.get("wait_for", {}).items()),
                  tuple(e.get("enable", {}).items()), bool(e.get("inherit_wait", False)), stream, index,
                  ids=ids, wait_mask=wait_mask, missing_wait=missing_wait, messages=messages, opaque=opaque,
                  barrier=barrier,
                  alternates=alternates, display=display, inert=tuple(inert))


def _display(at, table, classes):
    """[engines.X.display] -> Display; every field, composed row and kind it names must exist."""
    where = f"{at} display"
    _check_keys(where, table, _DISPLAY_KEYS)
    fields = {f.name for c in classes for f in c.fields}
    composed = {n for c in classes for n, _ in c.composed}
    kinds = {i.name for c in classes for i in c.instructions}

    def names(key, known, what):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SpecError(f"{where}: {key} must be a list of names, not {value!r}")
        for v in value:
            if v not in known:
                raise SpecError(f"{where}: {key} names unknown {what} {v!r}")
        return tuple(value)

    addresses = table.get("addresses", "device")
    if addresses not in ("device", "local"):
        raise SpecError(f"{where}: addresses must be 'device' or 'local', not {addresses!r}")
    constants = []
    for name, spec in table.get("constants", {}).items():
        if not (isinstance(spec, list) and len(spec) in (2, 3) and all(isinstance(v, str) for v in spec)):
            raise SpecError(f"{where}: constants.{name} must be [address field, const flag(, precision field)]")
        for v in spec:
            if v not in fields:
                raise SpecError(f"{where}: constants.{name} names unknown field {v!r}")
        constants.append((name, *spec, None) if len(spec) == 2 else (name, *spec))
    rounding = None
    if "rounding" in table:
        r = table["rounding"]
        _check_keys(f"{where} rounding", r, ("field", "kinds", "modes"), ("field", "kinds", "modes"))
        if r["field"] not in fields:
            raise SpecError(f"{where}: rounding names unknown field {r['field']!r}")
        for k in r["kinds"]:
            if k not in kinds:
                raise SpecError(f"{where}: rounding names unknown kind {k!r}")
        modes = tuple((n, _check_int(f"{where} rounding modes", n, v)) for n, v in r["modes"].items())
        rounding = Rounding(r["field"], tuple(r["kinds"]), modes)
    direction = None
    if "direction" in table:
        d = table["direction"]
        _check_keys(f"{where} direction", d, ("src", "dst", "spaces"), ("src", "dst", "spaces"))
        for k in ("src", "dst"):
            if d[k] not in composed:
                raise SpecError(f"{where}: direction {k} names unknown composed row {d[k]!r}")
        direction = (d["src"], d["dst"], tuple(d["spaces"].items()))
    return Display(addresses, names("address_fields", fields, "field"), names("joined", composed, "composed row"),
                   tuple(constants), rounding, names("shown", fields, "field"), direction)


def _messages(at, table, classes):
    """[engines.X] messages = { send, wait, id = [field, bit, width], count = [...] } -> Messages."""
    where = f"{at} messages"
    _check_keys(where, table, ("send", "wait", "id", "count"), ("send", "wait", "id", "count"))
    places = {}
    for key in ("send", "wait"):
        holders = [c for c in classes if c.instruction(table[key]) is not None]
        if not holders:
            raise SpecError(f"{where}: {key} names unknown instruction kind {table[key]!r}")
        places[key] = holders
    for key in ("id", "count"):
        spec = table[key]
        if not (isinstance(spec, list) and len(spec) == 3 and isinstance(spec[0], str)):
            raise SpecError(f"{where}: {key} must be [field, first bit, width], not {spec!r}")
        fname, bit, width = spec
        for c in places["send"] + places["wait"]:
            f = c.by_name.get(fname)
            if f is None:
                raise SpecError(f"{where}: {key} names field {fname!r}, which class {c.name!r} lacks")
            _check_int(f"{where} {key}", "bit", bit, 0, f.width - 1)
            _check_int(f"{where} {key}", "width", width, 1, f.width - bit)
    return Messages(table["send"], table["wait"], tuple(table["id"]), tuple(table["count"]))


@functools.cache
def load_chip(name):
    """Load and check specs/<name>/ once; the result is immutable and shared."""
    if name not in chips():
        raise SpecError(f"chip must be one of {list(chips())}, not {name!r}")
    return build_chip(name, _read_toml(name, "chip.toml"), functools.partial(_read_toml, name),
                      functools.partial(_cached_engine_classes, name))


def build_chip(name, chip, read, engine_classes=None):
    """Check a chip.toml table (and, through read(filename), its engine files) -> ChipSpec.

    engine_classes(where, filename), if given, stands for build_engine_classes(where,
    read(filename)) (load_chip's keeps the checked result of a spec file beside it)."""
    if engine_classes is None:
        def engine_classes(where, filename):
            return build_engine_classes(where, read(filename))
    where = f"specs/{name}/chip.toml"
    _check_keys(where, chip, _CHIP_KEYS, _CHIP_REQUIRED)
    if chip["name"] != name:
        raise SpecError(f"{where}: name must be the folder's name {name!r}, not {chip['name']!r}")
    version = _check_int(where, "version", chip["version"])
    params = chip["params"]
    for k, v in params.items():
        _check_int(f"{where} [params]", k, v)
    hdr = chip["cmd_hdr"]
    _check_keys(f"{where} [cmd_hdr]", hdr, _HEADER_KEYS, _HEADER_REQUIRED)
    header = build_format(f"{where} [cmd_hdr]", hdr)
    for needed in ("magic", "len", "engine_id", "mask"):
        header.field(needed)
    magic = _check_int(f"{where} [cmd_hdr]", "magic", hdr["magic"], 0, header.by_name["magic"].max)
    legacy = hdr.get("legacy_magics", [])
    if not isinstance(legacy, list):
        raise SpecError(f"{where} [cmd_hdr]: legacy_magics must be a list of magic bytes, not {legacy!r}")
    for i, m in enumerate(legacy):
        _check_int(f"{where} [cmd_hdr]", f"legacy_magics[{i}]", m, 0, header.by_name["magic"].max)
        if m == magic or legacy.index(m) != i:
            raise SpecError(f"{where} [cmd_hdr]: legacy_magics[{i}] 0x{m:02X} repeats a magic of the chip")
    detect = hdr.get("detect", True)
    if not isinstance(detect, bool):
        raise SpecError(f"{where} [cmd_hdr]: detect must be true or false, not {detect!r}")
    engines = tuple(_engine(name, where, en, e, chip["engines"], header, engine_classes)
                    for en, e in chip["engines"].items())
    if len({e.id for e in engines}) != len(engines):
        raise SpecError(f"{where}: engine ids must be distinct")
    names = [n for e in engines for n in (e.name, *e.aliases)]
    if len(set(names)) != len(names):
        raise SpecError(f"{where}: engine names and aliases must be distinct, not {names}")
    return ChipSpec(name, version, _check_int(where, "seed_chip_version", chip.get("seed_chip_version", version)),
                    tuple(params.items()), _memory(where, chip["memory"]), header, magic, engines,
                    tuple(legacy), detect)


class ChipMagic(NamedTuple):
    """A chip's cmd_hdr_t magics as its chip.toml [cmd_hdr] gives them (ChipSpec has the same)."""
    name: str
    magic: int
    legacy_magics: tuple
    detect: bool


@functools.cache
def magic_table():
    """(ChipMagic, ...) of every chip, in chips() order, read from each chip.toml's [cmd_hdr]
    alone: what the command line needs to pick a chip by a buffer's first byte, without
    building any ChipSpec (load_chip checks the same values when the chip is loaded; a test
    compares the two)."""
    rows = []
    for name in chips():
        hdr = _read_toml(name, "chip.toml").get("cmd_hdr", {})
        rows.append(ChipMagic(name, hdr.get("magic"), tuple(hdr.get("legacy_magics", ())), hdr.get("detect", True)))
    return tuple(rows)


@functools.cache
def magic_owners():
    """{magic byte: chip name} of the chips whose magic picks them when a buffer is read without
    a chip name (`detect`, specs/README.md), in chips() order."""
    return owners_of_magics(magic_table())


def owners_of_magics(specs):
    """{magic: chip name} of the ChipSpecs (or ChipMagic rows) that `detect` by magic; two with
    one magic are refused."""
    owners = {}
    for spec in specs:
        if not spec.detect:
            continue
        if spec.magic in owners:
            raise SpecError(f"specs/{spec.name}/chip.toml [cmd_hdr]: magic 0x{spec.magic:02X} already picks chip "
                            f"{owners[spec.magic]!r} (set detect = false on one of them)")
        owners[spec.magic] = spec.name
    return owners


@functools.cache
def chips():
    """The chips that have a spec folder in this build."""
    root = _specs_root()
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and p.joinpath("chip.toml").is_file()))
