"""Checks of the Fixed Point Binary and Unary functions (seed 003 "Fixed Point Binary
Functions", "Fixed Point Unary Functions"), by family; the op table gives each row the
op_type_t choices it accepts (`valid`, a key of VALID) and which operand is the constant.

The remarks, as rules: op_type is one of the function's valid choices (mac: by
is_origin_dst_signed); mul_type one of S16_MUL_S8_TO_S16, U16_MUL_S8_TO_S16,
U16_MUL_U8_TO_U16 (S16_MUL_U8_TO_S16 is unsupported for BM1684); the tensors' types are those
of op_type / mul_type, int8/uint8 tensors 4N and int16/uint16 2N (strides count storage
words; each tensor must fit its NPU's memory in that layout); every tensor starts at the
first NPU; addresses divisible by 4; shape ranges; C in the range of its operand's type
(op_type's src1 for `src OP C`, src0 for C_sub's `C - src`: the op_type names the operands
left to right); rshift in [0, 31]; lshift within opt_left_shift (the seed gives no range);
the 16-bit shift amounts C in [-16, 16], C of C_arithmetic_shift a short, of C_logical_shift
an unsigned short; dst is each source in place (the same address and layout: a result of
another type is never in place) or apart from it (issue 32.14). Rules of the lowering's
sequences (lowering/fixed_point.py): 16bit_mul_8bit writes dst before it reads src0_low and
src1, so dst must not overlap them; split_low_8bit shifts src into work then work into dst:
work starts at the first NPU too, dst_addr != work_addr and dst must not overlap work.
"""
from bmk.bm1684 import constants as k
from bmk.bm1684 import geometry as g
from bmk.dtypes import INT8, INT16, UINT8, UINT16

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
RSHIFT_MAX = 31             # the seed: rshift in [0, 31]
SHIFT16_MAX = 16            # the seed: a 16-bit shift amount C in [-16, 16]
TT = (("dst_addr", "dst_stride"), ("src0_addr", "src0_stride"), ("src1_addr", "src1_stride"))
TC = (("dst_addr", "dst_stride"), ("src_addr", "src_stride"))


def _enum(c, name, value, valid, table, extra=""):
    """An op_type_t / mul_type_t value among the `valid` enumerator names."""
    return c.choice(name, value, {table[n]: n for n in valid}, f"one of {', '.join(valid)}{extra}")


def pack(c, dtype):
    """Batches per storage word: 4 for 8-bit (4N), 2 for 16-bit (2N)."""
    return g.word_bytes(c.chip) // dtype.itemsize


def tensors(c, p, spec, own_rule=("work_addr",)):
    """spec: ((addr field, stride field, DType), ...): addresses, shape, strides, first NPU, fit
    (4N / 2N), dst each source in place or apart (issue 32.14) but those of `own_rule` (a work
    tensor, mul_8bit's sources that may not overlap dst at all: their own, stronger rules).
    Returns (shape, {addr field: (addr, stride, dtype)})."""
    addrs = {a: c.address(a, getattr(p, a)) for a, _, _ in spec}
    shape = c.shape(p.shape)
    out = {a: (addrs[a], c.stride(s, getattr(p, s)), dt) for a, s, dt in spec}
    c.first_npu(**addrs)
    for a, (addr, stride, dt) in out.items():
        c.fits(a, addr, shape, stride, pack=pack(c, dt))
    views = {a: c.view(a, addr, shape, stride, pack=pack(c, dt)) for a, (addr, stride, dt) in out.items()}
    c.in_place_or_apart(views["dst_addr"], *(v for a, v in views.items() if a != "dst_addr" and a not in own_rule))
    return shape, out


def _disjoint(c, name, other, ts, shape, why):
    """Tensor `name` must not overlap tensor `other` (byte ranges in the lane, 4N / 2N)."""
    def span(a):
        addr, stride, dt = ts[a]
        return c.span(addr, shape, stride, pack=pack(c, dt))
    c.disjoint(name, ts[name][0], span(name), other, span(other), why)


