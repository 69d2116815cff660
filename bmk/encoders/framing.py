"""Framing: commands <-> bytes, as cmd_hdr_t buffers or as raw per-engine streams.

A command buffer (`cmd_hdr_t` framing, every chip): records back to back, each a header
(magic, len = command bytes, engine_id, flags, mask; a `len` of 0 means "the length is in
mask") then one command. A raw stream (the vendor runtime's form, one per engine): commands
without headers, laid out by the engine's `StreamRule` (specs/<chip>/chip.toml): in
fixed slots (bm1684: 128 bytes) or back to back (bm1684x, variable length), closed by an end
command (bm1684x: TIU `sys.end`, GDMA `dma.sys`) and zero padding.

Decoding a command: the engine's head -> selector -> class -> its length -> every field.
Raw streams are merged into one program order by their sync ids (`merge_streams`; several
cores: `bmk.encoders.merge`). An opaque engine (no public layout: BM1690 HAU) keeps a raw
stream as one Record holding its bytes (`Record.data`); in a cmd_hdr_t buffer it is one
record whose length is in `mask`.
"""
from array import array

import attrs

from bmk.encoders.codec import codec_for
from bmk.encoders.fields import not_a_mapping
from bmk.encoders.merge import merge_cores
from bmk.encoders.records import (MAX_PAD, OPAQUE, PAD, Record, opaque_record,  # noqa: F401 (re-exported)
                                 padding as _padding, rule_pad as _rule_pad)
from bmk.errors import DecodeError, EncodeError, must

HEADER_IMPLIED = ("magic", "len", "engine_id")   # header fields that follow from the record


