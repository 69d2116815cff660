"""Chip-neutral arithmetic of the simulators: rounding by mode, saturation, relu, bf16.

Rounding modes (`Round`): the values of bm1684x `rounding_mode_t` (isa-facts
bm1684x-memory.md section 4, the same rules as TPU-MLIR's RightShiftRound). For an exact
quotient q with f = floor(q), remainder r = q - f in [0, 1) (scaled: x - f*2**n in [0, 2**n))
and half = 1/2 (scaled 2**(n-1)):

    HALF_TO_EVEN         0  f + (r > half or (r == half and f odd))
    HALF_AWAY_FROM_ZERO  1  f + (r > half or (r == half and q >= 0))
    TOWARDS_ZERO         2  f + (q < 0 and r != 0)
    DOWN                 3  f                       (floor)
    UP                   4  f + (r != 0)            (ceil)
    HALF_UP              5  f + (r >= half)         (ties towards +inf; bm1880's one rounding)
    HALF_DOWN            6  f + (r > half)          (ties towards -inf)

The same rules serve right shifts (`rshift`), integer division (`div`) and float -> int
conversion (`round_float`, `to_int`). Integer work is done in int64, so shifts are limited to
0 <= n <= 62 and values to the int64 range (every chip's data is at most 32 bits wide).
`rshift_each` takes a shift amount per element (bm1684x shift tensors). Bad modes or shift
amounts raise SimulationError (the simulator names the instruction).
"""
import enum
import functools

import numpy as np

from bmk.errors import SimulationError


class Round(enum.IntEnum):
    HALF_TO_EVEN = 0
    HALF_AWAY_FROM_ZERO = 1
    TOWARDS_ZERO = 2
    DOWN = 3
    UP = 4
    HALF_UP = 5
    HALF_DOWN = 6


FLOOR, CEIL = Round.DOWN, Round.UP        # the header comments' other names
MAX_SHIFT = 62


def as_mode(mode):
    try:
        return Round(mode)
    except ValueError:
        raise SimulationError(f"rounding mode must be one of {[f'{m.value} {m.name}' for m in Round]}, "
                              f"not {mode!r}") from None


def _adjust(f, r, half, neg, mode, tie=None):
    """The increment (0/1, int64 array) of `mode` given floor f, remainder r, half and q < 0
    (`neg`: read only by TOWARDS_ZERO and HALF_AWAY_FROM_ZERO); `tie`: the remainder that is
    exactly half (default `half`; rshift_each gives one no remainder equals where nothing was
    shifted out)."""
    if tie is None:
        tie = half
    if mode == Round.DOWN:
        return 0
    if mode == Round.HALF_UP:
        return r >= half
    if mode == Round.HALF_DOWN:
        return r > half
    if mode == Round.UP:
        return r != 0
    if mode == Round.TOWARDS_ZERO:
        return neg & (r != 0)
    if mode == Round.HALF_AWAY_FROM_ZERO:
        return (r > half) | ((r == tie) & ~neg)
    return (r > half) | ((r == tie) & (f & 1).astype(bool))      # HALF_TO_EVEN


_SIGNED_MODES = (Round.TOWARDS_ZERO, Round.HALF_AWAY_FROM_ZERO)     # the modes _adjust reads q < 0 in
_INT64 = np.dtype(np.int64)


def rshift(x, n, mode=Round.HALF_UP):
    """x / 2**n rounded by `mode` (x integer, arithmetic: negative x shift towards -inf first).

    Returns an int64 array (or the input itself, as int64, when n == 0).
    """
    if mode is not Round.HALF_UP:           # (the hot path skips the conversion)
        mode = as_mode(mode)
    if not (isinstance(n, (int, np.integer)) and 0 <= n <= MAX_SHIFT):
        raise SimulationError(f"right shift must be an integer in [0, {MAX_SHIFT}], not {n!r}")
    if type(x) is not np.ndarray or x.dtype is not _INT64:
        x = np.asarray(x)
        if x.dtype != np.int64:
            x = x.astype(np.int64)
    if n == 0:
        return x
    n = int(n)
    half = 1 << (n - 1)
    if mode == Round.HALF_UP:               # the hot path of bm1880: add half, shift
        return (x + half) >> n
    f = x >> n
    if mode == Round.DOWN:
        return f
    r = x & ((1 << n) - 1)
    return f + _adjust(f, r, half, x < 0, mode)


