"""Lowering of the vector cross functions (seed 001: vc_*) to VC commands (short sVC; the long
VC carries the same fields), isa-facts/bm1684x-lowering.md section 5: vc.and / or / xor /
max / min / select_gt / select_lt / select_eq (the op table gives the kind).

Fields, as the public vendor firmware's `atomic_vector_correlation_gen_cmd` fills them (its
register positions match specs/bm1684x's sVC and VC):
  opd0 = src0 (A), opd1 = src1 (B), res0 = dst; A_c = ceil(src0_len / src0_len_per_channel),
  B_c = ceil(src1_len / src1_len_per_channel);
  res0_c = B_c, res0_w = src1_len_per_channel, opd0_c = A_c, opd0_w = src0_len_per_channel,
  opd1_w = A_w_last = src0_len - (A_c - 1) * src0_len_per_channel (the rows of dst are
  (opd0_c - 1) * opd0_w + opd1_w = src0_len);
  opd0/opd1 prec and sign = src dtype, res0_prec = dst dtype;
  opd2_addr = the select value (true_val's bits in dst_dtype) for the selects, else 0;
  opd2_n_str = 2 (the firmware's constant, "iter 3 for DIV"; no op here reads it).
dst(m, n) = src0(m) OP src1(n) in the matrix layout: row m is dst's n = m, column n is
channel n // src1_len_per_channel, position n % src1_len_per_channel (aligned layouts).

vc_greater_equal / less_equal / not_equal (`invert=True`): the opposite VC select, then the AR invert of
lowering.compare (dst = dst XOR true_val) over the matrix as the aligned
tensor (src0_len, B_c, 1, src1_len_per_channel). That tensor also covers the padding
columns of the last channel, which the VC command itself writes (res0_c * res0_w columns).
"""
from bmk.bm1684x.constants import bitwise as bitwise_dtype
from bmk.bm1684x.constants import prec_sign
from bmk.bm1684x.lowering.common import TIU, const_bits, short
from bmk.bm1684x.lowering.compare import invert as invert_matrix
from bmk.checks import as_int, fixed
from bmk.layout import ceil_div

VC_DIV_ITER = 2


def vc(chip, kind, p, dst_dtype, src_dtype, select_val=None):
    """One short VC command of instruction kind `kind`."""
    len0, len1, w0, w1 = (as_int(p.src0_len), as_int(p.src1_len), as_int(p.src0_len_per_channel),
                          as_int(p.src1_len_per_channel))
    a_c, b_c = ceil_div(len0, w0), ceil_div(len1, w1)
    src_prec, src_sign = prec_sign(int(fixed(src_dtype)))
    dst_prec, _ = prec_sign(int(fixed(dst_dtype)))
    f = short(chip, "VC", kind, opd0_sign=src_sign, opd1_sign=src_sign, opd2_n_str=VC_DIV_ITER,
              res0_prec=dst_prec, opd0_prec=src_prec, opd1_prec=src_prec,
              res0_addr=as_int(p.dst_addr), opd0_addr=as_int(p.src0_addr), opd1_addr=as_int(p.src1_addr),
              res0_c=b_c, res0_w=w1, opd0_c=a_c, opd0_w=w0, opd1_w=len0 - (a_c - 1) * w0)
    if select_val is not None:
        f["opd2_addr"] = const_bits(select_val, dst_dtype)
    return (TIU, f)


def binary(chip, p, kind, bitwise=False):
    """dst(m, n) = src0(m) OP src1(n); `bitwise` (and, or, xor) computes a float dtype on its
    bits (lowering/binary.py)."""
    dtype = bitwise_dtype(int(fixed(p.dtype))) if bitwise else p.dtype
    return (vc(chip, kind, p, dtype, dtype),)


def select(chip, p, kind, invert=False):
    """dst(m, n) = true_val if src0(m) OP src1(n) else 0; with invert, the opposite select and
    the AR invert over the matrix."""
    first = vc(chip, kind, p, p.dst_dtype, p.src_dtype, p.true_val)
    if not invert:
        return (first,)
    shape = (as_int(p.src0_len), ceil_div(as_int(p.src1_len), as_int(p.src1_len_per_channel)), 1,
             as_int(p.src1_len_per_channel))
    return (first, invert_matrix(chip, shape, p.dst_addr, None, p.dst_dtype, p.true_val))