def _operands(c, p, valid, const=False, const_is_src0=False):
    """op_type among VALID[valid], the tensors of its types, C in its operand's range."""
    t = _enum(c, "op_type", p.op_type, VALID[valid], k.OP_TYPES)
    s0, s1, d = k.op_type_dtypes(t)
    if not const:
        tensors(c, p, ((*TT[0], d), (*TT[1], s0), (*TT[2], s1)))
        return
    src, cst = (s1, s0) if const_is_src0 else (s0, s1)
    tensors(c, p, ((*TC[0], d), (*TC[1], src)))
    c.integer("C", p.C, cst.min, cst.max)


def binary(c, p, valid, const=False, const_is_src0=False):
    """add, sub, mul and their _C / C_ forms: op_type, tensors, C, rshift."""
    _operands(c, p, valid, const, const_is_src0)
    c.integer("rshift", p.rshift, 0, RSHIFT_MAX)


def mac(c, p, const=False):
    """mac, mac_C: op_type by is_origin_dst_signed, tensors, C, lshift, rshift."""
    signed = c.flag("is_origin_dst_signed", p.is_origin_dst_signed)
    _operands(c, p, "mac_signed" if signed else "mac_unsigned", const)
    c.integer("lshift", p.lshift, 0, c.chip.limit("tiu", "opt_left_shift"))
    c.integer("rshift", p.rshift, 0, RSHIFT_MAX)


def maxmin(c, p, const=False):
    _operands(c, p, "maxmin", const)


def shift16(c, p, logical):
    """16bit_arithmetic_shift / logical_shift: dst, src (int16 / uint16) and the int16 amounts."""
    t = UINT16 if logical else INT16
    tensors(c, p, ((*TT[0], t), (*TT[1], t), (*TT[2], INT16)))


def shift16_const(c, p, logical):
    t = UINT16 if logical else INT16
    tensors(c, p, ((*TC[0], t), (*TC[1], t)))
    c.integer("C", p.C, -SHIFT16_MAX, SHIFT16_MAX)


def const_shift16(c, p, logical):
    t = UINT16 if logical else INT16
    tensors(c, p, ((*TC[0], t), (*TC[1], INT16)))
    c.integer("C", p.C, t.min, t.max)


def mul_8bit(c, p):
    """16bit_mul_8bit: mul_type, the four tensors, dst overlapping neither src0_low nor src1."""
    t = _enum(c, "mul_type", p.mul_type, MUL_TYPES, k.MUL_TYPES, " (S16_MUL_U8_TO_S16 is unsupported for BM1684)")
    s0, s1, d = k.mul_type_dtypes(t)
    high = INT8 if s0.signed else UINT8
    shape, ts = tensors(c, p, (("dst_addr", "dst_stride", d), ("src0_high_addr", "src0_high_stride", high),
                               ("src0_low_addr", "src0_low_stride", UINT8), ("src1_addr", "src1_stride", s1)),
                       own_rule=("src0_low_addr", "src1_addr"))
    why = "dst is written before src0_low and src1 are read"
    _disjoint(c, "dst_addr", "src0_low_addr", ts, shape, why)
    _disjoint(c, "dst_addr", "src1_addr", ts, shape, why)
    c.integer("rshift", p.rshift, 0, RSHIFT_MAX)


def split_high(c, p):
    tensors(c, p, ((*TC[0], INT8), (*TC[1], INT16)))


def split_low(c, p):
    shape, ts = tensors(c, p, ((*TC[0], INT8), (*TC[1], INT16), ("work_addr", "work_stride", INT16)))
    c.distinct("dst_addr", ts["dst_addr"][0], "work_addr", ts["work_addr"][0])
    _disjoint(c, "dst_addr", "work_addr", ts, shape, "dst is written from work")
    _disjoint(c, "work_addr", "src_addr", ts, shape, "work is written from src")      # issue 22.8