def rshift_each(x, n, mode=Round.HALF_UP):
    """x / 2**n rounded by `mode`, element by element (x, n integer arrays, broadcast together;
    0 <= n <= MAX_SHIFT; n == 0 leaves x), as int64."""
    mode = as_mode(mode)
    x, n = np.asarray(x, np.int64), np.asarray(n, np.int64)
    if n.size and (n.min() < 0 or n.max() > MAX_SHIFT):
        raise SimulationError(f"right shifts must be in [0, {MAX_SHIFT}], not [{n.min()}, {n.max()}]")
    if mode == Round.HALF_UP:               # f + (r >= half) is floor((x + half) / 2**n)
        return (x + ((np.int64(1) << n) >> 1)) >> n
    # Each step over the elements once: the remainder as the low bits, and the thresholds
    # worked out on n's own (usually per-channel) shape: where n is 0 the remainder is 0, no
    # mode increments at r > half = 0 or r != 0, and the tie is -1, which no remainder equals.
    f = x >> n
    if mode == Round.DOWN:
        return f
    one = np.int64(1) << n
    r = x & (one - 1)
    half = one >> 1
    neg = x < 0 if mode in _SIGNED_MODES else None
    return f + _adjust(f, r, half, neg, mode, tie=np.where(n > 0, half, -1))


def div(x, d, mode=Round.HALF_TO_EVEN):
    """x / d rounded by `mode`, integers (d != 0 everywhere), as int64."""
    mode = as_mode(mode)
    x, d = np.asarray(x, np.int64), np.asarray(d, np.int64)
    if np.any(d == 0):
        raise SimulationError("divisor must be non-zero, not 0")
    neg_d = d < 0
    x, d = np.where(neg_d, -x, x), np.abs(d)          # x/d = (-x)/(-d): a positive divisor
    f = x // d
    r2 = 2 * (x - f * d)                                # 2r in [0, 2d): compare with d = 2*half
    return f + _adjust(f, r2, d, x < 0, mode)


def exact_sum_type(data, weights, terms):
    """The float type in which `terms` products of integer data (a sequence of arrays: e.g. an
    input and its pad values) and integer weights sum exactly, in any order: float32 when the
    largest magnitudes' product times `terms` stays within 2**24 (every partial sum is then an
    integer float32 holds; a GEMM in it is twice as fast), else float64 (exact below 2**53:
    8- and 16-bit data)."""
    top = max(map(magnitude, data)) * magnitude(weights)
    return np.float32 if top * terms <= 1 << 24 else np.float64


def magnitude(a):
    """The largest |value| of an integer array, as a Python int (min and max: no array made;
    np.abs would wrap an int8 -128)."""
    a = np.asarray(a)
    return max(-int(a.min()), int(a.max())) if a.size else 0


def round_float(x, mode=Round.HALF_TO_EVEN):
    """Floats rounded to integral floats by `mode` (NaN and inf pass through)."""
    mode = as_mode(mode)
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        if mode == Round.HALF_TO_EVEN:
            return np.rint(x)
        if mode == Round.DOWN:
            return np.floor(x)
        if mode == Round.UP:
            return np.ceil(x)
        if mode == Round.TOWARDS_ZERO:
            return np.trunc(x)
        f = np.floor(x)
        r = x - f                                       # exact for doubles
        return f + _adjust(None, r, 0.5, x < 0, mode)     # f is only read by HALF_TO_EVEN


def to_int(x, dtype, mode=Round.HALF_TO_EVEN):
    """Float -> integer dtype: round by mode, saturate; NaN becomes 0 (a documented choice)."""
    v = np.asarray(round_float(x, mode))        # a new float64 array: changed in place below
    v[np.isnan(v)] = 0.0
    np.maximum(v, dtype.min, out=v)             # the clip (no NaN is left)
    np.minimum(v, dtype.max, out=v)
    return v.astype(dtype.numpy)


def saturate(x, dtype):
    """Clip to the dtype's range and cast to its storage (numpy) type.

    Integers: clipped to [min, max]. Floats: converted with IEEE round-to-nearest-even, so
    values beyond the largest finite value become +-inf (fp16, fp32); bf16 returns its uint16
    storage bits (`fp32_to_bf16`).
    """
    if dtype.is_float:
        if dtype.name == "bf16":
            return fp32_to_bf16(x)
        if dtype.name in FP8_FORMATS:
            return fp8_to_bits(x, dtype.name)
        with np.errstate(over="ignore"):
            return np.asarray(x).astype(dtype.numpy)
    x = np.asarray(x)
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), 0, x)
    return np.clip(x, dtype.min, dtype.max).astype(dtype.numpy)


def relu(x):
    return np.maximum(x, 0)


def sign_extend(x, bits):
    """The low `bits` bits of integers x read as two's complement, as int64."""
    x = np.asarray(x).astype(np.int64)
    sign = 1 << (bits - 1)
    return ((x & ((1 << bits) - 1)) ^ sign) - sign


def wrap(x, dtype):
    """Integers reduced modulo 2**bits into the dtype's range (no saturation), as its storage."""
    return sign_extend(x, dtype.bits).astype(dtype.numpy) if dtype.signed else \
        (np.asarray(x).astype(np.int64) & ((1 << dtype.bits) - 1)).astype(dtype.numpy)


