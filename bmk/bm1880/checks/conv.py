"""Checks of mdsum, lut (seed 4.38-4.39), convolution and pooling (seed 4.41-4.45), with the
BM1880v2 layout rules (isa-facts/bm1880-notes.md, "v2 layout checks"). Window parameters fit
the TIU fields the lowering writes them to (a dilation d as d - 1)."""
from bmk.bm1880.tensor import FMT_I8

TIU = "tiu"
KERNEL_MAX = 255     # kh, kw are u8 in the seed structs
# window argument -> the TIU field it is written to (lowering/conv.py)
PADS = {"pad_top": "conv_opd0_up_pad", "pad_bottom": "conv_opd0_dn_pad", "pad_left": "conv_opd0_lf_pad",
        "pad_right": "conv_opd0_rt_pad"}
INSERTIONS = {"ins_h": "conv_opd0_y_ins0", "ins_last_h": "conv_opd0_y_ins0_last", "ins_w": "conv_opd0_x_ins0",
              "ins_last_w": "conv_opd0_x_ins0_last"}
STRIDES = {"stride_h": "conv_op_y_str", "stride_w": "conv_op_x_str"}
DILATIONS = {"dilation_h": "conv_opd1_y_ins0", "dilation_w": "conv_opd1_x_ins0"}


def _out_size(size, ins, ins_last, pad0, pad1, k, dilation, stride):
    """Output length along one axis: zero insertion, padding, dilated kernel, stride."""
    span = (size - 1) * (ins + 1) + 1 + ins_last + pad0 + pad1
    k_span = (k - 1) * dilation + 1
    return None if span < k_span else (span - k_span) // stride + 1


def _window(c, p, ins=True, strides=True, dilation=True):
    """The window arguments of the record (the ones the call has) in their fields' ranges;
    stride and dilation >= 1. Returns them, for _out_shape."""
    names = {**PADS, **(INSERTIONS if ins else {})}
    for name, field in names.items():
        c.in_field(name, getattr(p, name), TIU, field)
    if strides:
        for name, field in STRIDES.items():
            c.in_field(name, getattr(p, name), TIU, field, lo=1)
        names.update(STRIDES)
    if dilation:
        for name, field in DILATIONS.items():
            c.integer(name, getattr(p, name), 1, c.chip.limit(TIU, field) + 1)
        names.update(DILATIONS)
    return {name: getattr(p, name) for name in names}


def _out_shape(c, ofmap, ifmap, kh, kw, *, ins_h=0, ins_last_h=0, ins_w=0, ins_last_w=0, pad_top=0, pad_bottom=0,
               pad_left=0, pad_right=0, stride_h=1, stride_w=1, dilation_h=1, dilation_w=1):
    """ofmap H and W follow from ifmap and the window parameters."""
    s = ifmap.shape
    h = _out_size(s.h, ins_h, ins_last_h, pad_top, pad_bottom, kh, dilation_h, stride_h)
    w = _out_size(s.w, ins_w, ins_last_w, pad_left, pad_right, kw, dilation_w, stride_w)
    if h is None:
        c.fail("ifmap.shape", f"at least as high as the kernel ({kh} rows, after insertion, padding and dilation)",
               ifmap.shape)
    if w is None:
        c.fail("ifmap.shape", f"at least as wide as the kernel ({kw} columns, after insertion, padding and dilation)",
               ifmap.shape)
    if (ofmap.shape.h, ofmap.shape.w) != (h, w):
        c.fail("ofmap.shape", f"of H, W = ({h}, {w}) for this ifmap, kernel and window", ofmap.shape)


def _fmaps(c, p, *, same_c=True):
    """ofmap / ifmap: aligned tensors (seed), same N (and C); v2 start/stride rules."""
    c.tensor("ofmap", p.ofmap, aligned=True)
    c.tensor("ifmap", p.ifmap, aligned=True)
    if p.ofmap.shape.n != p.ifmap.shape.n:
        c.fail("ofmap.shape", f"of N = {p.ifmap.shape.n} (the N of ifmap)", p.ofmap.shape)
    if same_c and p.ofmap.shape.c != p.ifmap.shape.c:
        c.fail("ofmap.shape", f"of C = {p.ifmap.shape.c} (the C of ifmap)", p.ofmap.shape)


def _ofmap_n_stride(c, p):
    if p.ofmap.stride.n % c.eu_num:
        c.fail("ofmap.stride.n", f"a multiple of {c.eu_num}", p.ofmap.stride.n)


def _bias(c, bias, cout, call_note):
    """bias: NULL or the 16-bit (1, C, 1, 1) stored as an unaligned (2, C, 1, 1) tensor."""
    if bias is None:
        return
    c.tensor("bias", bias, aligned=False)
    if bias.shape.dims() != (2, cout, 1, 1):
        c.fail("bias.shape", f"(2, {cout}, 1, 1) {call_note}", bias.shape)


