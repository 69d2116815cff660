"""What the simulator would refuse, found without running anything (`bmk check`, issue 27.1).

A simulator refuses an instruction before any work when its fields name no instruction kind,
its kind has no semantics on the chip, or the chip's semantics' field check
(`Semantics.check`: a field the kind does not execute set away from its neutral value, a value
the kind cannot honour) says no: the steps `Simulator.compile` takes (core.py `_plan` calls
`verdict` here), taken for every instruction instead of stopping at the first. Refusals are
grouped by what was refused: the instruction kind, the field and its value where it names them
(`SimulationError.field` / `.value`, set by the chips' field checks), else the reason's text,
each with a count and the first instruction refused (its group, engine, position in that
engine's stream and byte offset).

Instructions equal but for their sync ids are checked once (the check is a pure function of
the other fields: semantics.py), so a model of thousands of commands checks in a fraction of
a second.
"""
import typing

import attrs

from bmk.encoders.fields import as_dict, not_a_mapping
from bmk.errors import ArgumentError, SimulationError, SpecError, must


@attrs.frozen
class Finding:
    """One kind of refusal: `count` instructions refused for the same reason.

    kind: "<engine>.<instruction kind>" ("tiu.conv"), or what the refusal is about when it is
    not one instruction's ("model" with field "chip", "subnet", "core", "engine",
    "coefficients": bmk/models/check.py; these have no index); field, value: the field
    and its value where the refusal names one (else None); reason: the simulator's message;
    first: where the first such instruction is: group (a model's group label, None for a
    buffer), engine, index (position in that engine's stream of the group), offset (byte
    offset in that stream, or in the cmd_hdr_t buffer)."""
    kind: str
    field: object
    value: object
    reason: str
    count: int
    group: object = None
    engine: object = None
    index: object = None
    offset: object = None

    def where(self):
        """'<group> <engine> #<index> (byte <offset>)', the parts it has."""
        place = " ".join(str(p) for p in (self.group, self.engine) if p is not None)
        if self.index is not None:
            place += f" #{self.index}"
        if self.offset is not None:
            place += f" (byte {self.offset})"
        return place.strip()

    def what(self):
        """'<kind>' or '<kind> <field> = <value>': what was refused."""
        return self.kind if self.field is None else f"{self.kind} {self.field} = {shown(self.value)}"

    def line(self):
        """One line: kind, field = value, the reason, how many and the first place."""
        if self.index is None:          # not an instruction's refusal: its reason names what it is about
            return self.reason
        n = f"{self.count} instruction{'s' * (self.count != 1)}"
        return f"{self.what()}: {self.reason} ({n}, first {self.where()})"

    def to_dict(self):
        return attrs.asdict(self)


def shown(value):
    """A field value as listings show it (hex for an integer)."""
    return f"{value:#x}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)


class Findings:
    """Refusals gathered into Findings, in the order they were first met."""

    def __init__(self):
        self._by_key = {}

    def add(self, key, kind, field, value, reason, group=None, engine=None, index=None, offset=None, count=1):
        """Count one refusal (key: what makes two refusals the same Finding)."""
        got = self._by_key.get(key)
        if got is None:
            self._by_key[key] = [kind, field, value, reason, count, group, engine, index, offset]
        else:
            got[4] += count

    def result(self):
        return [Finding(*v) for v in self._by_key.values()]

    def __bool__(self):
        return bool(self._by_key)


def _sync_fields(spec):
    """{engine: names of the fields that only order its commands (own id, waits)}."""
    return {e.name: frozenset([e.own_id] * bool(e.own_id) + [fname for _, fname in e.wait_for])
            for e in spec.encoded_engines}


def refusals(spec, semantics, records, findings=None, group=None):
    """Add to `findings` (a Findings; a new one by default) every refusal of `records` (decoded
    Records in program order) by a simulator of `spec` with `semantics`; return it."""
    findings = Findings() if findings is None else findings
    engines = {e.name: e for e in spec.encoded_engines}
    sync = _sync_fields(spec)
    seen = {}                       # content key -> its Refused, or None
    where = {}                      # (engine, class) -> (field names, positions of its sync ids)
    position = {}
    barrier = {e.name for e in spec.engines if e.barrier}
    for rec in semantics.prepare(spec, records):
        engine = rec.engine
        if engine in barrier:       # synchronization only: counted in the barriers (cores.py), never run
            continue
        index = position[engine] = position.get(engine, -1) + 1
        try:
            content = _content(rec, sync.get(engine, ()), where)
            refused = seen.get(content, seen)
        except TypeError:           # unhashable values (hand-made records): checked each time
            content, refused = None, seen
        if refused is seen:
            refused = verdict(spec, semantics, engines.get(engine), rec)[1]
            if content is not None:
                seen[content] = refused
        if refused is not None:
            findings.add(*refused, group=group, engine=engine, index=index, offset=rec.offset)
    return findings


