"""bmk.numerics against references written from isa-facts/bm1684x-memory.md section 4."""
from fractions import Fraction

import numpy as np
import pytest

from bmk import dtypes
from bmk.errors import SimulationError
from bmk import numerics
from bmk.numerics import Round

I32_MIN, I32_MAX, U32_MAX = -(1 << 31), (1 << 31) - 1, (1 << 32) - 1

# The worked table of bm1684x-memory.md section 4, column by column: (x, n).
COLUMNS = [(-5, 1), (-3, 1), (-1, 1), (1, 1), (3, 1), (5, 1), (-7, 2), (-5, 2), (5, 2), (7, 2),
           (I32_MIN, 32), (I32_MAX, 32), (-1, 32), (U32_MAX, 32), (1 << 31, 32)]
TABLE = {
    Round.HALF_TO_EVEN:        [-2, -2, 0, 0, 2, 2, -2, -1, 1, 2, 0, 0, 0, 1, 0],
    Round.HALF_AWAY_FROM_ZERO: [-3, -2, -1, 1, 2, 3, -2, -1, 1, 2, -1, 0, 0, 1, 1],
    Round.TOWARDS_ZERO:        [-2, -1, 0, 0, 1, 2, -1, -1, 1, 1, 0, 0, 0, 0, 0],
    Round.DOWN:                [-3, -2, -1, 0, 1, 2, -2, -2, 1, 1, -1, 0, -1, 0, 0],
    Round.UP:                  [-2, -1, 0, 1, 2, 3, -1, -1, 2, 2, 0, 1, 0, 1, 1],
    Round.HALF_UP:             [-2, -1, 0, 1, 2, 3, -2, -1, 1, 2, 0, 0, 0, 1, 1],
    Round.HALF_DOWN:           [-3, -2, -1, 0, 1, 2, -2, -1, 1, 2, -1, 0, 0, 1, 0],
}


def ref_shift(x, n, mode):
    """The integer rules of the facts' table, literally (Python ints)."""
    if n == 0:
        return x
    f = x >> n
    r = x - f * (1 << n)
    half = 1 << (n - 1)
    return f + {
        Round.HALF_TO_EVEN: r > half or (r == half and f % 2 == 1),
        Round.HALF_AWAY_FROM_ZERO: r > half or (r == half and x >= 0),
        Round.TOWARDS_ZERO: x < 0 and r != 0,
        Round.DOWN: False,
        Round.UP: r != 0,
        Round.HALF_UP: r >= half,
        Round.HALF_DOWN: r > half,
    }[mode]


def ref_round(q, mode):
    """Round a Fraction by mode (the same rules on q = f + r)."""
    f = q.numerator // q.denominator
    r = q - f
    half = Fraction(1, 2)
    return f + {
        Round.HALF_TO_EVEN: r > half or (r == half and f % 2 == 1),
        Round.HALF_AWAY_FROM_ZERO: r > half or (r == half and q >= 0),
        Round.TOWARDS_ZERO: q < 0 and r != 0,
        Round.DOWN: False,
        Round.UP: r != 0,
        Round.HALF_UP: r >= half,
        Round.HALF_DOWN: r > half,
    }[mode]


def test_the_seven_modes_have_the_facts_values():
    assert [(m.value, m.name) for m in Round] == [
        (0, "HALF_TO_EVEN"), (1, "HALF_AWAY_FROM_ZERO"), (2, "TOWARDS_ZERO"), (3, "DOWN"), (4, "UP"),
        (5, "HALF_UP"), (6, "HALF_DOWN")]
    assert numerics.FLOOR is Round.DOWN and numerics.CEIL is Round.UP


@pytest.mark.parametrize("mode", list(Round))
def test_worked_table(mode):
    got = [int(numerics.rshift(np.array([x]), n, mode)[0]) for x, n in COLUMNS]
    assert got == TABLE[mode]
    assert [ref_shift(x, n, mode) for x, n in COLUMNS] == TABLE[mode]       # the reference agrees
    assert got == [int(numerics.rshift(x, n, int(mode))) for x, n in COLUMNS]   # scalars, int modes


