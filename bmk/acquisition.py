"""Acquisition: every descriptor since register/reset with its sync ids assigned now, as one
cmd_hdr_t buffer (acquire_cmdbuf) or as raw per-engine streams (acquire_streams). Sync ids are
assigned after the chip's end commands have been appended to a fork of the scheduler, so
acquiring twice gives the same bytes."""
import io
import itertools

import attrs
import numpy as np

from bmk.emission import _sync_fields
from bmk.encoders.framing import Streams, frame_stream
from bmk.errors import ArgumentError, ScheduleError

PATCH_BLOCK = 1 << 14        # descriptors whose sync ids are written at once (Acquisition._filled)


class _Concat:
    """Two lists read as one (len, index, iteration), without copying them."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __len__(self):
        return len(self.first) + len(self.second)

    def __getitem__(self, i):
        n = len(self.first)
        return self.first[i] if i < n else self.second[i - n]

    def __iter__(self):
        return itertools.chain(self.first, self.second)


def _write_fields(out, at, fields):
    """OR each (bit, width, values) of `fields` (bits from the record's start) into the records
    starting at byte offsets `at` of the uint8 array `out`, whose bits there are zero.

    When every record starts on an 8-byte boundary, fields inside one 64-bit word of the record
    go in together through a uint64 view (one gather and one scatter per word); the others,
    byte by byte."""
    words = {}
    if len(out) % 8 == 0 and not (at % 8).any():
        out64, rest = out.view("<u8"), []
        for f in fields:
            if f[0] // 64 == (f[0] + f[1] - 1) // 64:
                words.setdefault(f[0] // 64, []).append(f)
            else:
                rest.append(f)
        fields = rest
        base = at // 8
        for w, group in words.items():
            word = np.zeros(len(at), "<u8")
            for bit, _, values in group:
                word |= np.asarray(values, "<u8") << np.uint64(bit - 64 * w)
            out64[base + w] |= word
    for bit, width, values in fields:
        lo = bit // 8
        span = -(-(bit + width) // 8) - lo
        word = np.asarray(values, "<u8") << np.uint64(bit - 8 * lo)
        where = at[:, None] + np.arange(lo, lo + span)
        out[where] |= word.view(np.uint8).reshape(len(at), 8)[:, :span]


class Acquisition:
    """The acquisition half of a Program (bmk/program.py holds the state it reads)."""

    def _assigned(self):
        """(codes, own, waits, n, records): sync ids of every descriptor since register/reset and
        of the chip's end commands after them (records: all their cmd_hdr_t + command bytes, a
        view of the program's and the end commands' lists).

        The end commands are added to a fork of the scheduler, so the recorded program does
        not change. Like the vendor's, they take the next id of their engine and wait for
        nothing; they carry the enable flags only where the stream rule says so."""
        sched = self._sched
        if self._end:
            sched = sched.fork()
            sched.extend(self._end_codes)
        codes, own, waits = sched.assign_arrays(self._inherit, self._max_id)
        return codes, own, waits, len(self._records), _Concat(self._records, self._end)

    def _filled(self, assigned, index, records, lengths):
        """`records` (descriptors `index` of `assigned`, None: all of them; `lengths` theirs) back
        to back, each with its sync ids, and their offsets. The records are copied once into the
        result; the sync fields are then ORed in with numpy, by blocks and per engine, at bit
        positions from the spec."""
        codes, own, waits, n, _ = assigned
        total = len(lengths)
        offsets = np.cumsum(lengths)
        offsets -= lengths
        del lengths
        buf = io.BytesIO()       # grows in place (realloc); getvalue() hands over its buffer
        buf.writelines(records)
        hsize = self.chip.header.nbytes
        plans = [(code, engine, [8 * hsize + f.bit for f in _sync_fields(engine)], _sync_fields(engine),
                  [self._code[o] for o, _ in engine.wait_for]) for code, engine in enumerate(self._engines.values())]
        with buf.getbuffer() as view:
            out = np.frombuffer(view, np.uint8)
            for lo in range(0, total, PATCH_BLOCK):     # by blocks: the temporaries stay small
                block = None if index is None else index[lo:lo + PATCH_BLOCK]
                block_codes = codes[lo:lo + PATCH_BLOCK] if index is None else codes[block]
                for code, engine, bits, sync, others in plans:
                    at = np.flatnonzero(block_codes == code)
                    if not len(at):
                        continue
                    where = lo + at if index is None else block[at]
                    values = self._sync_values(engine, where >= n, own[where], [waits[o][where] for o in others])
                    _write_fields(out, offsets[lo + at], [(bit, f.width, v) for bit, f, v in zip(bits, sync, values)])
            del out
        return offsets, buf.getvalue()      # the BytesIO's own buffer: no copy

    def _lengths_of(self, codes, records):
        if self._lengths is not None:       # every engine's commands have one length
            return self._lengths[codes]
        return np.fromiter(map(len, records), np.int64, len(records))

    def _sync_values(self, engine, end, own, waits):
        """The values of the engine's sync fields (in _sync_fields order) for its commands; `end`
        marks the end commands: their enable flags follow the stream rule, they wait for nothing."""
        on = 1 if engine.stream.end_enable else 0
        enable = [np.where(end, value * on, value) for _, value in engine.enable]
        return enable + [own] + [np.where(end, 0, w) for w in waits]

    # BMKernel (seed 002 3.3) hands over "the instructions generated so far" at any time;
    # OKKernel's and TPU-Kernel's contexts set this False: their commands leave only in serial
    # mode (seed 003 okk_poll: "the parallel mode must be inactive").
    ACQUIRE_IN_PARALLEL = True

    def _acquirable(self, call):
        if self._cleaned:
            raise ArgumentError(f"{call}: the context was cleaned up (cleanup); nothing is left to acquire")
        if not self.ACQUIRE_IN_PARALLEL and self.in_parallel:
            raise ScheduleError(f"{call}: the parallel section must be closed first (parallel_end): the "
                                "commands are handed over only in serial mode")

    def acquire_cmdbuf(self):
        """Every descriptor since register/reset, framed with cmd_hdr_t, sync ids assigned now."""
        self._acquirable("acquire_cmdbuf")
        assigned = self._assigned()
        codes, records = assigned[0], assigned[4]
        return self._filled(assigned, None, records, self._lengths_of(codes, records))[1]

    def acquire_streams(self):
        """{engine: bytes}: the same commands without headers, per engine in program order,
        laid out by the chip's stream rule (slots, end command, zero padding: API.md). A
        `bmk.encoders.Streams` dict, which names its chip (`.chip`) for the tools that take it.

        Per engine: its records back to back with their sync ids (as for acquire_cmdbuf); when
        they all have one length, the headers are cut away as one column block of a 2-D view."""
        self._acquirable("acquire_streams")
        assigned = self._assigned()
        codes, records = assigned[0], assigned[4]
        hsize = self.chip.header.nbytes
        streams = Streams(chip=self.chip.name)
        for code, (name, engine) in enumerate(self._engines.items()):
            index = np.flatnonzero(codes == code)
            mine = [records[i] for i in index.tolist()]
            lengths = np.fromiter(map(len, mine), np.int64, len(mine))
            offsets, data = self._filled(assigned, index, mine, lengths)
            rule = engine.stream
            if len(mine) and (lengths == lengths[0]).all() and rule.slot in (0, lengths[0] - hsize):
                body = np.frombuffer(data, np.uint8).reshape(len(mine), -1)[:, hsize:].tobytes()
                streams[name] = frame_stream(attrs.evolve(rule, slot=0), [body])   # already in its slots
            else:
                bounds = offsets.tolist() + [len(data)]
                streams[name] = frame_stream(rule, [data[bounds[i] + hsize:bounds[i + 1]] for i in range(len(mine))])
        return streams
