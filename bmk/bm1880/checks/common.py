"""Argument checks: one function per API function, named after it (seed 002, ch. 4 rules,
plus the layout rules of the BM1880v2 encoding in isa-facts/bm1880-notes.md).

Each raises ArgumentError before anything is recorded, with the message
"<call>: <argument> must be <rule>, not <value!r>". Field-width limits are checked once
more, generically, when the lowered descriptor is packed (see bmk.program.Program._pack).
"""
from bmk.bm1880.lowering.common import gmem_limit
from bmk.errors import ArgumentError, must
from bmk.tensor import TensorLmem
from bmk.util import is_int


class Check:
    """Validation helpers bound to one call name, so every message names the call."""

    def __init__(self, ctx, call):
        self.ctx, self.call = ctx, call

    def fail(self, argument, rule, value):
        raise ArgumentError(must(self.call, argument, rule, value))

    def tensor(self, name, t, *, matrix=False, aligned=None, la_multiple=None):
        if not isinstance(t, TensorLmem):
            self.fail(name, "a TensorLmem (not NULL)" if t is None else "a TensorLmem", t)
        self.live(name, t)
        if t.is_matrix != matrix:
            self.fail(name, "a matrix (shape_t2)" if matrix else "a tensor (shape_t4)", t)
        if aligned is not None and t.aligned != aligned:
            self.fail(name, "aligned (tl_prealloc_align / CTRL_AL)" if aligned else "unaligned", t)
        if la_multiple and t.la % la_multiple:
            self.fail(f"{name}.la", f"a multiple of {la_multiple}", t.la)
        return t

    def live(self, name, t):
        """t belongs to this context and, if tl_alloc'ed, has not been freed (seed 4.9-4.11)."""
        if t.owner is not self.ctx:
            self.fail(name, "a tensor of this context (allocated by it)", t)
        if not self.ctx.is_live(t):
            self.fail(name, "a live tensor (it was freed by tl_free)", t)

    def null(self, name, t, why):
        if t is not None:
            self.fail(name, f"NULL ({why})", t)

    def optional(self, name, t, **kw):
        return None if t is None else self.tensor(name, t, **kw)

    def int_range(self, name, value, lo, hi):
        if not is_int(value) or not lo <= value <= hi:
            self.fail(name, f"an integer in [{lo}, {hi}]", value)
        return value

    def flag(self, name, value):
        if not (is_int(value) or isinstance(value, bool)) or value not in (0, 1):
            self.fail(name, "a bool", value)

    def same_shape(self, name, t, ref_name, ref):
        if t.shape != ref.shape:
            self.fail(f"{name}.shape", f"the shape of {ref_name} {ref.shape!r}", t.shape)

    def fmt(self, name, t, fmt, fmt_name):
        if t.fmt != fmt:
            self.fail(f"{name}.fmt", fmt_name, _fmt_name(t.fmt))

    def same_sign(self, name, t, ref_name, ref):
        if t.signed != ref.signed:
            self.fail(f"{name}.fmt", f"as signed as {ref_name} ({_fmt_name(ref.fmt)})", _fmt_name(t.fmt))

    def pair(self, high_name, high, low_name, low):
        """A 16-bit value as two 8-bit planes: same shape, high plane above the low one."""
        self.same_shape(high_name, high, low_name, low)
        if not 0 < high.la - low.la <= 0xFFFF:
            self.fail(f"{high_name}.la", f"above {low_name}.la (0x{low.la:x}) by at most 0xffff", high.la)
        if high.fmt != low.fmt:
            self.fail(f"{high_name}.fmt", f"the fmt of {low_name} ({_fmt_name(low.fmt)})", _fmt_name(high.fmt))

    def const(self, name, value, signed, bits):
        if signed:
            return self.int_range(name, value, -(1 << bits - 1), (1 << bits - 1) - 1)
        return self.int_range(name, value, 0, (1 << bits) - 1)

    def ctrls(self, name, value, allowed):
        names = " | ".join(n for n, v in allowed)
        if not is_int(value) or value not in [v for _, v in allowed]:
            self.fail(name, f"one of {names}", value)

    def gaddr(self, name, value):
        """A gmem address (seed 4.14 `u64 gaddr`): any the TDMA address fields can hold."""
        return self.int_range(name, value, 0, gmem_limit(self.ctx.chip) - 1)

    def gmem_extent(self, name, gaddr, dims, stride):
        """The last byte a transfer touches (dims and strides of its gmem side) inside gmem."""
        last = gaddr + sum((d - 1) * s for d, s in zip(dims, stride))
        limit = gmem_limit(self.ctx.chip)
        if last >= limit:
            self.fail(name, f"such that the transfer ends inside gmem (its last byte would be at 0x{last:x}, "
                      f"gmem ends at 0x{limit:x})", gaddr)


def _fmt_name(fmt):
    return {4: "FMT_I8", 9: "FMT_U8"}.get(fmt, fmt)


SHIFT_MAX = 31   # opt_right_shift / opt_left_shift are 5-bit fields


