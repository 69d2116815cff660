"""arith.div on the TPU1686 family (BM1688, CV184X, BM1690): a bf16 divisor's reciprocal is iterated.

Source: the vendor's CV184X cmodel (tpu-mlir 1.30.2's libcmodel_cv184x), run on 4,096 divisions
of bf16 values of our choosing (a one-command bmodel: tests/chips/bm1688/cv184x_div_vendor.npz),
bit for bit: the reciprocal of |b| is rsqrt(|b|) squared, rsqrt iterated as sfu.rsqrt's
(rsqrt.py: opd2_n_str + 1 Newton steps from the fast inverse square root's constant); then
a / b = a (r r), the sign of b applied. Every product and difference is rounded to bf16 (nearest
even), a subnormal result to zero of its sign (a divisor near 3e38 gives -0.0, as the cmodel).
The shared softmaxes divide 1.0 by their sums so (opd2_n_str 2: three steps); a correctly
rounded quotient matched 45% of the cmodel's. Other divisor or result types keep the family's
correctly rounded quotient (bm1684x/ar.py): no vendor data.
"""
import numpy as np

from bmk.sim.bm1684x import ar
from bmk.sim.bm1688 import rsqrt
from bmk.sim.bm1688.rsqrt import bf16


def quotient(a, b, b_dt, r_dt, iterations):
    if b_dt.name != "bf16" or r_dt.name != "bf16":
        return ar.exact_quotient(a, b, b_dt, r_dt, iterations)
    b = np.asarray(b, np.float64)
    r = rsqrt.root(np.abs(b), b_dt, b_dt, iterations)
    with np.errstate(over="ignore", invalid="ignore"):
        q = bf16(np.asarray(a, np.float64) * bf16(r * r, b_dt), b_dt)
    return np.where(np.signbit(b), -q, q)


KINDS = {"arith.div": ar.division(quotient)}
FIELDS = {"arith.div": ar.FIELDS["arith.div"]}