@pytest.mark.parametrize("mode", list(Round))
def test_rshift_and_div_against_reference(mode):
    rng = np.random.default_rng(int(mode))
    x = rng.integers(I32_MIN, U32_MAX, 4000)
    x[:64] = np.arange(-32, 32)
    for n in (0, 1, 2, 3, 7, 16, 31, 32):
        want = [ref_shift(int(v), n, mode) for v in x]
        assert numerics.rshift(x, n, mode).tolist() == want, n
        assert numerics.div(x, 1 << n, mode).tolist() == want, n


@pytest.mark.parametrize("mode", list(Round))
def test_div_any_divisor(mode):
    xs = np.arange(-40, 41)
    for d in (3, -3, 7, -2, 10):
        want = [ref_round(Fraction(int(v), d), mode) for v in xs]
        assert numerics.div(xs, d, mode).tolist() == want, d


@pytest.mark.parametrize("mode", list(Round))
def test_float_rounding(mode):
    vals = [-3.5, -2.5, -2.25, -1.5, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.5, 2.5, 3.5, 1e9 + 0.5]
    want = [ref_round(Fraction(v), mode) for v in vals]
    assert numerics.round_float(vals, mode).tolist() == want
    assert numerics.to_int(np.array(vals), dtypes.INT8, mode).tolist() == [max(-128, min(127, w)) for w in want]


def test_to_int_nan_and_inf():
    assert numerics.to_int(np.array([np.nan, np.inf, -np.inf]), dtypes.INT16).tolist() == [0, 32767, -32768]


def test_bad_mode_and_shift():
    with pytest.raises(SimulationError, match="rounding mode must be one of"):
        numerics.rshift(1, 1, 7)
    with pytest.raises(SimulationError, match="right shift must be an integer in"):
        numerics.rshift(1, 63)
    with pytest.raises(SimulationError, match="divisor must be non-zero"):
        numerics.div([1, 2], [1, 0])


@pytest.mark.parametrize("dt", [d for d in dtypes.STANDARD if not d.is_float])
def test_saturate_integers(dt):
    lo, hi = dt.min, dt.max
    assert (lo, hi) == ((-(1 << dt.bits - 1), (1 << dt.bits - 1) - 1) if dt.signed else (0, (1 << dt.bits) - 1))
    v = np.array([lo - 1000, lo - 1, lo, 0, 1, hi, hi + 1, hi + 1000], np.int64)
    out = numerics.saturate(v, dt)
    assert out.dtype == dt.numpy
    assert out.tolist() == [lo, lo, lo, max(lo, 0), 1, hi, hi, hi]
    assert numerics.saturate(np.array([np.nan, -1e30, 1e30]), dt).tolist() == [0, lo, hi]


def test_saturate_floats():
    out = numerics.saturate(np.array([1.0, 70000.0, -70000.0]), dtypes.FP16)
    assert out.dtype == np.float16 and out[0] == 1 and np.isinf(out[1:]).all()
    assert numerics.saturate(np.array([1.5, 1e39]), dtypes.FP32).tolist() == [1.5, np.inf]
    bits = numerics.saturate(np.array([1.0, -2.0, 3.0e38], np.float32), dtypes.BF16)
    assert bits.dtype == np.uint16 and bits.tolist()[:2] == [0x3F80, 0xC000]
    assert numerics.bf16_to_fp32(bits).tolist()[:2] == [1.0, -2.0]


def test_bf16_rounds_to_nearest_even_and_keeps_nan():
    u = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7FC00001], np.uint32)   # tie->even, tie->even up, above
    got = numerics.fp32_to_bf16(u.view(np.float32)).tolist()
    assert got[:3] == [0x3F80, 0x3F82, 0x3F81]
    assert np.isnan(numerics.bf16_to_fp32(np.array(got[3:], np.uint16)))[0]


