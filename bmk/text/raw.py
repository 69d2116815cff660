"""Raw per-engine streams as a listing in flat memory (issue 24 item 2): columns, not Records.

The text tools read raw streams of any length: each stream is scanned once (framing.StreamScan:
each command's offset and class, the padding the Records would keep) into a few arrays per
command, its own id and wait values read at their bit positions (the ChipSpec's fields) are
checked (`check_ids`) and merged into program order (merge.merge_order, the rule
merge_streams applies to Records), and then dropped. `RawRecords` is that order: per command
its stream and index (6 bytes), each stream its offsets and class numbers (5-9 bytes a
command) over the stream's bytes, as given or read from the file a window at a time
(`FileBytes`): a Record is made when one is asked for, and a pass over a listing (bmk-disasm,
bmk-diff's keys: `frames`) holds one at a time.

Files are read with pread, not memory-mapped: a mapped file that shrinks while it is read (another
process rewriting it) kills the reader with SIGBUS, which Python cannot catch; a short read is a
DecodeError naming the file and the byte.
"""
import os
from array import array
from collections.abc import Sequence

import attrs

from bmk.encoders.codec import codec_for
from bmk.encoders.framing import PAD, StreamScan, make_record, opaque_record
from bmk.encoders.merge import MessageLog, Queue, merge_order
from bmk.errors import DecodeError

WINDOW = 1 << 16            # bytes a FileBytes reads at once (and the size up to which a file is simply read)


def read_stream(path):
    """A raw stream file's bytes: a large regular file as FileBytes (read a window at a time),
    else its bytes."""
    f = open(path, "rb")
    try:
        size = os.fstat(f.fileno()).st_size
        if size > WINDOW and os.path.isfile(path):
            return FileBytes(f, str(path), size)
        with f:
            return f.read()
    except BaseException:
        f.close()
        raise


class FileBytes:
    """The first `size` bytes of an open file, read on demand (os.pread) one window at a time:
    indexing and slicing give ints and bytes as `bytes` does. The size is the file's when opened;
    if the file then shrinks, a read that comes short is a DecodeError naming the file and the
    byte, where a memory map would have died of SIGBUS."""

    def __init__(self, f, path, size):
        self.f, self.fd, self.path, self.size = f, f.fileno(), path, size
        self.lo, self.buf = 0, b""

    def __len__(self):
        return self.size

    def _read(self, start, stop):
        got = os.pread(self.fd, stop - start, start)
        if len(got) < stop - start:
            raise DecodeError(f"{self.path} changed while it was read: it was {self.size} bytes when opened "
                              f"and now ends at byte {start + len(got)}", start + len(got))
        return got

    def _window(self, start, stop):
        """Make bytes [start, stop) part of the window (stop - start <= WINDOW)."""
        if not (self.lo <= start and stop <= self.lo + len(self.buf)):
            self.lo = start
            self.buf = self._read(start, min(self.size, start + max(WINDOW, stop - start)))

    def __getitem__(self, i):
        lo, buf = self.lo, self.buf
        if i.__class__ is slice:            # the hot path: a command inside the window
            start, stop = i.start, i.stop
            if start is not None and stop is not None and i.step is None and lo <= start and stop <= lo + len(buf):
                return buf[start - lo:stop - lo]
            start, stop, step = i.indices(self.size)
            if step != 1:
                raise ValueError("FileBytes slices step 1")
            if stop <= start:
                return b""
            if stop - start > WINDOW:
                return self._read(start, stop)
            self._window(start, stop)
            return self.buf[start - self.lo:stop - self.lo]
        if lo <= i < lo + len(buf):
            return buf[i - lo]
        n = range(self.size)[i]
        self._window(n, n + 1)
        return self.buf[n - self.lo]

    def release(self):
        self.lo, self.buf = 0, b""

    def close(self):
        self.release()
        self.f.close()


def release(data):
    """Drop what is held of a file's stream (its window) after a pass over it."""
    if isinstance(data, FileBytes):
        data.release()


