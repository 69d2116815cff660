"""What both stream decoders (framing.py, record by record; columns.py, in columns) build on:
the Record, an opaque engine's Record, the zero padding after a raw stream's end command, and
making Records (and their Fields) a block at a time.
"""
from collections import deque
from itertools import repeat

import attrs

PAD = "pad"      # Record.header key of a raw stream's last command: zero bytes after it
OPAQUE = "opaque"   # Record.cls of an opaque engine's bytes
# The most zero bytes a raw stream holds after one command (PAD): the vendor's streams end
# within their rule's pad_to bytes; this bound keeps a few bytes of text or of a hand-made
# Record from asking for gigabytes, and decode refuses longer zero runs, so that whatever
# decodes also encodes.
MAX_PAD = 1 << 24


def slot_setters(cls, names):
    """The __set__ of each named slot of a __slots__ class, in that order (for `made_by_columns`)."""
    return tuple(cls.__dict__[name].__set__ for name in names)


def made_by_columns(cls, setters, n, columns):
    """n new instances of a __slots__ class whose __init__ only stores its arguments, made a block
    at a time: each slot's values (one iterable of n per setter, from `slot_setters`) stored by a
    C loop per slot instead of an __init__ call per instance (Records here, their Fields)."""
    made = list(map(object.__new__, repeat(cls, n)))
    for setter, values in zip(setters, columns, strict=True):
        deque(map(setter, made, values), 0)
    return made


@attrs.frozen(eq=True, hash=False)
class Record:
    """One decoded (or to-be-encoded) instruction.

    engine: engine name; cls: its instruction class; kind: the instruction kind (vendor op
    name) or None when no kind matches; fields: {field: value}, every field of the class (decoded:
    a Fields, the mapping that reads them from the command's bytes, bmk/encoders/fields.py);
    stream: the raw stream it came from (None for a cmd_hdr_t buffer); offset: byte offset in
    that buffer or stream; header: cmd_hdr_t fields other than magic/len/engine_id that are
    non-zero (or `len` = 0 for a command that fits `len`; `magic` when it is one of the chip's
    legacy magics), or for a raw stream's last command {"pad": zero bytes after it} when that
    differs from the stream rule; core: the core whose streams it came from (several cores:
    `decode` of a list); data: an opaque engine's bytes (cls OPAQUE, no fields), else None.
    """

    engine: str
    cls: str
    kind: "str | None"
    fields: "Mapping[str, int]"
    stream: "str | None" = None
    offset: int = 0
    header: dict = attrs.field(factory=dict)
    core: int = 0
    data: "bytes | None" = None

    @property
    def name(self):
        """The mnemonic: '<engine>.<kind>' (vendor op names), '<engine>.raw' if no kind matches."""
        return f"{self.engine}.{self.kind or 'raw'}"


# Each attribute's slot setter, in Record's order: `records` fills a block of Records an
# attribute at a time (a C loop per attribute) instead of calling attrs' __init__ per Record,
# whose nine frozen-instance setattr calls cost more than the fields dict (issue 34 item 3).
_SETTERS = slot_setters(Record, [a.name for a in attrs.fields(Record)])


def records(n, columns):
    """n Records, their attributes given as one iterable of n values per attribute in Record's
    order (engine, cls, kind, fields, stream, offset, header, core, data): the Records
    `Record(*values)` makes (Record has no validator, converter or post-init hook to run;
    tests/codec/test_columns.py checks it), made a block at a time."""
    return made_by_columns(Record, _SETTERS, n, columns)


def opaque_record(chip, eng, data, stream=None, offset=0, header=None, core=0):
    """The Record of an opaque engine's bytes (a whole raw stream, or one cmd_hdr_t record)."""
    return Record(eng.name, OPAQUE, None, {}, stream, offset, dict(header or {}), core, bytes(data))


def rule_pad(rule, used):
    """Zero bytes the stream rule puts after `used` bytes of commands."""
    return (-used) % rule.pad_to if rule.pad_to else 0


def padding(data, offset, pad_to):
    """Zero bytes at `offset` that pad a stream after its end command: up to the next multiple
    of pad_to, then whole zero blocks of pad_to bytes; 0 if they are not all zero."""
    n = (-offset) % pad_to
    if any(data[offset:offset + n]):
        return 0
    while offset + n + pad_to <= len(data) and not any(data[offset + n:offset + n + pad_to]):
        n += pad_to
    return n
