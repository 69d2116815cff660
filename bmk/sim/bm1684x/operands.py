"""Operands of bm1684x TIU commands: data types, layouts, tensors, constants, lane masks.

One reading serves the long and the short class of a kind: operands are read by field name,
and a field the class lacks reads as 0 (the short classes leave out what they do not carry:
strides of an aligned operand, the ins/pad/shift fields, tsk_lane_num...). Where a short class
implies a value instead (sCMP: opd1 has opd0's precision), the kind's function says so.

Data types (isa-facts bm1684x-lowering.md "Codes"): `X_prec` names the precision through the
spec's `prec` enum, `X_sign` the signedness of an integer precision; floats are signed. fp8
exists only on later TPU1686 chips (the spec's enum says so) and is refused.

Layouts (`X_str`, the spec's `layout` enum; bm1684x-memory.md; tpu-mlir
python/debugger/target_1684x/memmap.py `local_layout_to_stride`): for a tensor (N, C, H, W)
of element size e starting on NPU s,
  aligned  (w 1, h W, c ALIGN(H*W, eu_num(e)), n ceil((s + C) / npu_num) * c)
  compact  (w 1, h W, c H*W, n ceil((s + C) / npu_num) * c)
  offset   (n 0, c 1, h 0, w 0): one element per channel group, broadcast over n, h, w
  free     (X_n_str, X_c_str, X_h_str, X_w_str) as written (elements; 0 broadcasts a dim)
Strides are read from their fields as they are (the 18-bit stride split of the BM1688
firmware is not applied: isa-facts call it unverified for BM1684X).

Local addresses are local_addr_t: NPU = addr // lane_bytes, offset = addr % lane_bytes; a
TIU operand address at or above the local space's size is a device address (tpu-mlir's
`get_value` adds the local base only below it), e.g. the static memory a tsbc.s_* command
reads. Constants (`X_const` = 1): `X_addr` holds the value's bit pattern in the operand's
data type (the low 4/8/16/32 bits; fp32 its IEEE bits, bf16/fp16 the low 16 bits).

int4 (prec int4, eu_num 128): two elements a byte, the even element in the low nibble
(bmk's assumption: little-endian nibble order, as the byte order); strides count elements,
so an operand's element offsets are nibble offsets from its (byte) address.

Lane masks (`tsk_lane_num`, long classes only; a short command runs on every NPU): a result
is written only in the channels whose NPU's bit is set; the other channels keep their bytes
(bmk's reading of the field name; the firmware's `bd_get_lane_mask()` fills it).
"""
import math

import attrs
import numpy as np

from bmk import dtypes
from bmk import numerics
from bmk.errors import SimulationError

PRECS = ("int4", "int8", "int16", "int32", "fp16", "bf16", "fp32")
FP8 = "fp8"         # a data type only where the chip's params say so (params.fp8: BM1690)


def member(m, engine, field, value):
    """The enum member name of a field's value (None when it names none), from m.chip."""
    return m.chip.members(engine, field).get(value)


def prec_name(m, prec, what):
    name = member(m, "tiu", "res0_prec", prec)
    if name not in PRECS and not (name == FP8 and m.chip.param("fp8", 0)):
        raise SimulationError(f"{what}_prec must be one of {', '.join(PRECS)} (codes of the prec enum), not "
                              f"{prec!r}" + (f" ({name}: not a BM1684X data type)" if name else ""))
    return name


def dtype_of(m, prec, sign, what):
    """The DType of precision code `prec` (the spec's prec enum) and sign bit `sign`."""
    return dtypes.of_precision(prec_name(m, prec, what), sign)


def dt(m, f, name, sign=None, prec=None):
    """The DType of operand `name` from its X_prec and X_sign fields (or the given ones)."""
    s = f.get(f"{name}_sign", 0) if sign is None else sign
    p = f.get(f"{name}_prec", 0) if prec is None else prec
    return dtype_of(m, p, s, name)


def raw_dtype(m, prec, what):
    """The unsigned integer type of a precision's width: data moved as bit patterns."""
    return dtypes.integer(dtype_of(m, prec, 0, what).bits, False)


def layout_name(m, code):
    return member(m, "tiu", "res0_str", code)


def eu_num(m, dtype):
    return m.chip.param(f"eu_num_{dtype.bits}bit")


def max_elements(m):
    """Elements one operand may have: the local memory's bytes (a bound, so that a malformed
    shape with zero strides cannot make the simulator use unbounded time or memory)."""
    return m.lmem.size


@attrs.frozen
class Tensor:
    name: str
    addr: int
    shape: tuple
    strides: tuple
    dtype: dtypes.DType
    space: str = "local"        # a local tensor, or "static" (tsbc.s_* sources)


