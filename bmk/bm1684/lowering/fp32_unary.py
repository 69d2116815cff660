"""Lowering of the FP32 Unary functions (seed 003 "FP32 Unary Functions"), one function per
API function or family (exp, sigmoid and tanh take `tunable`: num_series from the call, else 32).

Single commands (fields as the vendor's yolov5s stream fills the same commands: aligned
operands with default strides, the shape in res0 only, constants as fp32 bits in opdX_addr):
- rsqrt: md_sfu rsqrt;  lookup_exp: lut through the exp table of L2 SRAM (as the vendor's
  first lut: opd0 at the default fp32 precision, read as an integer; opd1_h = 8 index bits);
- reciprocal: md_scalar divide, constant opd0 = 1.0;  neg: md_scalar mul by the constant
  -1.0 (the vendor's first SiLU command), both with the caller's strides.
Short sequences (S = src, D = dst, W = work; every step element-wise over the shape):
- sqrt: D = rsqrt(S); D = 1.0 / D (sqrt(0) = 1 / inf = 0, sqrt(inf) = 1 / 0 = inf).
- taylor_exp: D = taylor(S, num_series) (= sum_{k=1..num_series} S^k / k!, the md_sfu taylor
  command with the exp taylor table); D = D + 1.0.
- exp / exp_tunable (exp = num_series 32, the seed), after the vendor's SiLU sequence:
    1-2. W = min(S, 88.0); W = max(W, -103.0)     the remark's input range, as the vendor clamps
    3.   D = fp32_to_int(W)                       k = round(W), ties to even
    4.   D = lut(int2float, D)                    float(k)
    5.   W = W - D                                f = W - k, exact, |f| <= 0.5
    6.   D = fp32_to_int(D)                       k again (W now holds f)
    7.   D = lut(exp, D)                          e^k
    8.   W = taylor(W, num_series)                e^f - 1
    9.   W = W * D                                e^k (e^f - 1)
    10.  D = D + W                                e^k + e^k (e^f - 1) = e^(k + f)
  (The vendor keeps e^k in a third buffer; with only W and D, k is converted back at step 6.
  The vendor ends with W = W + 1.0; D = D * W; e^k + e^k (e^f - 1) saves the rounding of
  1 + (e^f - 1), with the same maxima on the test's data.)
- sigmoid / sigmoid_tunable: W = S * -1.0, then steps 1-10 on W (D = e^-S); D = D + 1.0;
  D = 1.0 / D: 1 / (1 + e^-S). The clamp makes sigmoid(x) = 1 / (1 + e^88) ~ 6.05e-39 for
  x < -88, where the exact result is below the normal range anyway.
- tanh / tanh_tunable: tanh(x) = E / (E + 2) with E = e^(2x) - 1 computed as an expm1, so small
  |x| keep their relative accuracy (1 - e^-2x would cancel): W = S * 2.0, steps 1-8 on W
  (D = e^k, W = e^f - 1), then W = W * D (e^k (e^f - 1)); D = D - 1.0 (e^k - 1);
  D = D + W (E); W = D + 2.0; D = D / W.
Accuracy, in fp32 ulp from the correctly rounded result where it is a normal float, over the
remark's range (tests/chips/bm1684/test_fp32_unary.py pins it): rsqrt 0, sqrt 1, lookup_exp 0,
taylor_exp 3 (32 series, |x| < 1), exp 2, sigmoid 3, tanh 3 (with 8 to 64 series as well).
"""
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.lowering.converting import addrs, table_lookup
from bmk.checks import as_int

EXP_MIN, EXP_MAX = -103.0, 88.0     # the seed's input range of exp / sigmoid / tanh (and the vendor's clamp)
DEFAULT_SERIES = 32                 # "okk_bdc_exp() is equivalent to okk_bdc_exp_tunable() with num_series = 32"


def _res(chip, dst, shape, **kw):
    return lo.tensor(chip, {}, "res0", dst, None, shape=shape, **kw)


def md(chip, kind, dst, a, b, shape, *, a_const=None, b_const=None):
    """md_scalar `kind`: dst = a op b, a / b an aligned tensor or (with *_const) an fp32 constant."""
    f = _res(chip, dst, shape)
    for slot, addr, value in (("opd0", a, a_const), ("opd1", b, b_const)):
        if value is None:
            lo.tensor(chip, f, slot, addr, None)
        else:
            lo.const(chip, f, slot, lo.fp32_bits(value))
    return lo.tiu(chip, kind, **f)


def ar_const(chip, kind, dst, src, value, shape):
    """ar `kind` with a constant opd1 (the vendor's clamp: opt_shift_typ 0 on its ar commands)."""
    f = lo.tensor(chip, _res(chip, dst, shape), "opd0", src, None)
    lo.const(chip, f, "opd1", lo.fp32_bits(value))
    return lo.tiu(chip, kind, opt_shift_typ=0, **f)


