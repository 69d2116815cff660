"""Lowering of the Fixed Point Binary and Unary functions (seed 003), by family: `binary`
(add, sub, mul, max, min and their _C / C_ forms: the op table gives the kind, the constant's
slot and whether rshift applies), `mac`, `shift16`, `shift16_const`, `mul_8bit`,
`split_high`, `split_low`.

Each binary function is one ar_op command (isa-facts bm1684-lowering.md section 4: add 2,
sub 3, mul 0, mac 1, max 4, min 5, shift 6) whose operand precisions (int8 / int16) and signs
(opt_opdX_sign) come from op_type_t (constants.op_type_dtypes); 8-bit local tensors are 4N,
16-bit 2N (the precision says which). Choices where isa-facts are silent, shared with the
semantics (bmk/sim/bm1684/arith.py):
- the result's sign is written to opt_opd2_sign (opd2 is unused by two-operand ar commands),
  its width to opt_res0_prec; the result saturates to that type. The simulator takes the sign
  from the operands instead (signed iff one is, sub always signed: the rule seed 003's valid
  op types follow, and the vendor's int8 stream, which writes opt_opd2_sign 1 everywhere); for
  every valid op type both give the same sign;
- rshift goes to opt_right_shift and rounds as the seed's formula, (x + 2^(rshift-1)) RSH
  rshift; mac's lshift goes to opt_left_shift and is_origin_dst_signed to opt_res_add_sign
  (the sign of the accumulated destination);
- a constant C is its operand's bit pattern (8 or 16 bits) in opdX_addr with that operand's
  precision and sign: opd1 for `src OP C`, opd0 for C_sub (`C - src`; op_type names the
  operands left to right);
- 16-bit shifts: arith.shift as the 32-bit ones (lowering/bit32_binary.py) at int16.
Sequences (no single command does them):
- 16bit_mul_8bit, src0 = high * 2^8 + low (low unsigned, high signed as src0):
    1. arith.mul   dst = high * src1          (int16, signed iff high or src1 is; exact)
    2. arith.mac   dst = (dst * 2^8 + low * src1 + 2^(rshift-1)) RSH rshift, saturated to
                   mul_type's result (opt_left_shift 8, opt_res_add_sign = step 1's sign);
  the widened sum is src0 * src1 exactly, so this is the seed's formula.
- 16bit_split_high_8bit: arith.shift dst(int8) = src(int16) RSH 8, wrapped to 8 bits.
- 16bit_split_low_8bit:
    1. arith.shift work(int16) = src LSH 8      (wraps: the low byte becomes the high byte)
    2. arith.shift dst(int8)   = work RSH 8     (wrapped to 8 bits: src's low byte)
"""
from bmk.bm1684 import constants as k
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.lowering.fp32_binary import binary as _binary
from bmk.bm1684.lowering.fp32_binary import const_binary
from bmk.checks import as_int, fixed
from bmk.dtypes import INT8, INT16

BYTE = INT8.bits            # the high byte of a 16-bit value is 8 bits up


def _prec(dtype):
    return "int8" if dtype.bits == INT8.bits else "int16"


def _types(op_type):
    """(precisions (res0, opd0, opd1), signs (opd0, opd1, result), (src0, src1) DTypes) of op_type."""
    s0, s1, d = k.op_type_dtypes(int(fixed(op_type)))
    return (_prec(d), _prec(s0), _prec(s1)), (s0.signed, s1.signed, d.signed), (s0, s1)


def binary(chip, p, kind, slot=None, shifts=True):
    """dst = (src0 OP src1 + round) RSH rshift (slot None), src OP C (opd1), C OP src (opd0);
    `shifts` False: max / min, which have no rshift."""
    precs, signs, (s0, s1) = _types(p.op_type)
    f = {"opt_right_shift": as_int(p.rshift)} if shifts else {}
    if slot is None:
        return _binary(chip, kind, p, prec=precs, signed=signs, f=f)
    width = (s0 if slot == "opd0" else s1).bits
    return const_binary(chip, kind, p, slot, lo.bits(p.C, width), prec=precs, signed=signs, f=f)


