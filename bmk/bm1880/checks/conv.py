"""Checks of mdsum, lut (seed 4.38-4.39), convolution and pooling (seed 4.41-4.45), with the
BM1880v2 layout rules (isa-facts/bm1880-notes.md, "v2 layout checks")."""
from bmk.bm1880.checks.common import SHIFT_MAX, Check
from bmk.tensor import FMT_I8

__all__ = ["tpu_mdsum", "tpu_lut", "tpu_conv", "tpu_winograd", "tpu_depthwise", "tpu_max_pooling", "tpu_avg_pooling"]

FIELD4 = 15          # pads, strides, insertions and dilation-1 are 4-bit fields
KERNEL_MAX = 255     # kh, kw are u8 in the seed structs


def _out_size(size, ins, ins_last, pad0, pad1, k, dilation, stride):
    """Output length along one axis: zero insertion, padding, dilated kernel, stride."""
    span = (size - 1) * (ins + 1) + 1 + ins_last + pad0 + pad1
    k_span = (k - 1) * dilation + 1
    return None if span < k_span else (span - k_span) // stride + 1


def _window(c, p, *, ins=True, dilation=True):
    """u8 window fields of the record: ranges of the 4-bit v2 fields, stride/dilation >= 1."""
    names = ["pad_top", "pad_bottom", "pad_left", "pad_right"]
    if ins:
        names += ["ins_h", "ins_last_h", "ins_w", "ins_last_w"]
    for name in names:
        c.int_range(name, getattr(p, name), 0, FIELD4)
    for name in ("stride_h", "stride_w"):
        c.int_range(name, getattr(p, name), 1, FIELD4)
    if dilation:
        for name in ("dilation_h", "dilation_w"):
            c.int_range(name, getattr(p, name), 1, FIELD4 + 1)


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


def _bias(c, bias, cout, call_note):
    """bias: NULL or the 16-bit (1, C, 1, 1) stored as an unaligned (2, C, 1, 1) tensor."""
    if bias is None:
        return
    c.tensor("bias", bias, aligned=False)
    if bias.shape.dims() != (2, cout, 1, 1):
        c.fail("bias.shape", f"(2, {cout}, 1, 1) {call_note}", bias.shape)


# -- reductions / lookups (seed 4.38-4.39) --------------------------------------------------------
def tpu_mdsum(ctx, p):
    c = Check(ctx, "tpu_mdsum")
    a = c.tensor("a", p.a)      # aligned or not: the v2 encoder writes a's strides (seed 4.38 sets no rule)
    res = c.tensor("res_low", p.res_low)
    if res.shape.dims() != (1, a.shape.c, 1, 1):
        c.fail("res_low.shape", f"(1, {a.shape.c}, 1, 1) (one sum per channel of a)", res.shape)
    c.same_sign("res_low", res, "a", a)
    if p.res_high is not None:
        c.tensor("res_high", p.res_high)
        c.pair("res_high", p.res_high, "res_low", res)
        if p.res_high.la < res.la + res.lane_bytes:
            c.fail("res_high.la", f"at least res_low.la + {res.lane_bytes} = 0x{res.la + res.lane_bytes:x} (the "
                   "planes must not overlap)", p.res_high.la)


def tpu_lut(ctx, p):
    c = Check(ctx, "tpu_lut")
    for name in ("ofmap", "ifmap", "table"):
        c.tensor(name, getattr(p, name), aligned=True, la_multiple=ctx.eu_num)
    c.same_shape("ofmap", p.ofmap, "ifmap", p.ifmap)
    slices = ctx.npu_num
    if p.table.shape.dims() != (1, slices, 16, 16):
        c.fail("table.shape", f"(1, {slices}, 16, 16) (one 256-entry table per lmem slice)", p.table.shape)


# -- convolution (seed 4.41-4.43) -----------------------------------------------------------------
def _conv_common(c, p):
    _fmaps(c, p, same_c=False)
    c.tensor("ifmap", p.ifmap, la_multiple=c.ctx.eu_num)
    c.tensor("ofmap", p.ofmap, la_multiple=c.ctx.eu_num)
    if p.ofmap.stride.n % c.ctx.eu_num:
        c.fail("ofmap.stride.n", f"a multiple of {c.ctx.eu_num}", p.ofmap.stride.n)
    w = c.tensor("weight", p.weight)
    cin, cout = p.ifmap.shape.c, p.ofmap.shape.c
    if (w.shape.n, w.shape.c) != (cin, cout):
        c.fail("weight.shape", f"(Cin, Cout, kh, kw) = ({cin}, {cout}, kh, kw) (C of ifmap, C of ofmap)",
               w.shape)
    _bias(c, p.bias, cout, "(16-bit, one value per ofmap channel)")
    c.flag("relu_enable", p.relu_enable)
    c.int_range("rshift_width", p.rshift_width, 0, SHIFT_MAX)
    return w


