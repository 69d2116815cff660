"""PorD on BM1688: BM1684X's depthwise and pooling (bmk/sim/bm1684x/pord.py) with BM1688's
fused requantization and result sign.

Sources: tpu-mlir python/debugger/target_1688/opparam.py (sPorD: with opt_rq the requant
parameters opd5, constants in registers 6, 32, 33 when opt_opd5_const; round_mode = opd2_n_str;
a max pool reads no opd2), the shared tdl_models streams (cls_sound_babay_cry bm1688: the
depthwise's per-channel parameters at local address 0, which the system_tr_wr.wr_imm before it
writes to register 6, as a conv's opd5; every integer result's sign in opt_res0_sign as the
conv's; max pools carry opd2_addr 0xffffffff, fp16 and int8 alike).

Integer depthwise / average pool with opt_rq: the exact window sum (times the kernel, plus the
depthwise's bias) is requantized per channel (rq.py), relu (depthwise) applied to the sum first,
and saturated into (res0_prec, opt_res0_sign). Without opt_rq: BM1684X's shift (res1_addr) and
store. A float input's opt_rq scales the sums (rq.py's rescale: BM1690's fp8 average pools carry
the 1 / (kh * kw) there, an fp32 constant). A max pool's result sign is opt_res0_sign too.
Refused (check): a max pool's opd2_addr other than 0 or 0xffffffff (the value the compiler
writes there, which nothing reads), opt_rq on a max pool.

A bf16 / fp16 average pool sums its window in two partial sums, of the even and of the odd taps
(in tap order, ky then kx), each addition rounded to the input's type (to nearest even), then
adds the two, rounded again; each tap's product with the kernel is rounded to the type first
(bmk's assumption: the shared streams' kernel is the constant 1.0, exact). The vendor's CV184X
cmodel, bit for bit, on the softmax sums of two tdl_models builds (topformer_seg_person_face_
vehicle: 30 taps, yolov10n: 50 taps; 64 sums each: tests/chips/bm1688/test_float_kinds.py);
one exact sum rounded once matched half of them, one running bf16 sum 28%.
"""
import numpy as np

from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x import pord
from bmk.sim.bm1684x.operands import rounded, write
from bmk.sim.bm1688 import rq
from bmk.sim.bm1688.registers import FIELDS_READ, check_written

UNREAD_OPD2 = (0, 0xFFFFFFFF)       # a max pool's opd2_addr as the compiler leaves it


def terms(m, f, kind, acc, floats):
    acc, _ = pord.bias_terms(m, f, kind, acc, floats)
    return acc, f.get("opt_res0_sign", 0)


def finish(m, f, kind, acc, res, floats):
    if floats or not f.get("opt_rq", 0):
        pord.finish(m, f, kind, rq.rescale(m, f, acc, kind) if floats else acc, res, floats)
        return
    acc = np.rint(acc).astype(np.int64)
    if kind != "pord.avgpooling" and f.get("relu", 0):
        acc = np.maximum(acc, 0)
    write(m, res, rq.requantize(m, f, acc, acc.shape[1], kind), True, f)


def window_sum(kind, dtype, products):
    """A half-precision average pool's window sum (module docstring); others: exact."""
    if kind != "pord.avgpooling" or not dtype.is_float or dtype.bits != 16:
        return pord.exact_sum(kind, dtype, products)
    parts = [0.0, 0.0]
    for t, p in enumerate(products):
        parts[t % 2] = rounded(parts[t % 2] + rounded(p, dtype), dtype)
    return rounded(parts[0] + parts[1], dtype)


def _check(kind):
    def check(chip, f):
        pord.CHECKS[kind](chip, f)
        check_written(f, kind, reads=("opd5",), constants=not pord.is_float(chip, f))
        if kind == "pord.maxpooling" and f.get("opd2_addr", 0) not in UNREAD_OPD2:
            raise F.refuse(kind, "opd2_addr", f["opd2_addr"], f"must be one of {[hex(v) for v in UNREAD_OPD2]}")
        if f.get("opt_rq", 0) and kind == "pord.maxpooling":
            raise F.refuse(kind, "opt_rq", f["opt_rq"], "must be 0 for a max pool")
    check.__name__ = "check_" + kind.split(".")[1]
    return check


def _sign(f):
    return f.get("opt_res0_sign", 0)


_RQ = {"opt_rq", "opt_opd5_const", "opt_res0_sign", "opd2_n_str"} | set(FIELDS_READ)
KINDS = {k: pord.windowed(k, terms, finish, _sign, window_sum)
         for k in ("pord.depthwise", "pord.avgpooling", "pord.maxpooling")}
FIELDS = {"pord.depthwise": pord.FIELDS["pord.depthwise"] | _RQ | {"relu"},
          "pord.avgpooling": pord.FIELDS["pord.avgpooling"] | _RQ,
          "pord.maxpooling": pord.FIELDS["pord.maxpooling"] | {"opd2_addr", "opt_res0_sign"}}
CHECKS = {k: _check(k) for k in KINDS}
