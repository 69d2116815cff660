"""What a simulator run returns: timing per instruction, totals, overlap, races; trace export."""
import json
from collections.abc import Sequence

import attrs


@attrs.frozen
class InstructionRecord:
    """One executed instruction: where it was in the buffer and when it ran (in cycles)."""

    index: int          # position in the program (all engines)
    offset: int         # byte offset of its cmd_hdr_t, or inside its raw stream
    engine: str
    kind: str
    id: int             # its own sync id
    wait: tuple         # ((engine, id), ...) it waited for; empty when none
    start: int
    end: int
    stream: object = None   # the raw stream it came from (an engine name); None for cmd_hdr_t input

    @property
    def where(self):
        """'byte 24' (cmd_hdr_t) or 'stream tiu byte 24' (raw streams)."""
        return f"byte {self.offset}" if self.stream is None else f"stream {self.stream} byte {self.offset}"

    def to_dict(self):
        d = {"index": self.index, "offset": self.offset, "engine": self.engine, "kind": self.kind,
             "id": self.id, "wait": [list(w) for w in self.wait], "start": self.start, "end": self.end}
        if self.stream is not None:
            d["stream"] = self.stream
        return d


class Instructions(Sequence):
    """A run's InstructionRecords, in buffer order: a read-only sequence whose records are made
    when it is first read (a caller that wants totals or races only never pays for them).
    Equal to a tuple or list of the same records."""

    __slots__ = ("_columns", "_items")

    def __init__(self, records, kinds, owns, waits, start, end):
        self._columns = (records, kinds, owns, waits, start, end)
        self._items = None

    def _all(self):
        if self._items is None:
            records, kinds, owns, waits, start, end = self._columns
            self._items = tuple(InstructionRecord(i, r.offset, r.engine, kinds[i], owns[i],
                                                  tuple((o, k) for o, k, _ in waits[i]) if waits[i] else (),
                                                  start[i], end[i], getattr(r, "stream", None))
                                for i, r in enumerate(records))
            self._columns = None
        return self._items

    def __len__(self):
        return len(self._items) if self._items is not None else len(self._columns[0])

    def __getitem__(self, i):
        return self._all()[i]

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other):
        if isinstance(other, (Instructions, tuple, list)):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._all())

    def __repr__(self):
        return repr(self._all())


@attrs.frozen
class Race:
    """Two instructions the sync ids let run at the same time, touching common bytes, one writing.

    `space` is "lmem", "gmem" or the name of another memory space; [lo, hi) is the common byte
    range: offsets inside each lmem lane listed in `lanes`, or offsets in the space (gmem addresses).
    """

    first: int          # instruction index (buffer position), the earlier one
    second: int
    space: str
    lo: int
    hi: int
    lanes: tuple = ()
    kinds: tuple = ()   # ("write", "read") ... access kind of first, second
    origins: tuple = ()     # (first, second): where each came from, as text (Report.named), or ()

    def to_dict(self):
        d = {"first": self.first, "second": self.second, "space": self.space, "lo": self.lo, "hi": self.hi,
             "lanes": list(self.lanes), "kinds": list(self.kinds)}
        if self.origins:
            d["origins"] = list(self.origins)
        return d

    def __str__(self):
        where = f"lanes {_lanes_text(self.lanes)} offsets" if self.space == "lmem" else "addresses"
        text = (f"instructions {self.first} ({self.kinds[0]}) and {self.second} ({self.kinds[1]}) may run "
                f"at the same time and both touch {self.space} {where} [0x{self.lo:x}, 0x{self.hi:x})")
        if self.origins:
            text += f": {self.origins[0] or '?'} and {self.origins[1] or '?'}"
        return text


UNINITIALIZED, OVERWRITTEN = "uninitialized", "overwritten"


@attrs.frozen
class MemoryWarning:
    """A local-memory hazard of a run (bmk/sim/lmemcheck.py gives the exact rules).

    kind "uninitialized": instruction `index` reads local bytes nothing ever wrote (no
    instruction, no lmem_write*, since the Simulator was made or reset).
    kind "overwritten": instruction `index` reads a tensor that instruction `writer` wrote,
    partly overwritten meanwhile by instruction `clobber`, which also wrote outside it (a dead
    write onto a live tensor: the reader gets a mix of both).
    [lo, hi) are lane offsets on `lanes`: the bytes concerned (the first lane's range)."""

    kind: str
    index: int
    lanes: tuple
    lo: int
    hi: int
    writer: "int | None" = None
    clobber: "int | None" = None
    origins: tuple = ()     # text, as Report.named gives: (index, clobber, writer) or (index,)

    def to_dict(self):
        d = {"kind": self.kind, "index": self.index, "lanes": list(self.lanes), "lo": self.lo, "hi": self.hi}
        if self.kind == OVERWRITTEN:
            d.update(writer=self.writer, clobber=self.clobber)
        if self.origins:
            d["origins"] = list(self.origins)
        return d

    def __str__(self):
        o = self.origins or (None, None, None)
        at = lambda k, i: f"{i}" + (f" ({o[k]})" if len(o) > k and o[k] else "")     # noqa: E731
        where = f"lmem lanes {_lanes_text(self.lanes)} offsets [0x{self.lo:x}, 0x{self.hi:x})"
        if self.kind == UNINITIALIZED:
            return f"instruction {at(0, self.index)} reads {where}, never written"
        return (f"instruction {at(0, self.index)} reads the tensor instruction {at(2, self.writer)} wrote, but "
                f"instruction {at(1, self.clobber)} overwrote its {where} in between (and wrote outside it)")


