"""Spec records and their loader: specs/<chip>/*.toml -> frozen Field/Format/ChipSpec.

The loader refuses a bad table loudly (riscv-opcodes style): overlapping fields, gaps,
duplicate names, defaults or enum values too wide for their field, unknown references.
Every message names the file, the row and the field.
"""
import functools
import tomllib
from importlib import resources

import attrs

from bmk.errors import SpecError

SPECS_PACKAGE = "bmk.specs"


@attrs.frozen
class Field:
    """One bit field of a descriptor: bits [bit, bit + width), LSB first (see specs/README.md)."""

    name: str
    bit: int
    width: int
    default: int = 0
    reserved: bool = False
    enum: "tuple[tuple[str, int], ...]" = ()

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
    """A named instruction kind: the constant field values that identify it."""

    name: str
    match: "tuple[tuple[str, int], ...]"

    def matches(self, fields):
        return all(fields.get(k, 0) == v for k, v in self.match)


@attrs.frozen
class Format:
    """A fixed-length bit layout: a descriptor or a frame header."""

    name: str
    nbytes: int
    fields: "tuple[Field, ...]"
    instructions: "tuple[Instruction, ...]" = ()
    composed: "tuple[tuple[str, tuple[str, ...]], ...]" = ()
    by_name: dict = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})

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
        for ins in self.instructions:
            if ins.matches(fields):
                return ins
        return None

    def instruction(self, name):
        for ins in self.instructions:
            if ins.name == name:
                return ins
        return None

    def compose(self, name, fields):
        """Read a value split over several fields (low part first), e.g. a 40-bit address."""
        value, shift = 0, 0
        for part in dict(self.composed)[name]:
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
class Engine:
    """An engine of the chip: its id in cmd_hdr_t, its format and its sync-id fields."""

    name: str
    id: int
    format: "Format | None" = None
    own_id: "str | None" = None
    wait_for: "tuple[tuple[str, str], ...]" = ()
    enable: "tuple[tuple[str, int], ...]" = ()
    inherit_wait: bool = False


@attrs.frozen
class ChipSpec:
    name: str
    version: int
    seed_chip_version: int
    params: "tuple[tuple[str, int], ...]"
    header: Format
    magic: int
    engines: "tuple[Engine, ...]"
    gmem_addr_mask: int
    gmem_addr_offset: int

    def param(self, name):
        return dict(self.params)[name]

    def engine(self, name):
        for e in self.engines:
            if e.name == name:
                return e
        raise SpecError(f"chip {self.name!r} has no engine {name!r}")

    def engine_by_id(self, engine_id):
        for e in self.engines:
            if e.id == engine_id:
                return e
        return None

    @property
    def formats(self):
        return tuple(e.format for e in self.engines if e.format is not None)


def _check_int(where, key, value, low=0, high=None):
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        rng = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise SpecError(f"{where}: {key} must be {rng}, not {value!r}")
    return value


