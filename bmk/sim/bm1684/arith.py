"""Semantics of the element-wise TIU commands: arith.* (ar_op) and md_scalar.* (md_scalar_op).

They serve the FP32 Binary, 32-Bit Binary and Fixed Point Binary/Unary functions of seed 003
(and the vendor's own md_scalar/ar commands of the yolov5s stream). Both classes compute the
same element-wise function of res0's shape (res0_n/c/h/w; the opd shapes stay 1, as the
vendor writes them); an operand is a tensor or a constant (opt_opdX_const, bits in
opdX_addr), read in its own precision and sign (common.py). An operand whose short_X_str is
`offset` is per-channel: one element per channel, shape (1, C, 1, 1) in the compact layout,
broadcast over n, h and w.

Choices where isa-facts are silent (the lowerings bmk/bm1684/lowering/fp32_binary.py,
bit32_binary.py and fixed_point.py follow them):
- Numeric mode: fp32 when every operand and res0 are fp32 (float32 arithmetic, one IEEE
  rounding per operation: mac is float32(res + float32(a * b)), not fused; x/0 = +-inf,
  NaN propagates through max/min); integer when every operand is int8/int16/int32.
  Anything else (fp16, mixed) is a SimulationError.
- Integer results: the operands are widened (int64; Python ints when an operand or res0 is
  32-bit), the operation is exact, then add/sub/mul/mac round a right shift of
  opt_right_shift bits as the seed's formula (x + 2^(r-1)) RSH r (ties towards +inf; no shift
  when r = 0) and saturate to res0's type; max/min saturate. res0 has no sign field on BM1684: the result is signed iff
  opt_opd2_sign = 1 (opd2 is unused by these two-operand kinds).
- mac: res = res_old * 2^opt_left_shift + opd0 * opd1 (then the right shift), res_old read
  in res0's precision with the sign opt_res_add_sign (okk's is_origin_dst_signed).
- shift: res = opd0 LSH opd1 if opd1 > 0 else opd0 RSH -opd1; arithmetic when opd0 is
  signed, logical when unsigned; a shift is a bit operation: the result wraps to res0's width
  (no saturation; shifting by the full width or more gives 0, or the sign for arithmetic
  right shifts).
- and/or/xor: on the operands' bit patterns (fp32 as its 32 bits), wrapped to res0's width.
- select_gt / select_eq: res = opd2 if opd0 > opd1 (== opd1) else 0, compared in the operands'
  mode; opd2 (usually a constant) is taken as res0-width bits, copied unchanged.
- divide: fp32 only (res = opd0 / opd1).
opt_relu is not read (the vendor sets it everywhere, common.py).
Bounded work: a res0 with more elements per NPU than that NPU's memory holds at res0's
precision (possible only with overlapping strides) is a SimulationError, so a small malformed
command cannot make the simulator build huge arrays.
"""

import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk.errors import SimulationError
from bmk import numerics
from bmk.sim.bm1684 import common as c


def _operand(m, f, slot, dtype):
    """Operand `slot` as values of dtype: a scalar (constant), a per-channel (1, C, 1, 1) array
    or an (N, C, H, W) array."""
    shape = c.res0_shape(f)
    if f.get(f"opt_{slot}_const"):
        return c.const(f, slot, dtype)
    if c.member(m, f"short_{slot}_str", f[f"short_{slot}_str"]) == "offset":
        per_channel = (1, shape[1], 1, 1)
        start = c.local_offset(m, f, slot) // m.lmem.lane_size
        stride = chip_layout.compact_stride(per_channel, m.npu_num, start)
        return c.view(m, f, slot, dtype, per_channel, stride=stride).read()
    return c.view(m, f, slot, dtype, shape).read()


