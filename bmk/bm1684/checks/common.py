"""The seed-003 rules every OKKernel check repeats: `Check`, the chip's kind of
`bmk.checks.Check` (the shared vocabulary: integers, flags, dim4s, addresses, same start NPU,
fits its lane / global memory), with bm1684's own rules as methods:

- "dst_addr, src_addr ... are divisible by 4 (and preferred by 128)": `address` (align 4);
- "shape->n, shape->h and shape->w are in [1, 65535], shape->c is in [1, 4095]": `shape`;
- strides NULL (the remark's layout) or a dim4 within the stride fields of the engine that
  moves the tensor (specs/bm1684: TIU n/c strides 19 bits, h/w and GDMA strides 32 bits);
  "dst_stride->w and src_stride->w are only allowed to be one": `stride(..., w_one=True)`;
- "the tensors start at the same NPU" (shared `same_start_npu`) / "at the first NPU":
  `first_npu`; "dst_addr = work_addr is not allowed": `distinct`, and a work tensor may not
  overlap dst or src at all (`disjoint` of their `span`s: issue 22.8, an overlap gives wrong
  numbers, not only equality); dst of an element-wise call is a source exactly (in place)
  or apart from it (the shared `in_place_or_apart` of `view`s: issue 32.14);
- implied by every remark on addresses: a local tensor fits its NPU's memory, in its 4N / 2N
  storage for 8- / 16-bit data (`fits`), a system tensor fits global memory (`fits_system`);
- an x8/x16/x32 constant (API.md): `bits`; a C float: `fp32`.
Values: Python ints, bools where C has bool, and numpy integer scalars (API.md); everything
computes with checked integers (the call-template rule, bmk/checks.py).
"""
import numbers

import numpy as np

from bmk import checks
from bmk.bm1684 import geometry as g
from bmk.dtypes import FP32
from bmk.layout import continuous_stride, dim4

SHAPE_MAX = dim4(65535, 4095, 65535, 65535)
ADDRESS_ALIGN = 4           # the seeds' "divisible by 4"
MATRIX_ALIGN = 128          # the seeds' "divisible by 128" (NN outputs, pooling and matrix operands)