def _content(rec, ids, where):
    """What a record's verdict depends on: its engine, class and fields but the sync ids `ids`
    (their values set to 0), in one tuple of values per class (`where` keeps each class's names
    and its ids' positions)."""
    f = rec.fields
    names = tuple(f)
    at = (rec.engine, rec.cls)
    known = where.get(at)
    if known is None or known[0] != names:
        known = where[at] = (names, [k for k, name in enumerate(names) if name in ids])
    values = list(f.values())
    for k in known[1]:
        values[k] = 0
    return at + (names, tuple(values))


class Refused(typing.NamedTuple):
    """Why the simulator refuses a record: key groups equal refusals; kind, field, value and
    reason are what a Finding shows."""
    key: tuple
    kind: str
    field: object
    value: object
    reason: str


def verdict(spec, semantics, eng, rec):
    """(instruction kind name or None, Refused or None) of a record: the checks a Simulator
    makes before it runs anything (core.py `_plan` raises the refusal; `refusals` gathers them).
    eng: the record's EngineSpec (None: the chip has no such engine)."""
    engine, f = rec.engine, as_dict(rec.fields)     # the checks read many fields: a dict reads them fastest
    if eng is None:
        reason = f"engine must be one of {sorted(e.name for e in spec.encoded_engines)}, not {engine!r}"
        return None, Refused(("engine", engine), "engine", None, None, reason)
    fmt = eng.format
    if fmt is None:             # several classes: the record names its own
        try:
            fmt = eng.cls(rec.cls)
        except SpecError as e:
            return None, Refused(("class", engine, rec.cls), engine, None, None, str(e))
    ins = fmt.instruction_of(f)
    if ins is None:
        keys = sorted({k for other in fmt.instructions for k, _ in other.match})
        reason = "fields must name a known instruction kind, not " + ", ".join(f"{k}={f.get(k, 0)}" for k in keys)
        return None, Refused(("unknown", engine, reason), f"{engine}.?", None, None, reason)
    kind = f"{engine}.{ins.name}"
    if (engine, ins.name) not in semantics.kinds:
        reason = f"{engine} kind {ins.name!r} must have simulator semantics (the {spec.name} simulator has none)"
        return ins.name, Refused(("kind", kind), kind, None, None, reason)
    try:
        semantics.check(spec, engine, f)
    except SimulationError as e:
        field, value = getattr(e, "field", None), getattr(e, "value", None)
        key = ("field", kind, field, _hashable(value)) if field is not None else ("reason", kind, str(e))
        return ins.name, Refused(key, kind, field, value, str(e))
    return ins.name, None


def _hashable(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def no_simulator(chip_name):
    """The reason a chip's instructions cannot be simulated at all."""
    from bmk.sim.semantics import simulated_chips
    return f"chip {chip_name} has no simulator (chips with one: {', '.join(sorted(simulated_chips()))})"


def check_records(spec, records):
    """[Finding] of decoded Records of chip `spec`: each refusal of its simulator, or one
    finding (buffer chip = its name) when the chip has none."""
    from bmk.sim.semantics import semantics_for, simulated_chips
    findings = Findings()
    if spec.name not in simulated_chips():
        findings.add(("chip",), "buffer", "chip", spec.name, no_simulator(spec.name))
        return findings.result()
    return refusals(spec, semantics_for(spec.name), records, findings).result()


def check_buffer(source, chip):
    """([Finding], instructions) of a command buffer (cmd_hdr_t bytes), raw streams ({engine:
    bytes}) or a list of Records of `chip` (a name or a ChipSpec)."""
    from bmk.encoders import Record, decode
    from bmk.isa import load_chip
    spec = load_chip(chip) if isinstance(chip, str) else chip
    if isinstance(source, (list, tuple)) and all(isinstance(r, Record) for r in source):
        records = list(source)
        bad = not_a_mapping(records)
        if bad is not None:
            raise ArgumentError(must("check", f"source[{bad[0]}].fields", "a mapping {field name: int}", bad[1]))
    elif isinstance(source, (bytes, bytearray, memoryview, dict)):
        records = decode(spec, source)
    else:
        raise ArgumentError(must("check", "source", "a Model, a model path, bytes (a command buffer), {engine: "
                                 "bytes} (raw streams) or a list of Records", source))
    return check_records(spec, records), len(records)