def _bounded(m, f, kind):
    """SimulationError unless res0's elements per NPU fit that NPU's memory (module docstring)."""
    n, ch, h, w = c.res0_shape(f)
    start = max(0, f["res0_addr"] - m.space("local").base) // m.lmem.lane_size % m.npu_num
    per_lane = n * -(-(start + ch) // m.npu_num) * h * w
    if per_lane * _width(m, f, "res0") // 8 > m.lmem.lane_size:
        raise SimulationError(f"{kind}: res0 must hold at most {m.lmem.lane_size} bytes per NPU, not "
                              f"{per_lane} elements of {_width(m, f, 'res0')} bits (shape {(n, ch, h, w)})")


def _mode(m, f, kind, slots):
    """'fp32' or 'int' for the operands `slots` and res0 (see the module docstring)."""
    precs = {c.prec_name(m, f, s) for s in ("res0", *slots)}
    if precs == {"fp32"}:
        return "fp32"
    if precs <= {"int8", "int16", "int32"}:
        return "int"
    raise SimulationError(f"{kind}: precisions must be all fp32 or all int8/int16/int32, not "
                          f"{', '.join(f'{s} {c.prec_name(m, f, s)}' for s in ('res0', *slots))}")


def _width(m, f, slot):
    return {"int8": 8, "int16": 16, "int32": 32, "fp32": 32, "fp16": 16}[c.prec_name(m, f, slot)]


def res_dtype(m, f):
    """The integer DType of res0: its precision, signed iff opt_opd2_sign (module docstring)."""
    return dtypes.integer(_width(m, f, "res0"), bool(f["opt_opd2_sign"]))


def _ints(m, f, slot, exact=False):
    """Operand values widened: int64, or Python ints (object arrays) when `exact` (32-bit
    operands, whose products and shifted sums can exceed int64)."""
    x = np.asarray(_operand(m, f, slot, c.dtype_of(m, f, slot)), np.int64)
    return x.astype(object) if exact else x


def _wide(m, f):
    return any(_width(m, f, s) == 32 for s in ("res0", "opd0", "opd1"))


def _round_shift(x, n):
    """The seed's (x + 2^(n-1)) RSH n (arithmetic shift, so ties go up); x itself when n = 0."""
    return x if n == 0 else (x + (1 << (n - 1))) >> n


def _floats(m, f, slot):
    return np.asarray(_operand(m, f, slot, dtypes.FP32), np.float32)


def _store(m, f, dtype, values):
    values = np.broadcast_to(values, c.res0_shape(f))
    c.write(m, f, "res0", dtype, values)


def _int_result(m, f, exact, rounded=True):
    if rounded:
        exact = _round_shift(exact, f["opt_right_shift"])
    dt = res_dtype(m, f)
    _store(m, f, dt, np.clip(exact, dt.min, dt.max).astype(dt.numpy))


def _binary(kind, fp, integer):
    """A two-operand kind: fp(a, b) on float32 values, integer(a, b) on widened ints."""
    def run(m, f):
        if _mode(m, f, kind, ("opd0", "opd1")) == "fp32":
            a, b = _floats(m, f, "opd0"), _floats(m, f, "opd1")
            with np.errstate(all="ignore"):
                _store(m, f, dtypes.FP32, np.asarray(fp(a, b), np.float32))
        elif integer is None:
            raise SimulationError(f"{kind}: integer precisions are not supported (fp32 only)")
        else:
            wide = _wide(m, f)
            integer(m, f, _ints(m, f, "opd0", wide), _ints(m, f, "opd1", wide))
    return run


def _arith(op):
    return lambda m, f, a, b: _int_result(m, f, op(a, b))


def _extreme(op):
    return lambda m, f, a, b: _int_result(m, f, op(a, b), rounded=False)


def _mac(kind):
    def run(m, f):
        shape = c.res0_shape(f)
        if _mode(m, f, kind, ("opd0", "opd1")) == "fp32":
            old = c.view(m, f, "res0", dtypes.FP32, shape).read()
            with np.errstate(all="ignore"):
                prod = np.asarray(_floats(m, f, "opd0") * _floats(m, f, "opd1"), np.float32)
                _store(m, f, dtypes.FP32, np.asarray(old + prod, np.float32))
            return
        old_dt = dtypes.integer(_width(m, f, "res0"), bool(f["opt_res_add_sign"]))
        wide = _wide(m, f)
        old = np.asarray(c.view(m, f, "res0", old_dt, shape).read(), np.int64)
        old = old.astype(object) if wide else old          # 32-bit old << 31 exceeds int64
        _int_result(m, f, (old << f["opt_left_shift"]) + _ints(m, f, "opd0", wide) * _ints(m, f, "opd1", wide))
    return run


def _shift(kind):
    def run(m, f):
        if _mode(m, f, kind, ("opd0", "opd1")) != "int":
            raise SimulationError(f"{kind}: precisions must be int8/int16/int32")
        x, amount = _ints(m, f, "opd0"), _ints(m, f, "opd1")
        x, amount = np.broadcast_arrays(x, amount)
        width = _width(m, f, "opd0")
        left = (x.astype(np.uint64) & np.uint64((1 << width) - 1)) << np.clip(amount, 0, 32).astype(np.uint64)
        right = x >> np.clip(-amount, 0, 63)
        out = np.where(amount > 0, (left & np.uint64(0xFFFFFFFF)).astype(np.int64), right)
        _store(m, f, res_dtype(m, f), numerics.wrap(out, res_dtype(m, f)))
    return run


def _bits(m, f, slot):
    return np.asarray(_operand(m, f, slot, dtypes.integer(_width(m, f, slot), False)), np.int64)


def _logic(op):
    def run(m, f):
        out = op(_bits(m, f, "opd0"), _bits(m, f, "opd1"))
        dt = dtypes.integer(_width(m, f, "res0"), False)
        _store(m, f, dt, numerics.wrap(out, dt))
    return run


def _select(kind, cond):
    def run(m, f):
        if _mode(m, f, kind, ("opd0", "opd1")) == "fp32":
            a, b = _floats(m, f, "opd0"), _floats(m, f, "opd1")
        else:
            a, b = _ints(m, f, "opd0"), _ints(m, f, "opd1")
        dt = dtypes.integer(_width(m, f, "res0"), False)
        value = np.asarray(_operand(m, f, "opd2", dt))
        _store(m, f, dt, np.where(cond(a, b), value, np.zeros((), dt.numpy)).astype(dt.numpy))
    return run


_TABLE = {
    "add": lambda k: _binary(k, np.add, _arith(np.add)),
    "sub": lambda k: _binary(k, np.subtract, _arith(np.subtract)),
    "mul": lambda k: _binary(k, np.multiply, _arith(np.multiply)),
    "max": lambda k: _binary(k, np.maximum, _extreme(np.maximum)),
    "min": lambda k: _binary(k, np.minimum, _extreme(np.minimum)),
    "divide": lambda k: _binary(k, np.divide, None),
    "mac": _mac,
    "shift": _shift,
    "and": lambda k: _logic(np.bitwise_and),
    "or": lambda k: _logic(np.bitwise_or),
    "xor": lambda k: _logic(np.bitwise_xor),
    "select_gt": lambda k: _select(k, np.greater),
    "select_eq": lambda k: _select(k, np.equal),
}


def _guarded(kind, fn):
    def run(m, f):
        _bounded(m, f, kind)
        fn(m, f)
    return run


def _kinds():
    return {("tiu", f"{cls}.{name}"): _guarded(f"{cls}.{name}", make(f"{cls}.{name}"))
            for cls in ("arith", "md_scalar") for name, make in _TABLE.items()}


KINDS = _kinds()
