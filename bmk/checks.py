"""The argument checks every chip's API shares: the seeds' recurring rules as one vocabulary.

`Program` builds one `Check` per call (its chip's subclass, `Program.CHECK`) and hands it to
the op-table row's check function, `check(c, record)`; a chip's module functions (stride
helpers, chip queries) build their own with `Check(chip, call)`. Every failure raises
ArgumentError "<call>: <argument> must be <rule>, not <value!r>" (`c.fail`) before anything is
recorded, so a failed call changes nothing.

The vocabulary: integers and flags in a range (or the range of a spec field), a choice among
named codes, multiples, dim4 shapes and strides with per-dimension limits, local and global
addresses of the chip's memory map, the start NPU of a local address, "starts on the same
NPU", "fits its NPUs' local memory", "fits global memory" and the element-wise rule "dst is
each source in place or apart from it" (`in_place_or_apart` of `View`s, issue 32.14). Chip
subclasses add the chip's own tensor rules (bm1880 TensorLmem, bm1684 4N/2N strides, bm1684x
dtypes) and build their tensors' Views.

The call-template rule (bmk.templates), stated once, here, where chip code meets it: a
call's checks and lowering are traced with its int arguments replaced by stand-ins (`Sym`)
that compute like the ints and record every comparison. Chip code stays traceable by
computing with integer arguments and never reading them another way (no int(), no divmod,
no dict or cache keyed by them, no formatting outside an error): the vocabulary returns
`as_int(value)` for a checked integer (compute with what it returns), and `fixed(value)` for
a value that selects rather than computes (an enum code, a dtype, a key). Lowering helpers
follow the same rule. A trace that breaks it is simply not used (the call runs the ordinary
path every time), so the rule is about speed, never about correctness.
"""
import numbers

import numpy as np

from bmk.errors import ArgumentError, Shown, must
from bmk.layout import View, dim4, lanes_text, partial_overlap
from bmk.templates import as_int, fixed
from bmk.util import is_int

__all__ = ["Check", "View", "as_int", "fixed", "is_integer"]


def is_integer(value):
    """An integer argument: an int (at once), a numpy integer or a template's Sym; not a bool."""
    return type(value) is int or (is_int(value) and not isinstance(value, (bool, np.bool_)))


