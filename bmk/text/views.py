"""Readable values in listings and diffs (issue 22.4): views of fields, from the specs' display tables.

A view shows one or more fields of a command as one value, and reads that value back to
exactly those fields' bits. The printer uses a view on a command only when reading its text
gives the command's own values back (`View.text`); otherwise the fields print as they are,
so a listing always reassembles to the same bytes. The views of an engine come from its
`[engines.X.display]` table (specs/README.md "Display"; `bmk.isa.spec.Display`):

- address (`address_fields`, and each joined row): a value that is a local address prints as
  the API takes it, `lmem:0x41000(npu1+0x1000)` (local_addr_t, then its NPU and the offset in
  that NPU's lane): the same text in every engine, whether its field holds the local address
  (BM1684X TIU) or the device address (BM1684 TIU, the GDMA: local memory's base added);
- joined (`joined`): a composed row (a 40-bit address, a 64-bit lane mask) prints as one value
  under the row's name (`src_addr=0x100010000`), its parts not at all;
- constant (`constants`): an operand field that holds a float constant (its const flag set, a
  float precision) prints as the number, `opd1=1e-05`, the shortest text that reads back to
  its bits (fp32, fp16; bf16 in the low 16 bits);
- rounding (`rounding`): `round=half_to_even` for the field holding a rounding mode on the
  kinds that read it (always shown on those kinds);
- direction (`direction`): `dir=S2L` on every line that has both addresses, from the memory
  spaces of the source and the destination (global S, local L); derived, so the parser checks
  it against the addresses and stores nothing.
A field of `shown` prints on every line, even at its default value (BM1684 GDMA `direction`).
"""
import re

LOCAL = "lmem:"
_LOCAL = re.compile(r"^lmem:(0x[0-9a-fA-F]+|\d+)(?:\(npu(\d+)\+(0x[0-9a-fA-F]+|\d+)\))?$")
_FLOATS = ("fp32", "fp16", "bf16")


class Text(str):
    """A value already formatted by a view (diffs print it as it is)."""


class ViewError(ValueError):
    """A view's text that reads as no value of its fields (the parser turns it into an AsmError)."""


class View:
    """A value shown for some fields. `parts`: the fields it sets; `inputs`: every field its
    text depends on (the parts, then e.g. a const flag); `always`: shown on every line."""

    always = False

    def __init__(self, name, parts, inputs=None):
        self.name, self.parts = name, tuple(parts)
        self.inputs = tuple(inputs) if inputs is not None else self.parts
        self._memo = {}

    def text(self, values):
        """The text of this view for a command's values, or None when it shows nothing or would
        not read back to the same bits (memoized on the inputs)."""
        key = tuple(values.get(f, 0) for f in self.inputs)
        hit = self._memo.get(key, self)
        if hit is not self:
            return hit
        text = self.show(values)
        if text is not None:
            try:
                back = self.read(text, values)
            except ViewError:
                back = None
            if back != {p: values.get(p, 0) for p in self.parts}:
                text = None
        if len(self._memo) >= 4096:
            self._memo.clear()
        self._memo[key] = text
        return text

    def show(self, values):
        raise NotImplementedError

    def read(self, text, values):
        """{part: value} that `text` stands for, given the line's other values; ViewError if none."""
        raise NotImplementedError


def _int(text):
    try:
        return int(text, 0) if not text.isdigit() else int(text)
    except ValueError:
        return None


