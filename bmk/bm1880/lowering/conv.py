"""Lowering of mdsum, lut (seed 4.38-4.39), convolution and pooling (seed 4.41-4.45).

mdsum and lut are TENSOR_ARITH kinds with a mode bit; conv is tsk_typ CONV; depthwise and the
two poolings are tsk_typ DEPTHWISE_POOL (isa-facts/bm1880-notes.md, "Per-op encoding"; the
kinds of specs/bm1880/tiu.toml).
"""
from bmk.bm1880.lowering.common import TIU, shape as _shape, short, signed as _signed, strides as _strides, tiu


# -- reductions / lookups (seed 4.38-4.39) --------------------------------------------------------
def mdsum(chip, p):
    """Seed 4.38: res(1, C, 1, 1) = sum of a over N, H, W per channel.

    TENSOR_ARITH eu 0 with tens_mdsum, as the v2 encoder: opd0 = a with a's own n/c/h strides
    (aligned or not) and short_opd0_str aligned (its reset value); res0 is (1, C, 1, 1) in the
    short_res0_str weight layout (channel c at c // npu_num bytes past la). A res_low whose
    c-stride differs (an aligned one, C > npu_num) gets explicit strides instead, so
    every channel lands where the tensor says. A 16-bit result's high plane is res0_b_str =
    res_high.la - res_low.la bytes above it (the reset value, 16, when it sits there).
    """
    a, res = p.a, p.res_low
    f = tiu(chip, "mdsum", 1, opt_relu=0, opt_right_shift=0, **short(chip, res0="weight", opd0="aligned"),
            res0_addr=res.la, opd0_addr=a.la, res0_n=1, res0_c=a.layout.c, res0_h=1, res0_w=1,
            opt_res0_sign=_signed(res), opt_opd0_sign=_signed(a),
            opt_res0_int8=int(p.res_high is None), opt_shift_typ=_signed(res))
    _shape(f, "opd0", a.layout)
    _strides(f, "opd0", a.stride)
    f["opd0_w_str"] = 1
    if a.layout.c > chip.param("npu_num") and res.stride.c != 1:
        f.update(short(chip, res0="explicit"))
        _strides(f, "res0", res.stride)
        f["res0_w_str"] = 1
    if p.res_high is not None:
        f["res0_b_str"] = p.res_high.la - res.la
    return ((TIU, f),)


def lut(chip, p):
    """Seed 4.39: ofmap = table[slice of the datum][idx / 16][idx % 16].

    TENSOR_ARITH eu 0 with tens_lookup; all operands shape-derived (aligned), unsigned, 8-bit;
    opd1 is the table (1, npu_num, 16, 16).
    """
    f = tiu(chip, "lut", 2, opt_relu=0, opt_right_shift=0, opt_shift_typ=0,
            **short(chip, res0="aligned", opd0="aligned", opd1="aligned"),
            res0_addr=p.ofmap.la, opd0_addr=p.ifmap.la, opd1_addr=p.table.la,
            opt_res0_sign=0, opt_opd0_sign=0, opt_opd1_sign=0, opt_res0_int8=1, opt_opd0_int8=1, opt_opd1_int8=1)
    _shape(f, "res0", p.ofmap.layout)
    _shape(f, "opd0", p.ifmap.layout)
    _shape(f, "opd1", p.table.layout)
    return ((TIU, f),)


# -- shared window fields -------------------------------------------------------------------------
def _window(f, p, *, ins_h=0, ins_last_h=0, ins_w=0, ins_last_w=0, stride_h=1, stride_w=1):
    """Padding (from the record), striding and zero-insertion fields of a conv/pool window."""
    f.update(conv_opd0_up_pad=p.pad_top, conv_opd0_dn_pad=p.pad_bottom,
             conv_opd0_lf_pad=p.pad_left, conv_opd0_rt_pad=p.pad_right,
             conv_op_x_str=stride_w, conv_op_y_str=stride_h,
             conv_opd0_x_ins0=ins_w, conv_opd0_y_ins0=ins_h,
             conv_opd0_x_ins0_last=ins_last_w, conv_opd0_y_ins0_last=ins_last_h)
    return f


def _window_of(p):
    """The striding and insertion arguments of _window, read from a record that has them."""
    return dict(ins_h=p.ins_h, ins_last_h=p.ins_last_h, ins_w=p.ins_w, ins_last_w=p.ins_last_w,
                stride_h=p.stride_h, stride_w=p.stride_w)


def _bias(chip, f, bias, b_str, sign):
    """A 16-bit bias (2, C, 1, 1) as opd2: two planes b_str apart (short_opd2_str bias)."""
    f.update(tsk_opd_num=3, opd2_addr=bias.la, opd2_n=1, opd2_c=bias.layout.c, opd2_h=1, opd2_w=1,
             **short(chip, opd2="bias"), opd2_b_str=b_str, opt_opd2_int8=0)
    if sign is not None:
        f["opt_opd2_sign"] = sign


def _conv(chip, p, *, dilation_h=1, dilation_w=1, **window):
    ifmap, weight, ofmap, bias = p.ifmap, p.weight, p.ofmap, p.bias
    cin = ifmap.layout.c
    any_signed = ifmap.signed or weight.signed or (bias is not None and bias.signed)
    f = tiu(chip, "conv", 2, opt_relu=int(bool(p.relu_enable)), opt_right_shift=p.rshift_width,
            opt_shift_typ=int(any_signed or bias is None),
            opt_res0_sign=_signed(ofmap), opt_opd0_sign=_signed(ifmap), opt_opd1_sign=_signed(weight),
            **short(chip, res0="explicit", opd0="aligned", opd1="weight"),
            res0_addr=ofmap.la, opd0_addr=ifmap.la, opd1_addr=weight.la, opd0_ins_val=0,
            conv_opd1_x_ins0=dilation_w - 1, conv_opd1_y_ins0=dilation_h - 1,
            double_conv=int(ifmap.la % 2 == 0 and cin % 2 == 0 and cin >= 4 and weight.la % 2 == 0))
    _window(f, p, **window)
    _shape(f, "res0", ofmap.layout)
    _strides(f, "res0", ofmap.stride, with_w=True)
    _shape(f, "opd0", ifmap.layout)
    _shape(f, "opd1", weight.layout)      # (Cin, Cout, kh, kw)
    if bias is not None:
        _bias(chip, f, bias, bias.stride.n, _signed(bias))
    return f


