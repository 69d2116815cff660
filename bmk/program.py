"""What every chip's Context shares: the op table, the one emission path, ordering, acquisition.

A chip's Context is a `Program` subclass whose class attribute `OPS` is its op table: one
`OpRow` per API function, naming the op record class, the checks function, the lowering
function and the call style. The subclass gets one generated method per row (and per alias),
whose docstring cites the seed. Every call runs one path:

    row.check(ctx, record) -> row.lower(chip, record) -> pack (encoders) -> schedule (scheduler)

and nothing is recorded until every step has succeeded, so a failed call changes nothing.
Sync ids are assigned at acquisition, after the chip's end commands (`END_COMMANDS`) have
been appended to a copy of the program, so acquiring twice gives the same bytes.
"""
import contextlib
import inspect
import itertools
import operator
from collections.abc import Callable

import attrs

from bmk.encoders.codec import Patcher, codec_for
from bmk.encoders.framing import class_of, encode_header, frame_stream
from bmk.errors import ArgumentError, CmdbufOverflowError, EncodeError, ScheduleError, must
from bmk.scheduler import Scheduler
from bmk.util import is_int, plain

FIELDS = "fields"            # keyword fields of the C parameter struct, or one record (tpu_*)
POSITIONAL = "positional"    # the C function's arguments, positional or by name (gdma_*)


@attrs.frozen
class OpRow:
    """One API function of a chip: one row of its op table."""

    name: str                   # the method name: the C name without the chip prefix
    record: type                # the op record class the arguments become
    check: Callable             # check(ctx, record): raises ArgumentError, records nothing
    lower: Callable             # lower(chip, record) -> ((engine, {field: value}), ...)
    c_name: str                 # the C name, e.g. "bmk1880_tpu_mul"
    seed: str                   # the seed section that specifies it, e.g. "4.19"
    doc: str = ""               # one line for the docstring, after the citation
    call: str = FIELDS          # FIELDS or POSITIONAL
    kinds: tuple = ()           # the instruction kinds ("engine.kind") the lowering may emit
    aliases: tuple = ()         # other spellings of the seed, same method
    handle: bool = True         # False: the call returns None instead of an Op

    @property
    def docstring(self):
        return f"{self.c_name} (seed {self.seed}): {self.doc}" if self.doc else f"{self.c_name} (seed {self.seed})."

    @property
    def names(self):
        return (self.name, *self.aliases)


class Op:
    """The handle of one API call: the span [start, stop) of the descriptors it emitted.

    `first` / `last` give its first and last descriptor on each engine; `index` is its last
    descriptor overall (what a cvikernel v2 bmk1880_op_t names)."""

    __slots__ = ("context", "generation", "call", "start", "stop")

    def __init__(self, context, generation, call, start, stop):
        self.context, self.generation, self.call, self.start, self.stop = context, generation, call, start, stop

    @property
    def index(self):
        return self.stop - 1

    def _ends(self):
        engine_of = self.context._sched.engine_of
        first, last = {}, {}
        for i in range(self.start, self.stop):
            first.setdefault(engine_of[i], i)
            last[engine_of[i]] = i
        return first, last

    @property
    def first(self):
        return self._ends()[0]

    @property
    def last(self):
        return self._ends()[1]

    def __repr__(self):
        return f"<Op {self.call} #{self.index}>"


# -- dependency policies: which descriptor links add_dependency(before, after) makes -------------
def last_to_first(before, after):
    """The general rule: before's last descriptor on each engine precedes after's first
    descriptor on each engine, so every descriptor of `after` waits for all of `before`."""
    last, first = before.last, after.first
    return [(b, a) for b in last.values() for a in first.values()]


def last_to_last(before, after):
    """cvikernel v2's rule: an op is its last descriptor, and only those two are linked."""
    return [(before.index, after.index)]


# -- generated API methods --------------------------------------------------------------------------
_BY_NAME = object()     # marks the memo key of a positional-style call that used keywords


def _record_error(row, e):
    return ArgumentError(f"{row.name}: {e}")