class Addresses:
    """How an engine's address values read (Display.addresses) against the chip's memory map."""

    def __init__(self, chip, form):
        self.form = form
        try:
            self.local = chip.space("local")
        except Exception:
            self.local = None

    def local_of(self, value):
        """The local address (local_addr_t) an address value stands for, or None."""
        sp = self.local
        if sp is None or not sp.lane_bytes:
            return None
        if self.form == "local":
            return value if value < sp.size else None
        return value - sp.base if sp.base <= value < sp.base + sp.size else None

    def show(self, value):
        addr = self.local_of(value)
        if addr is None:
            return None
        npu, offset = divmod(addr, self.local.lane_bytes)
        return f"{LOCAL}0x{addr:x}(npu{npu}+0x{offset:x})"

    def read(self, text):
        """An address text -> the value its field holds; plain integers as they are."""
        if not text.startswith(LOCAL):
            value = _int(text)
            if value is None:
                raise ViewError(f"expected an integer or {LOCAL}ADDR")
            return value
        m = _LOCAL.match(text)
        sp = self.local
        if m is None or sp is None:
            raise ViewError(f"expected {LOCAL}ADDR or {LOCAL}ADDR(npuN+OFFSET), e.g. lmem:0x41000(npu1+0x1000)")
        addr = _int(m.group(1))
        if not 0 <= addr < sp.size:
            raise ViewError(f"local address 0x{addr:x} is past local memory (0x{sp.size:x} bytes)")
        if m.group(2) is not None and (int(m.group(2)), _int(m.group(3))) != divmod(addr, sp.lane_bytes):
            npu, offset = divmod(addr, sp.lane_bytes)
            raise ViewError(f"local address 0x{addr:x} is npu{npu}+0x{offset:x}, not npu{m.group(2)}+{m.group(3)}")
        return addr if self.form == "local" else sp.base + addr


class AddressView(View):
    """One address field, shown as an address (`lmem:...` for local memory); not while its
    operand's const flag (`flag`) says the field holds a constant."""

    def __init__(self, field, addresses, flag=None):
        super().__init__(field.name, (field.name,), (field.name,) + ((flag,) if flag else ()))
        self.field, self.addresses, self.flag = field, addresses, flag

    def show(self, values):
        if self.flag and values.get(self.flag, 0) == 1:
            return None
        return self.addresses.show(values.get(self.field.name, 0))

    def read(self, text, values):
        value = self.addresses.read(text)
        if not 0 <= value <= self.field.max:
            raise ViewError(f"{self.name} must be in [0, 0x{self.field.max:x}] ({self.field.width} bits)")
        return {self.field.name: value}


class JoinedView(View):
    """A composed row shown as one value (an address: `lmem:` for local memory, else hex)."""

    def __init__(self, fmt, name, addresses):
        parts = dict(fmt.composed)[name]
        super().__init__(name, parts)
        self.fmt, self.addresses = fmt, addresses
        self.width = sum(fmt.by_name[p].width for p in parts)
        self.is_address = name.endswith("addr")

    def show(self, values):
        value = self.fmt.compose(self.name, values)
        if self.is_address:
            return self.addresses.show(value) or hex(value)
        return hex(value)

    def read(self, text, values):
        value = self.addresses.read(text) if self.is_address else _int(text)
        if value is None or not 0 <= value < 1 << self.width:
            raise ViewError(f"{self.name} must be in [0, 0x{(1 << self.width) - 1:x}] ({self.width} bits)")
        return self.fmt.split(self.name, value)


def _float_text(bits, prec):
    """The shortest text that reads back to a float constant's bits, or None (numpy imported
    here: a listing without float constants never loads it)."""
    import numpy as np

    from bmk.numerics import bf16_to_fp32
    if prec == "fp32":
        return str(np.uint32(bits).view(np.float32)) if bits < 1 << 32 else None
    if bits >= 1 << 16:
        return None
    if prec == "fp16":
        return str(np.uint16(bits).view(np.float16))
    value = float(bf16_to_fp32(np.array([bits], np.uint16))[0])
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if _float_bits(text, "bf16") == bits:
            return text
    return None


def _float_bits(text, prec):
    import numpy as np

    from bmk.numerics import fp32_to_bf16
    try:
        value = float(text)
    except ValueError:
        raise ViewError("expected a number") from None
    with np.errstate(over="ignore"):
        if prec == "fp32":
            return int(np.float32(value).view(np.uint32))
        if prec == "fp16":
            return int(np.float16(value).view(np.uint16))
        return int(fp32_to_bf16(np.array([value], np.float32))[0])


