"""sfu.rsqrt on the TPU1686 family (BM1688, CV184X, BM1690): a bf16 reciprocal square root is iterated.

Source: the vendor's CV184X cmodel (tpu-mlir 1.30.2's libcmodel_cv184x), run on 2,048 bf16 values
in [1e-3, 1e4] of our choosing through a one-command bmodel (tests/chips/bm1688/cv184x_rsqrt_vendor.npz),
bit for bit: r starts from the bits 0x5F37 - (bits(x) >> 1) (the fast inverse square root's
constant, as bf16) and takes opd2_n_str + 1 Newton steps r = r (1.5 - ((x / 2) r) r), every
product and difference rounded to bf16 (nearest even), a subnormal to a zero of its sign. The
shared layer norms set opd2_n_str 2 (three steps; two or four miss 4%); a correctly rounded
1 / sqrt(x) matched 75%. Zero and subnormal inputs give +inf (the cmodel on 0 and 1e-38). The
division divides by this root squared (div.py). A negative x gives NaN (bmk's assumption: the
cmodel was not asked). Other types keep the family's correctly rounded root (bm1684x/sfu.py): no
vendor data.
"""
import numpy as np

from bmk import numerics
from bmk.sim.bm1684x import sfu
from bmk.sim.bm1684x.operands import rounded, store_values, to_values

RSQRT_SEED = 0x5F37          # the bf16 bits the first estimate of 1 / sqrt(x) is taken from


def bf16(values, dtype):
    """Values rounded to bf16 (nearest even), subnormals to a zero of their sign."""
    return numerics.flush_subnormals(rounded(values, dtype))


def bf16_rsqrt(x, dtype, iterations):
    """1 / sqrt(x) of non-negative bf16 values (float64 arrays) as the cmodel iterates it."""
    bits = store_values(x, dtype, True).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = to_values(np.clip(RSQRT_SEED - (bits >> 1), 0, 0xFFFF).astype(np.uint16), dtype)
        half = bf16(x / 2, dtype)
        for _ in range(iterations):
            r = bf16(r * bf16(1.5 - bf16(bf16(half * r, dtype) * r, dtype), dtype), dtype)
    return r


def root(x, x_dt, r_dt, iterations):
    if x_dt.name != "bf16" or r_dt.name != "bf16":
        return sfu.exact_rsqrt(x, x_dt, r_dt, iterations)
    x = np.asarray(x, np.float64)
    tiny = np.abs(x) < np.finfo(np.float32).tiny          # zero and subnormals: +inf, as the cmodel
    return np.where(x < 0, np.nan, np.where(tiny, np.inf, bf16_rsqrt(np.abs(x), x_dt, iterations)))


KINDS = {"sfu.rsqrt": sfu.reciprocal_sqrt(root)}
FIELDS = {"sfu.rsqrt": sfu.FIELDS["sfu.rsqrt"]}