class RawStream:
    """One engine's raw stream as columns: per command its offset and class number (in the
    engine's classes), `pads` {index: PAD}; an opaque engine's stream is its one Record."""

    def __init__(self, chip, eng, data, core=0):
        self.chip, self.eng, self.data, self.core = chip, eng, data, core
        self.offsets = array("I" if len(data) < 1 << 32 else "q")
        self.classes = array("B" if len(eng.classes) < 256 else "H")
        self.pads = {}
        self.opaque = opaque_record(chip, eng, data, eng.name, 0, None, core) if eng.opaque and data else None

    def __len__(self):
        return 1 if self.opaque is not None else len(self.offsets)

    def scan(self):
        """Read the commands (StreamScan: its DecodeErrors) -> Queue of their sync-id columns."""
        eng, data = self.eng, self.data
        ids = "i" if max((f.width for c in eng.classes for f in c.fields
                          if f.name == eng.own_id or f.name in {n for _, n in eng.wait_for}), default=0) < 32 else "q"
        explicit = eng.own_id and not eng.implicit_ids
        own = array(ids) if explicit else None
        waits = [array(ids) for _ in eng.wait_for]
        if eng.opaque:                  # no layout, no ids
            return Queue(self.core, eng, len(self), None, [], ({}, {}, {}))
        if not eng.classes:
            raise DecodeError(f"engine {eng.name!r} of chip {self.chip.name} has no instruction classes")
        number = {c.name: k for k, c in enumerate(eng.classes)}
        positions = {}                  # class -> (class number, [own id field or None, wait fields...])
        names = [eng.own_id if explicit else None] + [f for _, f in eng.wait_for]
        log = MessageLog(eng.messages) if eng.messages is not None else None
        scan = StreamScan(self.chip, eng, data)
        offsets, classes = self.offsets, self.classes
        for offset, cls in scan:
            got = positions.get(cls.name)
            if got is None:
                got = positions[cls.name] = (number[cls.name], [cls.by_name.get(n) if n else None for n in names])
            k, fields = got
            offsets.append(offset)
            classes.append(k)
            word = int.from_bytes(data[offset:offset + cls.nbytes], "little")
            if own is not None:
                f = fields[0]
                own.append(-1 if f is None else (word >> f.bit) & f.max)
            for w, f in zip(waits, fields[1:]):
                w.append(-1 if f is None else (word >> f.bit) & f.max)
            if log is not None:
                log.add(len(offsets) - 1, self.record(len(offsets) - 1))
        self.pads = dict(scan.pads)
        release(data)
        msgs = log.result() if log is not None else ({}, {}, {})
        return Queue(self.core, eng, len(offsets), own, waits, msgs)

    def body(self, j):
        """(class, command bytes) of command j."""
        cls = self.eng.classes[self.classes[j]]
        off = self.offsets[j]
        return cls, self.data[off:off + cls.nbytes]

    def record(self, j):
        """The Record of command j, as decode_stream makes it."""
        if self.opaque is not None:
            return self.opaque
        cls, body = self.body(j)
        name = self.eng.name
        rec = make_record(self.chip, name, cls, codec_for(cls).unpack(body), name, self.offsets[j],
                          {PAD: self.pads[j]} if j in self.pads else None)
        return attrs.evolve(rec, core=self.core) if self.core else rec

    def where_width(self):
        """Characters of the widest location 'engine+0x...' of its commands."""
        last = self.offsets[-1] if len(self.offsets) else 0
        return len(f"{self.eng.name}+{last:#x}")