def test_sign_extend_wrap_relu():
    assert numerics.sign_extend([0x7F, 0x80, 0xFF, 0x1FF], 8).tolist() == [127, -128, -1, -1]
    assert numerics.sign_extend([0xFFFF8000], 16).tolist() == [-32768]
    assert numerics.wrap([300, -129], dtypes.INT8).tolist() == [44, 127]
    assert numerics.wrap([-1], dtypes.UINT16).tolist() == [65535]
    assert numerics.relu(np.array([-3, 0, 4])).tolist() == [0, 0, 4]


def test_dtypes():
    assert [d.itemsize for d in (dtypes.INT8, dtypes.UINT16, dtypes.FP16, dtypes.BF16, dtypes.FP32)] == [1, 2, 2, 2, 4]
    assert dtypes.BF16.numpy == np.uint16 and dtypes.FP32.numpy == np.float32
    assert dtypes.FP16.max == 65504.0 and dtypes.FP32.min == -np.finfo(np.float32).max
    assert dtypes.as_dtype("int16") is dtypes.INT16 and dtypes.as_dtype(np.uint32) is dtypes.UINT32
    from bmk.errors import ArgumentError
    with pytest.raises(ArgumentError, match="no whole-byte itemsize"):
        dtypes.INT4.itemsize
    with pytest.raises(ArgumentError, match="dtype must be"):
        dtypes.as_dtype("int7")


def test_rshift_each_matches_rshift_per_amount():
    """Per-element shift amounts give what one rshift per amount gives, in every mode."""
    rng = np.random.default_rng(3)
    x = rng.integers(-2**40, 2**40, 4000)
    n = rng.integers(0, 41, 4000)
    x[:4], n[:4] = (-5, 5, -(2**31), 2**32 - 1), (1, 1, 32, 32)
    for mode in numerics.Round:
        got = numerics.rshift_each(x, n, mode)
        for k in np.unique(n):
            sel = n == k
            np.testing.assert_array_equal(got[sel], numerics.rshift(x[sel], int(k), mode))
    with pytest.raises(SimulationError):
        numerics.rshift_each(x, -1)


def test_rshift_each_per_channel_shifts_with_zeros_and_ties():
    """A per-channel shift (1, C, 1, 1) broadcast over (N, C, H, W), some channels not shifted at
    all, values on exact ties: each channel as one rshift by its amount gives, in every mode."""
    rng = np.random.default_rng(5)
    n = np.array([0, 1, 3, 0, 7, 31]).reshape(1, 6, 1, 1)
    x = rng.integers(-2**20, 2**20, (2, 6, 5, 4)) * 2**7 + 2**6          # ties at a shift of 7
    x[0, :, 0, 0] = (-1, 1, -4, 4, -(2**31), 2**31 - 1)
    for mode in numerics.Round:
        got = numerics.rshift_each(x, n, mode)
        for c in range(6):
            np.testing.assert_array_equal(got[:, c], numerics.rshift(x[:, c], int(n[0, c, 0, 0]), mode))


def test_exact_sum_type_counts_every_term_and_the_int8_minimum():
    """float32 only while (largest |data|) * (largest |weight|) * terms <= 2**24; -128 counts
    as 128 (np.abs would wrap it)."""
    x, w = np.array([-128, 5], np.int8), np.array([127, -3], np.int8)
    assert numerics.magnitude(x) == 128 and numerics.magnitude(w) == 127
    limit = (1 << 24) // (128 * 127)
    assert numerics.exact_sum_type([x], w, limit) is np.float32
    assert numerics.exact_sum_type([x], w, limit + 1) is np.float64
    assert numerics.exact_sum_type([np.zeros(0, np.int8), x], w, 1) is np.float32
    # beyond the bound float32 sums of such terms really are inexact: the rule is needed
    terms = np.full(limit * 4, 128.0 * 127, np.float32)
    terms[::3] += 1
    assert float(np.cumsum(terms, dtype=np.float32)[-1]) != float(np.sum(terms, dtype=np.float64))
