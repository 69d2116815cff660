"""What every chip's Context shares: the op table, the one emission path, ordering, acquisition.

A chip's Context is a `Program` subclass whose class attribute `OPS` is its op table: one
`OpRow` per API function, naming the op record class, the checks function, the lowering
function and the call style. The subclass gets one generated method per row (and per alias),
whose docstring cites the seed. Every call runs one path:

    row.check(c, record) -> row.lower(chip, record) -> pack (encoders) -> schedule (scheduler)

(c: a `bmk.checks.Check` of the chip's kind, `Program.CHECK`, naming the call).

and nothing is recorded until every step has succeeded, so a failed call changes nothing.
Sync ids are assigned at acquisition, after the chip's end commands (`END_COMMANDS`) have
been appended to a copy of the program, so acquiring twice gives the same bytes.
"""
import bisect
import contextlib
import inspect
import io
import itertools
import keyword
import operator
import sys
from array import array
from collections.abc import Callable

import attrs
import numpy as np

from bmk.checks import Check
from bmk.encoders.codec import codec_for
from bmk.encoders.framing import Streams, encode_header, frame_stream
from bmk.errors import ArgumentError, CmdbufOverflowError, EncodeError, ScheduleError, must
from bmk.origins import Origin, args_text, caller
from bmk.scheduler import Scheduler
from bmk.templates import CallTemplates, Sym
from bmk.util import is_int, plain

FIELDS = "fields"            # keyword fields of the C parameter struct, or one record (tpu_*)
POSITIONAL = "positional"    # the C function's arguments, positional or by name (gdma_*)
MEMO_SIZE = 1 << 14          # lowered calls a context remembers (see Program._emit)
PATCH_BLOCK = 1 << 14        # descriptors whose sync ids are written at once (Program._filled)


@attrs.frozen
class OpRow:
    """One API function of a chip: one row of its op table."""

    name: str                   # the method name: the C name without the chip prefix
    record: type                # the op record class the arguments become
    check: Callable             # check(c, record): c a bmk.checks.Check; raises ArgumentError, records nothing
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


class Op(tuple):
    """The handle of one API call: the span [start, stop) of the descriptors it emitted.

    `first` / `last` give its first and last descriptor on each engine; `index` is its last
    descriptor overall (what a cvikernel v2 bmk1880_op_t names). A tuple (context,
    generation, call, start, stop) underneath: made on every call, it costs one tuple."""

    __slots__ = ()

    def __new__(cls, context, generation, call, start, stop):
        return tuple.__new__(cls, (context, generation, call, start, stop))

    context = property(operator.itemgetter(0))
    generation = property(operator.itemgetter(1))
    call = property(operator.itemgetter(2))
    start = property(operator.itemgetter(3))
    stop = property(operator.itemgetter(4))

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = object.__hash__

    @property
    def index(self):
        return self.stop - 1

    def _ends(self):
        sched = self.context._sched
        codes, names = sched.codes, sched.names
        first, last = {}, {}
        for i in range(self.start, self.stop):
            first.setdefault(names[codes[i]], i)
            last[names[codes[i]]] = i
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
_new_op = tuple.__new__         # Op(...) without a Python-level __new__ call (Program._emit)


def last_to_first(before, after):
    """The general rule: before's last descriptor on each engine precedes after's first
    descriptor on each engine, so every descriptor of `after` waits for all of `before`."""
    last, first = before.last, after.first
    return [(b, a) for b in last.values() for a in first.values()]


def last_to_last(before, after):
    """cvikernel v2's rule: an op is its last descriptor, and only those two are linked."""
    return [(before.index, after.index)]


# -- generated API methods --------------------------------------------------------------------------
# A call reaches Program._emit as one tuple of its argument values, `vals` (issue 24 item 5: no
# keyword dict, no key of names and values built per call): a FIELDS row's method has the
# record's fields as keyword-only parameters, so the values come in field order, ABSENT for a
# field left out; a POSITIONAL row's method passes its positional arguments as they are (bound
# to the record's parameters, ABSENT for the ones left out, only when some come by keyword).
# The types util.plain turns into Python ints and bools: only calls passing one pay for it.
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, (np.integer, np.bool_)))


