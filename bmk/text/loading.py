"""Reading the tools' inputs: a binary command buffer, raw engine streams, or assembly text.

Text or binary is decided by content: a buffer starts with a chip's cmd_hdr_t magic byte
(never valid as the first byte of UTF-8 text), and the byte also names the chip (the chip
whose magic picks it: `bmk.isa.magic_owners`; a legacy magic is read only when the chip is
named); anything else that decodes as UTF-8 is text. Raw streams carry no
magic: they need the chip named, and are merged into program order by their sync ids.
"""
import codecs
import re
from array import array
from collections.abc import Sequence

import attrs

from bmk.encoders.framing import chip_of_streams
from bmk.encoders.codec import codec_for
from bmk.encoders.framing import PAD, Frames, encode_header, record_at, scan_frames
from bmk.errors import BmkError, DecodeError, SpecError, quoted
from bmk.isa import chips, load_chip, magic_owners, magic_table
from bmk.origins import SUFFIX, read_sidecar
from bmk.text import asm


@attrs.frozen
class Listing:
    """Instructions read from one input, with where each came from."""

    chip: object
    records: "Sequence[Record]"        # a tuple, or a CmdbufRecords (binary, text) decoded on access
    source: str                        # "binary", "text" or "raw"
    name: str = "<input>"
    lines: tuple = ()                  # text: source line per record
    paths: dict = attrs.field(factory=dict)   # raw: {engine: file name}
    origins: "tuple | None" = None     # per record: the Origin a sidecar gave it (bmk/origins.py), or None

    def notes(self):
        """Per record: where it came from, as text (None: unknown); None without origins."""
        if self.origins is None:
            return None
        return [None if o is None else str(o) for o in self.origins]

    def where(self, i):
        if self.source == "text":
            return f"{self.name}:{self.lines[i]}"
        offsets = getattr(self.records, "offsets", None)
        if self.source == "binary" and offsets is not None:       # no need to decode the record
            return f"{self.name}: byte {offsets[i]}"
        r = self.records[i]
        if self.source == "raw":
            return f"{self.paths.get(r.stream, self.name)}: {r.stream} stream byte {r.offset}"
        return f"{self.name}: byte {r.offset}"


class CmdbufRecords(Sequence):
    """The Records of a checked cmd_hdr_t buffer, decoded when asked for: a million-instruction
    buffer costs its bytes plus 8 bytes a record, not a million field dicts (issue 13.4).

    `offsets`: the byte offset of every record (framing.scan_cmdbuf, which checked them all),
    or the framing.Frames of a scan_frames pass (+4 bytes a record: no header parsed again)."""

    def __init__(self, chip, data, offsets, special=None):
        self.chip, self.data = chip, data
        self._frames = offsets if isinstance(offsets, Frames) else None
        if self._frames is not None:
            offsets = self._frames.offsets
        self.offsets = offsets if isinstance(offsets, array) else array("q", offsets)
        self.special = special or {}    # {index: Record} the bytes cannot carry (a raw stream's end padding)
        self._hdr = codec_for(chip.header)

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        if self.special:
            rec = self.special.get(range(len(self))[i])
            if rec is not None:
                return rec
        if self._frames is not None:
            return self._frames.record(self.chip, self.data, range(len(self))[i])
        return record_at(self.chip, self.data, self.offsets[i], self._hdr)

    def __iter__(self):
        chip, data, hdr, special, frames = self.chip, self.data, self._hdr, self.special, self._frames
        for i, offset in enumerate(self.offsets):
            if special and i in special:
                yield special[i]
            elif frames is not None:
                yield frames.record(chip, data, i)
            else:
                yield record_at(chip, data, offset, hdr)

    def __eq__(self, other):
        if isinstance(other, CmdbufRecords):
            return self.chip is other.chip and self.data == other.data
        return isinstance(other, (tuple, list, Sequence)) and len(other) == len(self) and \
            all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self):
        return f"<{len(self)} {self.chip.name} records>"