def mac(chip, p, const=False):
    """dst = (dst * 2^lshift + src0 * src1 (or src * C) + round) RSH rshift."""
    precs, signs, (_, s1) = _types(p.op_type)
    f = {"opt_left_shift": as_int(p.lshift), "opt_right_shift": as_int(p.rshift),
         "opt_res_add_sign": int(bool(p.is_origin_dst_signed))}
    if const:
        return const_binary(chip, "arith.mac", p, "opd1", lo.bits(p.C, s1.bits), prec=precs, signed=signs, f=f)
    return _binary(chip, "arith.mac", p, prec=precs, signed=signs, f=f)


def shift16(chip, p, logical):
    return _binary(chip, "arith.shift", p, prec="int16", signed=(not logical, 1, not logical))


def shift16_const(chip, p, logical, slot):
    return const_binary(chip, "arith.shift", p, slot, lo.bits(p.C, INT16.bits), prec="int16",
                        signed=(not logical, 1, not logical))


def _shift_cmd(chip, res, src, stride, res_stride, amount, res_prec, shape):
    """arith.shift: res (res_prec, signed) = src (int16, signed) shifted by the constant amount."""
    f = lo.tensor(chip, {"opt_opd2_sign": 1, "opt_shift_typ": 0}, "res0", res, res_stride, prec=res_prec,
                  shape=shape)
    lo.tensor(chip, f, "opd0", src, stride, prec="int16", signed=1)
    lo.const(chip, f, "opd1", lo.bits(amount, INT16.bits), prec="int16", signed=1)
    return lo.tiu(chip, "arith.shift", **f)


def split_high(chip, p):
    """dst = src RSH 8 (int16 -> int8)."""
    return (_shift_cmd(chip, p.dst_addr, p.src_addr, lo.stride4(p.src_stride), lo.stride4(p.dst_stride), -BYTE,
                       "int8", lo.shape4(p.shape)),)


def split_low(chip, p):
    """work = src LSH 8; dst = work RSH 8."""
    shape, work = lo.shape4(p.shape), lo.stride4(p.work_stride)
    return (_shift_cmd(chip, p.work_addr, p.src_addr, lo.stride4(p.src_stride), work, BYTE, "int16", shape),
            _shift_cmd(chip, p.dst_addr, p.work_addr, work, lo.stride4(p.dst_stride), -BYTE, "int8", shape))


def mul_8bit(chip, p):
    """dst = high * src1; dst = (dst * 2^8 + low * src1 + round) RSH rshift."""
    s0, s1, d = k.mul_type_dtypes(int(fixed(p.mul_type)))
    shape, dst = lo.shape4(p.shape), lo.stride4(p.dst_stride)
    mid_signed = s0.signed or s1.signed
    mul = lo.tensor(chip, {"opt_opd2_sign": int(mid_signed), "opt_shift_typ": 0}, "res0", p.dst_addr, dst,
                    prec="int16", shape=shape)
    lo.tensor(chip, mul, "opd0", p.src0_high_addr, lo.stride4(p.src0_high_stride), prec="int8", signed=s0.signed)
    lo.tensor(chip, mul, "opd1", p.src1_addr, lo.stride4(p.src1_stride), prec="int8", signed=s1.signed)
    mac_ = lo.tensor(chip, {"opt_opd2_sign": int(d.signed), "opt_shift_typ": 0, "opt_left_shift": BYTE,
                            "opt_right_shift": as_int(p.rshift), "opt_res_add_sign": int(mid_signed)},
                     "res0", p.dst_addr, dst, prec="int16", shape=shape)
    lo.tensor(chip, mac_, "opd0", p.src0_low_addr, lo.stride4(p.src0_low_stride), prec="int8", signed=0)
    lo.tensor(chip, mac_, "opd1", p.src1_addr, lo.stride4(p.src1_stride), prec="int8", signed=s1.signed)
    return lo.tiu(chip, "arith.mul", **mul), lo.tiu(chip, "arith.mac", **mac_)
