"""Operands and arithmetic shared by the bm1880 instruction semantics.

TIU operands (res0, opd0, opd1, opd2) are read from their fields:
- shape: X_n, X_c, X_h, X_w;  address: X_addr;  sign: opt_X_sign;  8-bit: opt_X_int8;
- 16-bit values are two 8-bit planes, low at X_addr, high at X_addr + X_b_str;
- layout by short_X_str (its `short_str` enum, specs/bm1880/tiu.toml; isa-facts "tiu.short_*_str"):
  explicit  strides X_n_str, X_c_str, X_h_str, X_w_str;
  aligned   shape-derived eu-aligned: w 1, h W, c align_up(H*W, eu_num), n c * ceil(C / npu_num);
  weight    conv-weight layout (seed 4.41): logical (Cin, Cout, kh, kw) = (N, C, H, W) stored as
            (1, Cout, kh*kw, Cin): strides n 1, c N*H*W, h N*W, w N;
  bias      shape-derived unaligned (c H*W, n c * ceil(C / npu_num)), planes X_b_str apart.
Numerics (seed ch. 4, API.md): values widened (int64 here), a right shift by r > 0 adds
2^(r-1) first (round half up, `numerics.Round.HALF_UP`), arithmetic when opt_shift_typ is 1,
logical (on the 32-bit pattern) when 0; the result saturates to the destination format. The
chip-neutral parts (rounding shift, relu, type ranges) come from bmk.numerics and
bmk.dtypes; the 8-bit planes of 16-bit values stay here (bm1880 only).
"""
import operator

import attrs
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk import numerics
from bmk.sim.memory import AccessLog
from bmk.layout import align_up, ceil_div  # noqa: F401  (re-exported to the semantics modules)

OPERANDS = ("res0", "opd0", "opd1", "opd2")


@attrs.frozen
class Operand:
    name: str
    addr: int
    shape: tuple
    strides: tuple
    int8: bool
    signed: bool
    b_str: int


def layout_strides(layout, shape, m):
    """The strides of a shape-derived layout (a member name of the `short_str` enum)."""
    n, c, h, w = shape
    npu, eu = m.npu_num, m.eu_num
    if layout == "aligned":
        cs = align_up(h * w, eu)
        return (cs * ceil_div(c, npu), cs, w, 1)
    if layout == "weight":
        return (1, n * h * w, n * w, n)
    if layout == "bias":
        cs = h * w
        return (cs * ceil_div(c, npu), cs, w, 1)
    raise SimulationError(f"a short_*_str layout must be a member of its enum, not {layout!r}")


def _field_names(name):
    return {"shape": (f"{name}_n", f"{name}_c", f"{name}_h", f"{name}_w"), "mode": f"short_{name}_str",
            "strides": (f"{name}_n_str", f"{name}_c_str", f"{name}_h_str", f"{name}_w_str"),
            "rest": (f"{name}_addr", f"opt_{name}_int8", f"opt_{name}_sign", f"{name}_b_str")}


_FIELDS = {name: _field_names(name) for name in OPERANDS}
# What operand() reads, fetched in one call: shape, mode, strides, addr, int8, sign, b_str.
_GET = {name: operator.itemgetter(*names["shape"], names["mode"], *names["strides"], *names["rest"])
        for name, names in _FIELDS.items()}
_OPERANDS = {}      # (name, fetched values, npu_num, eu_num) -> Operand: equal fields, equal operand
_MAX_OPERANDS = 1 << 14


def operand(m, f, name, shape=None, mode=None):
    """The Operand `name` of a TIU field dict (shape, and layout mode by its member name,
    overridable by the caller)."""
    if shape is None and mode is None:
        memo = getattr(m, "memo", None)         # this instruction's plan (bmk.sim.semantics)
        if memo is not None:
            op = memo.get(name)
            if op is None:
                op = memo[name] = _operand(m, f, name, shape, mode)
            return op
        try:
            key = (name, _GET[name](f), m.npu_num, m.eu_num)
        except KeyError:        # a hand-made field dict without some of them: read as before
            return _operand(m, f, name, shape, mode)
        op = _OPERANDS.get(key)
        if op is None:
            op = _operand(m, f, name, shape, mode)
            if len(_OPERANDS) >= _MAX_OPERANDS:
                _OPERANDS.clear()
            _OPERANDS[key] = op
        return op
    return _operand(m, f, name, shape, mode)


def _operand(m, f, name, shape, mode):
    names = _FIELDS[name]
    if shape is None:
        shape = tuple(f[k] for k in names["shape"])
    if mode is None:
        mode = m.chip.member("tiu", names["mode"], f[names["mode"]])
    if mode == "explicit":
        strides = tuple(f[k] for k in names["strides"])
    else:
        strides = layout_strides(mode, shape, m)
    for d, v in zip("nchw", shape):
        if v < 1:
            raise SimulationError(f"{name}_{d} must be >= 1, not {v!r}")
    addr, int8, sign, b_str = (f[k] for k in names["rest"])
    return Operand(name, addr, tuple(shape), strides, bool(int8), bool(sign), b_str)