def _lanes_text(lanes):
    if not lanes:
        return "-"
    if list(lanes) == list(range(lanes[0], lanes[-1] + 1)):
        return f"{lanes[0]}-{lanes[-1]}" if len(lanes) > 1 else f"{lanes[0]}"
    return ",".join(map(str, lanes))


@attrs.frozen
class Report:
    chip: str
    instructions: Sequence        # InstructionRecord, in buffer order (a tuple, or Instructions)
    total_cycles: int
    engine_busy: dict             # engine -> busy cycles
    overlap_cycles: int           # cycles in which at least two engines were busy
    races: tuple                  # Race
    races_truncated: bool = False
    pair_overlap: dict = attrs.field(factory=dict)   # (engine, engine) -> cycles both were busy
    origins: "tuple | None" = None    # per instruction: where it came from (Report.named)
    warnings: tuple = ()          # MemoryWarning: local-memory hazards (run(checks=True))

    def named(self, origins):
        """This report with each instruction's origin (bmk/origins.py: one per instruction in
        the order that ran, e.g. ctx.origins() for acquire_cmdbuf(), ctx.origins(streams=True)
        for acquire_streams(), or a sidecar's): races name the two calls and source lines,
        trace events carry them."""
        origins = tuple(origins)
        if len(origins) != len(self.instructions):
            raise ValueError(f"origins must give one per instruction ({len(self.instructions)}), not {len(origins)}")
        text = [None if o is None else str(o) for o in origins]
        races = tuple(attrs.evolve(r, origins=(text[r.first], text[r.second])) for r in self.races)
        warnings = tuple(attrs.evolve(w, origins=(text[w.index],) if w.kind == UNINITIALIZED else
                                      (text[w.index], text[w.clobber], text[w.writer])) for w in self.warnings)
        return attrs.evolve(self, races=races, origins=tuple(text), warnings=warnings)

    @property
    def serial_cycles(self):
        """What the same instructions would take one after another (sum of busy time)."""
        return sum(self.engine_busy.values())

    def to_dict(self):
        return {"chip": self.chip, "total_cycles": self.total_cycles, "engine_busy": dict(self.engine_busy),
                "overlap_cycles": self.overlap_cycles,
                "pair_overlap": [{"engines": list(k), "cycles": v} for k, v in self.pair_overlap.items()],
                "instruction_count": len(self.instructions),
                "races": [r.to_dict() for r in self.races], "races_truncated": self.races_truncated,
                "warnings": [w.to_dict() for w in self.warnings],
                "instructions": [i.to_dict() for i in self.instructions]}

    def __str__(self):
        """print(report): its summary (repr() still gives every field)."""
        return self.summary()

    def summary(self):
        busy = ", ".join(f"{e} {c}" for e, c in self.engine_busy.items())
        lines = [f"{len(self.instructions)} instructions, {self.total_cycles} cycles (busy: {busy}; "
                 f"overlap {self.overlap_cycles})"]
        lines += [f"race: {r}" for r in self.races]
        if self.races_truncated:
            lines.append("race: ... (more races not listed)")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def trace_events(self):
        """Chrome trace-event JSON objects (one 'X' event per instruction; 1 cycle = 1 us)."""
        engines = list(self.engine_busy)
        events = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": f"{self.chip} simulator"}}]
        for tid, e in enumerate(engines):
            events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid, "args": {"name": e}})
        for ins in self.instructions:
            events.append({"name": ins.kind, "cat": ins.engine, "ph": "X", "pid": 0,
                           "tid": engines.index(ins.engine), "ts": ins.start, "dur": ins.end - ins.start,
                           "args": {"index": ins.index, "offset": ins.offset, "id": ins.id,
                                    "wait": [f"{e} {i}" for e, i in ins.wait],
                                    **({} if ins.stream is None else {"stream": ins.stream}),
                                    **({} if not self.origins or self.origins[ins.index] is None
                                       else {"origin": self.origins[ins.index]})}})
        return events

    def write_trace(self, path):
        """Write the trace (Perfetto / chrome://tracing open it)."""
        with open(path, "w") as fh:
            json.dump({"traceEvents": self.trace_events(), "displayTimeUnit": "ns",
                       "otherData": {"chip": self.chip, "time_unit": "1 us = 1 cycle"}}, fh)
