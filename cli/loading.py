"""Reading the tools' inputs: a binary command buffer, raw engine streams, or assembly text.

Text or binary is decided by content: a buffer starts with a chip's cmd_hdr_t magic byte
(never valid as the first byte of UTF-8 text); anything else that decodes as UTF-8 is text.
"""
import attrs

from bmk.cli import asmtext
from bmk.encoders import decode_cmdbuf, decode_stream
from bmk.errors import BmkError, DecodeError
from bmk.isa import chips, load_chip

ENGINE_ALIASES = {"gdma": "tdma", "bdc": "tiu"}


@attrs.frozen
class Listing:
    """Instructions read from one input, with where each came from."""

    chip: object
    records: tuple
    source: str                        # "binary", "text" or "raw"
    name: str = "<input>"
    lines: tuple = ()                  # text: source line per record

    def where(self, i):
        if self.source == "text":
            return f"{self.name}:{self.lines[i]}"
        r = self.records[i]
        label = f"{r.engine} " if self.source == "raw" else ""
        return f"{self.name}: {label}byte {r.offset}"


def resolve_chip(chip):
    if chip is None or not isinstance(chip, str):
        return chip
    return load_chip(chip)


def _detect_chip(data, name):
    if not data:
        names = chips()
        if len(names) == 1:
            return load_chip(names[0])
        raise BmkError(f"{name}: empty buffer; say which chip with --chip")
    for c in chips():
        if load_chip(c).magic == data[0]:
            return load_chip(c)
    raise DecodeError(f"bad magic 0x{data[0]:02x}, expected one of "
                      f"{', '.join(f'0x{load_chip(c).magic:02x} ({c})' for c in chips())}", 0)


def is_text(data, chip=None):
    if not data:
        return False
    magics = {load_chip(c).magic for c in chips()} if chip is None else {chip.magic}
    if data[0] in magics:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    # Text has no control characters other than whitespace.
    return not any(ord(ch) < 32 and ch not in "\t\n\r\f\v" or ch == "\x7f" for ch in text)


def load(data, chip=None, name="<input>"):
    """bytes (a buffer or UTF-8 assembly text) -> Listing. Raises BmkError subclasses."""
    chip = resolve_chip(chip)
    data = bytes(data)
    if is_text(data, chip):
        prog = asmtext.parse(data.decode("utf-8"), chip, name)
        return Listing(prog.chip, prog.records, "text", name, prog.lines)
    try:
        if chip is None:
            chip = _detect_chip(data, name)
        records = tuple(decode_cmdbuf(chip, data))
    except DecodeError as e:
        err = DecodeError(f"{name}: {e}")
        err.offset = e.offset
        raise err from None
    return Listing(chip, records, "binary", name)


def load_path(path, chip=None):
    with open(path, "rb") as f:
        data = f.read()
    return load(data, chip, str(path))


def engine_name(chip, engine):
    names = [e.name for e in chip.engines if e.format is not None]
    if engine not in names and ENGINE_ALIASES.get(engine) in names:
        engine = ENGINE_ALIASES[engine]
    if engine not in names:
        raise BmkError(f"--raw: engine must be one of {', '.join(names)} (or gdma/bdc), not {engine!r}")
    return engine


def load_raw(streams, chip):
    """[(engine, path)] raw per-engine streams -> one Listing (engine streams in the given order)."""
    chip = resolve_chip(chip)
    if chip is None:
        if len(chips()) != 1:
            raise BmkError("--raw needs --chip")
        chip = load_chip(chips()[0])
    records, names = [], []
    for engine, path in streams:
        engine = engine_name(chip, engine)
        with open(path, "rb") as f:
            data = f.read()
        try:
            records += decode_stream(chip, engine, data)
        except DecodeError as e:
            err = DecodeError(f"{path}: {e}")
            err.offset = e.offset
            raise err from None
        names.append(str(path))
    return Listing(chip, tuple(records), "raw", "+".join(names))