class Check:
    """The checks of one API call on one chip: every message names the call."""

    __slots__ = ("chip", "call", "ctx")

    def __init__(self, chip, call, ctx=None):
        self.chip, self.call, self.ctx = chip, call, ctx

    def fail(self, argument, rule, value):
        raise ArgumentError(must(self.call, argument, rule, value))

    # -- values ------------------------------------------------------------------------------
    def integer(self, name, value, lo, hi, rule=None):
        """An integer in [lo, hi] (numpy integer scalars included; a bool is not an integer)."""
        if not is_integer(value) or not lo <= value <= hi:
            self.fail(name, rule or f"an integer in [{lo}, {hi}]", value)
        return as_int(value)

    def in_field(self, name, value, engine, field, lo=0, cls=None):
        """An integer in [lo, the largest value the spec's field `field` holds] (a value the
        lowering writes into that field as it is: a shift, a pad, a stride)."""
        return self.integer(name, value, lo, self.chip.limit(engine, field, cls))

    def flag(self, name, value):
        """A C bool: True/False, a numpy bool, or 0/1."""
        if isinstance(value, (bool, np.bool_)) or (is_int(value) and value in (0, 1)):
            return bool(value)
        self.fail(name, "a bool", value)

    def choice(self, name, value, allowed, rule=None):
        """One of the codes `allowed` ({code: label}); the code selects, so it is `fixed`."""
        value = fixed(value)
        if not is_integer(value) or value not in allowed:
            self.fail(name, rule or "one of " + ", ".join(f"{label} ({code})" for code, label in allowed.items()),
                      value)
        return int(value)

    def real(self, name, value):
        """A C float: an int or a float (not a bool)."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self.fail(name, "a number", value)
        return value

    def float_constant(self, name, value, dtype):
        """A C float constant of float DType `dtype`: a real number (not a bool). inf and NaN
        are values of the type, which the hardware computes with: every chip takes them (issue
        22.9); a finite value past the type's largest one (it would round to inf) is refused."""
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            self.fail(name, f"a number (an {dtype.name} constant)", value)
        x = float(value)
        if x == x and abs(x) != float("inf") and not dtype.min <= x <= dtype.max:
            self.fail(name, f"a float within the {dtype.name} range (|{name}| <= {float(dtype.max):.8g}), "
                            "or an inf or NaN", value)
        return value

    def multiple(self, name, value, n, why=""):
        if value % n:
            self.fail(name, f"divisible by {n}{why}", value)
        return value

    def dim4(self, name, value, lo, hi):
        """A dim4 (n, c, h, w) whose dimensions are integers in [lo[i], hi[i]] (lo, hi: 4-tuples
        or one bound for every dimension)."""
        try:
            n, c, h, w = value
        except (TypeError, ValueError):
            self.fail(name, "a dim4 (n, c, h, w)", value)
        lo = lo if isinstance(lo, tuple) else (lo,) * 4
        hi = hi if isinstance(hi, tuple) else (hi,) * 4
        out = []
        for dim, v, a, b in zip("nchw", (n, c, h, w), lo, hi):
            if type(v) is not int:          # the common case (a plain int) takes no call
                if not is_integer(v):
                    self.fail(f"{name}.{dim}", f"an integer in [{a}, {b}]", v)
                v = as_int(v)
            if not a <= v <= b:
                self.fail(f"{name}.{dim}", f"an integer in [{a}, {b}]", v)
            out.append(v)
        return dim4(*out)

    def stride4(self, name, value, hi, rule="None (the default layout) or a dim4 stride"):
        """None, or a dim4 of integers in [0, hi[i]] (hi: a 4-tuple or one bound)."""
        if value is None:
            return None
        try:
            len(value)
        except TypeError:
            self.fail(name, rule, value)
        if len(value) != 4:
            self.fail(name, rule, value)
        return self.dim4(name, value, 0, hi)

    # -- memory (the chip's memory map: specs/<chip>/chip.toml) -------------------------------
    @property
    def lane_bytes(self):
        return self.chip.space("local").lane_bytes

    @property
    def npu_num(self):
        return self.chip.param("npu_num")

    def npu_index(self, name, value):
        last = self.npu_num - 1
        return self.integer(name, value, 0, last, f"an NPU index in [0, {last}]")

    def local_shown(self, addr):
        """A local address as messages show it: hex, with its NPU and offset ('0x10040 (NPU 1:0x40)')."""
        addr = int(addr)
        if addr < 0:
            return Shown(hex(addr))
        npu, offset = divmod(addr, self.lane_bytes)
        return Shown(f"0x{addr:x} (NPU {npu}:0x{offset:x})")

    def local_address(self, name, value, align=1):
        """A local address (NPU * lane bytes + offset) inside local memory, divisible by align."""
        end = self.npu_num * self.lane_bytes
        if not is_integer(value):
            self.fail(name, f"an integer (a local address in [0, 0x{end:x}))", value)
        if not 0 <= value < end:
            self.fail(name, f"a local address in [0, 0x{end:x})", Shown(hex(int(value))))
        if align > 1 and value % align:
            self.fail(name, f"divisible by {align}", self.local_shown(value))
        return as_int(value)

    def global_address(self, name, value, align=1, what="a global address"):
        """A device address inside the chip's global memory, divisible by align."""
        space = self.chip.space("global")
        end = space.base + space.size
        if not is_integer(value):
            self.fail(name, f"an integer ({what} in [0x{space.base:x}, 0x{end:x}))", value)
        if not space.base <= value < end:
            self.fail(name, f"{what} in [0x{space.base:x}, 0x{end:x})", Shown(hex(int(value))))
        if align > 1 and value % align:
            self.fail(name, f"divisible by {align}", Shown(hex(int(value))))
        return as_int(value)

    def start_npu(self, addr):
        """The NPU a (checked) local address starts on."""
        return addr // self.lane_bytes

    def same_start_npu(self, ref_name, ref_addr, **addrs):
        """Each of addrs starts on the NPU where ref starts (the seeds' 'start at the same NPU')."""
        npu = self.start_npu(ref_addr)
        for name, addr in addrs.items():
            if self.start_npu(addr) != npu:
                self.fail(name, f"an address on NPU {npu}, where {ref_name} starts (the same start NPU)",
                          self.local_shown(addr))

    def fits_lane(self, name, addr, end):
        """A local tensor whose last byte, counted from its NPU's start, is before byte `end`
        fits its NPUs' local memory."""
        if end > self.lane_bytes:
            self.fail(name, f"such that the tensor fits its NPUs' {self.lane_bytes}-byte local memory "
                            f"(it would end at byte {end})", self.local_shown(addr))

    def fits_global(self, name, addr, end):
        """A global tensor ending just before device address `end` fits global memory."""
        space = self.chip.space("global")
        if end > space.base + space.size:
            self.fail(name, f"such that the tensor fits global memory (it would end at 0x{end:x})", addr)

    # -- overlap (issue 32.14) ----------------------------------------------------------------
    def in_place_or_apart(self, dst, *sources):
        """The element-wise rule of every chip (issue 32.14): the result `dst` (a View) is each
        source View exactly (in place: the same address, element size and strides, which
        computes element by element as if apart) or shares no local memory with it. A partial
        overlap is refused: the engine would read source elements it has already overwritten,
        which the simulator does not model. Bytes are counted per NPU from the layouts
        (`layout.partial_overlap`, as the allocator and the work-tensor checks count them):
        tensors on different NPUs never overlap. None among `sources` is skipped (an absent
        operand)."""
        for src in sources:
            hit = None if src is None else partial_overlap(dst, src, self.lane_bytes, self.npu_num)
            if hit is not None:
                lanes, lo, hi = hit
                self.fail(dst.name, f"the address of {src.name}'s tensor exactly (in place: the same address and "
                                    f"layout) or of a tensor apart from it, not partly overlapping it ({src.name} is "
                                    f"{self.local_shown(src.addr).text}; on {lanes_text(lanes)} both use lane bytes "
                                    f"[0x{lo:x}, 0x{hi:x}))", self.local_shown(dst.addr))
