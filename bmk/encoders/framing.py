"""Framing: commands <-> bytes, as cmd_hdr_t buffers or as raw per-engine streams.

A command buffer (`cmd_hdr_t` framing, every chip): records back to back, each a header
(magic, len = command bytes, engine_id, flags, mask; a `len` of 0 means "the length is in
mask") then one command. A raw stream (the vendor runtime's form, one per engine): commands
without headers, laid out by the engine's `StreamRule` (specs/<chip>/chip.toml): in
fixed slots (bm1684: 128 bytes) or back to back (bm1684x, variable length), closed by an end
command (bm1684x: TIU `sys.end`, GDMA `dma.sys`) and zero padding.

Decoding a command: the engine's head -> selector -> class -> its length -> every field.
Raw streams are merged into one program order by their sync ids (`merge_streams`).
"""
from array import array

import attrs

from bmk.encoders.codec import codec_for
from bmk.errors import DecodeError, EncodeError

HEADER_IMPLIED = ("magic", "len", "engine_id")   # header fields that follow from the record
PAD = "pad"      # Record.header key of a raw stream's last command: zero bytes after it


@attrs.frozen(eq=True, hash=False)
class Record:
    """One decoded (or to-be-encoded) instruction.

    engine: engine name; cls: its instruction class; kind: the instruction kind (vendor op
    name) or None when no kind matches; fields: {field: value}, every field of the class;
    stream: the raw stream it came from (None for a cmd_hdr_t buffer); offset: byte offset in
    that buffer or stream; header: cmd_hdr_t fields other than magic/len/engine_id that are
    non-zero (or `len` = 0; `magic` when it is one of the chip's legacy magics), or for a raw stream's last command {"pad": zero bytes after it}
    when that differs from the stream rule.
    """

    engine: str
    cls: str
    kind: "str | None"
    fields: dict
    stream: "str | None" = None
    offset: int = 0
    header: dict = attrs.field(factory=dict)

    @property
    def name(self):
        """The mnemonic: '<engine>.<kind>' (vendor op names), '<engine>.raw' if no kind matches."""
        return f"{self.engine}.{self.kind or 'raw'}"


def header_length(header):
    """The command length a cmd_hdr_t announces (`len`, or `mask` when len is 0)."""
    return header["len"] or header["mask"]


def _chip(chip):
    from bmk.isa import load_chip
    return load_chip(chip) if isinstance(chip, str) else chip


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
    values = {f.name: fields.get(f.name, f.default) for f in eng.selector_fields}
    found = eng.class_for(values)
    if found is None:
        raise EncodeError(f"{engine}: selector values {values} name no instruction class of {chip.name}")
    return found


def make_record(chip, engine, cls, fields, stream=None, offset=0, header=None):
    """A Record with its kind named from the spec."""
    ins = cls.instruction_of(fields)
    return Record(engine, cls.name, ins.name if ins else None, fields, stream, offset, dict(header or {}))


def pack(chip, record):
    """The command bytes of a record (no header)."""
    cls = class_of(chip, record.engine, record.fields, record.cls)
    return codec_for(cls).pack(record.fields)


# ------------------------------------------------------------------------------ cmd_hdr_t

def encode_header(chip, eng, length, header=None):
    h = {"magic": chip.magic, "len": length, "engine_id": eng.id}
    if header:
        h.update((k, v) for k, v in header.items() if k != PAD)
    return codec_for(chip.header).pack(h)


def encode_record(chip, engine, fields, header=None, cls=None):
    """Frame one command: cmd_hdr_t followed by the packed fields."""
    chip = _chip(chip)
    c = class_of(chip, engine, fields, cls)
    body = codec_for(c).pack(fields)
    return encode_header(chip, chip.engine(engine), len(body), header) + body


