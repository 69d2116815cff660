"""Lowering of the FP32 Binary functions (seed 003 "FP32 Binary Functions").

One TIU command each (isa-facts bm1684-lowering.md section 4), filled as the vendor's own
commands of the yolov5s stream (tests/golden/bm1684/): tensor-tensor add, sub, mul, mac, max,
min and the selects are ar_op (arith.*), with opt_shift_typ = 0 as the vendor's ar commands;
the tensor-constant add_C, sub_C, C_sub, mul_C, mac_C and every division are md_scalar
(md_scalar.*, the vendor's divide is md_scalar), keeping the vendor's opt_shift_typ = 1;
max_C / min_C are ar max/min with a constant opd1, as the vendor's clamps. A constant is
opt_opdX_const = 1 with the C float's fp32 bits in opdX_addr: in opd1 for `src OP C`, in opd0
for the C_ forms (`C OP src`). The selects take select_val as a constant opd2
(tsk_opd_num = 3): res = opd2 if opd0 > opd1 (== opd1) else 0 (bmk/sim/bm1684/arith.py).
"""
from bmk.bm1684.lowering import common as lo


def _tiu(kind, f):
    if kind.startswith("arith."):
        f.setdefault("opt_shift_typ", 0)
    return (lo.tiu(kind, **f),)


def _precs(prec):
    """(res0, opd0, opd1) precisions from one name or a triple."""
    return (prec,) * 3 if isinstance(prec, str) else tuple(prec)


def binary(kind, r, *, prec="fp32", signed=(None, None, None), f=None):
    """res0 = opd0 OP opd1, three tensors; prec: one precision name or (res0, opd0, opd1);
    signed = (opd0, opd1, result) signs or None (the result's sign goes to opt_opd2_sign)."""
    p = _precs(prec)
    f = lo.tensor(f or {}, "res0", r.dst_addr, lo.stride4(r.dst_stride), prec=p[0], shape=lo.shape4(r.shape))
    lo.tensor(f, "opd0", r.src0_addr, lo.stride4(r.src0_stride), prec=p[1], signed=signed[0])
    lo.tensor(f, "opd1", r.src1_addr, lo.stride4(r.src1_stride), prec=p[2], signed=signed[1])
    if signed[2] is not None:
        f["opt_opd2_sign"] = int(signed[2])
    return _tiu(kind, f)


def with_const(kind, r, const_slot, bits, *, prec="fp32", signed=(None, None, None), f=None):
    """res0 = src OP C (const_slot opd1) or C OP src (const_slot opd0)."""
    tensor_slot = "opd0" if const_slot == "opd1" else "opd1"
    sign = dict(zip(("opd0", "opd1"), signed))
    p = dict(zip(("res0", "opd0", "opd1"), _precs(prec)))
    f = lo.tensor(f or {}, "res0", r.dst_addr, lo.stride4(r.dst_stride), prec=p["res0"], shape=lo.shape4(r.shape))
    lo.tensor(f, tensor_slot, r.src_addr, lo.stride4(r.src_stride), prec=p[tensor_slot], signed=sign[tensor_slot])
    lo.const(f, const_slot, bits, prec=p[const_slot], signed=sign[const_slot])
    if signed[2] is not None:
        f["opt_opd2_sign"] = int(signed[2])
    return _tiu(kind, f)


def _select(kind, r, const_slot=None):
    f = {"tsk_opd_num": 3}
    lo.const(f, "opd2", lo.bits(r.select_val, 32))
    if const_slot is None:
        return binary(kind, r, f=f)
    return with_const(kind, r, const_slot, lo.fp32_bits(r.C), f=f)


def _C(kind, slot="opd1"):
    return lambda chip, r: with_const(kind, r, slot, lo.fp32_bits(r.C))


def _tt(kind):
    return lambda chip, r: binary(kind, r)


bdc_add, bdc_sub, bdc_mul, bdc_mac = _tt("arith.add"), _tt("arith.sub"), _tt("arith.mul"), _tt("arith.mac")
bdc_max, bdc_min, bdc_div = _tt("arith.max"), _tt("arith.min"), _tt("md_scalar.divide")
bdc_add_C, bdc_sub_C, bdc_mul_C = _C("md_scalar.add"), _C("md_scalar.sub"), _C("md_scalar.mul")
bdc_mac_C, bdc_div_C = _C("md_scalar.mac"), _C("md_scalar.divide")
bdc_C_sub, bdc_C_div = _C("md_scalar.sub", "opd0"), _C("md_scalar.divide", "opd0")
bdc_max_C, bdc_min_C = _C("arith.max"), _C("arith.min")


def bdc_greater_select_value(chip, r):
    return _select("arith.select_gt", r)


def bdc_equal_select_value(chip, r):
    return _select("arith.select_eq", r)


def bdc_greater_C_select_value(chip, r):
    return _select("arith.select_gt", r, "opd1")


def bdc_C_greater_select_value(chip, r):
    return _select("arith.select_gt", r, "opd0")


def bdc_equal_C_select_value(chip, r):
    return _select("arith.select_eq", r, "opd1")