def bf16_to_fp32(bits):
    """bf16 storage (uint16) -> float32 values."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def flush_subnormals(values):
    """float values with every magnitude below fp32's (and bf16's) smallest normal made a zero of
    its sign: what the TPU1686 float units do to subnormal operands and results."""
    v = np.asarray(values)
    return np.where(np.abs(v) < np.finfo(np.float32).tiny, np.copysign(0.0, v), v).astype(v.dtype)


def fp32_to_bf16(x):
    """float32 values -> bf16 storage (uint16), rounding to nearest even; NaN stays a quiet NaN."""
    f = np.asarray(x, np.float32)
    u = f.view(np.uint32)
    # in uint32: only NaN patterns (above 0xFF800000) can wrap, and those are replaced below
    rounded = ((u + ((u >> 16) & 1) + 0x7FFF) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded = np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)
    return rounded


# -- float results rounded by mode --------------------------------------------------------------
_BF16_INF = 0x7F80


def _bf16_step(bits, up):
    """The bf16 bit pattern next to `bits` towards +inf (up) or -inf (finite or +-inf inputs)."""
    b = np.asarray(bits, np.int64)
    neg = (b & 0x8000) != 0
    mag = b & 0x7FFF
    away = neg != up                                   # moving away from zero in magnitude
    zero = mag == 0
    out = np.where(away, b + 1, b - 1)
    # from +-0 the next value towards either side is the smallest subnormal of that sign
    out = np.where(zero, np.where(up, 0x0001, 0x8001), out)
    return (out & 0xFFFF).astype(np.uint16)


def _bf16_nearest_even(x):
    """float64 -> bf16 bits, rounded to nearest even once: round to odd into fp32 first (24
    bits keep every bf16 tie exact), then round fp32 to bf16 to nearest even."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        exact = f.astype(np.float64) == x
        if exact.all():                 # every value an fp32 (the usual case): one rounding, fp32 -> bf16
            return fp32_to_bf16(f)
        inexact = ~exact & np.isfinite(x) & np.isfinite(f)
        toward0 = np.where(np.abs(f.astype(np.float64)) > np.abs(x), np.nextafter(f, np.float32(0)), f)
    bits = toward0.view(np.uint32) | np.where(inexact, 1, 0).astype(np.uint32)
    return fp32_to_bf16(bits.view(np.float32))


def to_float(x, dtype, mode=Round.HALF_TO_EVEN):
    """Values -> the storage of a float dtype (fp16/fp32 numpy floats, bf16 uint16 bits),
    each rounded once from its exact value (float64 or integer) by `mode`: nearest modes go
    to +-inf past the largest finite value, directed modes stop at it where they point
    inward. NaN stays NaN. The 8-bit floats (uint8 bytes) saturate instead: fp8_to_bits."""
    mode = as_mode(mode)
    if dtype.name in FP8_FORMATS:
        return fp8_to_bits(x, dtype.name, mode)
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)      # integers up to 2**53 exactly (every chip's data is 32-bit)
    x = x.astype(np.float64, copy=False)
    bf16 = dtype.name == "bf16"
    if bf16:
        c = _bf16_nearest_even(x)
    else:
        with np.errstate(over="ignore"):
            c = x.astype(dtype.numpy)
    if mode == Round.HALF_TO_EVEN:
        return c
    cv = (bf16_to_fp32(c) if bf16 else c).astype(np.float64)
    with np.errstate(invalid="ignore"):
        exact = (cv == x) | np.isnan(x)
        above = cv > x
    if bf16:
        other = np.where(above, _bf16_step(c, False), _bf16_step(c, True))
        ov = bf16_to_fp32(other).astype(np.float64)
    else:
        t = dtype.numpy.type
        other = np.where(above, np.nextafter(c, t(-np.inf)), np.nextafter(c, t(np.inf)))
        ov = other.astype(np.float64)
    lo, hi = np.where(above, other, c), np.where(above, c, other)
    lov, hiv = np.where(above, ov, cv), np.where(above, cv, ov)
    with np.errstate(invalid="ignore"):
        tie = (x - lov) == (hiv - x)
    pos = x > 0
    if mode == Round.DOWN:
        pick = lo
    elif mode == Round.UP:
        pick = hi
    elif mode == Round.TOWARDS_ZERO:
        pick = np.where(pos, lo, hi)
    elif mode == Round.HALF_AWAY_FROM_ZERO:
        pick = np.where(tie, np.where(pos, hi, lo), c)
    elif mode == Round.HALF_UP:
        pick = np.where(tie, hi, c)
    else:                               # HALF_DOWN
        pick = np.where(tie, lo, c)
    return np.where(exact, c, pick).astype(c.dtype)