class ConstantView(View):
    """An operand field holding a float constant (its const flag 1, a float precision), shown
    as the number under the operand's name."""

    def __init__(self, fmt, name, addr, flag, prec):
        super().__init__(name, (addr,), (addr, flag, prec))
        self.addr, self.flag, self.prec = addr, flag, prec
        self.precs = dict((v, n) for n, v in fmt.by_name[prec].enum)
        self.max = fmt.by_name[addr].max

    def _prec(self, values):
        if values.get(self.flag, 0) != 1:
            return None
        prec = self.precs.get(values.get(self.prec, 0))
        return prec if prec in _FLOATS else None

    def show(self, values):
        prec = self._prec(values)
        return None if prec is None else _float_text(values.get(self.addr, 0), prec)

    def read(self, text, values):
        prec = self._prec(values)
        if prec is None:
            raise ViewError(f"{self.name}=<number> is a constant operand: it needs {self.flag}=1 and a float "
                            f"{self.prec} ({', '.join(_FLOATS)})")
        return {self.addr: _float_bits(text, prec)}


class RoundingView(View):
    """The field holding a rounding mode, by the mode's name (always shown on its kinds)."""

    always = True

    def __init__(self, rounding):
        super().__init__("round", (rounding.field,))
        self.field = rounding.field
        self.names = {v: n for n, v in rounding.modes}
        self.codes = dict(rounding.modes)

    def show(self, values):
        return self.names.get(values.get(self.field, 0))

    def read(self, text, values):
        code = self.codes.get(text, _int(text))
        if code is None:
            raise ViewError(f"round must be one of {', '.join(self.codes)}")
        return {self.field: code}


class DirectionView(View):
    """`dir=S2L`: the memory spaces of the source and destination addresses (derived: the
    parser checks it, nothing is stored)."""

    always = True

    def __init__(self, chip, fmt, direction):
        src, dst, spaces = direction
        parts = dict(fmt.composed)
        super().__init__("dir", (), tuple(parts[src]) + tuple(parts[dst]))
        self.chip, self.fmt, self.src, self.dst = chip, fmt, src, dst
        self.letters = dict(spaces)

    def _side(self, values, row):
        sp = self.chip.space_of(self.fmt.compose(row, values))
        return None if sp is None else self.letters.get(sp.name, sp.name.upper())

    def show(self, values):
        a, b = self._side(values, self.src), self._side(values, self.dst)
        return None if a is None or b is None else f"{a}2{b}"

    def read(self, text, values):
        return {}

    def check(self, text, values):
        """A message when `text` does not match the line's addresses, else None."""
        got = self.show(values)
        if got != text:
            return f"dir={text} does not match the addresses ({self.src} and {self.dst} make it {got or 'unknown'})"
        return None


def views_for(chip, eng, fmt, ins):
    """The views of a class and kind (ins: the Instruction, or None for `raw`), in field order of
    their first part; parts-less ones (direction) first. Built once per (engine, class, kind)."""
    key = ("bmk.text.views", eng.name, fmt.name, ins.name if ins is not None else None)
    return chip.derived(key, lambda: _build(chip, eng, fmt, ins))


def _build(chip, eng, fmt, ins):
    d = eng.display
    addresses = Addresses(chip, d.addresses)
    out = []
    if d.direction is not None and all(r in dict(fmt.composed) for r in d.direction[:2]):
        out.append(DirectionView(chip, fmt, d.direction))
    composed = dict(fmt.composed)
    for name in d.joined:
        if name in composed:
            out.append(JoinedView(fmt, name, addresses))
    consts = {c[1]: c for c in d.constants if c[1] in fmt.by_name and c[2] in fmt.by_name}
    for fname in d.address_fields:
        const = consts.get(fname)
        if const is not None and const[3] in fmt.by_name:    # first: a constant's field is not an address
            out.append(ConstantView(fmt, *const))
        if fname in fmt.by_name:
            out.append(AddressView(fmt.by_name[fname], addresses, const[2] if const else None))
    r = d.rounding
    if r is not None and ins is not None and ins.name in r.kinds and r.field in fmt.by_name:
        out.append(RoundingView(r))
    order = {f.name: i for i, f in enumerate(fmt.fields)}
    return tuple(sorted(out, key=lambda v: min((order[p] for p in v.parts), default=-1)))   # stable: const first
