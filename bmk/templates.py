"""Call templates: one call's checks and lowering, traced, compiled into a function of its int arguments.

A tiled kernel makes the same call many times with only integer arguments changing (gmem
addresses): the lowering memo misses every time. The first such call is run a second time
with each int argument replaced by a `Sym`, a stand-in that computes like the int and
records how: arithmetic gives new Syms (their expression), every comparison or truth test
is recorded as a guard with its outcome, and anything that could read the value another
way (int(), index, hash, format, float, an operand that is not an int) marks the trace
unusable. A usable trace whose fields, evaluated, equal the real call's is compiled into
one function of the int arguments: it re-checks the guards (same outcomes: the same path
through checks and lowering), computes only the fields that depend on the arguments,
range-checks them and ORs them into the command bytes pre-packed with every other field
(positions from the spec's Field bit/width, through the packer's codec Template). Any guard
or range miss returns None and the call takes the ordinary path, which raises the ordinary
errors. Checks and lowerings are pure functions of their arguments (the memo relies on it too).

A chip's checks and lowering stay traceable by computing with their int arguments, never
reading them another way: `as_int` (not int()) normalizes a checked integer, and `fixed`
turns an argument used as a key (an enum code, a dict or cache key) into its plain value,
guarding that it keeps that value (such a template serves only calls that repeat it).
"""
import numbers
import operator
import re

PER_SHAPE = 4           # call templates kept per call shape (each for one path through the checks)
MAX_SHAPES = 1 << 14    # call shapes a context remembers (then it starts afresh)

_BINARY = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "and": "&", "or": "|",
           "xor": "^", "lshift": "<<", "rshift": ">>"}
_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


MAX_GUARDS = 256         # a trace that tests more (e.g. `x in range(...)`, a loop) is abandoned
MAX_SOURCE = 4096        # characters of one expression
MAX_DEFS = 4096          # values one trace computes


class Abandoned(Exception):
    """Raised inside a traced call that grew past the limits."""


class Trace:
    """What one traced call did with its Syms: guards [(source, outcome)], the values it
    computed (`defs`: [(name, expression of earlier names)], each named once, so that the
    compiled template computes a value shared by several fields or guards once) and whether a
    value escaped."""

    def __init__(self):
        self.guards = []
        self.defs = []
        self._names = {}        # expression -> its name: a value computed twice is named once
        self.escaped = False

    def guard(self, source, outcome):
        self.guards.append((source, outcome))
        if len(self.guards) > MAX_GUARDS:
            self.escaped = True
            raise Abandoned("too many guards")

    def arg(self, value, i):
        """The Sym of argument i (named a<i>)."""
        return Sym(value, f"a{i}", self)

    def sym(self, value, source):
        if len(source) > MAX_SOURCE or len(self.defs) >= MAX_DEFS:
            self.escaped = True
            raise Abandoned("expression too long")
        name = self._names.get(source)
        if name is None:
            name = self._names[source] = f"t{len(self.defs)}"
            self.defs.append((name, source))
        return Sym(value, name, self)


class Sym:
    """An int argument under trace: `value` is the real int, `source` its expression."""

    __slots__ = ("value", "source", "trace")

    def __init__(self, value, source, trace):
        self.value, self.source, self.trace = value, source, trace

    def _escape(self, *_):
        self.trace.escaped = True
        return self.value

    __index__ = __int__ = __float__ = __complex__ = __trunc__ = __floor__ = __ceil__ = _escape

    def __hash__(self):
        self.trace.escaped = True
        return hash(self.value)

    def __format__(self, spec):
        self.trace.escaped = True
        return format(self.value, spec)

    def __repr__(self):
        self.trace.escaped = True
        return repr(self.value)

    __str__ = __repr__

    def __bool__(self):
        outcome = bool(self.value)
        self.trace.guard(f"bool({self.source})", outcome)
        return outcome

    def __neg__(self):
        return self.trace.sym(-self.value, f"(-{self.source})")

    def __invert__(self):
        return self.trace.sym(~self.value, f"(~{self.source})")

    def __pos__(self):
        return self

    def __abs__(self):
        return self._escape()

    __pow__ = __rpow__ = __truediv__ = __rtruediv__ = __divmod__ = __rdivmod__ = __round__ = _escape


def _operand(trace, other):
    """(value, source) of an operand that may meet a Sym, or None (the trace is then unusable)."""
    if isinstance(other, Sym):
        return other.value, other.source
    if type(other) is int:
        return other, repr(other)
    trace.escaped = True
    return None


def _binary(name, symbol):
    op = getattr(operator, f"{name}_" if name in ("and", "or") else name)

    def forward(self, other):
        o = _operand(self.trace, other)
        if o is None:
            return op(self.value, other)
        return self.trace.sym(op(self.value, o[0]), f"({self.source} {symbol} {o[1]})")

    def reflected(self, other):
        o = _operand(self.trace, other)
        if o is None:
            return op(other, self.value)
        return self.trace.sym(op(o[0], self.value), f"({o[1]} {symbol} {self.source})")
    return forward, reflected