class _Absent:
    """An argument the call left out (the record's default applies)."""

    __slots__ = ()

    def __repr__(self):
        return "<absent>"


ABSENT = _Absent()


class _Call:
    """What a generated method hands Program._emit about its row: the row, its name, `make`
    (vals -> the op record) and `text` (vals -> the keywords an origin shows; None: vals are
    positional arguments)."""

    __slots__ = ("row", "name", "make", "text")

    def __init__(self, row, make, text):
        self.row, self.name, self.make, self.text = row, row.name, make, text


class _Required:
    """The default of a record field the call must give although an optional one comes before
    it (a stride, None = NULL, followed by dtype): the call may name the later arguments and
    leave the strides out; leaving this one out is refused (`_missing`)."""

    __slots__ = ()

    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()


def _required(p):
    return p.default is inspect.Parameter.empty or p.default is REQUIRED


def _missing(row, record, args, kwargs):
    """ArgumentError when a REQUIRED field of the record was left out, else None."""
    names = _required_after_optional(row.record)
    if names:
        left = [n for n in names if getattr(record, n) is REQUIRED]
        if left:
            return _record_error(row, TypeError("missing"), args, kwargs)
    return None


def _required_after_optional(record_class):
    got = _REQUIRED_FIELDS.get(record_class)
    if got is None:
        got = _REQUIRED_FIELDS[record_class] = tuple(a.name for a in attrs.fields(record_class) if a.default is REQUIRED)
    return got


_REQUIRED_FIELDS = {}


def _record_error(row, e, args=(), kwargs=None):
    """A call whose arguments do not bind to its record: the message names the C parameters
    (never the record class's __init__)."""
    try:
        sig = inspect.signature(row.record)
    except (TypeError, ValueError):
        return ArgumentError(f"{row.name}: {e}")
    params = list(sig.parameters.values())
    names = [p.name for p in params]
    required = [p.name for p in params if _required(p)]
    shown = ", ".join(required) + (("[, " if required else "[") + ", ".join(names[len(required):]) + "]"
                                   if len(required) < len(names) else "")
    count = (f"{len(names)}" if len(required) == len(names) else f"{len(required)} to {len(names)}" if required
             else f"up to {len(names)}")
    if not required:
        shown = ", ".join(names)
    elif required != names[:len(required)]:       # optional strides before required arguments
        count = f"{len(names)}"
        shown = ", ".join(p.name if _required(p) else f"{p.name}={p.default!r}" for p in params)
    takes = f"{row.name} takes {count} argument{'s' if len(names) != 1 else ''} ({shown})"
    if row.call != POSITIONAL:          # keyword fields (bm1880): no count, the names
        takes = f"{row.name} takes {', '.join(names)}"
    kwargs = kwargs or {}
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        return ArgumentError(f"{row.name}: no argument named {unknown[0]!r}; {takes}")
    if len(args) > len(names):
        return ArgumentError(f"{takes}, not {len(args) + len(kwargs)}")
    twice = [k for k in kwargs if k in names[:len(args)]]
    if twice:
        return ArgumentError(f"{row.name}: {twice[0]} given twice, as argument {names.index(twice[0]) + 1} and "
                             f"by name; {takes}")
    wanted = set(required)
    missing = [n for i, n in enumerate(names) if n in wanted and i >= len(args) and n not in kwargs]
    if missing:
        hint = "" if required == names[:len(required)] else f" ({', '.join(missing)} by name leaves the strides out)"
        return ArgumentError(f"{row.name}: {', '.join(missing)} missing; {takes}, not {len(args) + len(kwargs)}{hint}")
    return ArgumentError(f"{row.name}: {e}")


def _fields_maker(row):
    """vals (field order, ABSENT for a field left out) -> the op record."""
    names, record_class = tuple(a.name for a in attrs.fields(row.record)), row.record

    def make(vals):
        fields = {n: v for n, v in zip(names, vals) if v is not ABSENT}
        try:
            return record_class(**fields)
        except (TypeError, ValueError) as e:
            raise _record_error(row, e, (), fields) from None
    return make


