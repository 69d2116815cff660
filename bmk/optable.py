"""The op table and the API methods it makes: one `OpRow` per API function of a chip (its
op record class, checks, lowering and call style), and the method `make_method` generates from
it, whose docstring cites the seed. A method hands its argument values to the Context's one
emission path (bmk/emission.py: Emission._emit); an `Op` is the handle a call returns, and the
dependency policies say which descriptors add_dependency links."""
import inspect
import keyword
import operator
from collections.abc import Callable

import attrs
import numpy as np

from bmk.errors import ArgumentError, must
from bmk.util import plain

FIELDS = "fields"            # keyword fields of the C parameter struct, or one record (tpu_*)
POSITIONAL = "positional"    # the C function's arguments, positional or by name (gdma_*)


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


class Op:
    """The handle of one API call: the span [start, stop) of the descriptors it emitted.

    `first` / `last` give its first and last descriptor on each engine; `index` is its last
    descriptor overall (what a cvikernel v2 bmk1880_op_t names). Equal only to itself.

    Made on every call (Emission._emit), so made as cheaply as CPython makes an object: `Op()`
    runs no Python (no __init__ or __new__), then five slot stores; read-only properties over
    the slots."""

    __slots__ = ("_context", "_generation", "_call", "_start", "_count")

    context = property(operator.attrgetter("_context"))
    generation = property(operator.attrgetter("_generation"))
    call = property(operator.attrgetter("_call"))
    start = property(operator.attrgetter("_start"))

    @property
    def stop(self):
        return self._start + self._count      # the count, a small int, is stored: no int made per call

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


def last_to_first(before, after):
    """The general rule: before's last descriptor on each engine precedes after's first
    descriptor on each engine, so every descriptor of `after` waits for all of `before`."""
    last, first = before.last, after.first
    return [(b, a) for b in last.values() for a in first.values()]


def last_to_last(before, after):
    """cvikernel v2's rule: an op is its last descriptor, and only those two are linked."""
    return [(before.index, after.index)]


# -- generated API methods --------------------------------------------------------------------------
# A call reaches Emission._emit as one tuple of its argument values, `vals` (issue 24 item 5: no
# keyword dict, no key of names and values built per call): a FIELDS row's method has the
# record's fields as keyword-only parameters, so the values come in field order, ABSENT for a
# field left out; a POSITIONAL row's method passes its positional arguments as they are (bound
# to the record's parameters, ABSENT for the ones left out, only when some come by keyword).
# Beside it, the tuple of their types, `tys` (the lowering memo's key holds them), which the
# generated source spells type(a0), type(a1), ...: one specialized instruction each.
# The types util.plain turns into Python ints and bools: only calls passing one pay for it.
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, (np.integer, np.bool_)))


class _Absent:
    """An argument the call left out (the record's default applies)."""

    __slots__ = ()

    def __repr__(self):
        return "<absent>"


ABSENT = _Absent()


class _Call:
    """What a generated method hands Emission._emit about its row: the row, its name, `make`
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
        got = _REQUIRED_FIELDS[record_class] = tuple(a.name for a in attrs.fields(record_class)
                                                     if a.default is REQUIRED)
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


def _last_call_source(args):
    """Generated source, in a method whose arguments are named `args`: when every one is the very
    object the call's last lowering was made from (Emission._last), that lowering is recorded at
    once (Emission._emitted): no value or type tuple built, no _emit frame."""
    same = " and ".join(f"{a} is _v[{i}]" for i, a in enumerate(args)) or "True"
    return ("    _last = _self._last.get(call)\n"
            "    if _last is not None:\n"
            "        _v = _last[0]\n"
            f"        if {same}:\n"
            "            return _self._emitted(call, _last[2])\n")


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
        return self._emit(call, vals, tuple(map(type, vals)), record=p)

    if any(keyword.iskeyword(n) or n.startswith("_") for n in names):      # not one for generated source
        def method(self, p=None, /, **fields):
            return rare(self, p, {k: v for k, v in fields.items() if k not in names},
                        tuple(fields.get(n, ABSENT) for n in names))
    else:
        params = "".join(f", {n}=ABSENT" for n in names)
        vals = "".join(f"{n}, " for n in names)
        types = "".join(f"type({n}), " for n in names)
        source = (f"def method(_self, _p=None, /, *{params}, **_extra):\n"
                  f"    if _p is not None or _extra:\n"
                  f"        return rare(_self, _p, _extra, ({vals}))\n"
                  + _last_call_source(names) +
                  f"    return _self._emit(call, ({vals}), ({types}))\n")
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

    def other(self, args, kwargs):
        """A call that does not pass every argument positionally."""
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
            return self._emit(call, vals, tuple(map(type, vals)), given=(args, kwargs))
        return self._emit(call, args, tuple(map(type, args)))

    # Generated source for the usual call, every argument positional: the argument types as
    # type(a0), ... (CPython runs each as one specialized instruction; tuple(map(type, args))
    # costs several times more).
    unpack = "".join(f"a{i}, " for i in range(count))
    types = "".join(f"type(a{i}), " for i in range(count))
    scope = {"call": call, "other": other, "__name__": __name__}     # a frame of bmk's own (origins.caller)
    exec(f"def method(_self, *args, **kwargs):\n"
         f"    if kwargs or len(args) != {count}:\n"
         f"        return other(_self, args, kwargs)\n"
         f"    ({unpack}) = args\n"
         + _last_call_source([f"a{i}" for i in range(count)]) +
         f"    return _self._emit(call, args, ({types}))\n", scope)
    method = scope["method"]
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
