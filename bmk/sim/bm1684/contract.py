"""No silent field: what each bm1684 instruction kind does with every field of its command.

Every semantics function of this package carries a `Contract` (attached with `@contract`):
- reads: the fields it executes (it validates their values itself and raises
  SimulationError, naming the field and the value, for a value it does not model);
- ignores: {field: why it cannot change the result} (an operand the kind does not read, a
  shape the engine takes from res0, ...).
Every other field must hold its neutral value, the value meaning "this feature is off":
the spec's reset default (specs/bm1684/*.toml, from the vendor's reset values) unless
NEUTRAL names another. `check(chip, engine, fields)` (the Semantics' check, run once per
distinct instruction before anything executes) raises SimulationError naming the kind, the
field and its value for any field that is neither executed, nor ignored, nor neutral.

Fields every kind of an engine treats alike (ENGINE_IGNORES): enables, ids and waits order
the commands (the simulator's run loop reads them), interrupt/debug/prefetch flags change
no data, the kind-selecting fields (tsk_typ, tsk_eu_typ, special_func) name the kind itself.
Reserved fields must be 0 (their neutral value).
"""
import attrs

from bmk.errors import SimulationError, refused_field

ORDERING = "orders commands only (the run loop's sync ids), changes no data"
CONTROL = "an engine control flag (enable, interrupt, prefetch, debug, descriptor chaining): changes no data"
KIND = "selects the instruction kind itself (the spec's match)"

ENGINE_IGNORES = {
    "tiu": {
        "cmd_en": CONTROL, "cmd_end": CONTROL, "cmd_id_en": CONTROL, "cmd_keep": CONTROL, "cmd_intr_en": CONTROL,
        "cmd_id_tpu": ORDERING, "cmd_id_gdma": ORDERING, "tsk_typ": KIND, "tsk_eu_typ": KIND,
    },
    "gdma": {
        "pio_gdma_enable": CONTROL, "des_type": CONTROL, "chain_end": CONTROL, "intr_en": CONTROL,
        "barrier_enable": ORDERING, "prefetch_disable": CONTROL, "hold_des_value": CONTROL,
        "single_step": CONTROL, "debug_mode": CONTROL,
        "cmd_id": ORDERING, "eng0_sync_id": ORDERING, "eng1_sync_id": ORDERING, "eng3_sync_id": ORDERING,
        "special_func": KIND,
    },
}

# Neutral values that are not the reset default: none so far (opt_relu's default 1 is what
# every vendor and OKKernel command carries and reads as "no ReLU", common.py).
NEUTRAL = {}

# Fields of one TIU operand slot: its data (where and how it is read) and the rest (its shape,
# insertion and shift fields, which each kind reads or ignores by name).
DATA = ("{}_addr", "{}_n_str", "{}_c_str", "{}_h_str", "{}_w_str", "opt_{}_prec", "opt_{}_sign", "opt_{}_const",
        "short_{}_str")
OTHER = ("{}_n", "{}_c", "{}_h", "{}_w", "{}_x_ins0", "{}_y_ins0", "{}_h_shift", "{}_w_shift")


def slot_fields(chip, slot, engine="tiu", data_only=False):
    """The fields of operand `slot` (res0, opd0..opd3, res1) the engine's format has: its data
    fields (data_only), or all of them."""
    names = [p.format(slot) for p in DATA + (() if data_only else OTHER)]
    have = chip.derived(("bm1684", "field_names", engine), lambda: {f.name for f in chip.fmt(engine).fields})
    return [n for n in names if n in have]


@attrs.frozen
class Contract:
    reads: frozenset = attrs.field(converter=frozenset, factory=frozenset)
    ignores: dict = attrs.field(converter=dict, factory=dict)
    # slots whose every field is read / whose every field is ignored (with the reason)
    read_slots: tuple = ()
    unread_slots: dict = attrs.field(converter=dict, factory=dict)

    def resolved(self, chip, engine, kind):
        """(fields read, {field: reason ignored}) with the slots expanded."""
        def compute():
            reads = set(self.reads)
            for slot in self.read_slots:
                reads.update(slot_fields(chip, slot, engine, data_only=True))
            ignores = dict(ENGINE_IGNORES[engine])
            for slot, why in self.unread_slots.items():
                ignores.update(dict.fromkeys(slot_fields(chip, slot, engine), why))
            ignores.update(self.ignores)
            for name in reads:
                ignores.pop(name, None)
            return frozenset(reads), ignores
        return chip.derived(("bm1684", "contract", engine, kind), compute)


REFUSED = "the kind is refused whatever its fields say (its meaning is not public)"


def refused(fn):
    """Attach the contract of a kind that refuses every command: no field is executed, so none
    is checked either (the refusal itself names the kind and why)."""
    fn.contract = Contract(ignores={"*": REFUSED})
    fn.refused = True
    return fn


def contract(**kwargs):
    """Decorator: attach a Contract to a semantics function."""
    c = Contract(**kwargs)

    def attach(fn):
        fn.contract = c
        return fn
    return attach


def neutral(chip, engine, name):
    return NEUTRAL.get(name, chip.field(engine, name).default)


def _neutral_fields(chip, engine, kind, c):
    """((field, neutral value, reserved)) of the fields the kind must find neutral."""
    reads, ignores = c.resolved(chip, engine, kind)
    if "*" in ignores:
        return ()
    return tuple((f.name, neutral(chip, engine, f.name), f.reserved) for f in chip.fmt(engine).fields
                 if f.name not in reads and f.name not in ignores)


def check_fields(chip, engine, kind, fn, fields):
    """SimulationError for a field that is neither executed, ignored nor neutral (module doc)."""
    c = getattr(fn, "contract", None)
    if c is None:
        raise SimulationError(f"{kind}: its semantics must state what they do with every field (no contract)")
    checked = chip.derived(("bm1684", "neutral", engine, kind), _neutral_fields, chip, engine, kind, c)
    for name, want, reserved in checked:
        value = fields.get(name, want)
        if value != want:
            what = "reserved" if reserved else "not modelled by this kind"
            if isinstance(value, int):
                raise refused_field(f"{kind}: field {name} = {value:#x} is {what} (the simulator executes it only "
                                    f"at its neutral value {want:#x})", name, value)
            raise refused_field(f"{kind}: field {name} = {value!r} is {what}", name, value)