def _positional_maker(row):
    """vals (the positional arguments, or every parameter with ABSENT for the ones left out)
    -> the op record."""
    names, record_class = tuple(inspect.signature(row.record).parameters), row.record

    def make(vals):
        args, kwargs = [], {}
        for name, v in zip(names, vals):
            if v is ABSENT:
                continue
            if kwargs or len(args) < names.index(name):
                kwargs[name] = v
            else:
                args.append(v)
        try:
            record = record_class(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise _record_error(row, e, args, kwargs) from None
        error = _missing(row, record, args, kwargs)
        if error is not None:
            raise error
        return record
    return make


def _fields_text(names):
    """vals -> the keyword dict an origin shows (the fields given, in field order)."""
    return lambda vals: {n: v for n, v in zip(names, vals) if v is not ABSENT}


def _fields_method(row):
    """The method of a FIELDS row: `name(res_low=..., a=..., ...)` or `name(record)`; the
    record's fields are its keyword-only parameters (generated source: CPython then binds them
    without building a keyword dict)."""
    names = tuple(a.name for a in attrs.fields(row.record))
    record_class, make = row.record, _fields_maker(row)
    call = _Call(row, make, _fields_text(names))
    scope = {"ABSENT": ABSENT, "call": call, "__name__": __name__}     # a frame of bmk's own (origins.caller)

    def rare(self, p, extra, vals):
        """A record object, or a keyword that is no field: the error the record raises."""
        if p is None:       # an unknown keyword: the record says which
            fields = {n: v for n, v in zip(names, vals) if v is not ABSENT}
            fields.update(extra)
            if not _NUMPY_SCALARS.isdisjoint(map(type, fields.values())):
                fields = {k: plain(v) for k, v in fields.items()}
            try:
                record_class(**fields)
            except (TypeError, ValueError) as e:
                raise _record_error(row, e, (), fields) from None
            raise AssertionError("unreachable: a keyword that is no field")
        if extra or any(v is not ABSENT for v in vals):
            raise ArgumentError(f"{row.name}: pass either one {record_class.__name__} or keyword fields, not both")
        if not isinstance(p, record_class):
            raise ArgumentError(must(row.name, "p", f"a {record_class.__name__}", p))
        vals = attrs.astuple(p, recurse=False)
        if any(plain(v) is not v for v in vals):
            vals = tuple(map(plain, vals))
            p = make(vals)
        return self._emit(call, vals, record=p)

    if any(keyword.iskeyword(n) or n.startswith("_") for n in names):      # not one for generated source
        def method(self, p=None, /, **fields):
            return rare(self, p, {k: v for k, v in fields.items() if k not in names},
                        tuple(fields.get(n, ABSENT) for n in names))
    else:
        params = "".join(f", {n}=ABSENT" for n in names)
        vals = "".join(f"{n}, " for n in names)
        source = (f"def method(_self, _p=None, /, *{params}, **_extra):\n"
                  f"    if _p is not None or _extra:\n"
                  f"        return rare(_self, _p, _extra, ({vals}))\n"
                  f"    return _self._emit(call, ({vals}))\n")
        scope["rare"] = rare
        exec(source, scope)         # parameter names: the record's field names (identifiers, checked above)
        method = scope["method"]
    return method


def _positional_method(row):
    """The method of a POSITIONAL row: the C function's arguments, positional or by name."""
    signature = inspect.signature(row.record)
    names, record_class = tuple(signature.parameters), row.record
    call = _Call(row, _positional_maker(row), None)
    count = len(names)

    def method(self, *args, **kwargs):
        if kwargs or len(args) > count:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                try:
                    record_class(*args, **kwargs)       # what the record says, in the C parameters' words
                except (TypeError, ValueError) as e:
                    raise _record_error(row, e, args, kwargs) from None
                raise
            vals = tuple(bound.arguments.get(n, ABSENT) for n in names)
            return self._emit(call, vals, given=(args, kwargs))
        return self._emit(call, args)
    # help() shows the C arguments (the record's fields) rather than *args.
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += list(signature.parameters.values())
    method.__signature__ = inspect.Signature(params)
    return method


def _fields_signature(row):
    """What help() and editors show for a fields row: one optional record, else its fields by
    name, typed and defaulted as the record types and defaults them."""
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_ONLY),
              P("p", P.POSITIONAL_ONLY, default=None, annotation=f"{row.record.__name__} | None")]
    params += [f.replace(kind=P.KEYWORD_ONLY) for f in inspect.signature(row.record).parameters.values()]
    return inspect.Signature(params)