def check_shape(m, what, shape):
    if min(shape) < 1:
        raise SimulationError(f"{what} shape must be positive in every dimension, not {tuple(shape)}")
    count = math.prod(int(d) for d in shape)
    if count > max_elements(m):
        raise SimulationError(f"{what} must have at most {max_elements(m)} elements (the local memory's "
                              f"bytes), not {count} (shape {tuple(shape)})")


def start_npu(m, addr):
    return (addr // m.lmem.lane_size) % m.npu_num


def aligned_strides(m, addr, shape, dtype, compact=False):
    """The 64-byte aligned (or compact) layout's strides, in elements."""
    n, c, h, w = shape
    eu = eu_num(m, dtype)
    cs = h * w if compact else -(-(h * w) // eu) * eu
    return (-(-(start_npu(m, addr) + c) // m.npu_num) * cs, cs, w, 1)


def strides_of(m, f, name, addr, shape, dtype, layout=None):
    """The strides of operand `name` by its layout code X_str (or `layout` when the kind
    implies one: a code, or a member name of the layout enum)."""
    code = f.get(f"{name}_str", 0) if layout is None else layout
    kind = code if isinstance(code, str) else layout_name(m, code)
    if kind == "aligned":
        return aligned_strides(m, addr, shape, dtype)
    if kind == "compact":
        return aligned_strides(m, addr, shape, dtype, compact=True)
    if kind == "offset":
        return (0, 1, 0, 0)
    if kind == "line":          # T3: every row aligned on its own
        n, c, h, w = shape
        hs = -(-w // eu_num(m, dtype)) * eu_num(m, dtype)
        return (-(-(start_npu(m, addr) + c) // m.npu_num) * h * hs, h * hs, hs, 1)
    if kind == "T4":            # one (H, W) plane per NPU, shared by its channels and batches
        hs = -(-shape[3] // eu_num(m, dtype)) * eu_num(m, dtype)
        return (0, 0, hs, 1)
    if kind == "T5":
        cs = -(-shape[3] // eu_num(m, dtype)) * eu_num(m, dtype)
        return (m.lmem.lane_size // 8 // dtype.itemsize, cs, shape[3], 1)
    if kind == "free":
        return tuple(f.get(f"{name}_{d}_str", 0) for d in "nchw")
    raise SimulationError(f"{name}_str must be the aligned, compact, offset or free layout code, not {code!r}"
                          + (f" ({kind})" if kind else ""))


def tensor(m, f, name, shape, dtype, layout=None, addr=None):
    """The local Tensor `name` (res0, opd0, ...) of field dict f: address X_addr (or `addr`),
    its layout code X_str (or `layout` when the class implies it), its strides."""
    check_shape(m, name, shape)
    a = f.get(f"{name}_addr", 0) if addr is None else addr
    return Tensor(name, a, tuple(shape), strides_of(m, f, name, a, shape, dtype, layout), dtype)


def _view(m, t, write, dtype=None):
    return m.lmem.tensor(t.name, t.addr, t.shape, t.strides, m.log, write, (dtype or t.dtype).numpy)


def read_raw(m, t):
    """A tensor's stored values (its numpy storage type; bf16 as uint16 bits)."""
    if t.dtype.bits == 4:
        return _nibbles(m, t, None)
    return np.array(_view(m, t, False).read())


def read(m, t):
    """Values of a tensor: int64 for integer types, float64 for float types."""
    return to_values(read_raw(m, t), t.dtype)


def to_values(raw, dtype):
    if dtype.name == "bf16":
        return numerics.bf16_to_fp32(raw)
    if dtype.name in numerics.FP8_FORMATS:
        return numerics.fp8_to_values(raw, dtype.name)
    if dtype.bits == 4:
        return numerics.sign_extend(raw, 4) if dtype.signed else np.asarray(raw, np.int64) & 0xF
    return raw.astype(np.float64 if dtype.is_float else np.int64)


def lane_enable(m, f, t):
    """Per channel of a result: whether its NPU is enabled by tsk_lane_num (None: all are)."""
    mask = f.get("tsk_lane_num")
    if mask is None or mask == m.chip.all_lanes:
        return None
    lanes = (start_npu(m, t.addr) + np.arange(t.shape[1])) % m.npu_num
    return np.array([(mask >> int(x)) & 1 for x in lanes], bool)


def check_result(m, t):
    """SimulationError for a result tensor that cannot be written (a zero stride, bytes outside
    its lane): called before the operands are read, so such a command costs no work."""
    if any(s == 0 and d > 1 for s, d in zip(t.strides, t.shape)):
        raise SimulationError(f"{t.name} stride must be non-zero in every dimension larger than 1, not "
                              f"{t.strides} for shape {t.shape} (a result cannot be broadcast)")
    if t.dtype.bits % 8 == 0:           # the view is memoized for the write (int4: _nibbles checks)
        m.lmem.tensor(t.name, t.addr, t.shape, t.strides, None, True, t.dtype.numpy)


def write(m, t, values, saturate, f=None, mode=numerics.Round.HALF_TO_EVEN):
    """Store values into a tensor: integers saturated to its type (saturate) or wrapped modulo
    2**bits; floats rounded to its type by `mode` (IEEE nearest-even by default). With f given,
    its lane mask (tsk_lane_num) selects the channels written."""
    check_result(m, t)
    raw = store_values(np.broadcast_to(values, t.shape), t.dtype, saturate, mode)
    enable = lane_enable(m, f, t) if f is not None else None
    if enable is not None:
        raw = np.where(enable[None, :, None, None], raw, read_raw(m, t))
    if t.dtype.bits == 4:
        _nibbles(m, t, raw)
        return
    _view(m, t, True).write(raw)


def rounded(values, dtype):
    """float64 values rounded to a float type, to nearest even, as float64 values again (a step of
    an iteration the hardware rounds to its operands' type)."""
    return to_values(store_values(values, dtype, True), dtype)


def store_values(values, dtype, saturate, mode=numerics.Round.HALF_TO_EVEN):
    """Values -> the storage of dtype: floats rounded by mode; float values into an integer
    type rounded by mode and saturated; integers saturated or wrapped."""
    values = np.asarray(values)
    if dtype.is_float:
        return numerics.to_float(values, dtype, mode)
    if values.dtype.kind == "f":
        v = numerics.to_int(values, dtype, mode)
    else:
        v = numerics.saturate(values, dtype) if saturate else numerics.wrap(values, dtype)
    if dtype.bits == 4:
        return np.asarray(v).astype(np.int64) & 0xF
    return v


def _nibbles(m, t, values):
    """Read (values None) or write int4 elements: element offsets are nibble offsets from
    the tensor's byte address; the even nibble is the low one."""
    lane_bytes, npu = m.lmem.lane_size, m.npu_num
    l0, off = divmod(t.addr, lane_bytes)
    n, c, h, w = t.shape
    sn, sc, sh, sw = t.strides
    ch = np.arange(c)
    lanes, groups = (l0 + ch) % npu, (l0 + ch) // npu
    pos = (np.arange(n)[:, None, None, None] * sn + groups[None, :, None, None] * sc
           + np.arange(h)[None, None, :, None] * sh + np.arange(w)[None, None, None, :] * sw)
    byte = off + pos // 2
    if byte.size and byte.max() >= lane_bytes:
        raise SimulationError(f"{t.name} must fit in its lmem lane (offset < 0x{lane_bytes:x}), but int4 shape "
                              f"{t.shape} with strides {t.strides} reaches 0x{int(byte.max()):x}")
    flat = lanes[None, :, None, None] * lane_bytes + byte
    hi = (pos % 2).astype(bool)
    m.log.add(m.lmem.name, m.lmem.lane_mask(l0 % npu, c), off, int(byte.max()) + 1 if byte.size else off,
              values is not None)
    data = m.lmem.data
    if values is None:
        b = data[flat]
        return np.where(hi, b >> 4, b & 0xF).astype(np.uint8)
    v = np.broadcast_to(np.asarray(values, np.int64) & 0xF, t.shape)
    for sel, keep, shift in ((~hi, 0xF0, 0), (hi, 0x0F, 4)):         # low nibbles, then high ones
        idx, val = flat[sel], v[sel]
        data[idx] = (data[idx] & keep) | (val << shift).astype(np.uint8)


def const(f, name, dtype):
    """The constant an operand with X_const = 1 carries in X_addr, as a value of dtype."""
    return const_bits(f.get(f"{name}_addr", 0), dtype)


def const_bits(bits, dtype):
    """The value of dtype whose bit pattern is the low bits of `bits`."""
    if dtype.is_float:
        if dtype.name == "fp32":
            return float(np.array([bits & 0xFFFFFFFF], np.uint32).view(np.float32)[0])
        if dtype.name == "fp16":
            return float(np.array([bits & 0xFFFF], np.uint16).view(np.float16)[0])
        if dtype.name in numerics.FP8_FORMATS:
            return float(numerics.fp8_to_values(bits & 0xFF, dtype.name))
        return float(numerics.bf16_to_fp32(np.uint16(bits & 0xFFFF)))
    return int(numerics.sign_extend(bits, dtype.bits)) if dtype.signed else int(bits & ((1 << dtype.bits) - 1))


def operand(m, f, name, shape, dtype, layout=None):
    """Values of an operand: its constant (X_const) or its local tensor."""
    if f.get(f"{name}_const", 0):
        return const(f, name, dtype)
    return read(m, tensor(m, f, name, shape, dtype, layout))


def shape_of(f, name="res0"):
    return tuple(f.get(f"{name}_{d}", 0) for d in "nchw")


def mode_of(f, field="opd2_n_str"):
    """The rounding mode a command carries (rounding_mode_t in opd2_n_str, bm1684x-lowering.md)."""
    return numerics.as_mode(f.get(field, 0))
