"""No silent field (issue 21 item 1): every field of a command either changes nothing, or the
kind executes it, or it must hold 0.

For each kind a family module declares the fields its semantics execute (`FIELDS[kind]`:
read, and either honoured or refused by value in the kind's function). `check` goes through
every field of the command's class:
- head fields never change what a command computes (`head(chip, engine)`, from the spec:
  Engine.head_fields, under the family's names): the sync ids and their enable (bm1684x
  cmd_id, cmd_id_dep, cmd_id_en: they only order commands), the selector fields that named
  the kind (cmd_short, tsk_typ, tsk_eu_typ, cmd_type, cmd_special_function) and the engine's
  `inert` fields (pwr_step, a power/timing knob; intr_en, a host interrupt when the command
  ends; SYSID's cmd_id_eng1..3); reserved fields (the spec marks them) carry nothing;
- a field the kind executes is checked by the kind's function, and where the refusal of a value
  depends on the fields alone (a precision, a flag, a shift count), also here, before any run:
  a family module may export CHECKS = {kind: fn(chip, fields)}, called after the zero rule,
  that raises `refuse(...)` for a value its kind does not execute (so `bmk check` lists it);
- any other field must be 0: bmk does not know what another value does to the result, so a
  command setting it is refused (SimulationError naming the kind, the field and the value).
"""
from bmk.errors import SimulationError, refused_field



def head(chip, engine):
    """The names of an engine's head fields (Engine.head_fields of the chip's spec)."""
    return chip.engine(engine).head_fields


def operand(name, shape=False, strides=True):
    """The fields of a TIU operand: address, precision, sign, constant flag, layout code and
    its free strides (and its own n/c/h/w when `shape`)."""
    out = {f"{name}_addr", f"{name}_prec", f"{name}_sign", f"{name}_const", f"{name}_str"}
    if strides:
        out |= {f"{name}_{d}_str" for d in "nchw"}
    if shape:
        out |= {f"{name}_{d}" for d in "nchw"}
    return out


def names(*groups):
    out = set()
    for g in groups:
        out |= {g} if isinstance(g, str) else set(g)
    return frozenset(out)


def kind_of(chip, engine, fields):
    """(class, kind name) of a decoded field dict."""
    cls = chip.engine(engine).class_for(fields)
    if cls is None:
        raise SimulationError(f"{engine} fields must select an instruction class")
    ins = cls.instruction_of(fields)
    if ins is None:
        raise SimulationError(f"{engine} class {cls.name} fields must name one of its instruction kinds")
    return cls, ins.name


def refuse(kind, field, value, rule):
    """The SimulationError of a static check: kind, field, value and the rule broken."""
    return refused_field(f"{kind}: {field} {rule}, not {value!r}", field, value)


def check_input_precision(kind, f, field, why):
    """Refuse a precision field `field` other than the input's (opd0_prec): `why` says whose."""
    if f.get(field, 0) != f.get("opd0_prec", 0):
        raise refuse(kind, field, f.get(field, 0), f"must be opd0_prec ({f.get('opd0_prec', 0)}): {why}")


def check(chip, engine, fields, executes, checks=None):
    """SimulationError for a field that is neither a head field, reserved, nor executed by the kind
    (executes: {(engine, kind): frozenset of field names}), and holds a value other than 0;
    then the kind's own static check (checks: {(engine, kind): fn(chip, fields)}), if any."""
    cls, kind = kind_of(chip, engine, fields)
    done = executes.get((engine, kind))
    if done is None:
        return
    inert = head(chip, engine)
    for fld in cls.fields:
        name = fld.name
        if fld.reserved or name in inert or name in done:
            continue
        value = fields.get(name, 0)
        if value:
            raise refused_field(f"{kind} ({cls.name}): {name} must be 0 (bmk's {kind} does not execute it, so it "
                                f"cannot honour another value), not {value!r}", name, value)
    fn = (checks or {}).get((engine, kind))
    if fn is not None:
        fn(chip, fields)
