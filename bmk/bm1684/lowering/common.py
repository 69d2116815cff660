"""Shared helpers of the bm1684 lowering modules: op record -> ((engine, {field: value}), ...).

One function per API function, named after it, in the module of its seed group. Fields left
out keep the spec's reset defaults (specs/bm1684/*.toml), which are the vendor's; sync-id
fields are written by the scheduler at acquisition. Everything chip-specific is looked up in
the spec by name: instruction kinds (`kind("arith.add")` gives tsk_typ and tsk_eu_typ), enum
codes (`code("tiu", "opt_res0_prec", "fp32")`), the local window base. No hand-written codes.
Integer arguments are computed with, never read another way (`as_int`, not int(); no caches
keyed by them), so call templates (bmk.templates) can trace a lowering.

How the vendor fills a TIU command (the yolov5s stream, tests/golden/bm1684/): addresses are
the local window base + local_addr_t; element-wise (ar / md_scalar / md_sfu) commands carry
the shape in res0 only (opd shapes stay 1); a tensor in the 128-byte aligned layout has
short_X_str = aligned and default strides, any other layout short_X_str = free with its
n/c/h/w strides; a constant operand sets opt_opdX_const and puts the value's bits in
opdX_addr (fp32 bits for fp32 commands).
"""
import functools

import numpy as np

from bmk.bm1684.layout import chip
from bmk.bm1684.types import dim4
from bmk.errors import SpecError
from bmk.templates import as_int

TIU, GDMA = "tiu", "gdma"
SLOTS = ("res0", "opd0", "opd1", "opd2")


@functools.cache
def _format(engine):
    return chip().engine(engine).format


@functools.cache
def kind(name, engine=TIU):
    """The identifying field values of an instruction kind of the spec, e.g. kind("arith.add")."""
    ins = _format(engine).instruction(name)
    if ins is None:
        raise SpecError(f"specs/bm1684/{engine}.toml has no instruction kind {name!r}")
    return dict(ins.match)


@functools.cache
def code(engine, field, name):
    """The value of enum member `name` of a field, e.g. code(TIU, "opt_res0_prec", "int8")."""
    value = _format(engine).field(field).enum_value(name)
    if value is None:
        raise SpecError(f"specs/bm1684/{engine}.toml field {field} has no enum member {name!r}")
    return value


@functools.cache
def local_base():
    """Device address of local_addr_t 0 (the TIU and GDMA see local memory through this window)."""
    return chip().space("local").base


@functools.cache
def _parts(engine, name):
    """((part field, width), ...) of a composed value, low part first (the spec's `composed`)."""
    fmt = _format(engine)
    return tuple((part, fmt.by_name[part].width) for part in dict(fmt.composed)[name])


def split(engine, name, value):
    """{part field: value} of a value the spec composes from several fields (e.g. a 40-bit
    address): the spec's Format.split, its parts looked up once."""
    out = {}
    for part, width in _parts(engine, name):
        out[part] = value & ((1 << width) - 1)
        value >>= width
    return out


def tiu(kind_name, **fields):
    """A TIU descriptor of an instruction kind: ("tiu", {kind fields, **fields})."""
    return TIU, {**kind(kind_name), **fields}


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


def tensor(f, slot, addr, stride, *, prec="fp32", signed=None, shape=None):
    """Fill TIU operand `slot` (res0, opd0, opd1, opd2): address, precision, sign, layout.

    stride None: the 128-byte aligned layout (short_X_str aligned; the engine derives the
    strides from the shape); otherwise the free layout with the given (n, c, h, w) strides.
    shape: written only where the vendor writes it (conv/pool operands, res0 always)."""
    f[f"{slot}_addr"] = local_base() + addr
    f[f"opt_{slot}_prec"] = code(TIU, f"opt_{slot}_prec", prec)
    if signed is not None:
        f[f"opt_{slot}_sign"] = int(signed)
    if stride is None:
        f[f"short_{slot}_str"] = code(TIU, f"short_{slot}_str", "aligned")
    else:
        f[f"short_{slot}_str"] = code(TIU, f"short_{slot}_str", "free")
        f[f"{slot}_n_str"], f[f"{slot}_c_str"], f[f"{slot}_h_str"], f[f"{slot}_w_str"] = stride
    if shape is not None:
        f[f"{slot}_n"], f[f"{slot}_c"], f[f"{slot}_h"], f[f"{slot}_w"] = shape
    return f


def const(f, slot, bits, *, prec="fp32", signed=None):
    """Operand `slot` is the constant whose bit pattern is `bits` (an unsigned 32-bit int)."""
    f[f"opt_{slot}_const"] = 1
    f[f"{slot}_addr"] = bits
    f[f"opt_{slot}_prec"] = code(TIU, f"opt_{slot}_prec", prec)
    if signed is not None:
        f[f"opt_{slot}_sign"] = int(signed)
    return f
