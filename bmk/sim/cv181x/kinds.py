"""The CV18xx TIU kinds bm1880 has no function for: ge and min_pool (int8; their bf16 forms are in
bf16.py).

- ge (sophgo/cvikernel src/cv181x/tiu_ge.c, include/cvikernel/cvikernel.h cvk_tiu_ge_param_t: "@a
  and @b must both be signed or unsigned", b a tensor or a constant in opd1_addr): res = 1 where
  a >= b, else 0 (bmk's reading of the name: the vendor writes no formula);
- min_pool (tiu_min_pooling.c, tsk_eu_typ 3): the minimum of each window, the padding being
  opd0_ins_val (the encoder sets 127 for signed, 255 for unsigned input, so it never wins).
"""
import numpy as np

from bmk.sim.bm1880 import tiu
from bmk.sim.bm1880.common import write


def ge(m, f):
    """res = (a >= b) as 1 or 0."""
    res, a, b = tiu._ab(m, f)
    write(m, res, (a >= b).astype(np.int32))


def min_pool(m, f):
    """res = min over each kh x kw window."""
    res, win = tiu._pool_windows(m, f)
    write(m, res, win.min(axis=(4, 5)))


KINDS = {"ge": ge, "min_pool": min_pool}