def sfu(chip, kind, dst, src, shape, *, prec="fp32", **extra):
    f = lo.tensor(chip, _res(chip, dst, shape, prec=prec), "opd0", src, None)
    return lo.tiu(chip, kind, **f, **extra)


def lut(chip, dst, src, table, shape):
    return table_lookup(chip, lo.tensor(chip, _res(chip, dst, shape), "opd0", src, None), table)


def taylor(chip, dst, src, num_series, shape):
    return sfu(chip, "md_sfu.taylor", dst, src, shape, opd1_addr=chip.param("l2_sram_exp_taylor_table"),
               opd1_n=as_int(num_series))


def exp_parts(chip, w, d, num_series, shape):
    """Steps 3-8 of the exp sequence: W holds the clamped input; after them D = e^k, W = e^f - 1."""
    return (sfu(chip, "md_sfu.fp32_to_int", d, w, shape, prec="int32"),
            lut(chip, d, d, "l2_sram_int2float_table", shape),
            md(chip, "md_scalar.sub", w, w, d, shape),
            sfu(chip, "md_sfu.fp32_to_int", d, d, shape, prec="int32"),
            lut(chip, d, d, "l2_sram_exp_table", shape),
            taylor(chip, w, w, num_series, shape))


def clamp(chip, w, src, shape):
    return (ar_const(chip, "arith.min", w, src, EXP_MAX, shape), ar_const(chip, "arith.max", w, w, EXP_MIN, shape))


def exp_sequence(chip, d, s, w, num_series, shape):
    """D = e^S (steps 1-10 of the module docstring)."""
    return (*clamp(chip, w, s, shape), *exp_parts(chip, w, d, num_series, shape),
            md(chip, "md_scalar.mul", w, w, d, shape),
            md(chip, "md_scalar.add", d, d, w, shape))


def rsqrt(chip, p):
    return (sfu(chip, "md_sfu.rsqrt", *addrs(p, "dst_addr", "src_addr"), lo.shape4(p.shape)),)


def sqrt(chip, p):
    (dst, src), shape = addrs(p, "dst_addr", "src_addr"), lo.shape4(p.shape)
    return (sfu(chip, "md_sfu.rsqrt", dst, src, shape),
            md(chip, "md_scalar.divide", dst, None, dst, shape, a_const=1.0))


def taylor_exp(chip, p):
    (dst, src), shape = addrs(p, "dst_addr", "src_addr"), lo.shape4(p.shape)
    return (taylor(chip, dst, src, p.num_series, shape),
            md(chip, "md_scalar.add", dst, dst, None, shape, b_const=1.0))


def lookup_exp(chip, p):
    return (lut(chip, *addrs(p, "dst_addr", "src_addr"), "l2_sram_exp_table", lo.shape4(p.shape)),)


def _work(p, tunable):
    """(dst, src, work, shape, num_series) of a function with a work tensor."""
    return (*addrs(p, "dst_addr", "src_addr", "work_addr"), lo.shape4(p.shape),
            p.num_series if tunable else DEFAULT_SERIES)


def exp(chip, p, tunable):
    d, s, w, shape, series = _work(p, tunable)
    return exp_sequence(chip, d, s, w, series, shape)


def sigmoid(chip, p, tunable):
    d, s, w, shape, series = _work(p, tunable)
    return (md(chip, "md_scalar.mul", w, s, None, shape, b_const=-1.0),
            *exp_sequence(chip, d, w, w, series, shape),
            md(chip, "md_scalar.add", d, d, None, shape, b_const=1.0),
            md(chip, "md_scalar.divide", d, None, d, shape, a_const=1.0))


def tanh(chip, p, tunable):
    d, s, w, shape, series = _work(p, tunable)
    return (md(chip, "md_scalar.mul", w, s, None, shape, b_const=2.0),
            *clamp(chip, w, w, shape), *exp_parts(chip, w, d, series, shape),
            md(chip, "md_scalar.mul", w, w, d, shape),
            md(chip, "md_scalar.sub", d, d, None, shape, b_const=1.0),
            md(chip, "md_scalar.add", d, d, w, shape),
            md(chip, "md_scalar.add", w, d, None, shape, b_const=2.0),
            md(chip, "md_scalar.divide", d, d, w, shape))


def reciprocal(chip, p):
    dst, src = addrs(p, "dst_addr", "src_addr")
    f = lo.tensor(chip, {}, "res0", dst, lo.stride4(p.dst_stride), shape=lo.shape4(p.shape))
    lo.const(chip, f, "opd0", lo.fp32_bits(1.0))
    lo.tensor(chip, f, "opd1", src, lo.stride4(p.src_stride))
    return (lo.tiu(chip, "md_scalar.divide", **f),)


def neg(chip, p):
    dst, src = addrs(p, "dst_addr", "src_addr")
    f = lo.tensor(chip, {}, "res0", dst, lo.stride4(p.dst_stride), shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", src, lo.stride4(p.src_stride))
    lo.const(chip, f, "opd1", lo.fp32_bits(-1.0))
    return (lo.tiu(chip, "md_scalar.mul", **f),)
