"""Semantics of the commands the Memory functions lower to (seed 003 "Memory Functions").

arith.copy: res0 = opd0 (a tensor or a constant), bit for bit in the operand's precision.
"""
from bmk.sim.bm1684 import common as c


def copy(m, f):
    dt = c.dtype_of(m, f, "opd0")
    c.write(m, f, "res0", dt, c.read(m, f, "opd0", dt, c.res0_shape(f)))


KINDS = {("tiu", "arith.copy"): copy}
