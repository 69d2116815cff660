"""Operands of bm1684x TIU commands: data types, layouts, tensors and constants.

One reading serves the long and the short class of a kind: operands are read by field name,
and a field the class lacks reads as 0 (the short classes leave out what they do not carry:
strides of an aligned operand, the ins/pad/shift fields, opd2_str...). Where a short class
implies a value instead (sCMP: opd1 has opd0's precision and sign), the kind's function says
so (tiu.py).

Data types (isa-facts bm1684x-lowering.md "Codes"): `X_prec` names the precision through the
spec's `prec` enum, `X_sign` the signedness of an integer precision.

Layouts (`X_str`, the spec's `layout` enum; bm1684x-memory.md): for a tensor (N, C, H, W) of
element size e starting on NPU s,
  aligned  (w 1, h W, c ALIGN(H*W, eu_num(e)), n ceil((s + C) / npu_num) * c)
  compact  (w 1, h W, c H*W, n ceil((s + C) / npu_num) * c)
  free     (X_n_str, X_c_str, X_h_str, X_w_str) as written (elements; 0 broadcasts a dim)
The `offset` code has no documented meaning: an instruction using it is refused. Strides are
read from their fields as they are (the 18-bit stride split of the BM1688 firmware is not
applied: isa-facts call it unverified for BM1684X).

Local addresses are local_addr_t: NPU = addr // lane_bytes, offset = addr % lane_bytes.
Constants (`X_const` = 1): `X_addr` holds the value's bit pattern in the operand's data type
(the low 8/16/32 bits; fp32 its IEEE bits, bf16/fp16 the low 16 bits).
"""
import math

import attrs
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk import numerics

_PRECISIONS = ("int8", "int16", "int32", "fp16", "fp32", "bf16")     # modelled here (no int4)


def _enum(chip, engine, field):
    """{code: name} of an enum field of the engine (the same in every class that has it)."""
    return chip.members(engine, field)


def dtype_of(m, prec, sign, what):
    """The DType of precision code `prec` (the spec's prec enum) and sign bit `sign`."""
    name = _enum(m.chip, "tiu", "res0_prec").get(prec)
    if name in _PRECISIONS:
        return dtypes.of_precision(name, sign)
    raise SimulationError(f"{what} precision must be one of int8, int16, int32, fp16, fp32, bf16 "
                          f"(codes of the prec enum), not {prec!r}" + (f" ({name})" if name else ""))


def layout_name(m, code):
    return _enum(m.chip, "tiu", "res0_str").get(code)


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


def check_shape(m, what, shape):
    if min(shape) < 1:
        raise SimulationError(f"{what} shape must be positive in every dimension, not {tuple(shape)}")
    count = math.prod(int(d) for d in shape)
    if count > max_elements(m):
        raise SimulationError(f"{what} must have at most {max_elements(m)} elements (the local memory's "
                              f"bytes), not {count} (shape {tuple(shape)})")


def aligned_strides(m, addr, shape, dtype, compact=False):
    """The 64-byte aligned (or compact) layout's strides, in elements."""
    n, c, h, w = shape
    eu = m.chip.param(f"eu_num_{dtype.bits}bit")
    cs = h * w if compact else -(-(h * w) // eu) * eu
    start = addr // m.lmem.lane_size
    return (-(-(start + c) // m.npu_num) * cs, cs, w, 1)


def tensor(m, f, name, shape, dtype, layout=None):
    """The local Tensor `name` (res0, opd0, ...) of field dict f: address X_addr, its layout
    code X_str (or `layout` when the class implies it), its strides."""
    check_shape(m, name, shape)
    addr = f.get(f"{name}_addr", 0)
    code = f.get(f"{name}_str", 0) if layout is None else layout
    kind = layout_name(m, code)
    if kind == "aligned":
        strides = aligned_strides(m, addr, shape, dtype)
    elif kind == "compact":
        strides = aligned_strides(m, addr, shape, dtype, compact=True)
    elif kind == "free":
        strides = tuple(f.get(f"{name}_{d}_str", 0) for d in "nchw")
    else:
        raise SimulationError(f"{name}_str must be the aligned, compact or free layout code, not {code!r}"
                              + (f" ({kind}, whose meaning is undocumented)" if kind else ""))
    return Tensor(name, addr, tuple(shape), strides, dtype)


def _view(m, t, write):
    return m.lmem.tensor(t.name, t.addr, t.shape, t.strides, m.log, write, t.dtype)


def read(m, t):
    """Values of a tensor: int64 for integer types, float64 for float types."""
    raw = np.array(_view(m, t, False).read())
    return to_values(raw, t.dtype)


def to_values(raw, dtype):
    if dtype.name == "bf16":
        return numerics.bf16_to_fp32(raw).astype(np.float64)
    return raw.astype(np.float64 if dtype.is_float else np.int64)


def write(m, t, values, saturate):
    """Store values into a tensor: integers saturated to its type (saturate) or wrapped modulo
    2**bits; floats rounded to the nearest value of its type."""
    if t.strides and any(s == 0 and d > 1 for s, d in zip(t.strides, t.shape)):
        raise SimulationError(f"{t.name} stride must be non-zero in every dimension larger than 1, not "
                              f"{t.strides} for shape {t.shape} (a result cannot be broadcast)")
    _view(m, t, True).write(store_values(np.broadcast_to(values, t.shape), t.dtype, saturate))


def store_values(values, dtype, saturate):
    values = np.asarray(values)
    if dtype.is_float:
        return numerics.saturate(values.astype(np.float64), dtype)
    if values.dtype.kind == "f":
        return numerics.to_int(values, dtype)
    return numerics.saturate(values, dtype) if saturate else numerics.wrap(values, dtype)


def const(f, name, dtype):
    """The constant an operand with X_const = 1 carries in X_addr, as a value of dtype."""
    bits = f.get(f"{name}_addr", 0)
    if dtype.is_float:
        if dtype.name == "fp32":
            return float(np.array([bits & 0xFFFFFFFF], np.uint32).view(np.float32)[0])
        if dtype.name == "fp16":
            return float(np.array([bits & 0xFFFF], np.uint16).view(np.float16)[0])
        return float(numerics.bf16_to_fp32(np.uint16(bits & 0xFFFF)))
    return int(numerics.wrap(np.int64(bits), dtype))


def operand(m, f, name, shape, dtype, layout=None):
    """Values of an operand: its constant (X_const) or its local tensor."""
    if f.get(f"{name}_const", 0):
        return const(f, name, dtype)
    return read(m, tensor(m, f, name, shape, dtype, layout))
