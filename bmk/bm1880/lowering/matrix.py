"""Lowering of the matrix functions (seed 4.46-4.47) to TIU FC descriptors (kind matrix_mac)."""
from bmk.bm1880.constants import CTRL_RA, CTRL_RELU
from bmk.bm1880.lowering.common import OPERANDS, TIU, short, tiu


def _fc(chip, res_addr, res_layout, left_addr, left_layout, right_addr, right_layout, *, res_sign, left_sign,
        right_sign, bias=None, bias_sign=None):
    """One FC descriptor: res0 (R, C', 1, W) = opd0 (R, C'_l, 1, W_l) x opd1 (K, C', 1, W)
    [+ opd2 bias]. Shapes are the lmem layouts; all strides shape-derived (aligned)."""
    k = right_layout.n
    f = tiu(chip, "matrix_mac", 2 if bias is None else 3, **short(chip, **dict.fromkeys(OPERANDS, "aligned")),
            res0_addr=res_addr, opd0_addr=left_addr, opd1_addr=right_addr,
            res0_n=left_layout.n, res0_c=res_layout.c, res0_h=1, res0_w=res_layout.w,
            opd0_n=left_layout.n, opd0_c=left_layout.c, opd0_h=1, opd0_w=left_layout.w,
            # opd1_w: the width of left's last column block (the vendor's encoding of K).
            opd1_n=k, opd1_c=right_layout.c, opd1_h=1, opd1_w=k - left_layout.w * (left_layout.c - 1),
            opt_res0_sign=int(res_sign), opt_opd0_sign=int(left_sign), opt_opd1_sign=int(right_sign),
            opt_shift_typ=int(left_sign or right_sign or bool(bias_sign)))
    if bias is not None:
        f.update(opd2_addr=bias.la, opd2_n=1, opd2_c=bias.layout.c, opd2_h=1, opd2_w=bias.layout.w,
                 opt_opd2_int8=0, opt_opd2_sign=int(bias_sign))
    return f


def matrix_mac(chip, p):
    """Seed 4.46: res = ((left x right + bias) [relu | + res << lshift_width]) >> rshift_width.

    FC: res0 n is left's R even when res has 2R rows (16-bit result or CTRL_RA);
    CTRL_RA -> opt_res_add, CTRL_RELU -> opt_relu; opt_res0_int8 = res_is_int8.
    """
    res, left, right, bias = p.res, p.left, p.right, p.bias
    f = _fc(chip, res.la, res.layout, left.la, left.layout, right.la, right.layout,
            res_sign=res.signed, left_sign=left.signed, right_sign=right.signed,
            bias=bias, bias_sign=None if bias is None else bias.signed)
    f.update(opt_res_add=int(bool(p.ctrls & CTRL_RA)), opt_relu=int(bool(p.ctrls & CTRL_RELU)),
             opt_left_shift=p.lshift_width, opt_right_shift=p.rshift_width,
             opt_res0_int8=int(bool(p.res_is_int8)))
    return ((TIU, f),)


def matrix_mac_2(chip, p):
    """Seed 4.47: res = left x right, 256 x 256 by 256 x 256, 8-bit result, no shift.

    BM1880v2 has no public encoding of this function, so it is lowered onto the FC format
    (the same encoding and simulator semantics as tpu_matrix_mac): one descriptor multiplying
    the 256 x 256 matrix at left.la by the 256 x 256 matrix at right.la into res.la, every
    operand in the FC matrix layout of a (256, 256) matrix, i.e. (256, 16, 1, 16) with
    shape-derived strides. For `right` (256, 16, 1, 16) that is exactly its tensor layout;
    `left` and `res` are the stated (1, 256, 1, 256) tensors and are read/written as that
    matrix layout (lanes 0-15, 4096 bytes from la), not in their own (1, 256, 1, 256) tensor
    layout, which FC cannot address (its rows are not per-lane). No bias, no ReLU, no RA,
    rshift 0, 8-bit result; signs from each tensor's fmt.
    """
    mat = right_layout = p.right.layout        # (256, 16, 1, 16): the (256, 256) FC matrix layout
    f = _fc(chip, p.res.la, mat, p.left.la, mat, p.right.la, right_layout,
            res_sign=p.res.signed, left_sign=p.left.signed, right_sign=p.right.signed)
    f.update(opt_res_add=0, opt_relu=0, opt_left_shift=0, opt_right_shift=0, opt_res0_int8=1)
    return ((TIU, f),)