def check_ids(chip, stream, own, path):
    """A raw stream's own ids (`own`: its column, -1 where a class has none) must count up by one
    (or restart at 1, where the scheduler starts a new chunk: bmk/scheduler.py): a stream of
    another engine read as this one decodes, but into ids that are no sequence, so this is where
    a swapped --raw file is caught."""
    eng = stream.eng
    if own is None or stream.opaque is not None:
        return
    prev = None
    for n, v in enumerate(own):
        if v < 0:
            continue
        if prev is not None and v != prev + 1 and v != 1:
            others = [e.name for e in chip.stream_engines if e.name != eng.name and not e.opaque]
            hint = f"; is it a {' or '.join(others)} stream given as {eng.name}?" if others else ""
            raise DecodeError(f"{path}: {eng.name} stream byte {stream.offsets[n]}: {eng.name} command {n} has id {v} "
                              f"after id {prev}, but a stream's ids count up by one{hint}", None)
        prev = v


class RawRecords(Sequence):
    """The Records of one core's raw streams in program order, made when asked for (module
    docstring). `streams`: the RawStreams; `order_q`, `order_j`: per command its stream and index."""

    def __init__(self, chip, streams, order_q, order_j):
        self.chip, self.streams, self.order_q, self.order_j = chip, streams, order_q, order_j

    def __len__(self):
        return len(self.order_q)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        i = range(len(self))[i]
        return self.streams[self.order_q[i]].record(self.order_j[i])

    def _walk(self):
        """(stream, index) of each command in program order (a file's stream holds one window of
        its bytes throughout: FileBytes), the windows dropped at the end."""
        streams = self.streams
        for q, j in zip(self.order_q, self.order_j):
            yield streams[q], j
        self.release()

    def __iter__(self):
        for s, j in self._walk():
            yield s.record(j)

    def frames(self):
        """(core, Engine, class or None, command bytes, header) of each command in program order,
        no Record made (None class: an opaque engine's bytes; header: the Record's)."""
        for s, j in self._walk():
            if s.opaque is not None:
                yield s.core, s.eng, None, s.opaque.data, s.opaque.header
                continue
            cls, body = s.body(j)
            yield s.core, s.eng, cls, body, ({PAD: s.pads[j]} if j in s.pads else {})

    def where_width(self):
        """Characters of the widest location of its records (asm.iter_disassembly's column)."""
        return max((s.where_width() for s in self.streams), default=0)

    def release(self):
        for s in self.streams:
            release(s.data)

    def __eq__(self, other):
        if isinstance(other, (list, tuple, Sequence)) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"<{len(self)} {self.chip.name} records of raw streams>"


def stream_error(path, engine, e):
    """A DecodeError of one raw stream, re-raised naming the file and the stream's byte offset."""
    msg = str(e)
    if e.offset is not None:
        msg = msg.removeprefix(f"byte {e.offset}: ")
    msg = msg.replace(f" in the {engine} stream", "")           # said once, up front
    where = f"{engine} stream byte {e.offset}" if e.offset is not None else f"{engine} stream"
    err = DecodeError(f"{path}: {where}: {msg}")
    err.offset = e.offset
    return err


def load_streams(chip, streams, paths):
    """{engine name: bytes or FileBytes} (one core) -> RawRecords in program order. Errors name
    the stream's file (`paths[engine]`) and the byte offset in that stream (as decode_raw's)."""
    raw = {}
    for name, data in streams.items():
        eng = chip.engine(name)
        s = RawStream(chip, eng, data)
        try:
            queue = s.scan()
        except DecodeError as e:
            raise stream_error(paths[name], name, e) from None
        check_ids(chip, s, queue.own, paths[name])
        raw[name] = (s, queue)
    ordered = [raw[e.name] for e in chip.encoded_engines if e.name in raw and len(raw[e.name][0])] + \
        [raw[e.name] for e in chip.engines if e.opaque and e.name in raw and len(raw[e.name][0])]
    if not ordered:
        return RawRecords(chip, [], array("H"), array("I"))
    where = {(0, s.eng.name): q for q, (s, _) in enumerate(ordered)}
    order_q, order_j = merge_order([queue for _, queue in ordered], where)
    return RawRecords(chip, [s for s, _ in ordered], order_q, order_j)