def tpu_conv(ctx, p):
    c = Check(ctx, "tpu_conv")
    w = _conv_common(c, p)
    _window(c, p)
    _out_shape(c, p.ofmap, p.ifmap, w.shape.h, w.shape.w,
               **{k: getattr(p, k) for k in ("ins_h", "ins_last_h", "ins_w", "ins_last_w", "pad_top", "pad_bottom",
                                             "pad_left", "pad_right", "stride_h", "stride_w",
                                             "dilation_h", "dilation_w")})


def tpu_winograd(ctx, p):
    c = Check(ctx, "tpu_winograd")
    w = _conv_common(c, p)
    if (w.shape.h, w.shape.w) != (3, 3):
        c.fail("weight.shape", f"({w.shape.n}, {w.shape.c}, 3, 3) (winograd takes 3x3 kernels only)", w.shape)
    for name in ("pad_top", "pad_bottom", "pad_left", "pad_right"):
        c.int_range(name, getattr(p, name), 0, FIELD4)
    _out_shape(c, p.ofmap, p.ifmap, 3, 3,
               **{k: getattr(p, k) for k in ("pad_top", "pad_bottom", "pad_left", "pad_right")})


def tpu_depthwise(ctx, p):
    c = Check(ctx, "tpu_depthwise")
    _fmaps(c, p)
    if p.ofmap.stride.n % ctx.eu_num:
        c.fail("ofmap.stride.n", f"a multiple of {ctx.eu_num}", p.ofmap.stride.n)
    ch = p.ifmap.shape.c
    # Seed 4.43: "default strided", aligned (v2) or not (tl_prealloc); an unaligned weight's strides
    # always fit the 16-bit opd1 stride fields, as a lane is smaller than 2^16 bytes.
    w = c.tensor("weight", p.weight)
    if (w.shape.n, w.shape.c) != (1, ch):
        c.fail("weight.shape", f"(1, {ch}, kh, kw) (one kernel per channel of ifmap)", w.shape)
    # The v2 depthwise encoding reads weights and bias as signed (opt_opd1_sign/opd2_sign fixed 1).
    c.fmt("weight", w, FMT_I8, "FMT_I8 (bm1880 depthwise weights are signed)")
    _bias(c, p.bias, ch, "(16-bit, one value per channel)")
    if p.bias is not None:
        c.fmt("bias", p.bias, FMT_I8, "FMT_I8 (bm1880 depthwise bias is signed)")
    c.int_range("rshift_width", p.rshift_width, 0, SHIFT_MAX)
    _window(c, p, dilation=False)
    _out_shape(c, p.ofmap, p.ifmap, w.shape.h, w.shape.w,
               **{k: getattr(p, k) for k in ("ins_h", "ins_last_h", "ins_w", "ins_last_w", "pad_top", "pad_bottom",
                                             "pad_left", "pad_right", "stride_h", "stride_w")})


# -- pooling (seed 4.44-4.45) ---------------------------------------------------------------------
def _pool(c, p, *, ins):
    _fmaps(c, p)
    c.int_range("kh", p.kh, 1, KERNEL_MAX)
    c.int_range("kw", p.kw, 1, KERNEL_MAX)
    _window(c, p, ins=ins, dilation=False)
    names = ["pad_top", "pad_bottom", "pad_left", "pad_right", "stride_h", "stride_w"]
    if ins:
        names += ["ins_h", "ins_last_h", "ins_w", "ins_last_w"]
    _out_shape(c, p.ofmap, p.ifmap, p.kh, p.kw, **{k: getattr(p, k) for k in names})


def tpu_max_pooling(ctx, p):
    c = Check(ctx, "tpu_max_pooling")
    _pool(c, p, ins=False)
    c.same_sign("ofmap", p.ofmap, "ifmap", p.ifmap)


def tpu_avg_pooling(ctx, p):
    c = Check(ctx, "tpu_avg_pooling")
    _pool(c, p, ins=True)
    c.int_range("avg_pooling_const", p.avg_pooling_const, 0, 255)
    c.int_range("rshift_width", p.rshift_width, 0, SHIFT_MAX)
