"""CMP (tsk_typ 13, long CMP and short sCMP): comparisons that select a value.

Sources: seed 001 (tpu_bdc_greater / less / equal with true_val), isa-facts
bm1684x-lowering.md (codes), tpu-mlir python/debugger/target_1684x/opparam.py
`sCMP_t_converter` (operand types and layouts, which kinds write res1), tpu-mlir
third_party/ppl/runtime/checker/src/atomic_fused_cmp.c (the firmware's argument checks).

sel_gt / sel_eq / sel_lt: res0 = opd2 where opd0 > / == / < opd1, else opd3 (true_val and its
alternative). gt_and_sel / lt_and_sel also write res0 = the larger / smaller of opd0 and opd1
and the selected value to res1 (opparam's reading). Types: opd0 (opd0_prec, opd0_sign); opd1
has opd0's type in the short class (it has no opd1_prec/opd1_sign) and its own in the long
one; opd2, opd3 and the selected value have opd2's type (opd2_prec, opd2_sign). Layouts:
opd0, opd1 by their X_str codes; opd2, opd3 and the results aligned (the long class's
res0_str is honoured; its opd2_str, opd3's strides and the like must be 0). The winner
(res0 of the *_and_sel kinds) saturates to opd0's type, selected values wrap.
"""
import numpy as np

from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import check_shape, dt, operand, shape_of, tensor, write

_CMP = {"gt": np.greater, "eq": np.equal, "lt": np.less}


def _cmp(cond, and_sel):
    def run(m, f):
        """res0 = opd2 where opd0 cond opd1 else opd3 (seed 001 comparisons with true_val);
        the *_and_sel kinds write res0 = the winner of opd0/opd1 and res1 = the selected value."""
        short = "res0_prec" not in f
        shape = shape_of(f)
        check_shape(m, "res0", shape)
        a_dt = dt(m, f, "opd0")
        b_dt = a_dt if short else dt(m, f, "opd1")
        t_dt = dt(m, f, "opd2")
        a = operand(m, f, "opd0", shape, a_dt)
        b = operand(m, f, "opd1", shape, b_dt)
        t = operand(m, f, "opd2", shape, t_dt, "aligned")
        e = operand(m, f, "opd3", shape, t_dt, "aligned")
        hit = _CMP[cond](a, b)
        res_layout = "aligned" if short else None
        if and_sel:
            win = tensor(m, f, "res0", shape, a_dt, res_layout)
            write(m, win, np.where(hit, a, b), True, f)
            sel = tensor(m, f, "res1", shape, t_dt, "aligned")
            write(m, sel, np.where(hit, t, e), False, f)
            return
        r_dt = t_dt if short else dt(m, f, "res0", f.get("opd2_sign", 0))
        write(m, tensor(m, f, "res0", shape, r_dt, res_layout), np.where(hit, t, e), False, f)
    run.__name__ = f"{cond}_and_sel" if and_sel else f"sel_{cond}"
    return run


KINDS = {"cmp.sel_gt": _cmp("gt", False), "cmp.sel_eq": _cmp("eq", False), "cmp.sel_lt": _cmp("lt", False),
         "cmp.gt_and_sel": _cmp("gt", True), "cmp.lt_and_sel": _cmp("lt", True)}

_ALL = F.names(F.operand("res0", shape=True), F.operand("opd0"), F.operand("opd1"),
               {"opd2_addr", "opd2_prec", "opd2_sign", "opd2_const", "opd3_addr", "opd3_const", "tsk_lane_num",
                "tsk_opd_num", "opd2_n_str"})     # opd2_n_str: a rounding mode, and CMP rounds nothing
FIELDS = {k: _ALL | {"res1_addr"} for k in KINDS}     # sel_*: res1 is no operand of theirs (not written)