def make_method(cls, row):
    """The method of one op-table row."""
    method = (_positional_method if row.call == POSITIONAL else _fields_method)(row)
    signature = inspect.signature(method) if row.call == POSITIONAL else _fields_signature(row)
    if not row.handle:
        emit = method

        def method(self, *args, **kwargs):
            emit(self, *args, **kwargs)
            return None
        signature = signature.replace(return_annotation=None)
    method.__signature__ = signature
    method.__name__ = row.name
    method.__qualname__ = f"{cls.__name__}.{row.name}"
    method.__doc__ = row.docstring
    method.op_row = row
    return method


def encoded_engines(chip):
    """The engines that have instruction classes, in spec order."""
    return {e.name: e for e in chip.encoded_engines}


def _sync_fields(engine):
    """The engine's sync fields (enable flags, own id, waits), as Fields of a class that has them
    all: they sit at the same bits in every class that has them (the loader checks), and are
    written at those bits in every command of the engine."""
    names = [f for f, _ in engine.enable] + [engine.own_id] + [f for _, f in engine.wait_for]
    holder = next(c for c in engine.classes if all(n in c.by_name for n in names))
    return [holder.by_name[n] for n in names]


class _Packer:
    """{field: value} -> cmd_hdr_t + command bytes of one engine, sync fields zeroed (written at
    acquisition). One codec Template per kind of dict (its class, picked by the selector fields,
    and its keys): the defaults and the header are pre-packed once."""

    def __init__(self, chip, engine):
        self.chip, self.engine = chip.name, engine
        self.single = engine.format
        self.selector = () if self.single else tuple((f.name, f.default) for f in engine.selector_fields)
        self.clear = sum(f.max << f.bit for f in _sync_fields(engine))
        self.headers = {c.nbytes: encode_header(chip, engine, c.nbytes) for c in engine.classes}
        self.templates = {}

    def pack(self, fields):
        keys = tuple(fields)
        if self.selector:
            try:
                key = (tuple([fields.get(n, d) for n, d in self.selector]), keys)
                template = self.templates.get(key)
            except TypeError:
                raise EncodeError(f"{self.engine.name}: selector fields must be integers, not "
                                  f"{[fields.get(n, d) for n, d in self.selector]}") from None
        else:
            key = keys
            template = self.templates.get(key)
        if template is None:
            cls = self.single or self.engine.index.get(key[0])
            if cls is None:
                values = {f.name: v for f, v in zip(self.engine.selector_fields, key[0])}
                raise EncodeError(f"{self.engine.name}: selector values {values} name no instruction class "
                                  f"of {self.chip}")
            template = self.templates[key] = codec_for(cls).template(keys, self.headers[cls.nbytes], self.clear)
        return template.pack(fields)

    def varying(self, fields):
        """For bmk.templates: (base, nbytes, [(source, shift, max)]) of a traced field dict whose
        Sym values vary: base is the record packed with them at 0. None if a selector or sync
        field varies (those must stay constant)."""
        varying = {k: v for k, v in fields.items() if isinstance(v, Sym)}
        if any(name in varying for name, _ in self.selector):
            return None
        fixed = {k: 0 if k in varying else int(v) for k, v in fields.items()}
        cls = self.single or self.engine.index.get(tuple(fixed.get(n, d) for n, d in self.selector))
        record = self.pack(fixed)
        hbits = 8 * (len(record) - cls.nbytes)
        out = []
        for name, v in varying.items():
            f = cls.by_name[name]
            if (f.max << f.bit) & self.clear:
                return None
            out.append((v.source, hbits + f.bit, f.max))
        return int.from_bytes(record, "little"), len(record), out


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


