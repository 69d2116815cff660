"""The bm1880 rules every family check repeats: `Check`, the chip's kind of `bmk.checks.Check`
(the shared vocabulary: integers, flags, ranges of spec fields), plus the TensorLmem rules of
seed 002 and the BM1880v2 layout rules (isa-facts/bm1880-notes.md, "v2 layout checks").

- an lmem operand is a TensorLmem of this context (`c.ctx`), live (seed 4.9-4.11: a tl_alloc'ed
  tensor until tl_free), a tensor or a matrix as the call takes, aligned or not, its la a
  multiple of eu_num where the v2 encoder needs it;
- a 16-bit value is two 8-bit planes of one shape and fmt, the high plane above the low one
  by at most what the operand's `*_b_str` field holds;
- a result plane of an element-wise call is each source plane exactly (in place) or apart
  from it (`results_apart`, the shared `in_place_or_apart`: issue 32.14; the seed is silent);
- a gmem address (seed 4.14 `u64 gaddr`) is an offset the TDMA address fields reach once the
  [memory.global] base is added, and a transfer ends inside that window.
Field-width limits are checked once more, generically, when the lowered descriptor is packed
(bmk.emission.Emission._pack).
"""
from bmk import checks
from bmk.bm1880.tensor import FMT_NAMES, TensorLmem
from bmk.util import is_int


def gmem_limit(chip):
    """Bytes of gmem a TDMA descriptor reaches (seed 4.14: `u64 gaddr`): the offsets that, once
    the window base is added, fit the composed address fields (40 bits in the v2 encoding),
    and lie inside the [memory.global] window."""
    def compute():
        space = chip.space("global")
        return min(space.size, chip.limit("tdma", "src_addr") + 1 - space.base)
    return chip.derived(("bm1880", "gmem limit"), compute)


class Check(checks.Check):
    """The bm1880 checks of one call (`ctx`: the Context, which owns the tensors)."""

    __slots__ = ()

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

    def view(self, name, t, stride=None):
        """The `checks.View` of TensorLmem t (8-bit data at la of every lmem slice, from slice 0;
        `stride`: a call's own strides instead of t's), for the shared overlap rule."""
        s = t.stride if stride is None else stride
        lay = t.layout
        return checks.View(name, t.la, (lay.n, lay.c, lay.h, lay.w), (s.n, s.c, s.h, s.w), 1)

    def results_apart(self, p, results, sources):
        """Each result plane of p (`results`: field names, a None field skipped) is each source
        plane exactly (in place) or apart from it (issue 32.14, `in_place_or_apart`)."""
        views = [self.view(n, getattr(p, n)) for n in sources if getattr(p, n) is not None]
        for name in results:
            if getattr(p, name) is not None:
                self.in_place_or_apart(self.view(name, getattr(p, name)), *views)

    @property
    def eu_num(self):
        return self.chip.param("eu_num")

    def same_shape(self, name, t, ref_name, ref):
        if t.shape != ref.shape:
            self.fail(f"{name}.shape", f"the shape of {ref_name} {ref.shape!r}", t.shape)

    def fmt(self, name, t, fmt, why):
        if t.fmt != fmt:
            self.fail(f"{name}.fmt", f"{FMT_NAMES[fmt]} ({why})", _fmt_name(t.fmt))

    def same_sign(self, name, t, ref_name, ref):
        if t.signed != ref.signed:
            self.fail(f"{name}.fmt", f"as signed as {ref_name} ({_fmt_name(ref.fmt)})", _fmt_name(t.fmt))

    def pair(self, high_name, high, low_name, low, b_str):
        """A 16-bit value as two 8-bit planes: same shape, the high plane above the low one by
        at most what the operand's plane-distance field `b_str` (e.g. res0_b_str) holds."""
        self.same_shape(high_name, high, low_name, low)
        top = self.chip.limit("tiu", b_str)
        if not 0 < high.la - low.la <= top:
            self.fail(f"{high_name}.la", f"above {low_name}.la (0x{low.la:x}) by at most 0x{top:x}", high.la)
        if high.fmt != low.fmt:
            self.fail(f"{high_name}.fmt", f"the fmt of {low_name} ({_fmt_name(low.fmt)})", _fmt_name(high.fmt))

    def const(self, name, value, signed, bits):
        """A constant of the seed struct's C type: a signed or unsigned `bits`-bit integer."""
        if signed:
            return self.integer(name, value, -(1 << bits - 1), (1 << bits - 1) - 1)
        return self.integer(name, value, 0, (1 << bits) - 1)

    def ctrls(self, name, value, allowed):
        """One of the ctrl flags `allowed` ((name, value), ...)."""
        if not is_int(value) or value not in [v for _, v in allowed]:
            self.fail(name, "one of " + " | ".join(n for n, _ in allowed), value)

    def gaddr(self, name, value):
        """A gmem address (seed 4.14 `u64 gaddr`): any the TDMA address fields can hold."""
        return self.integer(name, value, 0, gmem_limit(self.chip) - 1)

    def gmem_extent(self, name, gaddr, dims, stride):
        """The last byte a transfer touches (dims and strides of its gmem side) inside gmem."""
        last = gaddr + sum((d - 1) * s for d, s in zip(dims, stride))
        limit = gmem_limit(self.chip)
        if last >= limit:
            self.fail(name, f"such that the transfer ends inside gmem (its last byte would be at 0x{last:x}, "
                      f"gmem ends at 0x{limit:x})", gaddr)


def _fmt_name(fmt):
    return FMT_NAMES.get(fmt, fmt)
