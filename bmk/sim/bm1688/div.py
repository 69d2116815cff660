"""arith.div on the TPU1686 family (BM1688, CV184X, BM1690): a bf16 divisor's reciprocal is iterated.

Source: the vendor's CV184X cmodel (tpu-mlir 1.30.2's libcmodel_cv184x), run on 4,096 divisions
of bf16 values of our choosing (a one-command bmodel: tests/chips/bm1688/cv184x_div_vendor.npz),
bit for bit: the reciprocal of |b| is rsqrt(|b|) squared. rsqrt starts from the bits 0x5F37 -
(bits(|b|) >> 1) (the fast inverse square root's constant, as bf16) and takes opd2_n_str + 1
Newton steps r = r (1.5 - ((|b| / 2) r) r); then a / b = a (r r), the sign of b applied. Every
product and difference is rounded to bf16 (nearest even), a subnormal result to zero of its sign
(a divisor near 3e38 gives -0.0, as the cmodel). The shared softmaxes divide 1.0 by their sums so
(opd2_n_str 2: three steps); a correctly rounded quotient matched 45% of the cmodel's.
Other divisor or result types keep the family's correctly rounded quotient (bm1684x/ar.py): no
vendor data.
"""
import numpy as np

from bmk.sim.bm1684x import ar
from bmk.sim.bm1684x.operands import rounded, store_values, to_values

RSQRT_SEED = 0x5F37          # the bf16 bits the first estimate of 1 / sqrt(x) is taken from


def _bf16(values, dtype):
    """Values rounded to bf16 (nearest even), subnormals to a zero of their sign."""
    v = rounded(values, dtype)
    return np.where(np.abs(v) < np.finfo(np.float32).tiny, np.copysign(0.0, v), v)


def quotient(a, b, b_dt, r_dt, iterations):
    if b_dt.name != "bf16" or r_dt.name != "bf16":
        return ar.exact_quotient(a, b, b_dt, r_dt, iterations)
    b = np.asarray(b, np.float64)
    bits = store_values(np.abs(b), b_dt, True).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = to_values(np.clip(RSQRT_SEED - (bits >> 1), 0, 0xFFFF).astype(np.uint16), b_dt)
        half = _bf16(np.abs(b) / 2, b_dt)
        for _ in range(iterations):
            r = _bf16(r * _bf16(1.5 - _bf16(_bf16(half * r, b_dt) * r, b_dt), b_dt), b_dt)
        q = _bf16(np.asarray(a, np.float64) * _bf16(r * r, b_dt), b_dt)
    return np.where(np.signbit(b), -q, q)


KINDS = {"arith.div": ar.division(quotient)}
FIELDS = {"arith.div": ar.FIELDS["arith.div"]}
