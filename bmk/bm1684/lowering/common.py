"""Field builders shared by the bm1684 lowerings: op record -> ((engine, {field: value}), ...).

Every code comes from the chip given to the lowering (its spec, specs/bm1684/*.toml):
instruction kinds (`chip.kind("tiu", "arith.add")` gives tsk_typ and tsk_eu_typ), enum codes
(`chip.code("tiu", "opt_res0_prec", "fp32")`), the local window base, composed addresses.
Fields left out keep the spec's reset defaults, which are the vendor's; sync-id fields are
written by the scheduler at acquisition. Lowerings compute with their int arguments (`as_int`)
and read codes through `fixed` (the call-template rule: bmk/checks.py).

How the vendor fills a TIU command (the yolov5s stream, tests/golden/bm1684/): addresses are
the local window base + local_addr_t; element-wise (ar / md_scalar / md_sfu) commands carry
the shape in res0 only (opd shapes stay 1); a tensor in the 128-byte aligned layout has
short_X_str = aligned and default strides, any other layout short_X_str = free with its
n/c/h/w strides; a constant operand sets opt_opdX_const and puts the value's bits in
opdX_addr (fp32 bits for fp32 commands).
"""
from typing import NamedTuple

import numpy as np

from bmk.checks import as_int
from bmk.layout import dim4

TIU, GDMA = "tiu", "gdma"
SLOTS = ("res0", "opd0", "opd1", "opd2")


class Tables(NamedTuple):
    """What every lowered TIU operand reads from the chip, looked up once per chip (derived)."""
    local_base: int         # device address of local_addr_t 0
    prec: dict              # slot -> {precision member: code} (opt_<slot>_prec)
    layout: dict            # slot -> {layout member: code} (short_<slot>_str)
    kinds: dict             # instruction kind -> its identifying {field: value}, filled as asked


def _tables(chip):
    return Tables(chip.space("local").base,
                  {s: {m: v for v, m in chip.members(TIU, f"opt_{s}_prec").items()} for s in SLOTS},
                  {s: {m: v for v, m in chip.members(TIU, f"short_{s}_str").items()} for s in SLOTS}, {})


def tables(chip):
    return chip.derived(("bm1684.lowering", "tables"), _tables, chip)


def tiu(chip, kind, **fields):
    """A TIU descriptor of an instruction kind: ("tiu", {kind fields, **fields})."""
    kinds = tables(chip).kinds
    known = kinds.get(kind)
    if known is None:
        known = kinds[kind] = chip.kind(TIU, kind)
    return TIU, {**known, **fields}


def _code(chip, table, slot, field, member):
    code = table[slot].get(member)
    return chip.code(TIU, field, member) if code is None else code      # (SpecError when it names none)


def fp32_bits(value):
    """The IEEE binary32 bit pattern of a Python float (round to nearest, as a C float cast)."""
    return int(np.array(value, np.float32).view(np.uint32))


def bits(value, k=32):
    """An x8/x16/x32 argument (checked) as its k-bit pattern: ints modulo 2^k, floats as fp32."""
    if isinstance(value, (float, np.floating)):
        return fp32_bits(value)
    return as_int(value) & ((1 << k) - 1)


def shape4(value):
    """A checked shape argument as a dim4 of ints."""
    return dim4(*map(as_int, value))


def stride4(value):
    """A checked stride argument: None, or a dim4 of ints."""
    return None if value is None else dim4(*map(as_int, value))


def local(chip, addr):
    """The device address of local_addr_t addr (the TIU and GDMA see local memory through the
    window specs/bm1684 [memory.local])."""
    return tables(chip).local_base + as_int(addr)


def tensor(chip, f, slot, addr, stride, *, prec="fp32", signed=None, shape=None):
    """Fill TIU operand `slot` (res0, opd0, opd1, opd2): address, precision, sign, layout.

    stride None: the 128-byte aligned layout (short_X_str aligned; the engine derives the
    strides from the shape); otherwise the free layout with the given (n, c, h, w) strides.
    shape: written only where the vendor writes it (conv/pool operands, res0 always)."""
    t = tables(chip)
    f[f"{slot}_addr"] = t.local_base + as_int(addr)
    f[f"opt_{slot}_prec"] = _code(chip, t.prec, slot, f"opt_{slot}_prec", prec)
    if signed is not None:
        f[f"opt_{slot}_sign"] = int(signed)
    if stride is None:
        f[f"short_{slot}_str"] = _code(chip, t.layout, slot, f"short_{slot}_str", "aligned")
    else:
        f[f"short_{slot}_str"] = _code(chip, t.layout, slot, f"short_{slot}_str", "free")
        f[f"{slot}_n_str"], f[f"{slot}_c_str"], f[f"{slot}_h_str"], f[f"{slot}_w_str"] = stride
    if shape is not None:
        f[f"{slot}_n"], f[f"{slot}_c"], f[f"{slot}_h"], f[f"{slot}_w"] = shape
    return f


def per_channel(chip, f, slot, addr):
    """Operand `slot` is an fp32 per-channel tensor (short_X_str offset: one element per
    channel, the [1, C, 1, 1] compact layout) at local_addr_t addr."""
    f[f"{slot}_addr"] = local(chip, addr)
    t = tables(chip)
    f[f"opt_{slot}_prec"] = _code(chip, t.prec, slot, f"opt_{slot}_prec", "fp32")
    f[f"short_{slot}_str"] = _code(chip, t.layout, slot, f"short_{slot}_str", "offset")
    return f


def const(chip, f, slot, bits, *, prec="fp32", signed=None):
    """Operand `slot` is the constant whose bit pattern is `bits` (an unsigned 32-bit int)."""
    f[f"opt_{slot}_const"] = 1
    f[f"{slot}_addr"] = bits
    f[f"opt_{slot}_prec"] = _code(chip, tables(chip).prec, slot, f"opt_{slot}_prec", prec)
    if signed is not None:
        f[f"opt_{slot}_sign"] = int(signed)
    return f
