"""bm1684x GDMA semantics: tensor copies (gdma_cpy_S2L, L2S, L2L, S2S), linear copies, sys.

There is no direction field (isa-facts bm1684x-lowering.md "GDMA"): each side's 40-bit
address (X_start_addr_h8 above X_start_addr_l32, composed by the class's field widths) is
looked up in the chip's memory map. A local side (0x08000000 + NPU * 256 KiB + offset) is a
tensor placed across NPUs from its start NPU (channel c on NPU (s + c) % 64, group
(s + c) // 64, as TIU operands); any other space (global at 0x100000000, L2 SRAM, static) is
a plain strided array. Strides count elements of src_data_format (the TIU prec codes; the
bytes move as they are, so every format of a whole-byte size copies alike).

dma.tensor: src (src_nsize..src_wsize) with strides src_*stride -> dst (dst_*size, or the
source shape when nchw_copy is set) with dst_*stride, in logical NCHW order (the element
counts must agree); fill_constant_en writes constant_value (its low bytes) instead of reading.
dma.tensor.transpose: dst (C, N, H, W) = src (N, C, H, W) transposed; dma.tensor.broadcast:
src (N, 1, H, W) copied to every one of dst_csize channels. For both special functions the
w strides are 1 (tpu-mlir's reading). dma.general: src_cstride_move_length_ elements from
src to dst, both contiguous (a local side stays inside its NPU). dma.sys / dma.sys.nop: no
memory effect.

Refused as not modelled: stride_enable 0, decompress_enable, a localmem_mask other than all
NPUs, int4 data.
"""
import math

import numpy as np

from bmk.errors import SimulationError
from bmk.sim.bm1684x.operands import _enum, max_elements

_BYTES = {"int8": 1, "fp16": 2, "fp32": 4, "int16": 2, "int32": 4, "bf16": 2}
_RAW = {1: np.dtype(np.uint8), 2: np.dtype("<u2"), 4: np.dtype("<u4")}
# A sparse space (global, L2 SRAM) is touched through strided views of its pages; an array
# spread thinly over a huge span is cut into blocks or moved element by element, so that the
# work and the memory a copy touches scale with its elements (Side._plan).
FAST_SPAN = 1 << 26
BLOCK_SPAN = 1 << 16
MAX_BLOCKS = 1 << 12
MAX_GATHER_ELEMENTS = 1 << 16


_WIDTHS = {}


def _width(chip, cls_name, field):
    key = (chip.name, cls_name, field)
    if key not in _WIDTHS:
        _WIDTHS[key] = chip.engine("gdma").cls(cls_name).by_name[field].width
    return _WIDTHS[key]


def _cls(m, f):
    cls = m.chip.engine("gdma").class_for(f)
    if cls is None:                     # fields of no class: cannot come from the decoder
        raise SimulationError("gdma fields must select an instruction class")
    return cls.name


def address(m, f, side):
    """The device address of `side` (src, dst): X_start_addr_h8 above X_start_addr_l32."""
    low = f"{side}_start_addr_l32"
    return f.get(low, 0) | (f.get(f"{side}_start_addr_h8", 0) << _width(m.chip, _cls(m, f), low))


def element_bytes(m, f):
    code = f.get("src_data_format", 0)
    name = _enum(m.chip, "gdma", "src_data_format").get(code)
    if name not in _BYTES:
        raise SimulationError(f"src_data_format must be a whole-byte format ({', '.join(_BYTES)}), not {code!r}"
                              + (f" ({name})" if name else ""))
    return _BYTES[name]


def _count(m, what, shape, limit=None):
    if min(shape) < 1:
        raise SimulationError(f"{what} shape must be positive in every dimension, not {tuple(shape)}")
    n = math.prod(int(d) for d in shape)
    limit = max_elements(m) if limit is None else limit
    if n > limit:
        raise SimulationError(f"{what} must move at most {limit} elements, not {n} (shape {tuple(shape)})")
    return n