# -- reductions / lookups (seed 4.38-4.39) --------------------------------------------------------
def mdsum(c, p):
    """Seed 4.38."""
    a = c.tensor("a", p.a)      # aligned or not: the v2 encoder writes a's strides (seed 4.38 sets no rule)
    res = c.tensor("res_low", p.res_low)
    if res.shape.dims() != (1, a.shape.c, 1, 1):
        c.fail("res_low.shape", f"(1, {a.shape.c}, 1, 1) (one sum per channel of a)", res.shape)
    c.same_sign("res_low", res, "a", a)
    if p.res_high is not None:
        c.tensor("res_high", p.res_high)
        c.pair("res_high", p.res_high, "res_low", res, "res0_b_str")
        if p.res_high.la < res.la + res.lane_bytes:
            c.fail("res_high.la", f"at least res_low.la + {res.lane_bytes} = 0x{res.la + res.lane_bytes:x} (the "
                   "planes must not overlap)", p.res_high.la)


def lut(c, p):
    """Seed 4.39; ofmap is ifmap in place or apart from it, and apart from the table (issue 32.14)."""
    for name in ("ofmap", "ifmap", "table"):
        c.tensor(name, getattr(p, name), aligned=True, la_multiple=c.eu_num)
    c.same_shape("ofmap", p.ofmap, "ifmap", p.ifmap)
    if p.table.shape.dims() != (1, c.npu_num, 16, 16):
        c.fail("table.shape", f"(1, {c.npu_num}, 16, 16) (one 256-entry table per lmem slice)", p.table.shape)
    c.results_apart(p, ("ofmap",), ("ifmap", "table"))      # element-wise: in place or apart (issue 32.14)


# -- convolution (seed 4.41-4.43) -----------------------------------------------------------------
def conv(c, p, winograd):
    """tpu_conv (seed 4.41); `winograd` (4.42): a 3x3 kernel, pads only."""
    _fmaps(c, p, same_c=False)
    c.tensor("ifmap", p.ifmap, la_multiple=c.eu_num)
    c.tensor("ofmap", p.ofmap, la_multiple=c.eu_num)
    _ofmap_n_stride(c, p)
    w = c.tensor("weight", p.weight)
    cin, cout = p.ifmap.shape.c, p.ofmap.shape.c
    if (w.shape.n, w.shape.c) != (cin, cout):
        c.fail("weight.shape", f"(Cin, Cout, kh, kw) = ({cin}, {cout}, kh, kw) (C of ifmap, C of ofmap)",
               w.shape)
    _bias(c, p.bias, cout, "(16-bit, one value per ofmap channel)")
    c.flag("relu_enable", p.relu_enable)
    c.in_field("rshift_width", p.rshift_width, TIU, "opt_right_shift")
    if winograd and (w.shape.h, w.shape.w) != (3, 3):
        c.fail("weight.shape", f"({w.shape.n}, {w.shape.c}, 3, 3) (winograd takes 3x3 kernels only)", w.shape)
    window = _window(c, p, ins=not winograd, strides=not winograd, dilation=not winograd)
    _out_shape(c, p.ofmap, p.ifmap, w.shape.h, w.shape.w, **window)


def depthwise(c, p):
    """Seed 4.43."""
    _fmaps(c, p)
    _ofmap_n_stride(c, p)
    ch = p.ifmap.shape.c
    # Seed 4.43: "default strided", aligned (v2) or not (tl_prealloc); an unaligned weight's strides
    # always fit the 16-bit opd1 stride fields, as a lane is smaller than 2^16 bytes.
    w = c.tensor("weight", p.weight)
    if (w.shape.n, w.shape.c) != (1, ch):
        c.fail("weight.shape", f"(1, {ch}, kh, kw) (one kernel per channel of ifmap)", w.shape)
    # The v2 depthwise encoding reads weights and bias as signed (opt_opd1_sign/opd2_sign fixed 1).
    c.fmt("weight", w, FMT_I8, "bm1880 depthwise weights are signed")
    _bias(c, p.bias, ch, "(16-bit, one value per channel)")
    if p.bias is not None:
        c.fmt("bias", p.bias, FMT_I8, "bm1880 depthwise bias is signed")
    c.in_field("rshift_width", p.rshift_width, TIU, "opt_right_shift")
    _out_shape(c, p.ofmap, p.ifmap, w.shape.h, w.shape.w, **_window(c, p, dilation=False))


# -- pooling (seed 4.44-4.45) ---------------------------------------------------------------------
def pooling(c, p, avg):
    """max_pooling (seed 4.44), avg_pooling (`avg`, 4.45: zero insertion, a constant, a shift)."""
    _fmaps(c, p)
    c.integer("kh", p.kh, 1, KERNEL_MAX)
    c.integer("kw", p.kw, 1, KERNEL_MAX)
    _out_shape(c, p.ofmap, p.ifmap, p.kh, p.kw, **_window(c, p, ins=avg, dilation=False))
    if avg:
        c.integer("avg_pooling_const", p.avg_pooling_const, 0, 255)     # u8 in the seed struct
        c.in_field("rshift_width", p.rshift_width, TIU, "opt_right_shift")
    else:
        c.same_sign("ofmap", p.ofmap, "ifmap", p.ifmap)
