"""VC (tsk_typ 14, long VC and short sVC): two vectors in, their outer operation as a matrix out.

Sources: seed 001 (tpu_bdc_vc_*), isa-facts bm1684x-memory.md ("vector layout", "matrix
layout"), tpu-mlir python/debugger/target_1684x/opparam.py `sVC_t_converter` (shapes, the
round mode of mulDHR), tpu-mlir third_party/ppl/runtime/checker/src/atomic_vector_correlation.c
(the firmware's argument checks).

src0 is the aligned tensor (1, opd0_c, 1, opd0_w) and its length is (opd0_c - 1) * opd0_w +
opd1_w (opd1_w: the elements in its last channel, opparam's reading); src1 is the aligned
tensor (1, res0_c, 1, res0_w); dst is the aligned tensor (rows, res0_c, 1, res0_w), row m
holding op(src0[m], src1[j]) at channel j // res0_w, position j % res0_w for every j <
res0_c * res0_w (the last channel's tail beyond src1's length is computed from src1's tail).
Types as AR (ar.py): the result's sign is opd0_sign | opd1_sign; add/sub/mul wrap, their
_satu kinds, max and min saturate; select's true value is opd2_addr in the destination's
type; div (floats) is the correctly rounded quotient (its iteration count, opd2_n_str + 1, is
checked, not modelled); mulDHR as AR's (the rounding doubling high multiply, rounded by
opd2_n_str). The other kinds do not read opd2_n_str: the TPU-Kernel firmware writes div's
iteration count (2) into every VC command (bmk's API does too). Float results are rounded to
nearest even.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.ar import _check_product, _compute, _float_only, _int_only
from bmk.sim.bm1684x.operands import check_shape, const, dt, mode_of, read, tensor, write

_CMP = {"select_gt": np.greater, "select_eq": np.equal, "select_lt": np.less}
_LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _vectors(m, f, kind):
    c0, w0, last = f.get("opd0_c", 0), f.get("opd0_w", 0), f.get("opd1_w", 0)
    c1, w1 = f.get("res0_c", 0), f.get("res0_w", 0)
    if not (c0 >= 1 and 1 <= last <= w0 and c1 >= 1 and w1 >= 1):
        raise SimulationError(f"opd0_c, res0_c, res0_w must be >= 1 and opd1_w (src0's last-channel "
                              f"length) in [1, opd0_w], not opd0_c {c0}, opd0_w {w0}, opd1_w {last}, "
                              f"res0_c {c1}, res0_w {w1}")
    rows = (c0 - 1) * w0 + last
    for name, want in (("res0_n", rows), ("res0_h", 1)):          # the long class's own sizes
        if f.get(name, 0) not in (0, want):
            raise SimulationError(f"{name} must be 0 or {want} (the matrix is (rows, res0_c, 1, res0_w)), "
                                  f"not {f[name]}")
    a_dt, b_dt = dt(m, f, "opd0"), dt(m, f, "opd1")
    a = read(m, tensor(m, f, "opd0", (1, c0, 1, w0), a_dt, "aligned")).reshape(-1)[:rows]
    b = read(m, tensor(m, f, "opd1", (1, c1, 1, w1), b_dt, "aligned")).reshape(-1)
    shape = (rows, c1, 1, w1)
    check_shape(m, "res0", shape)
    return shape, a_dt, a[:, None], b_dt, b[None, :]


def _vc(op):
    kind = f"vc.{op}"

    def run(m, f):
        """dst(i, j) = src0(i) op src1(j) (seed 001 vc_*): a matrix from two vectors."""
        shape, a_dt, a, b_dt, b = _vectors(m, f, kind)
        r_dt = dt(m, f, "res0", f.get("opd0_sign", 0) | f.get("opd1_sign", 0))
        mode = numerics.Round.HALF_TO_EVEN
        if op in _CMP:
            v, saturate = np.where(_CMP[op](a, b), const(f, "opd2", r_dt), 0), False
        elif op in _LOGIC:
            _int_only(kind, a_dt, b_dt, r_dt)
            v, saturate = _LOGIC[op](a, b), False
        elif op in ("max", "min"):
            v, saturate = (np.maximum if op == "max" else np.minimum)(a, b), True
        elif op == "div":
            it = f.get("opd2_n_str", 0)
            if not 0 <= it <= 4:
                raise SimulationError(f"opd2_n_str (iterations - 1) must be in [0, 4], not {it}")
            _float_only(kind, a_dt, b_dt, r_dt)
            with np.errstate(divide="ignore", invalid="ignore"):
                v, saturate = np.asarray(a, np.float64) / np.asarray(b, np.float64), True
        elif op == "mulDHR":
            _int_only(kind, a_dt, b_dt, r_dt)
            _check_product("mul", a, b, True)
            v = numerics.rshift_each(np.asarray(a, np.int64) * np.asarray(b, np.int64), a_dt.bits - 1, mode_of(f))
            saturate = True
        else:
            base, saturate = op.split("_")[0], op.endswith("_satu")
            floats = a_dt.is_float or b_dt.is_float or r_dt.is_float
            if not floats:
                _check_product(base, a, b, saturate)
            v = _compute(base, a, b, floats)
        write(m, tensor(m, f, "res0", shape, r_dt, "aligned"), np.asarray(v).reshape(shape), saturate, f, mode)
    run.__name__ = f"vc_{op}"
    return run


KINDS = {f"vc.{op}": _vc(op) for op in ("add", "sub", "mul", "add_satu", "sub_satu", "mul_satu", "max", "min",
                                         "and", "or", "xor", "select_gt", "select_eq", "select_lt", "div",
                                         "mulDHR")}

_ALL = F.names({"res0_addr", "res0_prec", "res0_c", "res0_w", "opd0_addr", "opd0_prec", "opd0_sign", "opd0_c",
                "opd0_w", "opd1_addr", "opd1_prec", "opd1_sign", "opd1_w", "tsk_lane_num", "tsk_opd_num",
                "opd2_n_str", "opd2_prec", "opd2_sign", "opd2_addr", "opd2_const", "res0_n", "res0_h"})
# opd2 is the selects' true value (of res0's type: its prec and sign are not read), no operand
# of the other kinds: its fields cannot change their results
FIELDS = {k: _ALL for k in KINDS}