def _compare(name, symbol):
    op = getattr(operator, name)

    def compare(self, other):
        o = _operand(self.trace, other)
        if o is None:
            return op(self.value, other)
        outcome = op(self.value, o[0])
        self.trace.guard(f"({self.source} {symbol} {o[1]})", outcome)
        return outcome
    return compare


for _name, _symbol in _BINARY.items():
    _f, _r = _binary(_name, _symbol)
    setattr(Sym, f"__{_name}__", _f)
    setattr(Sym, f"__r{_name}__", _r)
for _name, _symbol in _COMPARE.items():
    setattr(Sym, f"__{_name}__", _compare(_name, _symbol))
numbers.Integral.register(Sym)      # is_int(sym) holds, as it does for the int it stands for


def as_int(value):
    """A checked integer argument as the value to compute with: a numpy integer scalar or a
    bool as the Python int, a Python int or a Sym (which computes like its int) unchanged."""
    if type(value) is int or isinstance(value, Sym):
        return value
    return int(value)


def fixed(value):
    """The plain value of a Sym, recording the guard that it keeps it (a template made from the
    trace then serves only calls with that value); anything else unchanged. For arguments
    that select rather than compute: enum codes, dict and cache keys."""
    if isinstance(value, Sym):
        value.trace.guard(f"({value.source} == {value.value!r})", True)
        return value.value
    return value


def value_of(x):
    """The real value of a traced field value: an int, or None when it is not one."""
    if isinstance(x, Sym):
        return x.value
    if type(x) in (int, bool):
        return int(x)
    return None


_NAME = re.compile(r"\bt\d+\b")


def compile_template(n_args, guards, records, defs=(), positions=None):
    """The function of the int arguments `a0..` that returns the command records, or None;
    with `positions` (where a0.. are in a call's values), the function of the call's values.

    records: per command (base, nbytes, [(source, shift, max)]): base is the command (header
    included) pre-packed with every field that does not depend on the arguments; each varying
    field's value, computed from its source, must be in [0, max] and goes in at `shift`.
    defs: the trace's named values [(t<k>, expression)]; the ones the guards and fields read
    (and what those read) are computed first, in order. A guard met twice is tested once."""
    if positions is None:
        lines = [f"def template({', '.join(f'a{i}' for i in range(n_args))}):"]
    else:       # one argument: a plain call, where template(*values) would build and unpack a tuple
        lines = ["def template(vals):"] + [f"    a{i} = vals[{p}]" for i, p in enumerate(positions)]
    guards = list(dict.fromkeys(guards))
    wanted = set(_NAME.findall(" ".join([g for g, _ in guards] + [f for _, _, v in records for f, _, _ in v])))
    needed = []
    for name, expr in reversed(defs):
        if name in wanted:
            needed.append((name, expr))
            wanted.update(_NAME.findall(expr))
    lines += [f"    {name} = {expr}" for name, expr in reversed(needed)]
    if guards:
        test = " and ".join(source if outcome else f"not {source}" for source, outcome in guards)
        lines.append(f"    if not ({test}): return None")
    out = []
    k = 0
    for base, nbytes, varying in records:
        terms = [repr(base)]
        for source, shift, high in varying:
            lines.append(f"    v{k} = {source}")
            lines.append(f"    if not 0 <= v{k} <= {high}: return None")
            terms.append(f"(v{k} << {shift})")
            k += 1
        out.append(f"({' | '.join(terms)}).to_bytes({nbytes}, 'little')")
    lines.append(f"    return ({', '.join(out)},)")
    scope = {"__builtins__": {"bool": bool}}
    source = "\n".join(lines)
    exec(source, scope)      # source built above from ints, operators and argument names only
    template = scope["template"]
    template.source = source
    return template


# -- the call templates of one context ----------------------------------------------------------
_SEEN_ONCE, _UNTRACEABLE = (), False