def resolve_chip(chip):
    if chip is None or not isinstance(chip, str):
        return chip
    return load_chip(chip)


def _legacy_owners(magic):
    """The chips that wrote `magic` in older bmk buffers (their `legacy_magics`)."""
    return [row.name for row in magic_table() if magic in row.legacy_magics]


def _legacy_hint(magic):
    old = _legacy_owners(magic)
    if not old:
        return ""
    return (f"; 0x{magic:02x} began {' and '.join(old)} buffers written by older bmk versions: "
            f"for one of those, name the chip (--chip {old[0]})")


def _detect_chip(data, name):
    if not data:
        names = chips()
        if len(names) == 1:
            return load_chip(names[0])
        raise BmkError(f"{name}: empty buffer; say which chip with --chip")
    owner = magic_owners().get(data[0])
    if owner is not None:
        return load_chip(owner)
    owners = magic_owners()
    raise DecodeError(f"bad magic 0x{data[0]:02x}, expected one of "
                      f"{', '.join(f'0x{m:02x} ({c})' for m, c in owners.items())}{_legacy_hint(data[0])}", 0)


def is_text(data, chip=None):
    if not data:
        return False
    if data[0] in _magics(chip):
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    # Text has no control characters other than whitespace.
    return not _CONTROL.search(text)


def load(data, chip=None, name="<input>"):
    """bytes (a buffer or UTF-8 assembly text) -> Listing. Raises BmkError subclasses."""
    chip = resolve_chip(chip)
    data = bytes(data)
    if is_text(data, chip):
        return load_text([data.decode("utf-8")], chip, name)
    detected = chip is None
    try:
        if chip is None:
            chip = _detect_chip(data, name)
        records = CmdbufRecords(chip, data, scan_frames(chip, data))
    except DecodeError as e:
        hint = _legacy_hint(data[0]) if detected and chip is not None else ""
        err = DecodeError(f"{name}: {e}" + (f" (read as {chip.name} by its magic{hint})" if hint else ""))
        err.offset = e.offset
        raise err from None
    return Listing(chip, records, "binary", name)


def load_path(path, chip=None, name=None):
    """A file (buffer or assembly text) -> Listing; a text is parsed as it is read (`load_text`)."""
    name = str(path) if name is None else name
    chip = resolve_chip(chip)
    if _file_is_text(path, chip):
        return load_text(_chunks(path), chip, name)
    with open(path, "rb") as f:
        data = f.read()
    listing = load(data, chip, name)
    origins = read_sidecar(str(path))
    if origins is None:
        return listing
    _same_count(path, origins, len(listing.records))
    return attrs.evolve(listing, origins=origins)


def _same_count(path, origins, n):
    if len(origins) != n:
        raise BmkError(f"{path}{SUFFIX}: gives the origins of {len(origins)} instructions, but {path} has {n}")


_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f]")     # no text has these (whitespace aside)


def _chunks(path, size=1 << 18):
    """A UTF-8 file's text in str chunks."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(size)
            text = decoder.decode(chunk, final=not chunk)
            if text:
                yield text
            if not chunk:
                return


def _magics(chip):
    """The first bytes that make a file binary: every chip's magics (the magic table: no spec
    loaded), or the named chip's."""
    rows = magic_table() if chip is None else [chip]
    return {m for s in rows for m in (s.magic, *s.legacy_magics)}


def _file_is_text(path, chip):
    """`is_text` of a file's bytes, read in chunks."""
    with open(path, "rb") as f:
        first = f.read(1)
    if not first or first[0] in _magics(chip):
        return False
    try:
        return not any(_CONTROL.search(text) for text in _chunks(path))
    except UnicodeDecodeError:
        return False


