"""Semantics of md_linear_op (md_linear.mac, .square_sum, .square_diff) and md_sum_op (md_sum).

md_linear (bm1684_defs.py MD_LINEAR: A = opd0 of res0's shape, B = opd1 and S = opd2 per-channel
(1, C, 1, 1) compact, or constants: opt_opd1_const / opt_opd2_const), fp32:
- mac: res0 = A * B + S (the product rounded to fp32, then the sum), the seed's scale_bias;
- square_sum / square_diff ("POWER_ADD" in bm1684_defs.py; the formula is not public):
  assumption res0 = (A + B)^2 / (A - B)^2, B per-channel or constant; S is not read and must be
  absent (opd2_addr 0, not a constant), so a command that gives it is refused, not ignored.
  A real run would check: A = 3, B = 1 -> 16 / 4.
Each of B, S is a constant, a per-channel tensor (short_X_str offset, or the profiler's
compact) or a full tensor of res0's shape (aligned / free layouts), as elementwise.py reads.

md_sum (bm1684_defs.py MD_SUM, eu add_tree): res0 (1, C, 1, 1) = the sum over n, h, w of opd0
(opd0_n, res0_c, opd0_h, opd0_w), fp32; summed exactly in float64 and rounded once (the
engine's adder-tree order is not public; this is within one fp32 rounding of any order's
exact value for sums without cancellation).
opt_res_add, opt_relu and tsk_lane_num as in elementwise.py.
"""
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684.contract import contract
from bmk.sim.semantics import planned

FP32 = dtypes.FP32
SHAPE = "the engine takes the operands' shape from res0 (bm1684_defs.py)"
FP32_SIGN = "fp32 has no sign mode"


def _fp32(m, f, kind, *slots):
    for slot in slots:
        if c.prec_name(m, f, slot) != "fp32":
            raise SimulationError(f"{kind}: opt_{slot}_prec must be fp32 (only fp32 is modelled), not "
                                  f"{c.prec_name(m, f, slot)}")


def _mac(m, f):
    _fp32(m, f, "md_linear.mac", "res0", "opd0", "opd1", "opd2")
    a, b, s = (c.operand(m, f, slot, FP32) for slot in ("opd0", "opd1", "opd2"))

    def compute():
        with np.errstate(all="ignore"):
            return FP32, np.asarray(np.asarray(a() * b(), np.float32) + s(), np.float32)
    return c.storer(m, f, "md_linear.mac", compute)


def _square(kind, op):
    def build(m, f):
        _fp32(m, f, kind, "res0", "opd0", "opd1")
        if f["opd2_addr"] or f["opt_opd2_const"]:
            raise SimulationError(f"{kind}: field opd2_addr = {f['opd2_addr']:#x} (opt_opd2_const "
                                  f"{f['opt_opd2_const']}) is not modelled: the square kinds are executed as "
                                  f"(opd0 +- opd1)^2 with no third operand")
        a, b = c.operand(m, f, "opd0", FP32), c.operand(m, f, "opd1", FP32)

        def compute():
            with np.errstate(all="ignore"):
                t = np.asarray(op(a(), b()), np.float32)
                return FP32, np.asarray(t * t, np.float32)
        return c.storer(m, f, kind, compute)
    return build


COMMON = {"opt_res_add", "opt_relu", "tsk_lane_num", "res0_n", "res0_c", "res0_h", "res0_w"}
COMMON_IGNORES = {"tsk_opd_num": "the operand count is fixed by the kind", "opt_shift_typ": "fp32: nothing is shifted",
                  "opt_opd0_sign": FP32_SIGN, "opt_opd1_sign": FP32_SIGN, "opt_opd2_sign": FP32_SIGN,
                  **{f"{s}_{d}": SHAPE for s in ("opd0", "opd1", "opd2") for d in "nchw"}}
UNUSED = "md_linear does not read it"

mac = contract(reads=COMMON, read_slots=("res0", "opd0", "opd1", "opd2"),
               unread_slots={"opd3": UNUSED, "res1": UNUSED}, ignores=COMMON_IGNORES)(planned(_mac))


def _square_kind(kind, op):
    return contract(reads=COMMON | {"opd2_addr", "opt_opd2_const"}, read_slots=("res0", "opd0", "opd1"),
                    unread_slots={"opd3": UNUSED, "res1": UNUSED},
                    ignores={**COMMON_IGNORES, "opt_opd2_prec": "opd2 must be absent", "short_opd2_str":
                             "opd2 must be absent", "opd2_n_str": "opd2 must be absent",
                             "opd2_c_str": "opd2 must be absent", "opd2_h_str": "opd2 must be absent",
                             "opd2_w_str": "opd2 must be absent"})(planned(_square(kind, op)))


def _sum(m, f):
    _fp32(m, f, "md_sum", "res0", "opd0")
    ch = f["res0_c"]
    shape = (f["opd0_n"], ch, f["opd0_h"], f["opd0_w"])
    x = c.reader(m, f, "opd0", FP32, shape)
    out = (1, ch, 1, 1)

    def compute():
        return FP32, np.asarray(x(), np.float64).sum(axis=(0, 2, 3), keepdims=True).astype(np.float32)
    return c.storer(m, f, "md_sum", compute, shape=out)


SUM_UNUSED = "md_sum reads opd0 only"
md_sum = contract(reads={"opt_res_add", "opt_relu", "tsk_lane_num", "res0_c", "opd0_n", "opd0_h", "opd0_w"},
                  read_slots=("res0", "opd0"),
                  unread_slots={"opd1": SUM_UNUSED, "opd2": SUM_UNUSED, "opd3": SUM_UNUSED, "res1": SUM_UNUSED},
                  ignores={"tsk_opd_num": "the operand count is fixed by the kind", "opt_shift_typ": "fp32",
                           "opt_opd0_sign": FP32_SIGN,
                           "opt_opd2_sign": "fp32 result", "opd0_c": "the channels are res0_c (bm1684_defs.py)",
                           "res0_n": "the result is (1, C, 1, 1) (bm1684_defs.py)",
                           "res0_h": "the result is (1, C, 1, 1)", "res0_w": "the result is (1, C, 1, 1)"})(
    planned(_sum))

KINDS = {
    ("tiu", "md_linear.mac"): mac,
    ("tiu", "md_linear.square_sum"): _square_kind("md_linear.square_sum", np.add),
    ("tiu", "md_linear.square_diff"): _square_kind("md_linear.square_diff", np.subtract),
    ("tiu", "md_sum"): md_sum,
}
