"""Checks shared by the bm1684 API functions: the seeds' recurring remarks as functions.

Each raises ArgumentError naming the call (C name without `okk_`), the argument, the value
and the rule, and records nothing. The remarks (seed 003, per function):
- "dst_addr, src_addr ... are divisible by 4 (and preferred by 128)": `local_addr(..., align=4)`;
- "shape->n, shape->h and shape->w are in [1, 65535], shape->c is in [1, 4095]": `shape`;
- "The destination and source tensors start at the same NPU" / "at the first NPU": `same_npu`,
  `first_npu`;
- "dst_stride->w and src_stride->w are only allowed to be one": `stride(..., w_one=True)`;
- "dst_addr = work_addr is not allowed": `distinct`;
- and, implied by every remark on addresses: a local tensor must fit its NPU's memory
  (`fits_local`), a system tensor the global memory (`fits_system`).
Values: Python ints, bools where C has bool, and numpy integer scalars (API.md). The checks
compute with integer arguments and never read them another way (int(), keys, divmod), so a
call template (bmk.templates) can trace them: `as_int` normalizes a checked integer.
"""
import functools

import numpy as np

from bmk import layout as chip_layout
from bmk.bm1684 import layout
from bmk.bm1684.types import dim4
from bmk.errors import ArgumentError, must
from bmk.templates import as_int
from bmk.util import is_int

SHAPE_MAX = dim4(65535, 4095, 65535, 65535)


def _is_integer(value):
    """An integer argument: an int (at once), a numpy integer or a template's Sym; not a bool."""
    return type(value) is int or (is_int(value) and not isinstance(value, (bool, np.bool_)))


def integer(call, name, value, lo, hi):
    """An integer argument in [lo, hi] (numpy integer scalars included; bool is not an int here)."""
    if not _is_integer(value) or not lo <= value <= hi:
        raise ArgumentError(must(call, name, f"an integer in [{lo}, {hi}]", value))
    return as_int(value)


def flag(call, name, value):
    """A C bool: True/False, numpy bool, or 0/1."""
    if isinstance(value, (bool, np.bool_)) or (is_int(value) and value in (0, 1)):
        return bool(value)
    raise ArgumentError(must(call, name, "a bool", value))


def local_addr(call, name, value, *, align=4):
    """A local_addr_t inside local memory, divisible by `align` (the seeds' 'divisible by 4')."""
    end = _local_end()
    if not _is_integer(value) or not 0 <= value < end:
        raise ArgumentError(must(call, name, f"a local address in [0, 0x{end:x})", value))
    if value % align:
        raise ArgumentError(must(call, name, f"divisible by {align}", value))
    return as_int(value)


@functools.cache
def _local_end():
    return layout.npu_num() * layout.local_mem_size_per_npu()


@functools.cache
def _global():
    """(base, end) of global memory."""
    g = layout.chip().space("global")
    return g.base, g.base + g.size


def system_addr(call, name, value, *, align=1):
    """A system_addr_t / global_addr_t inside global memory (API.md: global memory starts at
    0x100000000; specs/bm1684 [memory.global])."""
    base, end = _global()
    if not _is_integer(value) or not base <= value < end:
        raise ArgumentError(must(call, name, f"a system address in [0x{base:x}, 0x{end:x})", value))
    if value % align:
        raise ArgumentError(must(call, name, f"divisible by {align}", value))
    return as_int(value)


def _four(call, name, value):
    try:
        values = tuple(value)
    except TypeError:
        values = None
    if values is None or len(values) != 4:
        raise ArgumentError(must(call, name, "a dim4 (n, c, h, w)", value))
    return values


def shape(call, value, name="shape", limits=SHAPE_MAX):
    """A dim4 shape: n, h, w in [1, 65535] and c in [1, 4095] unless the remark says otherwise."""
    values = _four(call, name, value)
    if all(type(v) is int and 1 <= v <= hi for v, hi in zip(values, limits)):      # the common case, at once
        return dim4(*values)
    return dim4(*(integer(call, f"{name}.{d}", v, 1, hi) for d, v, hi in zip(dim4._fields, values, limits)))


