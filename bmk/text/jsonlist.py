"""A listing as JSON: `bmk-disasm --json` writes it, `bmk-asm --json` reads it back.

The document is {"chip": name, "instructions": [...]}, one object per instruction in program
order: its index, where it was (`group` for a model's, `core`, `stream`, `offset`), its
`engine`, instruction `class`, `kind` (the vendor's op name, or null), every field of its
class by name as an integer (`fields`), its cmd_hdr_t `header` fields (the Record's), and for
an engine with no public layout its bytes in hex (`data`). Every field is written, so the
document is the bytes: bmk-asm gives back the same command buffer or streams. The objects are
written one per line as they are made (a long stream never becomes one big string)."""
import json

from bmk.encoders.framing import OPAQUE, Record
from bmk.encoders.fields import as_dict
from bmk.errors import BmkError


def record_object(index, rec, group=None):
    """The JSON object of one Record."""
    obj = {"index": index}
    if group is not None:
        obj["group"] = group
    obj.update(core=rec.core, stream=rec.stream, offset=rec.offset, engine=rec.engine, **{"class": rec.cls},
               kind=rec.kind, fields=as_dict(rec.fields), header=dict(rec.header))
    if rec.data is not None:
        obj["data"] = bytes(rec.data).hex()
    return obj


def iter_json(chip, groups):
    """Lines of the JSON document of `groups`: [(group label or None, records)]."""
    yield f'{{"chip": {json.dumps(chip.name)}, "instructions": ['
    index, sep = 0, " "
    for label, records in groups:
        for rec in records:
            yield f"{sep}{json.dumps(record_object(index, rec, label))}"
            index, sep = index + 1, ","
    yield "]}"


def _fail(name, where, what):
    raise BmkError(f"{name}: {where}: {what}")


def records_from_json(text, chip, name):
    """A JSON listing (iter_json's document) -> (chip spec, [(index, Record)], group labels seen).
    `chip`: the spec to use when the document names none (a named chip must agree). Each
    instruction is checked (engine, class, every field a known name with an integer value that
    fits its bits, header values integers): errors name the file and the instruction."""
    from bmk.isa import load_chip
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        line = getattr(e, "lineno", None)
        raise BmkError(f"{name}:{line}: not JSON: {getattr(e, 'msg', e)}" if line else f"{name}: not JSON: {e}")
    if not isinstance(doc, dict) or not isinstance(doc.get("instructions"), list):
        _fail(name, "document", 'must be {"chip": NAME, "instructions": [...]} (what bmk-disasm --json writes)')
    named = doc.get("chip")
    if named is not None:
        if not isinstance(named, str):
            _fail(name, "chip", f"must be a chip name, not {named!r}")
        try:
            spec = load_chip(named)
        except BmkError as e:
            _fail(name, "chip", str(e))
        if chip is not None and chip.name != spec.name:
            _fail(name, "chip", f"the document says {spec.name}, --chip says {chip.name}")
    elif chip is None:
        _fail(name, "chip", "the document names no chip: give --chip")
    else:
        spec = chip
    out, labels = [], []
    for i, obj in enumerate(doc["instructions"]):
        out.append((i, _record(spec, obj, name, f"instructions[{i}]")))
        label = obj.get("group")
        if label not in labels:
            labels.append(label)
    return spec, out, labels


def _int(name, where, key, value, hi=None):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (hi is not None and value > hi):
        rule = f"an integer in [0, {hi}]" if hi is not None else "a non-negative integer"
        _fail(name, where, f"{key} must be {rule}, not {value!r}")
    return value


def _record(spec, obj, name, where):
    if not isinstance(obj, dict):
        _fail(name, where, f"must be an object, not {type(obj).__name__}")
    engine = obj.get("engine")
    try:
        eng = spec.engine(engine) if isinstance(engine, str) else None
    except BmkError:            # SpecError: no such engine
        eng = None
    if eng is None:
        _fail(name, where, f"engine must be one of {[e.name for e in spec.stream_engines]}, not {engine!r}")
    core = _int(name, where, "core", obj.get("core", 0))
    header = obj.get("header", {})
    if not isinstance(header, dict):
        _fail(name, where, f"header must be an object, not {type(header).__name__}")
    header = {k: _int(name, where, f"header.{k}", v) for k, v in header.items()}
    if eng.opaque:
        data = obj.get("data")
        try:
            data = bytes.fromhex(data)
        except (TypeError, ValueError):
            _fail(name, where, f"data must be the {eng.name} command's bytes in hex, not {data!r}")
        return Record(eng.name, OPAQUE, None, {}, header=header, core=core, data=data)
    cls_name = obj.get("class")
    cls = next((c for c in eng.classes if c.name == cls_name), None)
    if cls is None:
        _fail(name, where, f"class must be one of {[c.name for c in eng.classes]}, not {cls_name!r}")
    fields = obj.get("fields")
    if not isinstance(fields, dict):
        _fail(name, where, f"fields must be an object, not {type(fields).__name__}")
    unknown = sorted(set(fields) - set(cls.by_name))
    if unknown:
        _fail(name, where, f"{eng.name} {cls.name} has no field {unknown[0]!r}")
    values = {f.name: _int(name, where, f"fields.{f.name}", fields.get(f.name, f.default), f.max) for f in cls.fields}
    ins = cls.instruction_of(values)
    return Record(eng.name, cls.name, ins.name if ins else None, values, header=header, core=core)
