"""Checks of the Fixed Point Binary and Unary functions (seed 003 "Fixed Point Binary
Functions", "Fixed Point Unary Functions").

The remarks, as rules: op_type is one of the function's valid choices (mac: by
is_origin_dst_signed); mul_type one of S16_MUL_S8_TO_S16, U16_MUL_S8_TO_S16,
U16_MUL_U8_TO_U16 (S16_MUL_U8_TO_S16 is unsupported for BM1684); the tensors' types are those
of op_type / mul_type, int8/uint8 tensors 4N and int16/uint16 2N (strides count 32-bit words;
each tensor must fit its NPU's memory in that layout); every tensor starts at the first NPU;
addresses divisible by 4; shape ranges; C in the range of its operand's type (op_type's src1
for `src OP C`, src0 for C_sub's `C - src`: the op_type names the operands left to right);
rshift in [0, 31]; lshift in [0, 31] (the seed gives no range: opt_left_shift's 5 bits); the
16-bit shift amounts C in [-16, 16], C of C_arithmetic_shift a short, of C_logical_shift an
unsigned short. Rules of the lowering's sequences (lowering/fixed_point.py): 16bit_mul_8bit
writes dst before it reads src0_low and src1, so dst must not overlap them; split_low_8bit
shifts src into work then work into dst: work starts at the first NPU too, dst_addr !=
work_addr and dst must not overlap work.
"""
import numpy as np

from bmk.bm1684 import constants as k
from bmk.bm1684.checks import common as c
from bmk.bm1684.layout import chip
from bmk.dtypes import INT8, UINT8
from bmk.dtypes import INT16 as I16
from bmk.dtypes import UINT16 as U16
from bmk.errors import ArgumentError, must
from bmk.templates import fixed
from bmk.util import is_int

_ALL16 = ("S8_OP_S8_TO_S8", "S8_OP_S8_TO_S16", "S8_OP_U8_TO_S8", "S8_OP_U8_TO_S16", "U8_OP_S8_TO_S8",
          "U8_OP_S8_TO_S16")
_S16 = ("S16_OP_S16_TO_S8", "S16_OP_S16_TO_S16", "S16_OP_U16_TO_S8", "S16_OP_U16_TO_S16", "U16_OP_S16_TO_S8",
        "U16_OP_S16_TO_S16")
VALID = {
    "add": _ALL16 + ("U8_OP_U8_TO_U8", "U8_OP_U8_TO_U16") + _S16 + ("U16_OP_U16_TO_U8", "U16_OP_U16_TO_U16"),
    "sub": _ALL16 + ("U8_OP_U8_TO_S8", "U8_OP_U8_TO_S16") + _S16 + ("U16_OP_U16_TO_S8", "U16_OP_U16_TO_S16"),
    "mul": _ALL16 + ("U8_OP_U8_TO_U8", "U8_OP_U8_TO_U16"),
    "mac_signed": ("S8_OP_S8_TO_S16", "S8_OP_U8_TO_S16", "U8_OP_S8_TO_S16"),
    "mac_unsigned": ("S8_OP_S8_TO_S16", "S8_OP_U8_TO_S16", "U8_OP_S8_TO_S16", "U8_OP_U8_TO_U16"),
    "maxmin": ("S8_OP_S8_TO_S8", "U8_OP_U8_TO_U8", "S16_OP_S16_TO_S16", "U16_OP_U16_TO_U16"),
}
MUL_TYPES = ("S16_MUL_S8_TO_S16", "U16_MUL_S8_TO_S16", "U16_MUL_U8_TO_U16")
RSHIFT_MAX = 31


def lshift_max():
    return (1 << chip().engine("tiu").format.field("opt_left_shift").width) - 1


def enum_value(call, name, value, valid, table, extra=""):
    """An op_type_t / mul_type_t value among the `valid` enumerator names."""
    value = fixed(value)        # a code selects: a call template serves one op type
    values = {table[n]: n for n in valid}
    if is_int(value) and not isinstance(value, (bool, np.bool_)) and int(value) in values:
        return int(value)
    raise ArgumentError(must(call, name, f"one of {', '.join(valid)}{extra}", value))