def build_format(where, table, enums=None):
    """Check one format table (name, bytes, fields, instructions) and build a Format."""
    enums = enums or {}
    nbytes = _check_int(where, "bytes", table.get("bytes"), 1)
    fields, seen = [], set()
    for i, row in enumerate(table.get("fields", [])):
        at = f"{where}: fields[{i}] ({row.get('name', '?')})"
        unknown = set(row) - {"name", "bit", "width", "default", "reserved", "enum"}
        if unknown:
            raise SpecError(f"{at}: unknown keys {sorted(unknown)}")
        name = row.get("name")
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(f"{at}: name must be an identifier, not {name!r}")
        if name in seen:
            raise SpecError(f"{at}: duplicate field name {name!r}")
        seen.add(name)
        bit = _check_int(at, "bit", row.get("bit"), 0, nbytes * 8 - 1)
        width = _check_int(at, "width", row.get("width"), 1, 64)
        if bit + width > nbytes * 8:
            raise SpecError(f"{at}: bits [{bit}, {bit + width}) run past the {nbytes}-byte format")
        default = _check_int(at, "default", row.get("default", 0), 0, (1 << width) - 1)
        enum = ()
        if "enum" in row:
            if row["enum"] not in enums:
                raise SpecError(f"{at}: enum {row['enum']!r} is not defined in [enums]")
            enum = tuple(enums[row["enum"]].items())
            for ename, ev in enum:
                _check_int(f"{at}: enum {row['enum']}.{ename}", "value", ev, 0, (1 << width) - 1)
        fields.append(Field(name, bit, width, default, bool(row.get("reserved", False)), enum))
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
    names = {f.name for f in fields}
    instructions = []
    for i, row in enumerate(table.get("instructions", [])):
        at = f"{where}: instructions[{i}] ({row.get('name', '?')})"
        for k, v in row.get("match", {}).items():
            if k not in names:
                raise SpecError(f"{at}: match names unknown field {k!r}")
            _check_int(f"{at}: match", k, v, 0, (1 << next(f.width for f in fields if f.name == k)) - 1)
        if not row.get("match"):
            raise SpecError(f"{at}: match must name at least one field")
        instructions.append(Instruction(row["name"], tuple(row["match"].items())))
    composed = []
    for cname, parts in table.get("composed", {}).items():
        for p in parts:
            if p not in names:
                raise SpecError(f"{where}: composed value {cname!r} names unknown field {p!r}")
        composed.append((cname, tuple(parts)))
    return Format(table.get("name", where), nbytes, tuple(fields), tuple(instructions), tuple(composed))


def _read_toml(chip, filename):
    try:
        text = resources.files(SPECS_PACKAGE).joinpath(chip, filename).read_text()
    except FileNotFoundError:
        raise SpecError(f"specs/{chip}/{filename}: file not found") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"specs/{chip}/{filename}: {e}") from None


@functools.cache
def load_chip(name):
    """Load and check specs/<name>/ once; the result is immutable and shared."""
    if name not in chips():
        raise SpecError(f"chip must be one of {list(chips())}, not {name!r}")
    where = f"specs/{name}/chip.toml"
    chip = _read_toml(name, "chip.toml")
    header = build_format(f"{where} [cmd_hdr]", chip["cmd_hdr"])
    engines = []
    for ename, e in chip["engines"].items():
        at = f"{where} [engines.{ename}]"
        fmt = None
        if "format" in e:
            table = _read_toml(name, f"{e['format']}.toml")
            fmt = build_format(f"specs/{name}/{e['format']}.toml", table, table.get("enums"))
            for key in ("own_id",):
                if e.get(key) and e[key] not in fmt.by_name:
                    raise SpecError(f"{at}: {key} names unknown field {e[key]!r}")
            for other, fname in e.get("wait_for", {}).items():
                if other not in chip["engines"] or fname not in fmt.by_name:
                    raise SpecError(f"{at}: wait_for {other} = {fname!r} names an unknown engine or field")
            for fname in e.get("enable", {}):
                if fname not in fmt.by_name:
                    raise SpecError(f"{at}: enable names unknown field {fname!r}")
        engines.append(Engine(ename, _check_int(at, "id", e.get("id"), 0, header.by_name["engine_id"].max), fmt,
                              e.get("own_id"), tuple(e.get("wait_for", {}).items()),
                              tuple(e.get("enable", {}).items()), bool(e.get("inherit_wait", False))))
    if len({e.id for e in engines}) != len(engines):
        raise SpecError(f"{where}: engine ids must be distinct")
    gm = chip.get("gmem_address", {})
    return ChipSpec(name, chip["version"], chip.get("seed_chip_version", chip["version"]),
                    tuple(chip["params"].items()), header, chip["cmd_hdr"]["magic"], tuple(engines),
                    gm.get("mask", (1 << 64) - 1), gm.get("offset", 0))


@functools.cache
def chips():
    """The chips that have a spec folder in this build."""
    root = resources.files(SPECS_PACKAGE)
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and p.joinpath("chip.toml").is_file()))