def npu_local(m, f, names=("opd1", "opd2")):
    """f with each named operand's address moved to res0's first lane, its offset in the lane kept.

    A convolution's weights and its per-output-channel bias or quantization records are local
    to the NPU that computes each output channel: output channel c, on lane (L + c) % npu_num of
    res0's first lane L, reads them from that lane at the operand's in-lane offset, whatever
    lane the operand's address names. The vendor's CV181X compiler relies on it: a grouped
    convolution whose groups' outputs start on lanes 0 and 4 gives both the same weight and
    record addresses on lane 0, after loading output channel k's weights and records on lane
    k % npu_num (tdl_models yolov8n_det_fire / _hand cvimodels, 4-channel groups); read on the
    address's own lanes, the second group takes the first group's weights.
    """
    lane = m.lmem.lane_size
    base = f["res0_addr"] // lane * lane
    moved = {f"{n}_addr": base + f[f"{n}_addr"] % lane for n in names if f[f"{n}_addr"] // lane * lane != base}
    return dict(f, **moved) if moved else f


def planes(m, op, write=False, int8=None):
    """TensorViews of the operand's planes: (low,) or (low, high)."""
    int8 = op.int8 if int8 is None else int8
    memo = getattr(m, "memo", None)
    if memo is not None and memo.get(op.name) is op:    # the plan's own operand: its views are the plan's
        key = (op.name, write, int8)
        hit = memo.get(key)
        if hit is None:
            log, m.log = m.log, AccessLog()
            try:
                hit = memo[key] = (_planes(m, op, write, int8), m.log.entries, m.log.elements)
            finally:
                m.log = log
        log = m.log
        if log is not None:
            log.charge(op.name, hit[2])
            log.entries += hit[1]
        return hit[0]
    return _planes(m, op, write, int8)


def _planes(m, op, write, int8):
    tensor = m.lmem.tensor
    low = tensor(op.name, op.addr, op.shape, op.strides, m.log, write)
    if int8:
        return (low,)
    return low, tensor(f"{op.name} high plane", op.addr + op.b_str, op.shape, op.strides, m.log, write)


def read(m, op, int8=None, signed=None, dtype=np.int32):
    """Operand values (N, C, H, W), sign-extended per its sign bit, as `dtype`.

    dtype None keeps the narrowest exact type (int8/uint8/int16/uint16); numpy widens it in
    the first arithmetic with a wider operand, which saves a pass over the data.
    """
    int8 = op.int8 if int8 is None else int8
    signed = op.signed if signed is None else signed
    views = planes(m, op, int8=int8)
    if int8:
        raw = views[0].read()
        if signed:
            raw = raw.view(np.int8)
        return raw.copy() if dtype is None else raw.astype(dtype)
    v = np.empty(op.shape + (2,), np.uint8)
    v[..., 0], v[..., 1] = views[0].read(), views[1].read()
    v = v.view(np.int16 if signed else np.uint16)[..., 0]
    return v if dtype is None else v.astype(dtype)


_FORMATS = {(int8, signed): dtypes.integer(8 if int8 else 16, signed) for int8 in (True, False)
            for signed in (True, False)}


def dtype_of(int8, signed):
    """The DType of an operand: 8-bit (one plane) or 16-bit (two planes), signed or not."""
    return _FORMATS[(bool(int8), bool(signed))]


_LIMITS = {key: (dt.min, dt.max) for key, dt in _FORMATS.items()}


def limits(int8, signed):
    return _LIMITS[(bool(int8), bool(signed))]


def write(m, op, values, int8=None, signed=None):
    """Saturate values to the operand's format and store them (one or two planes)."""
    int8 = op.int8 if int8 is None else int8
    signed = op.signed if signed is None else signed
    lo, hi = limits(int8, signed)
    v = np.asarray(values)
    if v.size <= 4096 and v.flags.writeable and v.dtype.kind == "i" and v.dtype.itemsize >= 4:
        # np.clip's result (lo, hi fit the type) without its Python-level wrapper, which costs
        # more than the two passes over a small array
        v = np.minimum(np.maximum(v, lo, out=v), hi, out=v)
    else:
        v = np.clip(v, lo, hi, out=v) if v.flags.writeable and v.dtype.kind in "iu" and v.dtype.itemsize >= 4 \
            else np.clip(v, lo, hi)
    views = planes(m, op, write=True, int8=int8)
    if int8:
        views[0].write(v)       # setitem casts unsafely: the clipped value's low byte
        return
    b = np.ascontiguousarray(v.astype(np.int16 if signed else np.uint16)).view(np.uint8).reshape(op.shape + (2,))
    views[0].write(b[..., 0])
    views[1].write(b[..., 1])


def const8(f, name="opd1"):
    """An 8-bit constant held in X_addr (sign from opt_X_sign)."""
    v = f[f"{name}_addr"] & 0xFF
    return v - 256 if f[f"opt_{name}_sign"] and v >= 128 else v


def const16(f, name="opd1"):
    v = f[f"{name}_addr"] & 0xFFFF
    return v - 65536 if f[f"opt_{name}_sign"] and v >= 32768 else v


def rshift(v, r, arithmetic):
    """Round-half-up right shift by r (seed ch. 4 / API.md).

    Arithmetic: numerics.rshift(v, r, HALF_UP). Logical (bm1880's opt_shift_typ 0): half is
    added, then the sum is taken as a 32-bit pattern and shifted (the sum wraps at 2^32).
    """
    if r == 0:
        return v
    if arithmetic:
        return numerics.rshift(v, r, numerics.Round.HALF_UP)
    v = v.astype(np.int64) + (1 << (r - 1))
    return (v & 0xFFFFFFFF) >> r


def relu(f, v):
    return numerics.relu(v) if f["opt_relu"] else v


def same_shape(a, b):
    if a.shape != b.shape:
        raise SimulationError(f"{b.name} shape must equal {a.name} shape {a.shape}, not {b.shape}")