class CallTemplates:
    """The call templates one context has learned, by call shape: a call's name, its argument
    types, and its non-int arguments (its int arguments left out). Per shape: up to PER_SHAPE
    compiled templates, each for one path through the checks.

    A call is its argument values `vals` (a tuple, as bmk.program's generated methods pass
    them) and their types `tys`. `lowered(name, vals, tys)` returns what a template makes of a
    call, or None; `learn(name, vals, tys, lowered, descriptors, lower, varying)` traces a
    call that took the ordinary path: a shape is traced from its second ordinary call on
    (calls that never repeat pay nothing), and a shape that does not trace is never traced
    again. Where the ints are follows from `tys`: per types tuple, two itemgetters (made once)
    split the values into the shape's part and the template's arguments (issue 24 item 5: the
    lookup costs one C call and one dict probe, no per-value Python); a template takes the
    call's values and reads its int arguments at their positions (a plain call).
    """

    def __init__(self):
        self._shapes = {}      # shape -> [(template, engine codes, size)] | _SEEN_ONCE | _UNTRACEABLE
        self._splits = {}      # argument types -> (non-int getter, int getter) | None (no int)
        self._recent = {}      # call name -> (types, non-int getter, its value, templates): the shape served last

    def clear(self):
        self._shapes.clear()
        self._recent.clear()

    def learned(self):
        """{shape: [templates]} of the shapes that have templates (shape[0] is the call name)."""
        return {k: v for k, v in self._shapes.items() if v}

    def _shape(self, name, vals, tys):
        """(the call's shape, its int arguments) or None when it has none."""
        split = self._splits.get(tys, _NO_SPLIT)
        if split is _NO_SPLIT:
            if len(self._splits) >= MAX_SHAPES:
                self._splits.clear()
            split = self._splits[tys] = _split(tys)
        if split is None:
            return None
        others, ints = split
        return (name, tys, others(vals)), ints(vals)

    def lowered(self, name, vals, tys):
        """(records, engine codes, size) of the call from a template of its shape, or None.
        (What _shape does, inline: this runs on every call a template serves.) The shape the
        call's last template served is tried first: two compares, where the shape's key would
        hash the types and values again."""
        recent = self._recent.get(name)
        try:
            again = recent[0] == tys and recent[1](vals) == recent[2]
        except Exception:           # none yet, or a value that does not compare
            again = False
        if again:
            templates = recent[3]
        else:
            split = self._splits.get(tys, _NO_SPLIT)
            if split is _NO_SPLIT:
                return self._lowered_by_shape(name, vals, tys)
            if split is None:
                return None
            try:
                other = split[0](vals)
                templates = self._shapes.get((name, tys, other))
            except TypeError:           # an unhashable argument
                return None
            if templates:
                self._recent[name] = (tys, split[0], other, templates)
        if templates:
            for template, codes, size in templates:
                try:
                    records = template(vals)
                except Exception:        # e.g. a shift or division the new values make invalid
                    records = None
                if records is not None:
                    return records, codes, size
        return None

    def _lowered_by_shape(self, name, vals, tys):
        """lowered() for argument types seen the first time (_shape learns their split)."""
        self._shape(name, vals, tys)
        return self.lowered(name, vals, tys)

    def learn(self, name, vals, tys, lowered, descriptors, lower, varying):
        """Trace the call once more with its int arguments as Syms; keep the compiled template
        if the trace is usable and reproduces the call's fields and bytes.

        lowered: the call's (records, codes, size); descriptors: its ((engine, fields), ...);
        lower(vals): checks and lowers argument values (a record made of them) to descriptors;
        varying(engine, fields): the packer's (base, nbytes, [(source, shift, max)]) or None."""
        shape = self._shape(name, vals, tys)
        if shape is None:
            return
        key, values = shape
        try:
            templates = self._shapes.get(key)
        except TypeError:
            return
        if templates is _UNTRACEABLE or len(templates or ()) >= PER_SHAPE:
            return
        if len(self._shapes) >= MAX_SHAPES:
            self._shapes.clear()
            self._recent.clear()
        self._recent.pop(name, None)        # it may hold the templates replaced below
        if templates is None:      # first sighting: trace only shapes that come back
            self._shapes[key] = _SEEN_ONCE
            return
        try:
            made = _trace(vals, values, lowered, descriptors, lower, varying)
        except Exception:       # a template is an optimisation: whatever goes wrong, go without
            made = None
        if made is not None:
            self._shapes[key] = list(templates) + [made]
        elif not templates:
            self._shapes[key] = _UNTRACEABLE


_NO_SPLIT = object()


def _split(tys):
    """(getter of the non-int values, as a shape key: one alone, more in a tuple; getter of the
    int values, as a tuple) for argument types `tys`; None when no argument is an int."""
    ints = _int_positions(tys)
    if not ints:
        return None
    others = [i for i, t in enumerate(tys) if t is not int]
    return _getter(others, bare=True), _getter(ints)


def _int_positions(tys):
    """Where a call's int arguments are (the template's a0, a1, ...), from their types."""
    return [i for i, t in enumerate(tys) if t is int]


def _getter(positions, bare=False):
    """vals -> the values at `positions`, as a tuple; bare: one value alone (not in a tuple: one
    C call, no Python frame; what a shape key holds needs no tuple, the count being in `tys`)."""
    if not positions:
        return lambda vals: ()
    if len(positions) == 1:
        get = operator.itemgetter(positions[0])
        return get if bare else lambda vals: (get(vals),)
    return operator.itemgetter(*positions)


def _trace(vals, values, lowered, descriptors, lower, varying):
    trace = Trace()
    syms = iter([trace.arg(v, i) for i, v in enumerate(values)])
    try:
        traced = tuple(lower(tuple(next(syms) if type(v) is int else v for v in vals)))
    except (Exception, Abandoned):
        return None
    if trace.escaped or len(traced) != len(descriptors):
        return None
    records = []
    for (engine, fields), (real_engine, real) in zip(traced, descriptors):
        if engine != real_engine or tuple(fields) != tuple(real):
            return None
        if any(value_of(v) is None or value_of(v) != real[k] or type(real[k]) not in (int, bool)
               for k, v in fields.items()):
            return None
        made = varying(engine, fields)
        if made is None:
            return None
        records.append(made)
    positions = _int_positions(map(type, vals))
    template = compile_template(len(values), trace.guards, records, trace.defs, positions)
    if template(vals) != lowered[0]:
        return None
    return template, lowered[1], lowered[2]
