"""MM2 on BM1688: BM1684X's matrix products (bmk/sim/bm1684x/mm.py) with BM1688's int8 operands.

Sources: tpu-mlir python/debugger/target_1688/opparam.py (sMM2, int8: opd2 the bias, int32, one
per output column, (1, npu_num, 1, res0_w) aligned: every NPU's copy of the row; with opt_rq opd4
the zero point (a constant in register 5, int16) and opd5 the requant parameters (rq.py); the
result's sign opt_res0_sign).

nn / nt: y = L @ (R - zp) + bias, requantized per output column when opt_rq (the parameters
of column j: the constants, or the (1, res0_w) row of opd5 every NPU holds), saturated into
(res0_prec, opt_res0_sign). mm.normal is BM1684X's, whose result is signed: BM1688's
opt_res0_sign must then be 1 (every shared stream's mm.normal sets it). Refused (check): a zero
point or requant tensor (opt_opd4_const or opt_opd5_const 0 with opt_rq: no shared stream has one;
a chip without the opd4 register, CV184X, takes no zero point), mm2.tt with int8 data, sym_range.

Float data (opparam: opd1 of opd0's type, so opd1_prec must equal opd0_prec; opd2 the bias, fp32,
one per output column, (1, npu_num, 1, res0_w) aligned for nn / nt, or a constant; do_relu;
round_mode opd2_n_str): y = L @ R + bias, clamped at 0 with opt_relu, rounded once into
res0_prec by opd2_n_str (a CV184X tdl_models lane detector's bf16 matmuls, some with relu); the
sum as the vendor's CV184X cmodel forms it for bf16 / fp16 data (bit for bit on the lane
detector's matmuls, K = 16 and 32, random operands of our choosing; one exact sum rounded once
missed 2-4 of 55,000): an fp32 accumulator from the bias (a subnormal bias as zero), adding the
inner dimension's products a cube at a time (ic_parallel_int8 * 8 / 16, the conv's cube), each
cube's products summed exactly (bias first, as the conv's: the data did not tell); fp32 data in
float64, rounded once.
Refused: relu with res_add (their order is not public), relu with integer data (not modelled); a
float mm2.tt is the family's (opd1_prec not read there: refused unless 0, so every float one).
"""
import numpy as np

from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x import mm
from bmk.sim.bm1684x import pord
from bmk.sim.bm1684x.operands import const, dt, mode_of
from bmk.sim.bm1688 import conv, rq
from bmk.sim.bm1688.registers import FIELDS_READ, check_written, has_register, register

KINDS_RQ = ("mm2.nn", "mm2.nt")


def terms(m, f, kind, a, b, mc, nw, b_dt):
    b_dt32 = dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "int32"), sign=1)
    bias = np.full(nw, const(f, "opd2", b_dt32)) if f.get("opd2_const", 0) else \
        mm._row(m, f, nw, b_dt32).reshape(nw)
    if f.get("opt_rq", 0) and has_register(m.chip, "opd4"):
        b = b - int(np.int16(register(f, "opd4", kind) & 0xFFFF))
    return a, b, bias[None, :]


def finish(m, f, acc):
    sign = f.get("opt_res0_sign", 0)
    if not f.get("opt_rq", 0):
        return acc, sign
    # the requant runs per output column: columns on axis 1 as rq.py's channels
    return rq.requantize(m, f, acc, acc.shape[1], f"mm2 (opt_rq)"), sign


def _bias(m, f, nw):
    b_dt = dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "fp32"), sign=1)
    return np.full(nw, const(f, "opd2", b_dt)) if f.get("opd2_const", 0) else mm._row(m, f, nw, b_dt)[0]


def float_finish(m, f, kind, acc):
    """A float product plus its fp32 bias per output column, relu: -> (acc, rounding of opd2_n_str)."""
    acc = acc + _bias(m, f, acc.shape[1])
    if f.get("relu", 0):
        acc = np.maximum(acc, 0)
    return acc, mode_of(f)


def cube_sums(m, f, kind, a, b):
    """A half-precision product as the vendor's CV184X cmodel sums it (module docstring): an fp32
    accumulator from the bias (a subnormal bias as zero), adding the products of each cube of
    the inner dimension (the conv's cube: conv.cube_sums), relu; None for fp32 data."""
    if dt(m, f, "opd0").bits != 16:
        return None
    cube = conv.half_cube(m.chip)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32) + conv.fp32_start(_bias(m, f, b.shape[1]))[None, :]
    for k0 in range(0, a.shape[1], cube):
        part = a[:, k0:k0 + cube].astype(np.float64) @ b[k0:k0 + cube].astype(np.float64)
        acc = (acc + part.astype(np.float32)).astype(np.float32)
    acc = acc.astype(np.float64)
    if f.get("relu", 0):
        acc = np.maximum(acc, 0)
    return acc, mode_of(f)


def _check(kind):
    def check(chip, f):
        check_written(f, kind)
        F.check_input_precision(kind, f, "opd1_prec", "R has L's precision (opparam)")
        floats = pord.is_float(chip, f)
        if f.get("relu", 0) and not floats:
            raise F.refuse(kind, "relu", f["relu"], "must be 0 with integer data (not modelled)")
        if f.get("relu", 0) and f.get("res_add", 0):
            raise F.refuse(kind, "relu", f["relu"], "must be 0 with res_add (their order is not public)")
        if f.get("sym_range", 0):
            raise F.refuse(kind, "sym_range", f["sym_range"], "must be 0 (the symmetric range is not modelled)")
        if f.get("opt_rq", 0):
            for flag in ("opt_opd4_const", "opt_opd5_const"):
                if flag == "opt_opd4_const" and not has_register(chip, "opd4"):
                    continue        # CV184X: no zero point register, the flag reads nothing
                if not f.get(flag, 0):
                    raise F.refuse(kind, flag, 0, "must be 1 with opt_rq (a tensor of zero points or requant "
                                   "parameters is not modelled)")
    check.__name__ = "check_" + kind.split(".")[1]
    return check


def _check_normal(chip, f):
    if f.get("opt_res0_sign", 0) != 1:
        raise F.refuse("mm.normal", "opt_res0_sign", f.get("opt_res0_sign", 0), "must be 1 (BM1684X's mm.normal "
                       "writes a signed result)")


_RQ = {"opt_rq", "opt_opd4_const", "opt_opd5_const", "opt_res0_sign", "opd2_sign", "opd2_n_str",
       "sym_range"} | set(FIELDS_READ)
KINDS = {**{k: mm.matrix2(k, terms, finish, float_finish, cube_sums) for k in KINDS_RQ},
         "mm.normal": mm.KINDS["mm.normal"]}
FIELDS = {**{k: mm.FIELDS[k] | _RQ | {"opd1_prec", "relu"} for k in KINDS_RQ},
          "mm.normal": mm.FIELDS["mm.normal"] | {"opt_res0_sign"}}
CHECKS = {**{k: _check(k) for k in KINDS_RQ}, "mm.normal": _check_normal}
