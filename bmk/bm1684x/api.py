"""The bm1684x op table: one row per TPU-Kernel function of seed 001 (C name without `tpu_`),
plus the data movement of API.md. Every row takes the C parameters in C order (POSITIONAL:
positional or by name) and names its record (params.py), checks (checks/<family>.py) and
lowering (lowering/<family>.py), both named after it, and the instruction kinds it emits.

`LONG_OPS` is the same table whose lowerings emit the long TIU classes (AR, VC) instead of
the short ones (`Context(long_form=True)`), so one call can be run through both forms.
"""
import attrs

from bmk.bm1684x import checks as ck
from bmk.bm1684x import lowering as lo
from bmk.bm1684x import params as r
from bmk.bm1684x.lowering.common import force_long
from bmk.program import POSITIONAL, OpRow

SEED = "001"


def op(name, record, family, doc, kinds, seed=SEED):
    return OpRow(name, record, getattr(getattr(ck, family), name), getattr(getattr(lo, family), name),
                 f"tpu_{name}", seed, doc, POSITIONAL, tuple(kinds))


_SELECT = {"greater": "arith.selectGreat", "less": "arith.selectLess", "equal": "arith.selectEqual"}
_TWO_STEP = {"greater_equal": "arith.selectLess", "less_equal": "arith.selectGreat",
             "not_equal": "arith.selectEqual"}
_VC_SELECT = {"greater": "vc.select_gt", "less": "vc.select_lt", "equal": "vc.select_eq",
              "greater_equal": "vc.select_lt", "less_equal": "vc.select_gt", "not_equal": "vc.select_eq"}
_SIGN = {"greater": ">", "less": "<", "equal": "==", "greater_equal": ">=", "less_equal": "<=", "not_equal": "!="}


def _rows():
    rows = []
    for name, formula in (("and", "AND"), ("or", "OR"), ("xor", "XOR"), ("min", "min"), ("max", "max")):
        kind = [f"arith.{name}"]
        rows.append(op(f"bdc_{name}", r.Binary, "binary", f"dst = src0 {formula} src1.", kind))
        rows.append(op(f"bdc_{name}_C", r.BinaryC, "binary", f"dst = src {formula} C.", kind))
    for name, kind in (("arithmetic_shift", "arith.ashift"), ("logical_shift", "arith.logicShift")):
        rows.append(op(f"bdc_{name}", r.Shift, "shift", "dst = src shifted by shift (> 0 left, else right, rounded).",
                       [kind]))
        rows.append(op(f"bdc_{name}_C", r.ShiftC, "shift", "dst = src shifted by C in [-32, 31].", [kind]))
    for name, sign in _SIGN.items():
        kinds = [_SELECT[name]] if name in _SELECT else [_TWO_STEP[name], "arith.selectEqual"]
        rows.append(op(f"bdc_{name}", r.Compare, "compare", f"dst = true_val if src0 {sign} src1 else 0.", kinds))
        rows.append(op(f"bdc_{name}_C", r.CompareC, "compare", f"dst = true_val if src {sign} C else 0.", kinds))
    for name, formula in (("and", "AND"), ("or", "OR"), ("xor", "XOR"), ("min", "min"), ("max", "max")):
        rows.append(op(f"bdc_vc_{name}", r.VcBinary, "vc", f"dst(m, n) = src0(m) {formula} src1(n).",
                       [f"vc.{name}"]))
    for name, sign in _SIGN.items():
        kinds = [_VC_SELECT[name]] + ([] if name in _SELECT else ["arith.selectEqual"])
        rows.append(op(f"bdc_vc_{name}", r.VcCompare, "vc", f"dst(m, n) = true_val if src0(m) {sign} src1(n) else 0.",
                       kinds))
    for name, what in (("S2L", "system -> local"), ("L2S", "local -> system"), ("L2L", "local -> local"),
                       ("S2S", "system -> system")):
        rows.append(op(f"gdma_cpy_{name}", r.GdmaCpy, "dma", f"copy a tensor, {what}.", ["dma.tensor"],
                       seed="API.md bm1684x"))
    return tuple(rows)


OPS = _rows()
LONG_OPS = tuple(attrs.evolve(row, lower=force_long(row.lower)) for row in OPS)

# Every method name the table generates, in table order.
NAMES = tuple(row.name for row in OPS)