class Program:
    """A chip's command buffer under construction: the shared half of every chip's Context.

    Subclasses set `OPS` (the op table), and may set `CHECK` (their chip's bmk.checks.Check
    subclass; the shared vocabulary by default), `END_COMMANDS` (rows `(engine, {field:
    value})` appended at acquisition), `dependency_links` (a policy above) and `REGISTER`
    (the call name that errors of the constructor name)."""

    OPS = ()
    CHECK = Check           # the chip's bmk.checks.Check subclass, handed to every row's check
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
        self._code = {name: i for i, name in enumerate(self._engines)}     # engine -> code in the scheduler
        self._packers = {name: _Packer(chip, e) for name, e in self._engines.items()}
        # engine code -> header + command bytes, when all classes of every engine have one length
        lengths = [{c.nbytes for c in e.classes} for e in self._engines.values()]
        self._lengths = (np.array([chip.header.nbytes + n.pop() for n in lengths], np.int64)
                         if all(len(n) == 1 for n in lengths) else None)
        self._max_id = {name: e.id_max for name, e in self._engines.items()}
        self._inherit = tuple(name for name, e in self._engines.items() if e.inherit_wait)
        ends = self.END_COMMANDS or tuple((name, e.end_command()[1]) for name, e in self._engines.items()
                                          if e.end_command() is not None)
        self._end, self._end_codes, self._end_size = self._pack("end command", ends)
        self._cleaned = False
        self._generation = 0
        self._recording = True
        self._handles = True
        self._start()

    # -- origins: the call and the user's line behind each instruction (bmk/origins.py) ------------
    # Recording costs about a microsecond and keeps the call's arguments alive (a few hundred
    # bytes) per call: a program of millions of calls that needs no origins turns it off with
    # `ctx.record_origins = False` (calls made meanwhile have none, and cost nothing).
    @property
    def record_origins(self):
        """Whether each API call's origin is recorded (default True)."""
        return self._recording

    @record_origins.setter
    def record_origins(self, on):
        on = bool(on)
        if self._recording and not on:       # the calls from here on have no origin
            self._call_starts.append(len(self._records))
            self._call_sites.append(-1)
            self._call_args.append(None)
        self._recording = on

    @property
    def op_handles(self):
        """Whether an API call returns its Op handle (default True). A program that never uses
        them (add_dependency, Op.first / last) sets it False: each call then returns None and
        costs a little less (issue 24 item 5)."""
        return self._handles

    @op_handles.setter
    def op_handles(self, on):
        self._handles = bool(on)

    def origin(self, i):
        """The Origin of instruction i (program order, as acquire_cmdbuf lays them out); None
        for the chip's end commands."""
        k = bisect.bisect_right(self._call_starts, i) - 1
        if not 0 <= i < len(self._records) or k < 0:
            return None
        return self._origin_of(k)

    def _record_origin(self, start, name, key, arguments):
        """Keep this call's origin: its site (file, line, name; each kept once) and its
        arguments (equal ones, by their memo key, kept once: a bounded table)."""
        f = sys._getframe(3)          # _record_origin <- _emit <- the generated method <- its caller
        g = f.f_globals.get("__name__")
        site = (f.f_code.co_filename, f.f_lineno, name) if type(g) is str and g != "bmk" and not g.startswith("bmk.") else \
            (*caller(3), name)      # called through bmk's own code: the first frame outside it
        k = self._site_index.get(site)
        if k is None:
            k = self._site_index[site] = len(self._sites)
            self._sites.append(site)
        if key is not None:
            shared = self._shared_args.get(key)
            if shared is None:
                if len(self._shared_args) >= MEMO_SIZE:
                    self._shared_args.clear()
                self._shared_args[key] = arguments
            else:
                arguments = shared
        self._call_starts.append(start)
        self._call_sites.append(k)
        self._call_args.append(arguments)

    def _origin_of(self, k):
        site = self._call_sites[k]
        if site < 0:
            return None
        file, line, name = self._sites[site]
        args = self._call_args[k]
        if type(args) is tuple:
            args = (args, {})
        elif type(args) is list:
            args = tuple(args)
        return Origin(name, args_text(args), file, line)

    def origins(self, streams=False):
        """The Origin of every instruction acquire_cmdbuf returns (end commands: None). With
        streams=True, in the order of acquire_streams()'s instructions as bmk.decode and
        Simulator.run merge them (by sync ids: another valid order), e.g. for
        `sim.run(ctx.acquire_streams()).named(ctx.origins(streams=True))`."""
        starts = list(self._call_starts) + [len(self._records)]
        out = [None] * starts[0]
        for k in range(len(self._call_sites)):
            out += [self._origin_of(k)] * (starts[k + 1] - starts[k])
        out = tuple(out) + (None,) * len(self._end)
        if not streams:
            return out
        from bmk.encoders.framing import decode_raw_streams
        per_engine = {name: iter(origins) for name, origins in self._origins_per_engine(out).items()}
        return tuple(next(per_engine[r.engine]) for r in decode_raw_streams(self.chip, [self.acquire_streams()]))

    def _origins_per_engine(self, origins):
        """{engine: its instructions' origins in stream order} for acquire_streams()."""
        codes = np.concatenate([np.frombuffer(bytes(self._codes), np.uint8), np.frombuffer(self._end_codes, np.uint8)])
        return {name: [origins[i] for i in np.flatnonzero(codes == code).tolist()]
                for code, name in enumerate(self.acquire_streams())}

    def listing(self, fields="changed", width=None):
        """acquire_cmdbuf's instructions as assembly text (bmk-asm reads it back), each line
        ending with a comment that names the API call and the user's line behind it. width:
        wrap longer lines to fit it (the origin then on a comment line of its own before)."""
        from bmk.encoders.framing import decode_cmdbuf
        from bmk.text.asm import disassemble
        records = decode_cmdbuf(self.chip, self.acquire_cmdbuf())
        return disassemble(self.chip, records, fields, locations=True,
                           notes=[None if o is None else str(o) for o in self.origins()], width=width)

    def save(self, path, raw=False):
        """Write the program, with each file's origins beside it (`<file>.origins.json`, which
        bmk-disasm and bmk-run read): the cmd_hdr_t buffer to `path`, or with raw=True each
        engine's raw stream to `<path>.<engine>.bin`. Returns the paths of the program files."""
        from bmk.origins import write_sidecar
        origins = self.origins()
        if not raw:
            with open(path, "wb") as f:
                f.write(self.acquire_cmdbuf())
            write_sidecar(path, origins)
            return [str(path)]
        per_engine = self._origins_per_engine(origins)
        written = []
        for name, data in self.acquire_streams().items():
            out = f"{path}.{name}.bin"
            with open(out, "wb") as f:
                f.write(data)
            write_sidecar(out, per_engine[name])
            written.append(out)
        return written

    def _start(self):
        self._records = []        # per descriptor: cmd_hdr_t + command, sync fields zero, in order
        self._nbytes = self._end_size
        self._sched = Scheduler(self._engines)
        self._codes = self._sched.codes     # its engine code per descriptor: appended to per call
        self._lowered = {}      # (call, arguments, their types) -> (records, engine codes, size)
        # per API call: its first instruction, its site (an index of _sites: (file, line, call
        # name), each kept once; -1: none) and its arguments
        self._call_starts, self._call_sites, self._call_args = array("q"), array("q"), []
        self._sites, self._site_index, self._shared_args = [], {}, {}
        self._templates = CallTemplates()
        self._templated = set()     # the calls whose last call took a template (_emit)
        self._generation += 1

    # -- the one path of every API call ------------------------------------------------------------
    def _emit(self, call, vals, record=None, given=None):
        """Check, lower, pack, then record.

        `vals`: the call's argument values (see the generated methods); `record`: the op record
        when the call passed one; `given`: (args, kwargs) of a positional call that used keywords.
        Lowering is a pure function of the call's arguments, so its packed result is memoized
        per context under (call, values, their types) (1 == 1.0 == True, but only some of them
        pass the checks). An unhashable argument skips the memo. The memo holds at most
        MEMO_SIZE calls (then starts afresh), so programs whose calls all differ (distinct
        addresses) do not grow it without bound. Calls that differ only in int arguments share
        call templates (bmk.templates), which serve them without entering the memo; a call
        whose last call took a template tries its templates first (no memo key made).
        """
        if self._cleaned:
            raise ArgumentError(f"{call.name}: the context was cleaned up (cleanup)")
        tys = tuple(map(type, vals))
        if call in self._templated:
            key, lowered = None, self._templates.lowered(call.name, vals, tys)
        else:
            key = (call, vals, tys)
            try:
                lowered = self._lowered.get(key)
            except TypeError:
                lowered = key = None
        if lowered is None:
            lowered, key = self._lowering(call, vals, tys, record)
            if key is not None and key[1] is not vals:      # numpy integers made plain
                vals = key[1]
        records, codes, size = lowered
        nbytes = self._nbytes + size
        if nbytes > self.cmdbuf_size:
            raise CmdbufOverflowError(f"{call.name}: the command buffer would grow to {nbytes} "
                                      f"bytes, past cmdbuf_size {self.cmdbuf_size}")
        self._nbytes = nbytes
        bodies = self._records
        start = len(bodies)
        bodies += records
        self._codes += codes
        if self._recording:
            if given is not None and not _NUMPY_SCALARS.isdisjoint(map(type, given[0] + tuple(given[1].values()))):
                given = (tuple(map(plain, given[0])), {k: plain(v) for k, v in given[1].items()})
            arguments = record if record is not None else list(given) if given is not None and given[1] else \
                given[0] if given is not None else call.text(vals) if call.text is not None else vals
            self._record_origin(start, call.name, key if given is None else None, arguments)
        if self._handles:
            return _new_op(Op, (self, self._generation, call.name, start, start + len(codes)))
        return None

    def _lowering(self, call, vals, tys, record):
        """(lowered, memo key or None) of a call the memo did not have (or the template tried
        first did not serve): the memo, a template, or the ordinary path (checks, lowering,
        packing), which the memo and the templates then learn."""
        key = (call, vals, tys)
        try:
            lowered = self._lowered.get(key)
        except TypeError:
            lowered = key = None
        if lowered is None and not _NUMPY_SCALARS.isdisjoint(tys):
            # numpy integers as Python ints (the memo never holds their types: a hit needs no test)
            vals = tuple(map(plain, vals))
            tys = tuple(map(type, vals))
            key = (call, vals, tys)
            try:
                lowered = self._lowered.get(key)
            except TypeError:
                lowered = key = None
        if lowered is not None:
            self._templated.discard(call)
            return lowered, key
        if key is not None and record is None:
            lowered = self._templates.lowered(call.name, vals, tys)
            if lowered is not None:
                self._templated.add(call)
                return lowered, key
        row = call.row
        descriptors = tuple(row.lower(self.chip, self._checked(row, call.make(vals) if record is None else record)))
        lowered = self._pack(call.name, descriptors)
        if key is not None:
            if len(self._lowered) >= MEMO_SIZE:
                self._lowered.clear()
            self._lowered[key] = lowered
            if record is None:
                self._templates.learn(call.name, vals, tys, lowered, descriptors,
                                      lambda v: row.lower(self.chip, self._checked(row, call.make(v))),
                                      lambda engine, fields: self._packers[engine].varying(fields))
        return lowered, key

    def _checked(self, row, record):
        """The record, once the row's checks have passed."""
        row.check(self.CHECK(self.chip, row.name, self), record)
        return record

    def forget_lowered(self):
        """Forget every memoized call and call template: calls run their checks again (bm1880's
        tl_free: a freed tensor must meet them)."""
        self._lowered.clear()
        self._templates.clear()
        self._templated.clear()

    def _pack(self, call, descriptors):
        """((engine, fields), ...) -> (records: cmd_hdr_t + command bytes each, their engine codes
        (bytes), their size)."""
        packers = self._packers
        try:
            records = tuple([packers[engine].pack(fields) for engine, fields in descriptors])
        except EncodeError as e:
            # numpy integer scalars are integers to the API but not to bitstruct: retry as ints.
            if not any(_is_foreign_int(v) for _, fields in descriptors for v in fields.values()):
                raise ArgumentError(f"{call}: the arguments do not fit the {self.chip.name} encoding: {e}") from None
            return self._pack(call, [(engine, {k: operator.index(v) if _is_foreign_int(v) else v
                                               for k, v in fields.items()}) for engine, fields in descriptors])
        except KeyError as e:
            raise ArgumentError(f"{call}: {self.chip.name} has no encoded engine {e}") from None
        codes = bytes([self._code[engine] for engine, _ in descriptors])
        return records, codes, sum(map(len, records))

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
        if not self.ACQUIRE_IN_PARALLEL and self._sched.mode.value == "parallel":
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
