"""The bm1684x op table: one row per TPU-Kernel function of seed 001 (C name without `tpu_`),
plus the data movement of API.md. Every row takes the C parameters in C order (POSITIONAL:
positional or by name) and names its record (params.py), its check and lowering functions
by family (checks/<family>.py, lowering/<family>.py) with their family parameters (the
instruction kind, the dtypes allowed...), and the instruction kinds it emits.

`LONG_OPS` is the same table whose lowerings emit the long TIU classes (AR, VC) instead of
the short ones (`Context(long_form=True)`), so one call can be run through both forms.
"""
from functools import partial

import attrs

from bmk.bm1684x import params as r
from bmk.bm1684x.checks import binary as ck_binary
from bmk.bm1684x.checks import compare as ck_compare
from bmk.bm1684x.checks import dma as ck_dma
from bmk.bm1684x.checks import shift as ck_shift
from bmk.bm1684x.checks import vc as ck_vc
from bmk.bm1684x.constants import INTEGER_DTYPES, WHOLE_BYTE_DTYPES
from bmk.bm1684x.lowering import binary as lo_binary
from bmk.bm1684x.lowering import compare as lo_compare
from bmk.bm1684x.lowering import dma as lo_dma
from bmk.bm1684x.lowering import shift as lo_shift
from bmk.bm1684x.lowering import vc as lo_vc
from bmk.bm1684x.lowering.common import force_long
from bmk.optable import POSITIONAL, OpRow

SEED = "001"


def op(name, record, check, lower, doc, kinds, seed=SEED):
    """A row; `kinds`: the instruction kinds it emits, with their engine (tiu.arith.and)."""
    return OpRow(name, record, check, lower, f"tpu_{name}", seed, doc, POSITIONAL, tuple(kinds))


_SELECT = {"greater": "arith.selectGreat", "less": "arith.selectLess", "equal": "arith.selectEqual"}
# >=, <= and != : the opposite select, then the invert (lowering/compare.py)
_TWO_STEP = {"greater_equal": "arith.selectLess", "less_equal": "arith.selectGreat",
             "not_equal": "arith.selectEqual"}
_VC_SELECT = {"greater": "vc.select_gt", "less": "vc.select_lt", "equal": "vc.select_eq",
              "greater_equal": "vc.select_lt", "less_equal": "vc.select_gt", "not_equal": "vc.select_eq"}
_SIGN = {"greater": ">", "less": "<", "equal": "==", "greater_equal": ">=", "less_equal": "<=", "not_equal": "!="}
_BINARY = {"and": ("AND", True), "or": ("OR", True), "xor": ("XOR", True), "min": ("min", False),
           "max": ("max", False)}      # name: (formula, bitwise)
_SHIFT = {"arithmetic_shift": ("arith.ashift", INTEGER_DTYPES, True),
          "logical_shift": ("arith.logicShift", ck_shift.LOGICAL_DTYPES, False)}
_COPY = {"S2L": ("system -> local", True, False), "L2S": ("local -> system", False, True),
         "L2L": ("local -> local", True, True), "S2S": ("system -> system", False, False)}


def _rows():
    rows = []
    for name, (formula, bitwise) in _BINARY.items():
        kind = f"arith.{name}"
        rows.append(op(f"bdc_{name}", r.Binary, partial(ck_binary.tensors, allowed=WHOLE_BYTE_DTYPES),
                       partial(lo_binary.tensors, kind=kind, bitwise=bitwise), f"dst = src0 {formula} src1.",
                       [f"tiu.{kind}"]))
        rows.append(op(f"bdc_{name}_C", r.BinaryC, partial(ck_binary.const, allowed=WHOLE_BYTE_DTYPES),
                       partial(lo_binary.with_const, kind=kind, bitwise=bitwise), f"dst = src {formula} C.",
                       [f"tiu.{kind}"]))
    for name, (kind, allowed, same_sign) in _SHIFT.items():
        family = dict(allowed=allowed, same_sign=same_sign)
        rows.append(op(f"bdc_{name}", r.Shift, partial(ck_shift.tensor, **family),
                       partial(lo_shift.tensor_shift, kind=kind),
                       "dst = src shifted by shift (> 0 left, else right, rounded).", [f"tiu.{kind}"]))
        rows.append(op(f"bdc_{name}_C", r.ShiftC, partial(ck_shift.const, **family),
                       partial(lo_shift.const_shift, kind=kind), "dst = src shifted by C in [-32, 31].",
                       [f"tiu.{kind}"]))
    for name, sign in _SIGN.items():
        kind, invert = (_SELECT[name], False) if name in _SELECT else (_TWO_STEP[name], True)
        kinds = [f"tiu.{kind}"] + (["tiu.arith.xor"] if invert else [])
        rows.append(op(f"bdc_{name}", r.Compare, ck_compare.tensors,
                       partial(lo_compare.tensors, kind=kind, invert=invert, commutative=name == "equal"),
                       f"dst = true_val if src0 {sign} src1 else 0.", kinds))
        rows.append(op(f"bdc_{name}_C", r.CompareC, ck_compare.const,
                       partial(lo_compare.with_const, kind=kind, invert=invert),
                       f"dst = true_val if src {sign} C else 0.", kinds))
    for name, (formula, bitwise) in _BINARY.items():
        kind = f"vc.{name}"
        rows.append(op(f"bdc_vc_{name}", r.VcBinary, partial(ck_vc.binary, allowed=WHOLE_BYTE_DTYPES),
                       partial(lo_vc.binary, kind=kind, bitwise=bitwise), f"dst(m, n) = src0(m) {formula} src1(n).",
                       [f"tiu.{kind}"]))
    for name, sign in _SIGN.items():
        invert = name not in _SELECT
        kinds = [f"tiu.{_VC_SELECT[name]}"] + (["tiu.arith.xor"] if invert else [])
        rows.append(op(f"bdc_vc_{name}", r.VcCompare, ck_vc.compare,
                       partial(lo_vc.select, kind=_VC_SELECT[name], invert=invert),
                       f"dst(m, n) = true_val if src0(m) {sign} src1(n) else 0.", kinds))
    for name, (what, dst_local, src_local) in _COPY.items():
        sides = dict(dst_local=dst_local, src_local=src_local)
        rows.append(op(f"gdma_cpy_{name}", r.GdmaCpy, partial(ck_dma.copy, **sides), partial(lo_dma.copy, **sides),
                       f"copy a tensor, {what}.", ["gdma.dma.tensor"], seed="API.md bm1684x"))
    return tuple(rows)


OPS = _rows()
LONG_OPS = tuple(attrs.evolve(row, lower=force_long(row.lower)) for row in OPS)

# Every method name the table generates, in table order.
NAMES = tuple(row.name for row in OPS)