def encode_cmdbuf(chip, records):
    """Records -> one cmd_hdr_t buffer."""
    chip = _chip(chip)
    return b"".join(encode_record(chip, r.engine, r.fields, r.header, r.cls) for r in records)


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
    header = hdr_codec.unpack(data[offset:offset + hsize])
    if header["magic"] != chip.magic and not chip.reads_magic(header["magic"]):
        legacy = "".join(f" (or 0x{m:02x}, its magic in older bmk buffers)" for m in chip.legacy_magics)
        raise DecodeError(f"bad magic 0x{header['magic']:02x}, expected 0x{chip.magic:02x}{legacy} for {chip.name}",
                          offset)
    eng = chip.engine_by_id(header["engine_id"])
    if eng is None:
        raise DecodeError(f"unknown engine id {header['engine_id']}", offset)
    if not eng.classes:
        raise DecodeError(f"engine {eng.name!r} (id {eng.id}) has no instruction classes in {chip.name}", offset)
    start = offset + hsize
    length = header_length(header)
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
        extra["len"] = 0
    return eng, cls, extra, start, length


def scan_cmdbuf(chip, data):
    """cmd_hdr_t bytes -> the byte offset of every record (an array of int64), each checked as `decode_cmdbuf`
    checks it (same DecodeErrors), without unpacking any fields: a cheap first pass."""
    chip = _chip(chip)
    hdr_codec = codec_for(chip.header)
    offsets, offset = array("q"), 0
    while offset < len(data):
        _, _, _, start, length = frame_at(chip, data, offset, hdr_codec)
        offsets.append(offset)
        offset = start + length
    return offsets


def record_at(chip, data, offset, hdr_codec=None):
    """The Record of the cmd_hdr_t record at `offset` (see `frame_at`)."""
    eng, cls, extra, start, length = frame_at(chip, data, offset, hdr_codec)
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
        fields = codec_for(cls).unpack(data[start:start + length])
        records.append(make_record(chip, eng.name, cls, fields, None, offset, extra))
        offset = start + length
    return records


# ---------------------------------------------------------------------------- raw streams

def _rule_pad(rule, used):
    """Zero bytes the stream rule puts after `used` bytes of commands."""
    return (-used) % rule.pad_to if rule.pad_to else 0


def _padding(data, offset, pad_to):
    """Zero bytes at `offset` that pad a stream after its end command: up to the next multiple
    of pad_to, then whole zero blocks of pad_to bytes; 0 if they are not all zero."""
    n = (-offset) % pad_to
    if any(data[offset:offset + n]):
        return 0
    while offset + n + pad_to <= len(data) and not any(data[offset + n:offset + n + pad_to]):
        n += pad_to
    return n


def decode_stream(chip, engine, data):
    """One raw engine stream -> Records (stream = engine name), by the engine's StreamRule.

    Zero padding after an end command is padding wherever it appears, never a command: a
    stream made of several closed streams back to back (each padded) decodes to all their
    commands; the padding is kept on the end command (header `PAD`) for encode."""
    chip = _chip(chip)
    eng = chip.engine(engine)
    if not eng.classes:
        raise DecodeError(f"engine {engine!r} of {chip.name} has no instruction classes")
    rule, data, name = eng.stream, bytes(data), eng.name
    records, offset = [], 0
    where = f" in the {name} stream"
    while offset < len(data):
        rest = len(data) - offset
        ended = records and rule.end is not None and records[-1].kind == rule.end
        limit = max(rule.zero_tail, rule.pad_to) if ended else rule.zero_tail
        if rest <= limit and not any(data[offset:]):
            break
        if ended and rule.pad_to:
            skip = _padding(data, offset, rule.pad_to)
            if skip and offset + skip < len(data):      # padding, then the next stream's commands
                records[-1] = attrs.evolve(records[-1], header={**records[-1].header, PAD: skip})
                offset += skip
                continue
        cls = _classify(chip, eng, data, offset, offset, where)
        size = rule.slot or cls.nbytes
        if offset + size > len(data):
            what = f"{name} {cls.name}" if eng.selector else name
            raise DecodeError(f"truncated {what} command{where}: {rest} of {size} bytes", offset)
        if any(data[offset + cls.nbytes:offset + size]):
            raise DecodeError(f"{name} slot{where} has non-zero bytes after its {cls.nbytes}-byte command", offset)
        fields = codec_for(cls).unpack(data[offset:offset + cls.nbytes])
        records.append(make_record(chip, name, cls, fields, name, offset))
        offset += size
    pad = len(data) - offset
    if records and pad != _rule_pad(rule, offset):
        last = records[-1]
        records[-1] = attrs.evolve(last, header={**last.header, PAD: pad})
    return records