def stride(call, name, value, *, w_one=False):
    """None (the remark's NULL layout) or a dim4 of non-negative element strides."""
    if value is None:
        return None
    values = _four(call, name, value)
    if all(type(v) is int and 0 <= v <= 2**32 - 1 for v in values):
        s = dim4(*values)
    else:
        s = dim4(*(integer(call, f"{name}.{d}", v, 0, 2**32 - 1) for d, v in zip(dim4._fields, values)))
    if w_one and s.w != 1:
        raise ArgumentError(must(call, f"{name}.w", "1 (only allowed to be one)", s.w))
    return s


def npu(addr):
    return addr // layout.local_mem_size_per_npu()


def same_npu(call, **addrs):
    """'... tensors start at the same NPU'."""
    (first, a0), *rest = addrs.items()
    for name, a in rest:
        if npu(a) != npu(a0):
            raise ArgumentError(must(call, name, f"a local address on the NPU where {first} starts "
                                     f"(NPU {npu(a0)}; same-start-NPU rule)", a))


def first_npu(call, **addrs):
    """'... tensors start at the first NPU' (NPU 0)."""
    size = layout.local_mem_size_per_npu()
    for name, a in addrs.items():
        if npu(a):
            raise ArgumentError(must(call, name, f"a local address on NPU 0, in [0, 0x{size:x}) "
                                     "(tensors start at the first NPU)", a))


def distinct(call, name, value, other_name, other):
    """'{name} = {other_name} is not allowed'."""
    if value == other:
        raise ArgumentError(must(call, name, f"different from {other_name} ({other_name} = {name} is "
                                 "not allowed)", value))


def aligned_stride(addr, shp):
    """The 128-byte aligned strides (in 32-bit words) of a local tensor at addr."""
    return layout.aligned_words(npu(addr), shp)


def fits_local(call, name, addr, shp, strd, *, itemsize=4, pack=1):
    """The tensor's bytes stay inside its NPU's memory (strides None: the aligned layout).

    Strides count elements of `itemsize` bytes; 8/16-bit local tensors are 4N/2N (pack 4 / 2),
    whose strides count 32-bit words (itemsize 4) and whose n counts groups of `pack` batches."""
    size = layout.local_mem_size_per_npu()
    s = aligned_stride(addr, shp) if strd is None else strd
    q, off = addr // size, addr % size       # not divmod: a template's Sym computes only with operators
    slots = chip_layout.slots(shp.c, layout.npu_num(), q)
    groups = -(-shp.n // pack)
    last = off + itemsize * ((groups - 1) * s.n + (slots - 1) * s.c + (shp.h - 1) * s.h + (shp.w - 1) * s.w)
    if last + itemsize > size:
        raise ArgumentError(must(call, name, f"the address of a tensor that fits its NPU's "
                                 f"{size}-byte local memory (shape {tuple(shp)}, strides "
                                 f"{tuple(s)} end at offset 0x{last + itemsize:x})", addr))


def fits_system(call, name, addr, shp, strd, *, itemsize=4):
    """The tensor's bytes stay inside global memory (strides None: the continuous layout)."""
    end = _global()[1]
    s = dim4(*chip_layout.continuous_stride(shp)) if strd is None else strd
    last = addr + itemsize * ((shp.n - 1) * s.n + (shp.c - 1) * s.c + (shp.h - 1) * s.h + (shp.w - 1) * s.w)
    if last + itemsize > end:
        raise ArgumentError(must(call, name, f"the address of a tensor that ends inside global memory "
                                 f"(before 0x{end:x}; shape {tuple(shp)}, strides {tuple(s)})",
                                 addr))


def bits(call, name, value, k):
    """An x8/x16/x32 constant (API.md): an int in [-2^(k-1), 2^k - 1], or for k = 32 a Python
    float (an fp32 value). The lowering takes its bit pattern (lowering.common.bits)."""
    if k == 32 and isinstance(value, (float, np.floating)):
        return
    integer(call, name, value, -(1 << (k - 1)), (1 << k) - 1)


def fp32(call, name, value):
    """A C float argument: any Python/numpy real number (rounded to fp32 by the lowering)."""
    if isinstance(value, (bool, np.bool_)) or not (is_int(value) or isinstance(value, (float, np.floating))):
        raise ArgumentError(must(call, name, "a float", value))
    return float(value)
