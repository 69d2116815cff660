"""Lowering of the FP32 Binary functions (seed 003 "FP32 Binary Functions"), by family:
`tensors` (src0 OP src1), `with_const` (src OP C: the constant in opd1; C OP src: in opd0) and
`select`; the op table gives the instruction kind and the constant's slot.

One TIU command each (isa-facts bm1684-lowering.md section 4), filled as the vendor's own
commands of the yolov5s stream (tests/golden/bm1684/): tensor-tensor add, sub, mul, mac, max,
min and the selects are ar_op (arith.*), with opt_shift_typ = 0 as the vendor's ar commands;
the tensor-constant add_C, sub_C, C_sub, mul_C, mac_C and every division are md_scalar
(md_scalar.*, the vendor's divide is md_scalar), keeping the vendor's opt_shift_typ = 1;
max_C / min_C are ar max/min with a constant opd1, as the vendor's clamps. A constant is
opt_opdX_const = 1 with the C float's fp32 bits in opdX_addr. The selects take select_val as
a constant opd2 (tsk_opd_num = 3): res = opd2 if opd0 > opd1 (== opd1) else 0
(bmk/sim/bm1684/arith.py).

`binary` and `const_binary` are the builders the 32-bit and fixed-point lowerings share:
precisions per operand, and signs (opd0, opd1, result: the result's sign goes to
opt_opd2_sign, see bmk/sim/bm1684/arith.py).
"""
from bmk.bm1684.lowering import common as lo


def _tiu(chip, kind, f):
    if kind.startswith("arith."):
        f.setdefault("opt_shift_typ", 0)
    return (lo.tiu(chip, kind, **f),)


def _precs(prec):
    """(res0, opd0, opd1) precisions from one name or a triple."""
    return (prec,) * 3 if isinstance(prec, str) else tuple(prec)


def binary(chip, kind, p, *, prec="fp32", signed=(None, None, None), f=None):
    """res0 = opd0 OP opd1, three tensors; prec: one precision name or (res0, opd0, opd1);
    signed = (opd0, opd1, result) signs or None."""
    res, a, b = _precs(prec)
    f = lo.tensor(chip, f or {}, "res0", p.dst_addr, lo.stride4(p.dst_stride), prec=res, shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", p.src0_addr, lo.stride4(p.src0_stride), prec=a, signed=signed[0])
    lo.tensor(chip, f, "opd1", p.src1_addr, lo.stride4(p.src1_stride), prec=b, signed=signed[1])
    if signed[2] is not None:
        f["opt_opd2_sign"] = int(signed[2])
    return _tiu(chip, kind, f)


def const_binary(chip, kind, p, const_slot, bits, *, prec="fp32", signed=(None, None, None), f=None):
    """res0 = src OP C (const_slot opd1) or C OP src (const_slot opd0)."""
    tensor_slot = "opd0" if const_slot == "opd1" else "opd1"
    sign = dict(zip(("opd0", "opd1"), signed))
    precs = dict(zip(("res0", "opd0", "opd1"), _precs(prec)))
    f = lo.tensor(chip, f or {}, "res0", p.dst_addr, lo.stride4(p.dst_stride), prec=precs["res0"],
                  shape=lo.shape4(p.shape))
    lo.tensor(chip, f, tensor_slot, p.src_addr, lo.stride4(p.src_stride), prec=precs[tensor_slot],
              signed=sign[tensor_slot])
    lo.const(chip, f, const_slot, bits, prec=precs[const_slot], signed=sign[const_slot])
    if signed[2] is not None:
        f["opt_opd2_sign"] = int(signed[2])
    return _tiu(chip, kind, f)


def tensors(chip, p, kind):
    """dst = src0 OP src1."""
    return binary(chip, kind, p)


def with_const(chip, p, kind, slot="opd1"):
    """dst = src OP C (slot opd1) or C OP src (slot opd0)."""
    return const_binary(chip, kind, p, slot, lo.fp32_bits(p.C))


def select(chip, p, kind, slot=None):
    """dst = select_val where src0 OP src1 (slot None), src OP C (opd1) or C OP src (opd0)."""
    f = lo.const(chip, {"tsk_opd_num": 3}, "opd2", lo.bits(p.select_val, 32))
    if slot is None:
        return binary(chip, kind, p, f=f)
    return const_binary(chip, kind, p, slot, lo.fp32_bits(p.C), f=f)
