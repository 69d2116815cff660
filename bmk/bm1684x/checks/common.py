"""Rules shared by the seed-001 checks (the remarks every function repeats).

- a shape is a dim4 with n, c, h, w in [1, 65535];
- a NULL stride is the 64-byte aligned layout: the address's offset in its NPU is a multiple
  of 64 (the vendor firmware asserts it); a given stride is the free layout: a dim4 of
  elements, n and c in [0, 65535] and h and w in [0, 2^32 - 1] (the widths of the
  `*_n_str`, `*_c_str`, `*_h_str`, `*_w_str` fields), the address a multiple of the
  element size;
- every element of a local tensor lies inside its NPUs' local memory;
- a destination stride is not 0 over a dimension of more than one element (the seed is
  silent; the simulator cannot write a broadcast result);
- "X and Y start on the same NPU": addr // local_mem_size_per_npu() is equal;
- a scalar_t is an integer in its dtype's range (numpy integers are integers), or for a float
  dtype a finite int or float in its range.
Every failure raises ArgumentError "<call>: <argument> must be <rule>, not <value>".
"""
import math
import numbers

import attrs

from bmk import layout
from bmk.bm1684x import layout as mem
from bmk.bm1684x.layout import is_int
from bmk.bm1684x.constants import DTYPES, ROUNDING_MODES, dtype_name, dtype_of
from bmk.errors import ArgumentError, must
from bmk.templates import as_int, fixed

# Free-layout stride limits: the widths of the long AR class's stride fields (the short
# class's narrower h/w strides only decide between short and long: lowering/common.py).
_AR = mem.CHIP.engine("tiu").cls("AR")
STRIDE_NC_MAX = _AR.field("res0_n_str").max
LANE, NPU = mem.LANE_BYTES, mem.NPU_NUM
ITEMSIZE = {code: dt.itemsize for code, (_, dt) in DTYPES.items() if dt.bits % 8 == 0}


def _aligned(shape, itemsize, npu):
    """The aligned layout's strides from start NPU `npu`: layout.aligned_stride's values (the
    element sizes divide the alignment), by arithmetic only, so a call template can trace
    an address or a length through it."""
    cs = layout.align_up(shape[2] * shape[3], mem.ALIGN_BYTES // itemsize)
    return (cs * layout.slots(shape[1], NPU, npu), cs, shape[3], 1)


STRIDE_HW_MAX = _AR.field("res0_h_str").max


@attrs.frozen
class Local:
    """A checked local tensor: its address, start NPU, offset in that NPU, strides."""
    name: str
    addr: int
    npu: int
    offset: int
    stride: tuple
    aligned: bool


class Check:
    """Validation helpers bound to one call name, so every message names the call."""

    def __init__(self, call):
        self.call = call

    def fail(self, argument, rule, value):
        raise ArgumentError(must(self.call, argument, rule, value))

    def shape(self, name, value):
        return mem.as_dim4(self.call, name, value)

    def dtype(self, name, value, allowed):
        return mem.dtype_code(self.call, name, value, allowed)

    def int_range(self, name, value, lo, hi):
        if not is_int(value) or not lo <= value <= hi:
            self.fail(name, f"an integer in [{lo}, {hi}]", value)
        return as_int(value)

    def rounding_mode(self, name, value):
        value = fixed(value)
        if not is_int(value) or int(value) not in ROUNDING_MODES:
            self.fail(name, "a rounding_mode_t, one of " + ", ".join(f"{n} ({v})" for v, n in ROUNDING_MODES.items()),
                      value)
        return int(value)

    def local(self, name, addr, shape, stride, dtype, stride_name=None, nc_max=STRIDE_NC_MAX):
        """A local tensor at `addr` of `shape` and dtype code `dtype`; stride None = aligned."""
        addr = mem.local_address(self.call, name, addr)
        npu, offset = addr // LANE, addr % LANE     # not divmod: a template's Sym computes with operators only
        itemsize = ITEMSIZE[dtype]
        stride_name = stride_name or name.replace("_addr", "_stride")
        if stride is None:
            if offset % mem.ALIGN_BYTES:
                self.fail(name, f"64-byte aligned in its NPU (offset {offset} of NPU {npu}) for the aligned "
                                f"layout of a NULL {stride_name}", addr)
            st = _aligned(shape, itemsize, npu)
        else:
            st = self.free_stride(stride_name, stride, nc_max)
            if offset % itemsize:
                self.fail(name, f"a multiple of the {itemsize}-byte element size of {dtype_name(dtype)}", addr)
        n, c, h, w = shape
        slots = (npu + c + NPU - 1) // NPU
        if name == "dst_addr":
            self.no_broadcast(stride_name, (n, slots, h, w), st)
        sn, sc, sh, sw = st
        end = offset + itemsize * (1 + (n - 1) * sn + (slots - 1) * sc + (h - 1) * sh + (w - 1) * sw)
        if end > LANE:
            self.fail(name, f"such that the tensor fits its NPUs' {LANE}-byte local memory "
                            f"(it would end at byte {end})", addr)
        return Local(name, addr, npu, offset, tuple(st), stride is None)

    def no_broadcast(self, name, counts, stride, local=True):
        """A result is not broadcast: no zero stride over a dimension of more than one element
        (channel slots for c). The simulator refuses such a command; the seed is silent."""
        for dim, count, st in zip("nchw", counts, stride):
            if st == 0 and count > 1:
                what = "channel slots" if dim == "c" and local else dim
                self.fail(f"{name}.{dim}", f"non-zero: dst covers {count} {what} and a result cannot be broadcast", st)

    def free_stride(self, name, stride, nc_max=STRIDE_NC_MAX):
        st = mem.as_stride(self.call, name, stride, STRIDE_HW_MAX)
        for dim in "nc":
            if getattr(st, dim) > nc_max:
                self.fail(f"{name}.{dim}", f"an integer in [0, {nc_max}] (the *_{dim}_str field)",
                          getattr(st, dim))
        return st

    def same_npu(self, t, ref):
        if t.npu != ref.npu:
            self.fail(t.name, f"an address on NPU {ref.npu}, where {ref.name} starts (the same start NPU)", t.addr)

    def scalar(self, name, value, dtype):
        """A scalar_t of dtype code `dtype` (seed: C and true_val take their dtype's range)."""
        dt = dtype_of(dtype)
        if dt.is_float:
            value = fixed(value)
            ok = (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
                  and dt.min <= value <= dt.max)
            if not ok:
                self.fail(name, f"a finite number in the range of {dtype_name(dtype)}", value)
            return value
        if not is_int(value) or not dt.min <= value <= dt.max:
            self.fail(name, f"an integer in the range of {dtype_name(dtype)} [{dt.min}, {dt.max}]", value)
        return as_int(value)

    def wider_or_equal(self, name, code, ref_name, ref):
        """Seed: `name`'s bit width is at least `ref_name`'s."""
        if dtype_of(code).bits < dtype_of(ref).bits:
            self.fail(name, f"at least as wide as {ref_name} ({dtype_name(ref)}, {dtype_of(ref).bits} bits)",
                      dtype_name(code))
