"""Semantics of the compare-and-select eu types: md_cmp_op (md_cmp.cmp, .select, .cmp_select)
and the same eu codes (22 cmp, 23 select, 24 cmp_select) of ar_op and md_sfu_op.

Operands (bm1684_defs.py, MD_CMP): A = opd0, B = opd1, C = opd2, D = opd3 (opd3_addr, or the
constant opd3_addr when opt_opd3_const; opd3 has no layout or precision fields of its own and is
read with opd2's), results Y = res0 and R = res1 (res1_addr, in res0's layout). The profiler
writes Y for cmp (22), R for select (23), both for cmp_select (24). Every operand has res0's
shape; each is a constant, a per-channel or a full tensor as in elementwise.py.

What they compute is not public. Assumption (the BM1684X CMP class's documented pair, which
TPU-Kernel's argmax-style "maximum greater select" uses): with cond = A > B,
  Y = cond ? A : B    (the larger one),      R = cond ? C : D    (its companion).
fp32 only (integer compares: SimulationError). A real run would check: A = [1, 3], B = [2, 2],
C = [10, 11], D = [20, 21] -> Y = [2, 3], R = [20, 11].
opt_res_add, opt_relu and tsk_lane_num as in elementwise.py (applied to each result).
"""
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684.contract import contract
from bmk.sim.semantics import planned

FP32 = dtypes.FP32
EU = ("cmp", "select", "cmp_select")
SHAPE = "the engine takes every operand's shape from res0 (bm1684_defs.py)"


def _opd3(m, f):
    """Reader of D: opd3_addr as a constant or a tensor laid out like opd2."""
    if f["opt_opd3_const"]:
        value = np.uint32(f["opd3_addr"] & 0xFFFFFFFF).view(np.float32)
        return lambda: value
    g = {**f, "opd2_addr": f["opd3_addr"], "opt_opd2_const": 0}
    return c.operand(m, g, "opd2", FP32)


def _build(m, f, kind, eu):
    for slot in ("res0", "opd0", "opd1", "opd2"):
        if c.prec_name(m, f, slot) != "fp32":
            raise SimulationError(f"{kind}: opt_{slot}_prec must be fp32 (integer compares are not modelled), "
                                  f"not {c.prec_name(m, f, slot)}")
    a, b = c.operand(m, f, "opd0", FP32), c.operand(m, f, "opd1", FP32)
    want_y, want_r = eu in ("cmp", "cmp_select"), eu in ("select", "cmp_select")
    cc, d = (c.operand(m, f, "opd2", FP32), _opd3(m, f)) if want_r else (None, None)
    y_out = c.storer(m, f, kind, lambda: (FP32, state["y"])) if want_y else None
    r_out = None
    if want_r:
        g = {**f, "res0_addr": f["res1_addr"]}
        r_out = c.storer(m, g, kind, lambda: (FP32, state["r"]))
    state = {}

    def run(m):
        av, bv = a(), b()
        cond = av > bv
        if want_y:
            state["y"] = np.where(cond, av, bv).astype(np.float32)
        if want_r:
            state["r"] = np.where(cond, cc(), d()).astype(np.float32)
        if want_y:
            y_out(m)
        if want_r:
            r_out(m)
    return run


def kind(name, eu):
    fn = planned(lambda m, f: _build(m, f, name, eu))
    uses_r = eu in ("select", "cmp_select")
    reads = {"opt_res_add", "opt_relu", "tsk_lane_num", *(f"res0_{d}" for d in "nchw")}
    slots = ("res0", "opd0", "opd1")
    unread = {}
    if uses_r:
        reads |= {"res1_addr", "opd3_addr", "opt_opd3_const"}
        slots += ("opd2",)
    else:
        unread = {"opd2": "cmp writes Y = res0 only (bm1684_defs.py), C and D are not read",
                  "opd3": "cmp writes Y only", "res1": "cmp writes Y only"}
        reads.discard("res1_addr")
    if eu == "select":
        reads.discard("res0_addr")
    ignores = {"tsk_opd_num": "the operand count follows from the eu type",
               "opt_shift_typ": "fp32 only: nothing is shifted", "opt_opd0_sign": "fp32 has no sign mode",
               "opt_opd1_sign": "fp32 has no sign mode", "opt_opd2_sign": "fp32 has no sign mode",
               **{f"{s}_{d}": SHAPE for s in ("opd0", "opd1", "opd2") for d in "nchw"}}
    if eu == "select":
        ignores["res0_addr"] = "select writes R = res1 only (bm1684_defs.py)"
    return contract(reads=reads, read_slots=slots, unread_slots=unread, ignores=ignores)(fn)


KINDS = {("tiu", f"md_cmp.{eu}"): kind(f"md_cmp.{eu}", eu) for eu in EU}