class Framer:
    """Record -> (cmd_hdr_t bytes, command bytes), as framing.encode_record frames it, for long
    texts: values packed in the codec's order (no dict walk), the usual headers made once."""

    def __init__(self, chip):
        self.chip, self._headers = chip, {}

    def __call__(self, rec):
        eng = self.chip.engine(rec.engine)
        if rec.data is not None:                      # an opaque engine's bytes
            return encode_header(self.chip, eng, len(rec.data), rec.header), bytes(rec.data)
        codec = codec_for(eng.cls(rec.cls))
        fields = rec.fields
        body = codec.pack_values([fields.get(n, d) for n, d in zip(codec.names, codec.defaults)])
        if rec.header:
            return encode_header(self.chip, eng, len(body), rec.header), body
        key = (eng.name, len(body))
        head = self._headers.get(key)
        if head is None:
            head = self._headers[key] = encode_header(self.chip, eng, len(body))
        return head, body


def load_text(chunks, chip=None, name="<input>"):
    """Assembly text, as str chunks -> Listing, parsed line by line (asm.iter_parse) and kept as
    cmd_hdr_t bytes plus 16 bytes a record (issue 13.4); errors as asm.parse raises them. A text
    of several command groups (a model's listing, `.group` lines) is refused: `load_text_groups`."""
    grouped = load_text_groups(chunks, chip, name)
    if len(grouped.groups) > 1:
        raise BmkError(f"{name}: a listing of {len(grouped.groups)} command groups (.group lines); this command "
                       f"takes one group (bmk-asm --dir DIR writes every group)")
    return grouped.groups[0].listing if grouped.groups else Listing(grouped.chip, (), "text", name)


@attrs.frozen
class TextGroup:
    """One `.group` section of a text: its label, form ("streams" or "cmdbuf") and Listing."""

    label: "str | None"
    form: str
    listing: Listing


@attrs.frozen
class GroupedText:
    """A text read as its command groups (one unlabelled group when it has no `.group` line);
    `path` and `chip` as a compiled model has them, so bmk-diff pairs it with one by label."""

    path: str
    spec: object
    groups: tuple

    @property
    def chip(self):
        return self.spec.name


def load_text_groups(chunks, chip=None, name="<input>"):
    """Assembly text, as str chunks -> GroupedText: each `.group` section a Listing (see load_text)."""
    parser, records = asm.iter_parse(asm.text_lines(chunks), resolve_chip(chip), name)
    groups, frame = [], None
    state = None            # (group number, label, form, buf, offsets, lines, special)

    def close():
        if state is not None:
            _, label, form, buf, offsets, lines, special = state
            where = name if label is None else f"{name}:{label}"
            groups.append(TextGroup(label, form, Listing(parser.chip, CmdbufRecords(
                parser.chip, bytes(buf), offsets, special), "text", where, lines)))

    for lineno, rec in records:
        if state is None or state[0] != parser.groups:
            close()
            state = (parser.groups, parser.group, parser.group_form, bytearray(), array("q"), array("q"), {})
        _, _, _, buf, offsets, lines, special = state
        frame = frame or Framer(parser.chip)
        head, body = frame(rec)
        if PAD in rec.header or rec.core:        # what cmd_hdr_t bytes cannot carry
            special[len(offsets)] = rec
        offsets.append(len(buf))
        lines.append(lineno)
        buf += head
        buf += body
    close()
    return GroupedText(name, parser.chip, tuple(groups))


def load_path_groups(path, chip=None, name=None):
    """A text file -> GroupedText (`load_text_groups`); None when the file is not text."""
    name = str(path) if name is None else name
    chip = resolve_chip(chip)
    if path == "-" or not _file_is_text(path, chip):
        return None
    return load_text_groups(_chunks(path), chip, name)


def engine_name(chip, engine):
    """An engine name or alias (spec `aliases`) -> the engine's name; BmkError if the chip has none."""
    try:
        eng = chip.engine(engine)
    except SpecError:
        eng = None
    if eng is None or not (eng.classes or eng.opaque):
        names = [e.name for e in chip.stream_engines]
        aliases = [f"{a}" for e in chip.stream_engines for a in e.aliases]
        raise BmkError(f"--raw: engine must be one of {', '.join(names)}"
                       f"{' (or ' + '/'.join(aliases) + ')' if aliases else ''} for {chip.name}, not {quoted(engine)}")
    return eng.name