# -- convolution (seed 4.41-4.43) -----------------------------------------------------------------
def conv(chip, p, winograd):
    """Seed 4.41: ofmap = conv(ifmap, weight) + bias, optional ReLU, >> rshift_width.

    tsk_typ CONV: opd0 ifmap (shape-derived strides), opd1 weight (Cin, Cout, kh, kw) in the
    weight layout, res0 ofmap with explicit strides; dilation d -> *_ins0 = d - 1.

    `winograd` (seed 4.42): a 3x3 convolution. BM1880v2 has no public winograd encoding, so
    it is lowered onto the CONV format with the same meaning: exactly tpu_conv with stride 1,
    no zero insertion, dilation 1 and the given pads, bias, relu_enable and rshift_width (the
    weight is (Cin, Cout, 3, 3), checked).
    """
    if winograd:
        return ((TIU, _conv(chip, p)),)
    return ((TIU, _conv(chip, p, dilation_h=p.dilation_h, dilation_w=p.dilation_w, **_window_of(p))),)


def depthwise(chip, p):
    """Seed 4.43: per-channel convolution with weight (1, C, kh, kw) and optional bias.

    tsk_typ DEPTHWISE_POOL eu 2: opd0/res0 explicit strides (res0_b_str = ofmap N * n-stride),
    opd1 weight shape, signed weights (opt_opd1_sign 1), no dilation fields; bias as conv with
    opd2_b_str = the bias n-stride (opt_opd2_sign keeps its default 1). The weight is read in
    the aligned layout (short_opd1_str aligned); an unaligned one (seed: "default strided", which
    tl_prealloc gives) is the same layout when C <= npu_num, and is given explicit strides
    (short_opd1_str explicit) otherwise.
    """
    ifmap, weight, ofmap = p.ifmap, p.weight, p.ofmap
    f = tiu(chip, "depthwise", 2, opt_relu=0, opt_right_shift=p.rshift_width, opt_shift_typ=1,
            opt_res0_sign=_signed(ofmap), opt_opd0_sign=_signed(ifmap), opt_opd1_sign=1,
            **short(chip, res0="explicit", opd0="explicit", opd1="aligned"),
            res0_addr=ofmap.la, opd0_addr=ifmap.la, opd1_addr=weight.la, opd0_ins_val=0,
            res0_b_str=ofmap.stride.n * ofmap.layout.n)
    _window(f, p, **_window_of(p))
    _shape(f, "res0", ofmap.layout)
    _strides(f, "res0", ofmap.stride, with_w=True)
    _shape(f, "opd0", ifmap.layout)
    _strides(f, "opd0", ifmap.stride, with_w=True)
    _shape(f, "opd1", weight.layout)
    if not weight.aligned and weight.layout.c > chip.param("npu_num"):
        # An unaligned weight (tl_prealloc) differs from the aligned layout only in its c-stride,
        # which matters only with several channels per lane: then its strides are written out.
        f.update(short(chip, opd1="explicit"))
        _strides(f, "opd1", weight.stride, with_w=True)
    if p.bias is not None:
        _bias(chip, f, p.bias, p.bias.stride.n, None)
    return ((TIU, f),)


# -- pooling (seed 4.44-4.45) ---------------------------------------------------------------------
def max_pool(chip, p):
    """Seed 4.44: kh x kw max pooling; padding reads as the smallest value (opd0_ins_val
    0x80 = -128 for a signed ifmap, 0 for unsigned)."""
    s = _signed(p.ifmap)
    f = tiu(chip, "max_pool", 1, opt_relu=0, opt_right_shift=0, opt_shift_typ=s,
            opt_res0_sign=s, opt_opd0_sign=s, res0_addr=p.ofmap.la, opd0_addr=p.ifmap.la,
            opd1_h=p.kh, opd1_w=p.kw, opd0_ins_val=0x80 if s else 0)
    _window(f, p, stride_h=p.stride_h, stride_w=p.stride_w)
    _shape(f, "res0", p.ofmap.layout)
    _shape(f, "opd0", p.ifmap.layout)
    return ((TIU, f),)


def avg_pool(chip, p):
    """Seed 4.45: sum over the kh x kw window * avg_pooling_const >> rshift_width.

    The constant is an unsigned opd1 constant (opt_opd1_const, opd1_addr); insertion as conv.
    """
    f = tiu(chip, "avg_pool", 2, opt_relu=0, opt_right_shift=p.rshift_width,
            opt_shift_typ=_signed(p.ifmap), opt_res0_sign=_signed(p.ofmap), opt_opd0_sign=_signed(p.ifmap),
            opt_opd1_const=1, opd1_addr=p.avg_pooling_const, opt_opd1_sign=0,
            res0_addr=p.ofmap.la, opd0_addr=p.ifmap.la, opd1_h=p.kh, opd1_w=p.kw, opd0_ins_val=0)
    _window(f, p, **_window_of(p))
    _shape(f, "res0", p.ofmap.layout)
    _shape(f, "opd0", p.ifmap.layout)
    return ((TIU, f),)