def op_type(call, value, valid):
    return enum_value(call, "op_type", value, VALID[valid], k.OP_TYPES)


def pack(dtype):
    """Batches per 32-bit word: 4 for 8-bit (4N), 2 for 16-bit (2N)."""
    return 4 // dtype.itemsize


def tensors(call, r, spec):
    """spec: ((addr field, stride field, DType), ...): addresses, shape, strides, first NPU, fit
    (4N / 2N). Returns (shape, {addr field: (addr, stride, dtype)})."""
    addrs = {a: c.local_addr(call, a, getattr(r, a)) for a, _, _ in spec}
    shape = c.shape(call, r.shape)
    out = {}
    for a, s, dt in spec:
        out[a] = (addrs[a], c.stride(call, s, getattr(r, s)), dt)
    c.first_npu(call, **addrs)
    for a, (addr, strd, dt) in out.items():
        c.fits_local(call, a, addr, shape, strd, itemsize=4, pack=pack(dt))
    return shape, out


def constant(call, value, dtype, name="C"):
    return c.integer(call, name, value, dtype.min, dtype.max)


def shift_amount(call, r):
    return c.integer(call, "rshift", r.rshift, 0, RSHIFT_MAX)


def span(addr, shape, strd, dtype):
    """[first, last] byte offsets inside the lane of a first-NPU 4N/2N tensor."""
    s = c.aligned_stride(addr, shape) if strd is None else strd
    groups = -(-shape.n // pack(dtype))
    slots = -(-shape.c // chip().param("npu_num"))
    return addr, addr + 4 * ((groups - 1) * s.n + (slots - 1) * s.c + (shape.h - 1) * s.h + (shape.w - 1) * s.w) + 3


def disjoint(call, name, other, tensors_, shape, why):
    """Tensor `name` must not overlap tensor `other` (byte ranges in the lane)."""
    a0, a1 = span(tensors_[name][0], shape, tensors_[name][1], tensors_[name][2])
    b0, b1 = span(tensors_[other][0], shape, tensors_[other][1], tensors_[other][2])
    if a0 <= b1 and b0 <= a1:
        raise ArgumentError(must(call, name, f"an address whose tensor does not overlap {other}'s "
                                 f"(bytes 0x{b0:x}..0x{b1:x}; {why})", tensors_[name][0]))


TT = ("dst_addr", "dst_stride"), ("src0_addr", "src0_stride"), ("src1_addr", "src1_stride")
TC = ("dst_addr", "dst_stride"), ("src_addr", "src_stride")


def _tt(call, r, valid):
    t = op_type(call, r.op_type, valid)
    s0, s1, d = k.op_type_dtypes(t)
    tensors(call, r, ((*TT[0], d), (*TT[1], s0), (*TT[2], s1)))
    return t


def _tc(call, r, valid, const_is_src0=False):
    t = op_type(call, r.op_type, valid)
    s0, s1, d = k.op_type_dtypes(t)
    src, cst = (s1, s0) if const_is_src0 else (s0, s1)
    tensors(call, r, ((*TC[0], d), (*TC[1], src)))
    constant(call, r.C, cst)
    return t


def binary(call, valid):
    def check(ctx, r):
        _tt(call, r, valid)
        shift_amount(call, r)
    return check


def binary_C(call, valid, const_is_src0=False):
    def check(ctx, r):
        _tc(call, r, valid, const_is_src0)
        shift_amount(call, r)
    return check


def _mac_valid(call, r):
    signed = c.flag(call, "is_origin_dst_signed", r.is_origin_dst_signed)
    return "mac_signed" if signed else "mac_unsigned"


def mac(call, const=False):
    def check(ctx, r):
        valid = _mac_valid(call, r)
        (_tc if const else _tt)(call, r, valid)
        c.integer(call, "lshift", r.lshift, 0, lshift_max())
        shift_amount(call, r)
    return check


def maxmin(call, const=False):
    def check(ctx, r):
        (_tc if const else _tt)(call, r, "maxmin")
    return check




def shift16(call, logical):
    def check(ctx, r):
        tensors(call, r, ((*TT[0], U16 if logical else I16), (*TT[1], U16 if logical else I16), (*TT[2], I16)))
    return check


def shift16_C(call, logical):
    def check(ctx, r):
        tensors(call, r, ((*TC[0], U16 if logical else I16), (*TC[1], U16 if logical else I16)))
        c.integer(call, "C", r.C, -16, 16)
    return check


def C_shift16(call, logical):
    def check(ctx, r):
        tensors(call, r, ((*TC[0], U16 if logical else I16), (*TC[1], I16)))
        constant(call, r.C, U16 if logical else I16)
    return check


def bdc_fixed_point_packed_16bit_mul_8bit(ctx, r, call="bdc_fixed_point_packed_16bit_mul_8bit"):
    t = enum_value(call, "mul_type", r.mul_type, MUL_TYPES, k.MUL_TYPES,
                   " (S16_MUL_U8_TO_S16 is unsupported for BM1684)")
    s0, s1, d = k.mul_type_dtypes(t)
    high = INT8 if s0.signed else UINT8
    shape, ts = tensors(call, r, (("dst_addr", "dst_stride", d), ("src0_high_addr", "src0_high_stride", high),
                                  ("src0_low_addr", "src0_low_stride", UINT8), ("src1_addr", "src1_stride", s1)))
    why = "dst is written before src0_low and src1 are read"
    disjoint(call, "dst_addr", "src0_low_addr", ts, shape, why)
    disjoint(call, "dst_addr", "src1_addr", ts, shape, why)
    shift_amount(call, r)


def bdc_fixed_point_packed_16bit_split_high_8bit(ctx, r, call="bdc_fixed_point_packed_16bit_split_high_8bit"):
    tensors(call, r, ((*TC[0], INT8), (*TC[1], I16)))


def bdc_fixed_point_packed_16bit_split_low_8bit(ctx, r, call="bdc_fixed_point_packed_16bit_split_low_8bit"):
    shape, ts = tensors(call, r, ((*TC[0], INT8), (*TC[1], I16),
                                  ("work_addr", "work_stride", I16)))
    c.distinct(call, "dst_addr", ts["dst_addr"][0], "work_addr", ts["work_addr"][0])
    disjoint(call, "dst_addr", "work_addr", ts, shape, "dst is written from work")


P = "bdc_fixed_point_packed_"
bdc_fixed_point_packed_add = binary(P + "add", "add")
bdc_fixed_point_packed_sub = binary(P + "sub", "sub")
bdc_fixed_point_packed_mul = binary(P + "mul", "mul")
bdc_fixed_point_packed_add_C = binary_C(P + "add_C", "add")
bdc_fixed_point_packed_sub_C = binary_C(P + "sub_C", "sub")
bdc_fixed_point_packed_C_sub = binary_C(P + "C_sub", "sub", const_is_src0=True)
bdc_fixed_point_packed_mul_C = binary_C(P + "mul_C", "mul")
bdc_fixed_point_packed_mac = mac(P + "mac")
bdc_fixed_point_packed_mac_C = mac(P + "mac_C", const=True)
bdc_fixed_point_packed_max = maxmin(P + "max")
bdc_fixed_point_packed_min = maxmin(P + "min")
bdc_fixed_point_packed_max_C = maxmin(P + "max_C", const=True)
bdc_fixed_point_packed_min_C = maxmin(P + "min_C", const=True)
bdc_fixed_point_packed_16bit_arithmetic_shift = shift16(P + "16bit_arithmetic_shift", False)
bdc_fixed_point_packed_16bit_logical_shift = shift16(P + "16bit_logical_shift", True)
bdc_fixed_point_packed_16bit_arithmetic_shift_C = shift16_C(P + "16bit_arithmetic_shift_C", False)
bdc_fixed_point_packed_16bit_logical_shift_C = shift16_C(P + "16bit_logical_shift_C", True)
bdc_fixed_point_packed_16bit_C_arithmetic_shift = C_shift16(P + "16bit_C_arithmetic_shift", False)
bdc_fixed_point_packed_16bit_C_logical_shift = C_shift16(P + "16bit_C_logical_shift", True)
