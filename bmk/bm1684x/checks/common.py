"""The seed-001 rules every TPU-Kernel check repeats: `Check`, the chip's kind of
`bmk.checks.Check` (the shared vocabulary: integers, addresses, same start NPU, fits).

- a shape is a dim4 with n, c, h, w in [1, 65535];
- a NULL local stride is the 64-byte aligned layout: the address's offset in its NPU is a
  multiple of 64 (the vendor firmware asserts it); a given stride is the free layout: a dim4
  of elements within the widths of the `*_n_str`, `*_c_str`, `*_h_str`, `*_w_str` fields of
  the long AR class (the short class's narrower h/w strides only decide between short and
  long: lowering/common.py), the address a multiple of the element size;
- every element of a local tensor lies inside its NPUs' local memory, of a global one inside
  global memory (a NULL global stride: the continuous layout);
- a destination stride is not 0 over a dimension of more than one element (the seed is
  silent; the simulator cannot write a broadcast result);
- "X and Y start on the same NPU": addr // local_mem_size_per_npu() is equal;
- dst is each source exactly (in place: same address, dtype size and strides) or apart from
  it, never partly overlapping it (the shared rule `in_place_or_apart` of the `Local.view`s,
  issue 32.14; the seed is silent);
- a scalar_t is an integer in its dtype's range (numpy integers are integers), or for a float
  dtype an int in its range, or a float in its range or an inf or NaN (Check.float_constant).
"""

import attrs

from bmk import checks, layout
from bmk.bm1684x.constants import DTYPES, ROUNDING_MODES, dtype_name, dtype_of
from bmk.checks import as_int, fixed, is_integer

SHAPE_MAX = 65535          # seed 001: every shape field is in [1, 65535]
ITEMSIZE = {code: dt.itemsize for code, (_, dt) in DTYPES.items() if dt.bits % 8 == 0}


@attrs.frozen
class Local:
    """A checked local tensor: its address, start NPU, offset in that NPU, strides, and its
    `checks.View` for the shared overlap rule (`Check.in_place_or_apart`)."""
    name: str
    addr: int
    npu: int
    offset: int
    stride: tuple
    aligned: bool
    view: checks.View


class Check(checks.Check):
    """The bm1684x checks of one call."""

    __slots__ = ()

    def shape(self, name, value):
        return self.dim4(name, value, 1, SHAPE_MAX)

    def dtype(self, name, value, allowed):
        return self.choice(name, value, {code: dtype_name(code) for code in allowed},
                           "one of " + ", ".join(dtype_name(d) for d in allowed))

    def rounding_mode(self, name, value):
        return self.choice(name, value, ROUNDING_MODES, "a rounding_mode_t, one of "
                           + ", ".join(f"{n} ({v})" for v, n in ROUNDING_MODES.items()))

    def stride_max(self, name, engine="tiu", cls="AR"):
        """The largest value of a stride field (its width in the spec)."""
        return self.chip.limit(engine, name, cls)

    def free_stride(self, name, stride, nc_max=None):
        """A free-layout stride: n and c within the `*_n_str`/`*_c_str` fields (or nc_max), h
        and w within `*_h_str`/`*_w_str`."""
        nc = self.stride_max("res0_n_str") if nc_max is None else nc_max
        hw = self.stride_max("res0_h_str")
        return self.stride4(name, stride, (nc, nc, hw, hw))

    def aligned(self, shape, itemsize, npu):
        """The aligned layout's strides from start NPU `npu` (layout.aligned_stride's values, by
        arithmetic only, so a call template can trace an address or a length through it)."""
        cs = layout.align_up(shape[2] * shape[3], self.chip.param("channel_align_bytes") // itemsize)
        return (cs * layout.slots(shape[1], self.npu_num, npu), cs, shape[3], 1)

    def local(self, name, addr, shape, stride, dtype, stride_name=None, nc_max=None):
        """A local tensor at `addr` of `shape` and dtype code `dtype`; stride None = aligned."""
        addr = self.local_address(name, addr)
        lane = self.lane_bytes
        npu, offset = addr // lane, addr % lane     # not divmod: a template's Sym computes with operators only
        itemsize = ITEMSIZE[dtype]
        stride_name = stride_name or name.replace("_addr", "_stride")
        if stride is None:
            align = self.chip.param("channel_align_bytes")
            if offset % align:
                self.fail(name, f"{align}-byte aligned in its NPU (offset {offset} of NPU {npu}) for the aligned "
                                f"layout of a NULL {stride_name}", addr)
            st = self.aligned(shape, itemsize, npu)
        else:
            st = self.free_stride(stride_name, stride, nc_max)
            if offset % itemsize:
                self.fail(name, f"a multiple of the {itemsize}-byte element size of {dtype_name(dtype)}", addr)
        n, c, h, w = shape
        slots = (npu + c + self.npu_num - 1) // self.npu_num
        if name == "dst_addr":
            self.no_broadcast(stride_name, (n, slots, h, w), st)
        sn, sc, sh, sw = st
        self.fits_lane(name, addr, offset + itemsize * (1 + (n - 1) * sn + (slots - 1) * sc + (h - 1) * sh
                                                          + (w - 1) * sw))
        return Local(name, addr, npu, offset, tuple(st), stride is None,
                     checks.View(name, addr, tuple(shape), tuple(st), itemsize))

    def system(self, name, addr, shape, stride, dtype, stride_name, stride_max):
        """A global tensor at device address `addr`; stride None = the continuous layout."""
        addr = self.global_address(name, addr)
        st = layout.continuous_stride(shape) if stride is None else self.stride4(stride_name, stride, stride_max)
        if name == "dst_addr":
            self.no_broadcast(stride_name, shape, st, local=False)
        self.fits_global(name, addr, addr + dtype_of(dtype).itemsize * (1 + sum((d - 1) * s
                                                                                 for d, s in zip(shape, st))))
        return addr

    def no_broadcast(self, name, counts, stride, local=True):
        """A result is not broadcast: no zero stride over a dimension of more than one element
        (channel slots for c). The simulator refuses such a command; the seed is silent."""
        for dim, count, st in zip("nchw", counts, stride):
            if st == 0 and count > 1:
                what = "channel slots" if dim == "c" and local else dim
                self.fail(f"{name}.{dim}", f"non-zero: dst covers {count} {what} and a result cannot be broadcast", st)

    def same_npu(self, t, ref):
        if t.npu != ref.npu:
            self.fail(t.name, f"an address on NPU {ref.npu}, where {ref.name} starts (the same start NPU)", t.addr)

    def scalar(self, name, value, dtype):
        """A scalar_t of dtype code `dtype` (seed: C and true_val take their dtype's range)."""
        dt = dtype_of(dtype)
        if dt.is_float:       # in its range, or an inf or NaN, as on bm1684 (the shared rule, issue 22.9)
            return self.float_constant(name, fixed(value), dt)
        if not is_integer(value) or not dt.min <= value <= dt.max:
            self.fail(name, f"an integer in the range of {dtype_name(dtype)} [{dt.min}, {dt.max}]", value)
        return as_int(value)

    def wider_or_equal(self, name, code, ref_name, ref):
        """Seed: `name`'s bit width is at least `ref_name`'s."""
        if dtype_of(code).bits < dtype_of(ref).bits:
            self.fail(name, f"at least as wide as {ref_name} ({dtype_name(ref)}, {dtype_of(ref).bits} bits)",
                      dtype_name(code))