def decode_raw(chip, streams):
    """{engine: (name, bytes or FileBytes)} -> (records merged in program order, {engine: name}):
    a raw.RawRecords, columns over the streams' bytes (issue 24 item 2).

    Errors name the stream's file and the byte offset in that stream."""
    from bmk.text import raw
    data, paths = {}, {}
    for engine, (path, stream) in streams.items():
        name = engine_name(chip, engine)
        if name in data:
            raise BmkError(f"--raw: two streams for engine {name} ({paths[name]} and {path})")
        data[name], paths[name] = stream, str(path)
    return raw.load_streams(chip, data, paths), paths


def need_chip(chip, what="--raw"):
    chip = resolve_chip(chip)
    if chip is None:
        raise BmkError(f"{what} needs --chip (raw streams carry no magic byte; one of {', '.join(chips())})")
    return chip


def load_raw(streams, chip):
    """[(engine, path)] raw per-engine streams -> one Listing, merged in program order by sync ids."""
    chip = need_chip(chip)
    seen = {}
    for engine, path in streams:           # bad engine names before any file is read
        name = engine_name(chip, engine)
        if name in seen:
            raise BmkError(f"--raw: two streams for engine {name} ({seen[name]} and {path})")
        seen[name] = path
    from bmk.text.raw import read_stream
    data = {engine: (str(path), read_stream(path)) for engine, path in streams}    # large files: FileBytes
    listing = load_raw_bytes(data, chip)
    sides = {engine_name(chip, engine): read_sidecar(str(path)) for engine, path in streams}
    if all(s is None for s in sides.values()):
        return listing
    records = listing.records
    counts = {s.eng.name: len(s) for s in records.streams}
    for name, origins in sides.items():
        if origins is not None:
            _same_count(listing.paths[name], origins, counts.get(name, 0))
    names = [s.eng.name for s in records.streams]
    return attrs.evolve(listing, origins=tuple(
        None if sides.get(names[q]) is None else sides[names[q]][j] for q, j in zip(records.order_q, records.order_j)))


def load_raw_bytes(streams, chip, name=None):
    """{engine: (name, bytes)} -> one Listing (source "raw")."""
    chip = need_chip(chip)
    records, paths = decode_raw(chip, streams)
    label = name or (next(iter(paths.values())) if len(paths) == 1 else ",".join(f"{e}={p}" for e, p in paths.items()))
    return Listing(chip, records, "raw", label, paths=paths)


def load_streams(streams, chip, name="<input>"):
    """{engine: bytes} (e.g. `ctx.acquire_streams()`, whose chip is used when `chip` is None)
    -> one Listing (source "raw"); each stream is named '<name>:<engine>' in messages and locations."""
    chip = need_chip(chip or chip_of_streams(streams), f"{name}: raw streams")
    for engine, data in streams.items():
        if not isinstance(engine, str) or not isinstance(data, (bytes, bytearray, memoryview)):
            raise BmkError(f"{name}: raw streams must be {{engine name: bytes}}, not {{{type(engine).__name__}: "
                           f"{type(data).__name__}}}")
    return load_raw_bytes({engine: (f"{name}:{engine}", bytes(data)) for engine, data in streams.items()}, chip, name)


def parse_side(spec, chip):
    """A bmk-diff side naming raw streams: 'ENGINE=FILE[,ENGINE=FILE...]' -> [(engine, path)], or
    None when `spec` is not of that form (then it is one file: buffer or text)."""
    parts = spec.split(",")
    out = []
    for part in parts:
        engine, eq, path = part.partition("=")
        if not eq or not engine or not path or not engine.isidentifier():
            return None
        out.append((engine, path))
    return out