# -- the 8-bit floats (OCP FP8) -----------------------------------------------------------------
# The two 8-bit float formats (OCP FP8: E4M3FN and E5M2) as bytes: their values, and values
# rounded into them.
#
# Sources: the OCP 8-bit Floating Point specification (OFP8, 2023) and arXiv 2209.05433 table 1:
#   E5M2    1 sign, 5 exponent bits (bias 15), 2 mantissa bits: IEEE-like, subnormals, +-inf
#           (0x7C / 0xFC), NaN (exponent 31, mantissa != 0); largest finite 57344.
#   E4M3FN  1 sign, 4 exponent bits (bias 7), 3 mantissa bits: subnormals, no infinity, NaN only
#           at S.1111.111 (0x7F / 0xFF); largest finite 448.
# tpu-mlir (include/tpu_mlir/Support/Float8.h, `f32_to_f8e4m3(src, satu)` /
# `f32_to_f8e5m2(src, satu)`) converts with saturation: the compiler quantizes BM1690's fp8
# weights with satu = true. The chip's own conversion of a result is not public; bmk assumes the
# compiler's: a value past the largest finite one (infinities included) becomes that largest value
# of its sign, NaN becomes the format's NaN, and every other value is rounded once from its exact
# value by the mode (Round), like every other float result bmk stores.

# (exponent bits, mantissa bits, has infinity) of each format, by DType name (bmk/dtypes.py)
FP8_FORMATS = {"fp8e5m2": (5, 2, True), "fp8e4m3": (4, 3, False)}
FP8_NAN_BITS = {"fp8e5m2": 0x7E, "fp8e4m3": 0x7F}


@functools.cache
def fp8_values(name):
    """float64[256]: the value of each byte of the format (NaN where the byte is a NaN)."""
    e_bits, m_bits, has_inf = FP8_FORMATS[name]
    bias = (1 << (e_bits - 1)) - 1
    b = np.arange(256)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp = (b >> m_bits) & ((1 << e_bits) - 1)
    man = b & ((1 << m_bits) - 1)
    mag = np.where(exp == 0, man / (1 << m_bits) * 2.0 ** (1 - bias),
                   (1 + man / (1 << m_bits)) * 2.0 ** (exp - bias))
    top = exp == (1 << e_bits) - 1
    if has_inf:
        mag = np.where(top, np.where(man == 0, np.inf, np.nan), mag)
    else:
        mag = np.where(top & (man == (1 << m_bits) - 1), np.nan, mag)
    return sign * mag


def fp8_largest(name):
    """The largest finite value of the format (57344 for E5M2, 448 for E4M3FN)."""
    v = fp8_values(name)
    return float(np.max(v[np.isfinite(v)]))


@functools.cache
def _fp8_ladder(name):
    """The non-negative finite values in increasing order, and their bytes (+0 first)."""
    v = fp8_values(name)[:128]
    keep = np.isfinite(v)
    return v[keep], np.arange(128)[keep]


def fp8_to_values(bits, name):
    """Bytes (any integer array) -> float64 values."""
    return fp8_values(name)[np.asarray(bits, np.int64) & 0xFF]


def fp8_to_bits(x, name, mode=Round.HALF_TO_EVEN):
    """Values -> uint8 bytes of the format: saturated at the largest finite value, NaN to the
    format's NaN, else rounded by `mode` (Round) from the exact value."""
    mode = as_mode(mode)
    x = np.asarray(x, np.float64)
    ladder, codes = _fp8_ladder(name)
    top = ladder[-1]
    nan = np.isnan(x)
    mag = np.where(nan, 0.0, np.minimum(np.abs(x), top))
    hi_i = np.searchsorted(ladder, mag, side="left")           # ladder[hi_i] >= mag
    lo_i = np.where(ladder[hi_i] == mag, hi_i, hi_i - 1)
    lo, hi = ladder[lo_i], ladder[hi_i]
    neg = np.signbit(x)
    # magnitude rounding: directed modes act on the signed value, so they flip for negatives
    up_mag = {Round.DOWN: neg, Round.UP: ~neg, Round.TOWARDS_ZERO: np.zeros_like(neg)}
    if mode in up_mag:
        pick_hi = up_mag[mode] & (lo != hi)
    else:
        below, above = mag - lo, hi - mag
        tie = below == above
        tie_hi = {Round.HALF_TO_EVEN: (codes[hi_i] & 1) == 0, Round.HALF_AWAY_FROM_ZERO: np.ones_like(neg),
                  Round.HALF_UP: ~neg, Round.HALF_DOWN: neg}[mode]
        pick_hi = (above < below) | (tie & tie_hi & (lo != hi))
    out = np.where(pick_hi, codes[hi_i], codes[lo_i]) | np.where(neg, 0x80, 0)
    return np.where(nan, FP8_NAN_BITS[name], out).astype(np.uint8)
