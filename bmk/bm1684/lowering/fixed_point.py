"""Lowering of the Fixed Point Binary and Unary functions (seed 003).

Each binary function is one ar_op command (isa-facts bm1684-lowering.md section 4: add 2,
sub 3, mul 0, mac 1, max 4, min 5, shift 6) whose operand precisions (int8 / int16) and signs
(opt_opdX_sign) come from op_type_t (constants.op_type_dtypes); 8-bit local tensors are 4N,
16-bit 2N (the precision says which). Choices where isa-facts are silent, shared with the
semantics (bmk/sim/bm1684/arith.py):
- the result's sign is opt_opd2_sign (opd2 is unused by two-operand ar commands), its width
  opt_res0_prec; the result saturates to that type;
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
from bmk.bm1684.lowering.fp32_binary import binary, with_const
from bmk.templates import as_int, fixed


def _prec(dtype):
    return "int8" if dtype.bits == 8 else "int16"


def _types(op_type):
    s0, s1, d = k.op_type_dtypes(int(fixed(op_type)))
    return (_prec(d), _prec(s0), _prec(s1)), (s0.signed, s1.signed, d.signed), (s0, s1)


def _binary(kind, shifts=True):
    def lower(chip, r):
        precs, signs, _ = _types(r.op_type)
        f = {"opt_right_shift": as_int(r.rshift)} if shifts else {}
        return binary(kind, r, prec=precs, signed=signs, f=f)
    return lower


def _binary_C(kind, const_slot="opd1", shifts=True):
    def lower(chip, r):
        precs, signs, (s0, s1) = _types(r.op_type)
        width = (s0 if const_slot == "opd0" else s1).bits
        f = {"opt_right_shift": as_int(r.rshift)} if shifts else {}
        return with_const(kind, r, const_slot, lo.bits(r.C, width), prec=precs, signed=signs, f=f)
    return lower


def _mac(const):
    def lower(chip, r):
        precs, signs, (_, s1) = _types(r.op_type)
        f = {"opt_left_shift": as_int(r.lshift), "opt_right_shift": as_int(r.rshift),
             "opt_res_add_sign": int(bool(r.is_origin_dst_signed))}
        if const:
            return with_const("arith.mac", r, "opd1", lo.bits(r.C, s1.bits), prec=precs, signed=signs, f=f)
        return binary("arith.mac", r, prec=precs, signed=signs, f=f)
    return lower


def _shift(logical):
    return lambda chip, r: binary("arith.shift", r, prec="int16", signed=(not logical, 1, not logical))


def _shift_C(logical, const_slot):
    return lambda chip, r: with_const("arith.shift", r, const_slot, lo.bits(r.C, 16), prec="int16",
                                      signed=(not logical, 1, not logical))


def _shift_cmd(res, src, stride, res_stride, amount, res_prec, shape):
    """arith.shift: res (res_prec, signed) = src (int16, signed) shifted by the constant amount."""
    f = {"opt_opd2_sign": 1, "opt_shift_typ": 0}
    lo.tensor(f, "res0", res, res_stride, prec=res_prec, shape=shape)
    lo.tensor(f, "opd0", src, stride, prec="int16", signed=1)
    lo.const(f, "opd1", lo.bits(amount, 16), prec="int16", signed=1)
    return lo.tiu("arith.shift", **f)


def bdc_fixed_point_packed_16bit_split_high_8bit(chip, r):
    return (_shift_cmd(r.dst_addr, r.src_addr, lo.stride4(r.src_stride), lo.stride4(r.dst_stride), -8, "int8",
                       lo.shape4(r.shape)),)


def bdc_fixed_point_packed_16bit_split_low_8bit(chip, r):
    shape, work = lo.shape4(r.shape), lo.stride4(r.work_stride)
    return (_shift_cmd(r.work_addr, r.src_addr, lo.stride4(r.src_stride), work, 8, "int16", shape),
            _shift_cmd(r.dst_addr, r.work_addr, work, lo.stride4(r.dst_stride), -8, "int8", shape))


def bdc_fixed_point_packed_16bit_mul_8bit(chip, r):
    s0, s1, d = k.mul_type_dtypes(int(fixed(r.mul_type)))
    shape, dst = lo.shape4(r.shape), lo.stride4(r.dst_stride)
    mid_signed = s0.signed or s1.signed
    mul = {"opt_opd2_sign": int(mid_signed), "opt_shift_typ": 0}
    lo.tensor(mul, "res0", r.dst_addr, dst, prec="int16", shape=shape)
    lo.tensor(mul, "opd0", r.src0_high_addr, lo.stride4(r.src0_high_stride), prec="int8", signed=s0.signed)
    lo.tensor(mul, "opd1", r.src1_addr, lo.stride4(r.src1_stride), prec="int8", signed=s1.signed)
    mac = {"opt_opd2_sign": int(d.signed), "opt_shift_typ": 0, "opt_left_shift": 8,
           "opt_right_shift": as_int(r.rshift), "opt_res_add_sign": int(mid_signed)}
    lo.tensor(mac, "res0", r.dst_addr, dst, prec="int16", shape=shape)
    lo.tensor(mac, "opd0", r.src0_low_addr, lo.stride4(r.src0_low_stride), prec="int8", signed=0)
    lo.tensor(mac, "opd1", r.src1_addr, lo.stride4(r.src1_stride), prec="int8", signed=s1.signed)
    return lo.tiu("arith.mul", **mul), lo.tiu("arith.mac", **mac)


bdc_fixed_point_packed_add, bdc_fixed_point_packed_sub = _binary("arith.add"), _binary("arith.sub")
bdc_fixed_point_packed_mul = _binary("arith.mul")
bdc_fixed_point_packed_add_C, bdc_fixed_point_packed_sub_C = _binary_C("arith.add"), _binary_C("arith.sub")
bdc_fixed_point_packed_C_sub = _binary_C("arith.sub", "opd0")
bdc_fixed_point_packed_mul_C = _binary_C("arith.mul")
bdc_fixed_point_packed_mac, bdc_fixed_point_packed_mac_C = _mac(False), _mac(True)
bdc_fixed_point_packed_max = _binary("arith.max", shifts=False)
bdc_fixed_point_packed_min = _binary("arith.min", shifts=False)
bdc_fixed_point_packed_max_C = _binary_C("arith.max", shifts=False)
bdc_fixed_point_packed_min_C = _binary_C("arith.min", shifts=False)
bdc_fixed_point_packed_16bit_arithmetic_shift, bdc_fixed_point_packed_16bit_logical_shift = _shift(0), _shift(1)
bdc_fixed_point_packed_16bit_arithmetic_shift_C = _shift_C(0, "opd1")
bdc_fixed_point_packed_16bit_logical_shift_C = _shift_C(1, "opd1")
bdc_fixed_point_packed_16bit_C_arithmetic_shift = _shift_C(0, "opd0")
bdc_fixed_point_packed_16bit_C_logical_shift = _shift_C(1, "opd0")