def frame_stream(rule, bodies, pad=None):
    """Command bytes of one engine, in order -> its raw stream by the StreamRule: each in its
    slot, then zero padding (`pad` bytes when given, else what the rule asks)."""
    out, used = [], 0
    for body in bodies:
        if rule.slot:
            body += bytes(rule.slot - len(body))
        out.append(body)
        used += len(body)
    out.append(bytes(_rule_pad(rule, used) if pad is None else pad))
    return b"".join(out)


def encode_stream(chip, engine, records):
    """Records of one engine -> its raw stream (slots, padding as the StreamRule says)."""
    chip = _chip(chip)
    eng = _engine(chip, engine)
    pad = records[-1].header.get(PAD) if records else None
    bodies = [pack(chip, r) for r in records]
    for i, r in enumerate(records[:-1]):            # padding inside the stream (decode_stream)
        if r.header.get(PAD):
            bodies[i] += bytes(r.header[PAD])
    return frame_stream(eng.stream, bodies, pad)


def encode_streams(chip, records):
    """Records (any order of engines) -> {engine: raw stream}, keeping each engine's order."""
    chip = _chip(chip)
    by_engine = {e.name: [] for e in chip.encoded_engines}
    for r in records:
        by_engine[chip.engine(r.engine).name].append(r)
    return {e: encode_stream(chip, e, rs) for e, rs in by_engine.items() if rs}


def merge_streams(chip, streams):
    """{engine: [Records]} -> one program order: an instruction comes after every instruction
    it waits for. Among the engines whose next instruction may go, the first in the chip's
    engine order goes first (bm1684x TIU before GDMA: the vendor's "sort TIU by cmd_id_dep,
    DMA by cmd_id, DMA first on ties"). Ids that never resolve keep stream order."""
    chip = _chip(chip)
    order = [e for e in chip.encoded_engines if streams.get(e.name)]
    heads = {e.name: 0 for e in order}
    done = {e.name: 0 for e in chip.encoded_engines}       # last own id emitted per engine
    out, total = [], sum(len(streams[e.name]) for e in order)
    while len(out) < total:
        live = [e for e in order if heads[e.name] < len(streams[e.name])]
        pick = next((e for e in live if all(streams[e.name][heads[e.name]].fields.get(field, 0) <= done[other]
                                            for other, field in e.wait_for)), live[0])
        rec = streams[pick.name][heads[pick.name]]
        heads[pick.name] += 1
        if pick.own_id:
            done[pick.name] = rec.fields.get(pick.own_id, 0)
        out.append(rec)
    return out


# ----------------------------------------------------------------------------- public API

def decode(chip, data):
    """bytes (a cmd_hdr_t buffer) or {engine: bytes} (raw streams) -> Records in program order.

    See API.md "Decoding, in Python". Raw streams are merged by their sync ids.
    """
    chip = _chip(chip)
    if isinstance(data, dict):
        streams = {}
        for engine, raw in data.items():
            if not isinstance(raw, (bytes, bytearray, memoryview)):
                raise DecodeError(f"raw {engine} stream must be bytes, not {type(raw).__name__}")
            try:
                name = chip.engine(engine).name
            except Exception:
                raise DecodeError(f"chip {chip.name} has no engine {engine!r} (engines: "
                                  f"{[e.name for e in chip.encoded_engines]})") from None
            streams[name] = decode_stream(chip, name, raw)
        return merge_streams(chip, streams)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DecodeError(f"data must be bytes or {{engine: bytes}}, not {type(data).__name__}")
    return decode_cmdbuf(chip, data)


def encode(chip, records, raw=False):
    """Records -> cmd_hdr_t bytes, or {engine: raw stream} with raw=True (API.md)."""
    chip = _chip(chip)
    records = list(records)
    return encode_streams(chip, records) if raw else encode_cmdbuf(chip, records)