class Side:
    """One side of a copy: a strided (N, C, H, W) array of `e`-byte elements at a device address."""

    def __init__(self, m, what, addr, shape, strides, e):
        self.m, self.what, self.shape, self.strides, self.e = m, what, tuple(shape), tuple(strides), e
        _count(m, what, shape)
        sp, off = m.space_of(addr)
        self.mem = m.memories[sp.name]
        self.local = sp.lane_bytes is not None
        self.off = off

    def _span(self, shape, strides):
        return sum((d - 1) * s for d, s in zip(shape, strides)) * self.e + self.e

    def _plan(self):
        """How to touch a sparse space at a cost that scales with the bytes moved:
        ("view", None) one strided view when the whole span is at most FAST_SPAN bytes;
        ("blocks", k) a loop over the k outer dimensions when the remaining block spans at most
        BLOCK_SPAN bytes and there are at most MAX_BLOCKS blocks; else ("elements", None) element
        by element, at most MAX_GATHER_ELEMENTS elements."""
        if self.local or self._span(self.shape, self.strides) <= FAST_SPAN:
            return "view", None
        for k in range(1, 4):
            if (math.prod(self.shape[:k]) <= MAX_BLOCKS
                    and self._span(self.shape[k:], self.strides[k:]) <= BLOCK_SPAN):
                return "blocks", k
        _count(self.m, self.what, self.shape, MAX_GATHER_ELEMENTS)
        return "elements", None

    def _view(self, off, shape, strides, write):
        return self.mem.tensor(self.what, off, shape, strides, self.m.log, write, _RAW[self.e])

    def _blocks(self, k):
        inner, ist = (1,) * k + self.shape[k:], (0,) * k + self.strides[k:]
        for idx in np.ndindex(*self.shape[:k]):
            yield idx, self.off + sum(i * s for i, s in zip(idx, self.strides)) * self.e, inner, ist

    def _offsets(self, write):
        """Byte offsets of every element, logged as one access."""
        off = np.array([self.off], np.int64)
        for d, s in zip(self.shape, self.strides):
            off = (off[:, None] + np.arange(d, dtype=np.int64) * (s * self.e)).reshape(-1)
        span = int(off.max()) + self.e
        if span > self.mem.size:
            raise SimulationError(f"{self.what} must be inside {self.mem.name} [0, 0x{self.mem.size:x}), but it "
                                  f"spans [0x{self.off:x}, 0x{span:x})")
        dims, bst = self.shape + (self.e,), tuple(s * self.e for s in self.strides) + (1,)
        self.m.log.add(self.mem.name, 1, self.off, span, write, (self.off, dims, bst))
        return (off[:, None] + np.arange(self.e)).reshape(-1)

    def read(self):
        how, k = self._plan()
        if how == "view":
            return np.array(self._view(self.off, self.shape, self.strides, False).read())
        if how == "blocks":
            out = np.empty(self.shape, _RAW[self.e])
            for idx, off, inner, ist in self._blocks(k):
                out[idx] = self._view(off, inner, ist, False).read()[(0,) * k]
            return out
        return self.mem.gather(self._offsets(False)).view(_RAW[self.e]).reshape(self.shape)

    def write(self, values):
        values = np.ascontiguousarray(np.broadcast_to(np.asarray(values).astype(_RAW[self.e]), self.shape))
        how, k = self._plan()
        if how == "view":
            self._view(self.off, self.shape, self.strides, True).write(values)
        elif how == "blocks":
            for idx, off, inner, ist in self._blocks(k):
                self._view(off, inner, ist, True).write(values[idx].reshape(inner))
        else:
            self.mem.scatter(self._offsets(True), values.view(np.uint8).reshape(-1))


def _strides(f, side, unit_w=False):
    st = tuple(f.get(f"{side}_{d}stride", 0) for d in "nch") + (1 if unit_w else f.get(f"{side}_wstride", 0),)
    return st


def _shape(f, side):
    return tuple(f.get(f"{side}_{d}size", 0) for d in "nchw")


def _tensor_copy(m, f, special=None):
    e = element_bytes(m, f)
    src_shape = _shape(f, "src")
    dst_shape = src_shape if f.get("nchw_copy", 0) else _shape(f, "dst")
    unit_w = special is not None
    if special == "transpose":
        dst_shape = (src_shape[1], src_shape[0]) + src_shape[2:]
    elif special == "broadcast":
        src_shape = (src_shape[0], 1) + src_shape[2:]
        dst_shape = (src_shape[0], f.get("dst_csize", 0)) + src_shape[2:]
    dst = Side(m, "dst", address(m, f, "dst"), dst_shape, _strides(f, "dst", unit_w), e)
    if f.get("fill_constant_en", 0):
        bits = f.get("constant_value", 0) & ((1 << (8 * e)) - 1)
        dst.write(np.full(dst.shape, bits, _RAW[e]))
        return
    data = Side(m, "src", address(m, f, "src"), src_shape, _strides(f, "src", unit_w), e).read()
    if special == "transpose":
        data = data.transpose(1, 0, 2, 3)
    elif special == "broadcast":
        data = np.broadcast_to(data, dst_shape)
    elif data.size != int(np.prod(dst_shape, dtype=np.int64)):
        raise SimulationError(f"dst shape {dst_shape} must hold the {data.size} source elements "
                              f"(src shape {src_shape})")
    dst.write(np.ascontiguousarray(data).reshape(dst_shape))


def tensor(m, f):
    """gdma_cpy_S2L / L2S / L2L / S2S (API.md): a strided tensor copy, any direction."""
    _tensor_copy(m, f)


def transpose(m, f):
    """N/C transposing tensor copy."""
    _tensor_copy(m, f, "transpose")


def broadcast(m, f):
    """One channel copied to dst_csize channels."""
    _tensor_copy(m, f, "broadcast")


def general(m, f):
    """A linear copy of src_cstride_move_length_ elements."""
    e = element_bytes(m, f)
    n = f.get("src_cstride_move_length_", 0)
    shape, strides = (1, 1, 1, n), (0, 0, 0, 1)
    dst = Side(m, "dst", address(m, f, "dst"), shape, strides, e)
    if f.get("fill_constant_en", 0):
        dst.write(np.full(shape, f.get("constant_value", 0) & ((1 << (8 * e)) - 1), _RAW[e]))
        return
    dst.write(Side(m, "src", address(m, f, "src"), shape, strides, e).read())


def no_effect(m, f):
    """dma.sys (the stream's end) and dma.sys.nop: ordering only."""


def check(f):
    """Fields the semantics do not model (SimulationError), for the copy kinds."""
    if not f.get("stride_enable", 1) and f.get("cmd_type", 0) == 0:
        raise SimulationError("stride_enable must be 1 (implicit strides are not modelled), not 0")
    if f.get("decompress_enable", 0):
        raise SimulationError(f"decompress_enable must be 0 (not modelled), not {f['decompress_enable']}")
    for part in ("localmem_mask_l32", "localmem_mask_h32"):
        if part in f and f[part] != 0xFFFFFFFF:
            raise SimulationError(f"{part} must be 0xffffffff (every NPU; lane masks are not modelled), "
                                  f"not 0x{f[part]:x}")


KINDS = {"dma.tensor": tensor, "dma.tensor.transpose": transpose, "dma.tensor.broadcast": broadcast,
         "dma.general": general, "dma.sys": no_effect, "dma.sys.nop": no_effect}