class Check(checks.Check):
    """The bm1684 checks of one call."""

    __slots__ = ()

    # -- values ------------------------------------------------------------------------------
    def shape(self, value, name="shape", hi=SHAPE_MAX):
        """A dim4 shape with every dimension in [1, hi] (the seed's ranges unless a remark says otherwise)."""
        return self.dim4(name, value, 1, hi)

    def stride(self, name, value, engine="tiu", w_one=False):
        """None (the remark's NULL layout) or a dim4 of element strides within `engine`'s
        stride fields."""
        if value is None:
            return None
        s = self.stride4(name, value, self.chip.derived(("bm1684.checks", "stride max", engine), _stride_max,
                                                        self.chip, engine))
        if w_one and s.w != 1:
            self.fail(f"{name}.w", "1 (only allowed to be one)", s.w)
        return s

    def bits(self, name, value, k):
        """An x8/x16/x32 constant: an int in [-2^(k-1), 2^k - 1], or for k = 32 a Python or
        numpy float (an fp32 value: in its range, or an inf or NaN). The lowering takes its bit
        pattern."""
        if k == 32 and isinstance(value, (float, np.floating)):
            return self.float_constant(name, value, FP32)
        return self.integer(name, value, -(1 << (k - 1)), (1 << k) - 1)

    def fp32(self, name, value):
        """A C float argument: a real number (not a bool), rounded to fp32 by the lowering."""
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            self.fail(name, "a float", value)
        return float(value)

    # -- addresses -----------------------------------------------------------------------------
    def address(self, name, value, align=ADDRESS_ALIGN):
        """A local_addr_t inside local memory, divisible by `align`."""
        return self.local_address(name, value, align)

    def system(self, name, value):
        """A system_addr_t / global_addr_t inside global memory (API.md: it starts at 0x100000000)."""
        return self.global_address(name, value, what="a system address")

    def first_npu(self, **addrs):
        """'... tensors start at the first NPU' (NPU 0)."""
        for name, addr in addrs.items():
            if self.start_npu(addr):
                self.fail(name, f"a local address on NPU 0, in [0, 0x{self.lane_bytes:x}) "
                                "(tensors start at the first NPU)", addr)

    def distinct(self, name, value, other_name, other):
        """'{name} = {other_name} is not allowed'."""
        if value == other:
            self.fail(name, f"different from {other_name} ({other_name} = {name} is not allowed)", value)

    # -- tensors -------------------------------------------------------------------------------
    def aligned(self, addr, shape):
        """The 128-byte aligned strides (storage words) of a local tensor at addr."""
        return g.aligned_words(self.chip, self.start_npu(addr), shape)

    def compact(self, addr, shape):
        return g.compact(self.chip, self.start_npu(addr), shape)

    def fits(self, name, addr, shape, stride, itemsize=None, pack=1):
        """A local tensor fits its NPUs' memory (stride None: the aligned layout). Strides count
        elements of `itemsize` bytes (default: the storage word); 8- / 16-bit tensors are 4N / 2N
        (pack 4 / 2): their strides count words and n counts groups of `pack` batches."""
        end = _end(self.chip, addr, shape, stride, itemsize, pack)
        if end > g.facts(self.chip).lane_bytes:
            self.fits_lane(name, addr, end)

    def span(self, addr, shape, stride, itemsize=None, pack=1):
        """[first, end) byte offsets, in its start NPU's lane, of a local tensor (as `fits`)."""
        return addr % g.facts(self.chip).lane_bytes, _end(self.chip, addr, shape, stride, itemsize, pack)

    def disjoint(self, name, addr, span, other_name, other_span, why):
        """Tensor `name` (at addr, lane bytes `span`) does not overlap `other_name`'s, both
        starting on one NPU (the remarks' same start NPU, checked before)."""
        if span[0] < other_span[1] and other_span[0] < span[1]:
            self.fail(name, f"an address whose tensor does not overlap {other_name}'s (lane bytes "
                            f"[0x{span[0]:x}, 0x{span[1]:x}) and [0x{other_span[0]:x}, 0x{other_span[1]:x}): {why})",
                      self.local_shown(addr))

    def view(self, name, addr, shape, stride, itemsize=None, pack=1):
        """The `checks.View` of a local tensor laid out as `fits` lays it (stride None: the
        aligned layout), for the shared overlap rule `in_place_or_apart`."""
        st = self.aligned(addr, shape) if stride is None else stride
        return checks.View(name, addr, tuple(shape), tuple(st), itemsize or g.facts(self.chip).word_bytes, pack)

    def fits_compact(self, name, addr, shape, itemsize=None):
        self.fits(name, addr, shape, self.compact(addr, shape), itemsize)

    def fits_system(self, name, addr, shape, stride, itemsize):
        """A system tensor fits global memory (stride None: the continuous layout)."""
        s = continuous_stride(shape) if stride is None else stride
        self.fits_global(name, addr, addr + itemsize * (1 + sum((d - 1) * st for d, st in zip(shape, s))))


def _end(chip, addr, shape, stride, itemsize, pack):
    """The lane byte offset just past a local tensor (the arithmetic of geometry.aligned_words,
    inline: every tensor of every call comes here)."""
    k = g.facts(chip)
    lane, npus = k.lane_bytes, k.npu_num
    n, c, h, w = shape
    slots = (addr // lane + c + npus - 1) // npus
    if stride is None:
        cs = (h * w + k.align_words - 1) // k.align_words * k.align_words
        sn, sc, sh, sw = cs * slots, cs, w, 1
    else:
        sn, sc, sh, sw = stride
    return addr % lane + (itemsize or k.word_bytes) * (1 + ((n + pack - 1) // pack - 1) * sn + (slots - 1) * sc
                                                       + (h - 1) * sh + (w - 1) * sw)


def _stride_max(chip, engine):
    """The largest (n, c, h, w) strides an engine's stride fields hold."""
    if engine == "tiu":
        return tuple(chip.limit("tiu", f"res0_{d}_str") for d in "nchw")
    return tuple(chip.limit("gdma", f"src_{d}stride") for d in "nchw")