def _fields_method(row):
    name, record_class = row.name, row.record

    def make(fields):
        try:
            return record_class(**fields)
        except (TypeError, ValueError) as e:
            raise _record_error(row, e) from None

    def method(self, p=None, /, **fields):
        if p is None:
            fields = {k: plain(v) for k, v in fields.items()}
            return self._emit(row, (name, *fields.items(), *map(type, fields.values())), make, fields)
        if fields:
            raise ArgumentError(f"{name}: pass either one {record_class.__name__} or keyword fields, not both")
        if not isinstance(p, record_class):
            raise ArgumentError(must(name, "p", f"a {record_class.__name__}", p))
        values = attrs.astuple(p, recurse=False)
        if any(plain(v) is not v for v in values):
            p = make({a.name: plain(v) for a, v in zip(attrs.fields(record_class), values)})
            values = attrs.astuple(p, recurse=False)
        return self._emit(row, (name, *values, *map(type, values)), _same, p)
    return method


def _same(record):
    return record


def _positional_method(row):
    name, record_class = row.name, row.record

    def make(arguments):
        args, kwargs = arguments
        try:
            return record_class(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise _record_error(row, e) from None

    def method(self, *args, **kwargs):
        args, kwargs = tuple(map(plain, args)), {k: plain(v) for k, v in kwargs.items()}
        if kwargs:
            key = (name, _BY_NAME, args, *kwargs.items(), *map(type, args), *map(type, kwargs.values()))
        else:
            key = (name, *args, *map(type, args))
        return self._emit(row, key, make, (args, kwargs))
    # help() shows the C arguments (the record's fields) rather than *args.
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += list(inspect.signature(record_class).parameters.values())
    method.__signature__ = inspect.Signature(params)
    return method


def make_method(cls, row):
    """The method of one op-table row."""
    method = (_positional_method if row.call == POSITIONAL else _fields_method)(row)
    if not row.handle:
        emit = method

        def method(self, *args, **kwargs):
            emit(self, *args, **kwargs)
            return None
        method.__signature__ = inspect.signature(emit)
    method.__name__ = row.name
    method.__qualname__ = f"{cls.__name__}.{row.name}"
    method.__doc__ = row.docstring
    method.op_row = row
    return method


def encoded_engines(chip):
    """The engines that have instruction classes, in spec order."""
    return {e.name: e for e in chip.encoded_engines}


def _sync_plan(engine):
    """(Patcher of the engine's sync fields, enable values, engines waited for).

    Sync fields sit at the same bits in every class that has them (the loader checks), so
    one Patcher, built on a class that has them all, serves every class of the engine."""
    names = [f for f, _ in engine.enable] + [engine.own_id] + [f for _, f in engine.wait_for]
    holder = next(c for c in engine.classes if all(n in c.by_name for n in names))
    return (Patcher(codec_for(holder), names), tuple(v for _, v in engine.enable),
            tuple(other for other, _ in engine.wait_for))


class _Codecs(dict):
    """engine -> pack(fields): the only class's codec, or the class the selector fields pick."""

    def __init__(self, chip):
        super().__init__()
        for name, e in encoded_engines(chip).items():
            if e.format is not None:
                self[name] = codec_for(e.format)
            else:
                self[name] = _MultiClassCodec(chip, name)


class _MultiClassCodec:
    def __init__(self, chip, engine):
        self.chip, self.engine = chip, engine

    def pack(self, fields):
        return codec_for(class_of(self.chip, self.engine, fields)).pack(fields)


class Program:
    """A chip's command buffer under construction: the shared half of every chip's Context.

    Subclasses set `OPS` (the op table), and may set `END_COMMANDS` (rows `(engine, {field:
    value})` appended at acquisition), `dependency_links` (a policy above) and `REGISTER`
    (the call name that errors of the constructor name)."""

    OPS = ()
    END_COMMANDS = ()
    REGISTER = "register"
    dependency_links = staticmethod(last_to_first)
    # The system API this class provides (module-level names of the global-context style).
    SYSTEM_CALLS = ("parallel_enable", "parallel_disable", "create_streams", "set_stream", "destroy_streams",
                    "add_dependency", "acquire_cmdbuf", "acquire_streams", "reset", "cleanup")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for row in cls.__dict__.get("OPS", ()):
            method = make_method(cls, row)
            for name in row.names:
                if name in cls.__dict__:
                    raise TypeError(f"{cls.__name__}.{name} is both an op-table row and a method")
                setattr(cls, name, method)

    def __init__(self, chip, cmdbuf_size):
        if not is_int(cmdbuf_size) or cmdbuf_size < 0:
            raise ArgumentError(must(self.REGISTER, "cmdbuf_size", "a non-negative integer", cmdbuf_size))
        self.chip = chip
        self.cmdbuf_size = int(cmdbuf_size)
        self._engines = encoded_engines(chip)
        self._codecs = _Codecs(chip)
        # cmd_hdr_t per (engine, command length): classes of one engine differ in length.
        self._headers = {(name, c.nbytes): encode_header(chip, e, c.nbytes)
                         for name, e in self._engines.items() for c in e.classes}
        # Per engine: the sync-id fields (enable flags, own id, waits) written at acquisition.
        self._sync_plan = {name: _sync_plan(e) for name, e in self._engines.items()}
        self._max_id = {name: e.id_max for name, e in self._engines.items()}
        self._inherit = tuple(name for name, e in self._engines.items() if e.inherit_wait)
        ends = self.END_COMMANDS or tuple((name, e.end_command()[1]) for name, e in self._engines.items()
                                          if e.end_command() is not None)
        self._end, self._end_size = self._pack("end command", ends)
        self._cleaned = False
        self._generation = 0
        self._start()

    def _start(self):
        self._bodies = []         # header + packed descriptor (Patcher-prepared, no sync ids), in order
        self._nbytes = self._end_size
        self._sched = Scheduler()
        self._lowered = {}        # (call, arguments, their types) -> (((engine, body), ...), size)
        self._generation += 1

    # -- the one path of every API call ------------------------------------------------------------
    def _emit(self, row, key, make, arguments):
        """Check, lower, pack, then record.

        Lowering is a pure function of the call's arguments, so its packed result is memoized
        per context under `key`: the call name, its arguments and their types (1 == 1.0 ==
        True, but only some of them pass the checks). An unhashable argument skips the memo.
        """
        if self._cleaned:
            raise ArgumentError(f"{row.name}: the context was cleaned up (cleanup)")
        try:
            lowered = self._lowered.get(key)
        except TypeError:
            lowered = key = None
        if lowered is None:
            record = make(arguments)
            row.check(self, record)
            lowered = self._pack(row.name, tuple(row.lower(self.chip, record)))
            if key is not None:
                self._lowered[key] = lowered
        descriptors, size = lowered
        nbytes = self._nbytes + size
        if nbytes > self.cmdbuf_size:
            raise CmdbufOverflowError(f"{row.name}: the command buffer would grow to {nbytes} "
                                      f"bytes, past cmdbuf_size {self.cmdbuf_size}")
        add, bodies = self._sched.add, self._bodies
        start = len(bodies)
        for engine, prepared in descriptors:
            add(engine)
            bodies.append(prepared)
        self._nbytes = nbytes
        return Op(self, self._generation, row.name, start, len(bodies))

    def _pack(self, call, descriptors):
        """((engine, fields), ...) -> (((engine, prepared header + body), ...), their size)."""
        try:
            packed = [(engine, self._codecs[engine].pack(fields)) for engine, fields in descriptors]
        except EncodeError as e:
            # numpy integer scalars are integers to the API but not to bitstruct: retry as ints.
            if not any(_is_foreign_int(v) for _, fields in descriptors for v in fields.values()):
                raise ArgumentError(f"{call}: the arguments do not fit the {self.chip.name} encoding: {e}") from None
            return self._pack(call, [(engine, {k: operator.index(v) if _is_foreign_int(v) else v
                                               for k, v in fields.items()}) for engine, fields in descriptors])
        headers = self._headers
        size = sum(len(headers[engine, len(body)]) + len(body) for engine, body in packed)
        return tuple((engine, self._sync_plan[engine][0].prepare(body, headers[engine, len(body)]))
                     for engine, body in packed), size

    # -- ordering (the seed's system API) ------------------------------------------------------------
    def parallel_enable(self):
        """Descriptors issued until parallel_disable need not wait for one another. Groups
        open only from serial mode (no nesting, not inside streams): else ScheduleError."""
        self._sched.parallel_enable()

    def parallel_disable(self):
        """Back to serial order; ScheduleError when no group is open."""
        self._sched.parallel_disable()

    @contextlib.contextmanager
    def parallel(self):
        """`with ctx.parallel(): ...` is parallel_enable() ... parallel_disable()."""
        self.parallel_enable()
        try:
            yield self
        finally:
            self.parallel_disable()

    def create_streams(self, nr_streams):
        """`nr_streams` independent streams, each serial; set_stream selects one."""
        self._sched.create_streams(nr_streams)

    def set_stream(self, i):
        """Issue the next calls on stream `i`."""
        self._sched.set_stream(i)

    def destroy_streams(self):
        """Back to serial order after the streams."""
        self._sched.destroy_streams()

    def add_dependency(self, before, after):
        """`before` must finish before `after` starts (links chosen by `dependency_links`)."""
        for name, op in (("before", before), ("after", after)):
            if not isinstance(op, Op):
                raise ScheduleError(must("add_dependency", name, "an Op returned by a computation call", op))
            if op.context is not self:
                raise ScheduleError(f"add_dependency: {name} must be an Op of this context, not of another one")
            if op.generation != self._generation:
                raise ScheduleError(f"add_dependency: {name} must be an Op issued since the last reset, "
                                    f"not {op!r} from before it")
        if before.start >= after.start:
            raise ScheduleError(f"add_dependency: before ({before!r}) must be issued earlier than after ({after!r})")
        for b, a in self.dependency_links(before, after):
            self._sched.link(b, a)

    # -- acquisition -----------------------------------------------------------------------------------
    def _filled(self):
        """(engines, records): each descriptor's engine, and its header + descriptor with its
        sync ids, for the program followed by the chip's end commands.

        The end commands are added to a fork of the scheduler, so the recorded program does
        not change. Like the vendor's, they take the next id of their engine and wait for
        nothing; they carry the enable flags only where the stream rule says so."""
        sched, bodies = self._sched, self._bodies
        n = len(bodies)
        if self._end:
            sched = sched.fork()
            for engine, _ in self._end:
                sched.add(engine)
            bodies = itertools.chain(bodies, (prepared for _, prepared in self._end))
        own, waits = sched.assign(self._inherit, self._max_id)
        plans = self._sync_plan
        records = []
        for i, (engine, prepared, own_id, wait) in enumerate(zip(sched.engine_of, bodies, own, waits)):
            patch, enable, others = plans[engine]
            if i >= n:       # an end command
                on = self._engines[engine].stream.end_enable
                values = (enable if on else (0,) * len(enable)) + (own_id,) + (0,) * len(others)
            else:
                values = enable + (own_id,) + (tuple([wait.get(o, 0) for o in others]) if wait else (0,) * len(others))
            records.append(patch.fill(prepared, values))
        return sched.engine_of, records

    def acquire_cmdbuf(self):
        """Every descriptor since register/reset, framed with cmd_hdr_t, sync ids assigned now."""
        return b"".join(self._filled()[1])

    def acquire_streams(self):
        """{engine: bytes}: the same commands without headers, per engine in program order,
        laid out by the chip's stream rule (slots, end command, zero padding: API.md)."""
        hsize = self.chip.header.nbytes
        streams = {engine: [] for engine in self._engines}
        for engine, record in zip(*self._filled()):
            streams[engine].append(record[hsize:])
        return {engine: frame_stream(self._engines[engine].stream, parts) for engine, parts in streams.items()}

    def reset(self):
        """Empty the command buffer, forget links, serial mode; ids restart at 1. Op handles
        from before the reset become stale."""
        self._start()

    def cleanup(self):
        """The context can no longer be used."""
        self._start()
        self._cleaned = True


def _is_foreign_int(value):
    """An integer that is not a Python int (a numpy integer scalar)."""
    return type(value) is not int and is_int(value)