class Streams(dict):
    """{engine: raw stream bytes} of one core, as `acquire_streams()` and `encode(raw=True)` give
    them, knowing its chip: `chip`, the chip's name. Raw streams carry no magic byte, so the
    tools that take them (bmk.testing, bmk.text.loading) read the chip here instead of asking
    for it. Otherwise a plain dict (equal to one with the same items)."""

    def __init__(self, *args, chip=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.chip = chip


def chip_of_streams(streams):
    """The chip name a `Streams` carries; None for a plain dict."""
    return getattr(streams, "chip", None)


def header_length(header):
    """The command length a cmd_hdr_t announces (`len`, or `mask` when len is 0)."""
    return header["len"] or header["mask"]


def _chip(chip):
    from bmk.isa import load_chip
    from bmk.isa.spec import ChipSpec
    if isinstance(chip, str):
        return load_chip(chip)
    if not isinstance(chip, ChipSpec):
        from bmk.errors import BmkError
        raise BmkError(f"chip must be a chip name (e.g. 'bm1684') or a ChipSpec, not {type(chip).__name__}")
    return chip


def _engine(chip, name):
    eng = chip.engine(name)
    if not eng.classes:
        raise EncodeError(f"engine {name!r} of chip {chip.name!r} has no instruction classes")
    return eng


def class_of(chip, engine, fields, cls=None):
    """The class of a command: named, or picked by the selector from the field values."""
    eng = _engine(chip, engine)
    if cls is not None:
        return eng.cls(cls)
    if not eng.selector:
        return eng.classes[0]
    found = eng.class_for(fields)
    if found is None:
        values = {f.name: fields.get(f.name, f.default) for f in eng.selector_fields}
        raise EncodeError(f"{engine}: selector values {values} name no instruction class of {chip.name}")
    return found


def make_record(chip, engine, cls, fields, stream=None, offset=0, header=None):
    """A Record with its kind named from the spec."""
    ins = cls.instruction_of(fields)
    return Record(engine, cls.name, ins.name if ins else None, fields, stream, offset, dict(header or {}))


def pack(chip, record):
    """The command bytes of a record (no header)."""
    if record.data is not None:
        return _opaque_bytes(chip, record)
    cls = class_of(chip, record.engine, record.fields, record.cls)
    return codec_for(cls).pack(record.fields)


def _opaque_bytes(chip, record):
    if not chip.engine(record.engine).opaque:
        raise EncodeError(f"{record.engine}: a record with data bytes needs an opaque engine; "
                          f"{chip.name} {record.engine} has instruction classes")
    return bytes(record.data)


# ------------------------------------------------------------------------------ cmd_hdr_t

def encode_header(chip, eng, length, header=None):
    """The cmd_hdr_t of a `length`-byte command of engine `eng`; a Record's own header fields
    (magic, len, engine_id, ...) override the implied ones only where `frame_at` would read
    the result back as the same command (EncodeError otherwise: never bytes decode refuses)."""
    h = {"magic": chip.magic, "len": length, "engine_id": eng.id}
    if length > chip.header.by_name["len"].max:     # a long command: len 0, the length in mask
        h.update(len=0, mask=length)
    if header:
        h.update((k, v) for k, v in header.items() if k != PAD)
        _check_header(chip, eng, length, h)
    return codec_for(chip.header).pack(h)


def _check_header(chip, eng, length, h):
    """What frame_at checks of a header, for one being written (EncodeError naming the field)."""
    if h["magic"] != chip.magic and not chip.reads_magic(h["magic"]):
        raise EncodeError(f"{eng.name} command header: magic must be 0x{chip.magic:02x} (or a legacy magic of "
                          f"{chip.name}), not {h['magic']!r}")
    if h["engine_id"] != eng.id:
        raise EncodeError(f"{eng.name} command header: engine_id must be {eng.id} (the {eng.name} engine), "
                          f"not {h['engine_id']!r}")
    if header_length(h) != length:
        raise EncodeError(f"{eng.name} command header: len must be {length} (or 0 with mask {length}), the "
                          f"command's byte length, not len={h['len']!r} mask={h.get('mask', 0)!r}")


def encode_record(chip, engine, fields, header=None, cls=None, data=None):
    """Frame one command: cmd_hdr_t followed by the packed fields (an opaque engine: its data)."""
    chip = _chip(chip)
    if data is not None:
        body = _opaque_bytes(chip, Record(engine, OPAQUE, None, {}, data=data))
    else:
        body = codec_for(class_of(chip, engine, fields, cls)).pack(fields)
    return encode_header(chip, chip.engine(engine), len(body), header) + body


def encode_cmdbuf(chip, records):
    """Records -> one cmd_hdr_t buffer (one core's program: the frame has no core number)."""
    chip = _chip(chip)
    out = []
    for r in records:
        if r.core:
            raise EncodeError(f"{r.name} is on core {r.core}: a cmd_hdr_t buffer holds one core's program "
                              f"(encode several cores as raw streams: raw=True)")
        out.append(encode_record(chip, r.engine, r.fields, r.header, r.cls, r.data))
    return b"".join(out)


def _classify(chip, eng, data, start, offset, where):
    if not eng.selector:
        return eng.classes[0]
    need = eng.head_nbytes
    if start + need > len(data):
        raise DecodeError(f"truncated {eng.name} command{where}: {len(data) - start} bytes left, "
                          f"its head is {need}", offset)
    cls = eng.classify(data[start:start + need])
    if cls is None:
        word = int.from_bytes(data[start:start + need], "little")
        sel = ", ".join(f"{f.name}={(word >> f.bit) & f.max}" for f in eng.selector_fields)
        raise DecodeError(f"{eng.name} command{where} names no instruction class ({sel})", offset)
    return cls


def frame_at(chip, data, offset, hdr_codec=None):
    """Check and split the cmd_hdr_t record at `offset`: (engine, class, extra header, start, length).

    `extra`: the header fields a Record keeps (see Record.header). Any defect raises
    DecodeError naming the byte offset. The fields are not unpacked (`codec_for(cls)`)."""
    hdr_codec = hdr_codec or codec_for(chip.header)
    hsize = hdr_codec.nbytes
    if len(data) - offset < hsize:
        raise DecodeError(f"truncated cmd_hdr_t: {len(data) - offset} bytes left, a header is {hsize}", offset)
    header = hdr_codec.unpack_dict(data[offset:offset + hsize])
    if header["magic"] != chip.magic and not chip.reads_magic(header["magic"]):
        legacy = "".join(f" (or 0x{m:02x}, its magic in older bmk buffers)" for m in chip.legacy_magics)
        raise DecodeError(f"bad magic 0x{header['magic']:02x}, expected 0x{chip.magic:02x}{legacy} for {chip.name}",
                          offset)
    eng = chip.engine_by_id(header["engine_id"])
    if eng is None:
        raise DecodeError(f"unknown engine id {header['engine_id']}", offset)
    if not eng.classes and not eng.opaque:
        raise DecodeError(f"engine {eng.name!r} (id {eng.id}) has no instruction classes in {chip.name}", offset)
    start = offset + hsize
    length = header_length(header)
    cls = None
    if not eng.opaque:
        cls = _classify(chip, eng, data, start, offset, "")
        what = f"{eng.name} {cls.name}" if eng.selector else eng.name
        if length != cls.nbytes:
            raise DecodeError(f"length mismatch: header says {length} bytes, a {what} command is {cls.nbytes}",
                              offset)
    if start + length > len(data):
        raise DecodeError(f"truncated {eng.name} command: {len(data) - start} of {length} bytes", offset)
    extra = {k: v for k, v in header.items() if k not in HEADER_IMPLIED and v}
    if header["magic"] != chip.magic:       # a legacy magic (specs/README.md) is kept, so encode gives it back
        extra["magic"] = header["magic"]
    if header["len"] == 0:
        if length > chip.header.by_name["len"].max:
            extra.pop("mask")               # the only way to frame a long command: implied (encode_header)
        else:
            extra["len"] = 0
    return eng, cls, extra, start, length


def scan_cmdbuf(chip, data):
    """cmd_hdr_t bytes -> the byte offset of every record (an array of int64), each checked as `decode_cmdbuf`
    checks it (same DecodeErrors), without unpacking any fields: a cheap first pass."""
    return scan_frames(chip, data).offsets


class Frames:
    """What a first pass over a cmd_hdr_t buffer learnt of every record, so that its header is
    parsed once (issue 24 item 4): `offsets` (int64) and `kinds` (uint32) per record, where
    kinds index `frames`, the distinct (engine, class, extra header, header bytes, length)."""

    __slots__ = ("offsets", "kinds", "frames")

    def __init__(self, offsets, kinds, frames):
        self.offsets, self.kinds, self.frames = offsets, kinds, frames

    def record(self, chip, data, i):
        """The Record of record i (its fields unpacked now)."""
        eng, cls, extra, hsize, length = self.frames[self.kinds[i]]
        offset = self.offsets[i]
        start = offset + hsize
        if cls is None:
            return opaque_record(chip, eng, data[start:start + length], None, offset, dict(extra))
        return make_record(chip, eng.name, cls, codec_for(cls).unpack(data[start:start + length]), None, offset,
                           dict(extra))


def scan_frames(chip, data):
    """cmd_hdr_t bytes -> Frames: every record checked as `decode_cmdbuf` checks it (same
    DecodeErrors), its header parsed and kept as an index, no field unpacked."""
    chip = _chip(chip)
    hdr_codec = codec_for(chip.header)
    hsize = hdr_codec.nbytes
    offsets, kinds, index, offset = array("q"), array("I"), {}, 0
    while offset < len(data):
        eng, cls, extra, start, length = frame_at(chip, data, offset, hdr_codec)
        key = (eng.name, cls.name if cls is not None else None, tuple(extra.items()), length)
        k = index.get(key)
        if k is None:
            k = index[key] = (len(index), (eng, cls, tuple(extra.items()), hsize, length))
        offsets.append(offset)
        kinds.append(k[0])
        offset = start + length
    return Frames(offsets, kinds, [frame for _, frame in sorted(index.values(), key=lambda kv: kv[0])])


def record_at(chip, data, offset, hdr_codec=None):
    """The Record of the cmd_hdr_t record at `offset` (see `frame_at`)."""
    eng, cls, extra, start, length = frame_at(chip, data, offset, hdr_codec)
    if cls is None:
        return opaque_record(chip, eng, data[start:start + length], None, offset, extra)
    fields = codec_for(cls).unpack(data[start:start + length])
    return make_record(chip, eng.name, cls, fields, None, offset, extra)


def decode_cmdbuf(chip, data):
    """cmd_hdr_t bytes -> list of Records. Any defect raises DecodeError naming the byte offset."""
    chip = _chip(chip)
    data = bytes(data)
    hdr_codec = codec_for(chip.header)
    records, offset = [], 0
    while offset < len(data):
        eng, cls, extra, start, length = frame_at(chip, data, offset, hdr_codec)
        if cls is None:
            records.append(opaque_record(chip, eng, data[start:start + length], None, offset, extra))
        else:
            fields = codec_for(cls).unpack(data[start:start + length])
            records.append(make_record(chip, eng.name, cls, fields, None, offset, extra))
        offset = start + length
    return records


# ---------------------------------------------------------------------------- raw streams

def decode_stream(chip, engine, data, core=0):
    """One raw engine stream -> Records (stream = engine name; core: Record.core), by the
    engine's StreamRule; an opaque engine's stream -> one Record holding its bytes (none for
    an empty stream).

    Zero padding after an end command is padding wherever it appears, never a command: a
    stream made of several closed streams back to back (each padded) decodes to all their
    commands; the padding is kept on the end command (header `PAD`) for encode."""
    chip = _chip(chip)
    eng = chip.engine(engine)
    if eng.opaque:
        return [opaque_record(chip, eng, data, eng.name, 0, None, core)] if data else []
    if not eng.classes:
        raise DecodeError(f"engine {engine!r} of chip {chip.name} has no instruction classes")
    data, name = bytes(data), eng.name
    scan = StreamScan(chip, eng, data)
    records = []
    for offset, cls in scan:
        fields = codec_for(cls).unpack(data[offset:offset + cls.nbytes])
        rec = make_record(chip, name, cls, fields, name, offset)
        records.append(attrs.evolve(rec, core=core) if core else rec)
    for i, pad in scan.pads.items():
        records[i] = attrs.evolve(records[i], header={**records[i].header, PAD: pad})
    return records


class StreamScan:
    """The commands of one raw stream (an engine with instruction classes), by its StreamRule:
    iterating gives (offset, class) of each command in order, without unpacking its fields;
    then `pads` is {command index: zero bytes after it} (the `PAD` a Record keeps: padding
    between closed streams back to back, or an end that is not the rule's), and `count` the
    commands. decode_stream makes its Records from it; the text tools keep only these columns
    (bmk/text/raw.py). `data`: bytes, or any buffer that slices to bytes (a memory map).
    Any defect raises DecodeError naming the byte offset (decode_stream's errors)."""

    def __init__(self, chip, eng, data):
        self.chip, self.eng, self.data = chip, eng, data
        self.pads, self.count = {}, 0

    def _kind(self, offset, cls):
        return cls.instruction_of(codec_for(cls).unpack(self.data[offset:offset + cls.nbytes]))

    def __iter__(self):
        chip, eng, data = self.chip, self.eng, self.data
        rule, name, pads = eng.stream, eng.name, self.pads
        where = f" in the {name} stream"
        size, offset, n, last = len(data), 0, 0, None        # last: (offset, class) of the last command
        kind = None                                            # (offset, kind name) of the last one, when asked
        need, classify = eng.head_nbytes, eng.classify
        while offset < size:
            rest = size - offset
            ended = False
            if data[offset] == 0:              # only zero bytes can be padding or the zero tail
                if last is not None and rule.end is not None:
                    if kind is None or kind[0] != last[0]:
                        kind = (last[0], getattr(self._kind(*last), "name", None))
                    ended = kind[1] == rule.end
                limit = max(rule.zero_tail, rule.pad_to) if ended else rule.zero_tail
                if rest <= limit and not any(data[offset:]):
                    break
            if ended and rule.pad_to:
                skip = _padding(data, offset, rule.pad_to)
                if skip and offset + skip < size:          # padding, then the next stream's commands
                    _check_pad(skip, offset, where)
                    pads[n - 1] = skip
                    offset += skip
                    continue
            cls = classify(data[offset:offset + need]) if offset + need <= size else None
            if cls is None:
                cls = _classify(chip, eng, data, offset, offset, where)     # its DecodeError
            step = rule.slot or cls.nbytes
            if offset + step > size:
                what = f"{name} {cls.name}" if eng.selector else name
                raise DecodeError(f"truncated {what} command{where}: {rest} of {step} bytes", offset)
            if any(data[offset + cls.nbytes:offset + step]):
                raise DecodeError(f"{name} slot{where} has non-zero bytes after its {cls.nbytes}-byte command", offset)
            yield offset, cls
            n += 1
            self.count = n
            last = (offset, cls)
            offset += step
        pad = size - offset
        if not n and pad:       # no command to keep it on: refused, never dropped (an empty stream is 0 bytes)
            raise DecodeError(f"no command{where}, only {pad} zero bytes: zero padding is kept on the command "
                              f"before it, and an empty stream is 0 bytes", 0)
        if n and (pad != _rule_pad(rule, offset) or (n - 1) in pads):
            total = pads.get(n - 1, 0) + pad       # padding already skipped after it (a short last block) counts too
            _check_pad(total, offset, where)
            pads[n - 1] = total


def _check_pad(pad, offset, where):
    if pad > MAX_PAD:
        raise DecodeError(f"zero padding{where} must be at most {MAX_PAD} bytes, not {pad}", offset)


def check_pad(value, what=PAD):
    """EncodeError unless `value` is a byte count a raw stream may pad with (0 .. MAX_PAD)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PAD:
        raise EncodeError(f"{what} must be a byte count in [0, {MAX_PAD}], not {value!r}")
    return value


def frame_stream(rule, bodies, pad=None, inner=None, start=0):
    """Command bytes of one engine, in order -> its raw stream by the StreamRule: each in its
    slot (then `inner[i]` zero bytes, padding inside the stream), then zero padding (`pad`
    bytes when given, else what the rule asks; `start`: bytes of the stream before these
    bodies, which the rule's padding counts: StreamWriter)."""
    out, used = [], start
    for i, body in enumerate(bodies):
        if rule.slot:
            body += bytes(rule.slot - len(body))
        if inner and inner.get(i):
            body += bytes(check_pad(inner[i]))
        out.append(body)
        used += len(body)
    out.append(bytes(_rule_pad(rule, used) if pad is None else check_pad(pad)))
    return b"".join(out)


class StreamWriter:
    """One engine's raw stream written command by command as frame_stream frames it (bmk-asm on
    long texts: no list of bodies held). `write(bytes)` takes the stream's bytes in order.

    add(body, pad): a command's bytes and the zero bytes its record carries after it (`PAD`),
    which go after its slot when another command follows, else at the end (close)."""

    def __init__(self, rule, write):
        self.rule, self.write = rule, write
        self.used, self.last = 0, None

    def add(self, body, pad=None):
        if self.last is not None:
            self._put(frame_stream(self.rule, [self.last[0]], self.last[1] or 0))
        self.last = (body, pad)

    def close(self):
        """The last command and the stream's end padding (its PAD, else what the rule asks)."""
        body, pad = self.last if self.last is not None else (None, None)
        self._put(frame_stream(self.rule, [] if body is None else [body], pad, start=self.used))
        self.last = None

    def _put(self, data):
        self.used += len(data)
        self.write(data)


def encode_stream(chip, engine, records):
    """Records of one engine -> its raw stream (slots, padding as the StreamRule says; an opaque
    engine: its records' bytes)."""
    chip = _chip(chip)
    if chip.engine(engine).opaque:
        return b"".join(_opaque_bytes(chip, r) for r in records)
    eng = _engine(chip, engine)
    pad = records[-1].header.get(PAD) if records else None
    bodies = [pack(chip, r) for r in records]
    inner = {i: r.header[PAD] for i, r in enumerate(records[:-1]) if r.header.get(PAD)}   # decode_stream
    return frame_stream(eng.stream, bodies, pad, inner)


def encode_streams(chip, records):
    """Records (any order of engines) -> {engine: raw stream}, keeping each engine's order; with
    records of several cores (Record.core), a list of such dicts, one per core."""
    chip = _chip(chip)
    cores = []
    for r in records:
        while len(cores) <= r.core:
            cores.append({e.name: [] for e in chip.stream_engines})
        cores[r.core][chip.engine(r.engine).name].append(r)
    out = [Streams({e: encode_stream(chip, e, rs) for e, rs in by_engine.items() if rs}, chip=chip.name)
           for by_engine in cores]
    if len(out) > 1:
        return out
    return out[0] if out else Streams(chip=chip.name)


def merge_streams(chip, streams):
    """{engine: [Records]} (one core) or a list of them (one per core) -> one program order: an
    instruction comes after every instruction it waits for (`bmk.encoders.merge`)."""
    chip = _chip(chip)
    return merge_cores(chip, [streams] if isinstance(streams, dict) else list(streams))


# ----------------------------------------------------------------------------- public API

def decode_raw_streams(chip, cores):
    """[{engine name: bytes}] per core -> Records in program order: by columns (bmk.encoders.columns,
    a StreamRecords), or record by record (decode_stream, merge_cores) when a stream needs it
    (its DecodeError, an opaque engine)."""
    from bmk.encoders import columns
    try:
        return columns.decode_streams(chip, cores)
    except columns.Fallback:
        return merge_streams(chip, [{e: decode_stream(chip, e, raw, core) for e, raw in streams.items()}
                                    for core, streams in enumerate(cores)])


def _raw_streams(chip, data, core=0, decoded=False):
    """{engine or alias: bytes} -> {engine name: bytes}, or (decoded) {engine name: [Records]}:
    each stream checked, then decoded, in the order given (the first defect is the error)."""
    streams = {}
    for engine, raw in data.items():
        if not isinstance(raw, (bytes, bytearray, memoryview)):
            raise DecodeError(f"raw {engine} stream must be bytes, not {type(raw).__name__}")
        try:
            eng = chip.engine(engine)
        except Exception:
            eng = None
        if eng is None or not (eng.classes or eng.opaque):
            raise DecodeError(f"chip {chip.name} has no engine {engine!r} (engines: "
                              f"{[e.name for e in chip.stream_engines]})") from None
        if eng.name in streams:
            raise DecodeError(f"two raw {eng.name} streams for core {core}")
        streams[eng.name] = decode_stream(chip, eng.name, raw, core) if decoded else raw
    return streams


def _decode_raw(chip, cores):
    """Raw streams of each core -> Records in program order (decode_raw_streams); when a stream
    is refused before decoding (its type, its engine), the record-by-record path raises what it
    raised before columns existed, a stream decoded before it failing first."""
    try:
        checked = [_raw_streams(chip, d, core) for core, d in enumerate(cores)]
    except DecodeError:
        return merge_streams(chip, [_raw_streams(chip, d, core, decoded=True) for core, d in enumerate(cores)])
    return decode_raw_streams(chip, checked)


def decode(chip: str, data: "bytes | Mapping[str, bytes] | Sequence[Mapping[str, bytes]]") -> "Sequence[Record]":
    """bytes (a cmd_hdr_t buffer), {engine: bytes} (raw streams) or a list of {engine: bytes}
    (one per core) -> Records in program order.

    See API.md "Decoding, in Python". Raw streams are merged by their sync ids (and, across
    cores, messages); each Record of core c has `core` c.
    """
    chip = _chip(chip)
    if isinstance(data, dict):
        return _decode_raw(chip, [data])
    if isinstance(data, (list, tuple)):
        if not all(isinstance(d, dict) for d in data):
            raise DecodeError("data of several cores must be a list of {engine: bytes}, one per core")
        return _decode_raw(chip, list(data))
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DecodeError(f"data must be bytes, {{engine: bytes}} or a list of them, not {type(data).__name__}")
    return decode_cmdbuf(chip, data)


def encode(chip: str, records: "Iterable[Record]", raw: bool = False) -> "bytes | Streams | list[Streams]":
    """Records -> cmd_hdr_t bytes, or {engine: raw stream} with raw=True (API.md); records of
    several cores -> a list of {engine: raw stream}, one per core."""
    chip = _chip(chip)
    if isinstance(records, (str, bytes, dict)):
        raise EncodeError(f"records must be a sequence of bmk Records (bmk.decode gives them), "
                          f"not {type(records).__name__}")
    try:
        records = list(records)
    except TypeError:
        raise EncodeError(f"records must be a sequence of bmk Records (bmk.decode gives them), "
                          f"not {type(records).__name__}") from None
    for i, r in enumerate(records):
        if not isinstance(r, Record):
            raise EncodeError(f"records[{i}] must be a bmk Record (bmk.decode gives them), not {type(r).__name__}")
    bad = not_a_mapping(records)
    if bad is not None:
        raise EncodeError(must("encode", f"records[{bad[0]}].fields", "a mapping {field name: int}", bad[1]))
    return encode_streams(chip, records) if raw else encode_cmdbuf(chip, records)
