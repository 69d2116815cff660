"""`interp`: a CV18xx resize the compiler left to the host, in numpy.

Facts: cviruntime src/common/cpu_function/interpolation.cpp (InterpolationFunc::setup, run,
interp_nearest_inner, upsampleBilinear, coordinate_transform, interp_asymmetric, value, my_interp)
and tpu-mlir lib/Conversion/TopToTpu/CV18xx/Interp.cpp (LoweringInterp: the parameters it writes:
width, height = the output's last two dims, pad_beg = pad_end = shrink_factor = zoom_factor = 0,
coordinate_transformation_mode "half_pixel" / "pytorch_half_pixel" / "align_corners" for a linear
resize on fp32 tensors, "nearest" / "nearest_half_pixel" for a nearest one on int8 or bf16).

Input and output are NCHW (the runtime's Neuron shape). Output size: `height` x `width` when both
are set, else the output tensor's H x W; under "align_corners" the caffe rules on the padded
input (eff = in + pad_beg + pad_end): shrink only (eff - 1) / shrink + 1, zoom only
eff + (eff - 1) * (zoom - 1), both: shrink then zoom, else height x width.
Modes, all arithmetic in fp32 as the C++ (float) does it, terms summed in the C++'s order:
- half_pixel / pytorch_half_pixel: bilinear, src = (dst + 0.5) / scale - 0.5 with scale =
  out / in (fp32; pytorch: 0 when the output length is 1; a scale of exactly 1 maps dst to
  itself), clamped to [0, in - 1]; neighbours floor and floor + 1 clipped to the edge, weights
  the distances to the other neighbour (0.5 each when both neighbours are the edge).
  The C++ writes int64(in * scale) (an fp32 product) rows and columns: when that differs from the
  output size the runtime's rows would be laid out differently, and bmk refuses.
- nearest*: a copy of element floor(dst * in / out) ("nearest", and any mode starting so), or
  ceil((dst + 0.5) * in / out - 1) computed in double ("nearest_half_pixel"); types int8, bf16,
  and 4-byte ones copied as float (the C++ switch's default).
- asymmetric: src = min(dst * in / out, in - 1), then bilinear between floor and ceil (exact
  hits take the one value, or interpolate along the other axis only).
- align_corners (and any other mode string the C++ sends to my_interp: refused here, as its
  size would be unset): caffe's interp: src = dst * (in_eff - 1) / (out - 1) (0 when out is 1),
  h1 = int(src), the next row only when h1 < in_eff - 1, lambda = src - h1; equal sizes copy.
  The C++ asserts pad_beg <= 0 and pad_end <= 0 (a crop); bmk refuses positive pads likewise.
The runtime may be compiled with fused multiply-adds; bmk rounds every product and sum to fp32.
"""
import math

import attrs
import numpy as np

from bmk import dtypes
from bmk.errors import ModelError
from bmk.models.cpu.params import get

LINEAR = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")
F = np.float32


@attrs.frozen
class Config:
    mode: str
    n: int
    c: int
    ih: int
    iw: int
    oh: int
    ow: int
    pad_beg: int
    pad_end: int
    dtype: object


def _out_size(function, params, out, path, where):
    """(oh, ow) as InterpolationFunc::setup computes them."""
    shrink, zoom, pad_beg, pad_end, height, width, mode, ih, iw = params
    if mode != "align_corners":
        return (height, width) if height and width else tuple(out.shape[2:4])
    eh, ew = ih + pad_beg + pad_end, iw + pad_beg + pad_end
    if shrink and not zoom:
        return (eh - 1) // shrink + 1, (ew - 1) // shrink + 1
    if zoom and not shrink:
        return eh + (eh - 1) * (zoom - 1), ew + (ew - 1) * (zoom - 1)
    if height and width:
        return height, width
    if zoom and shrink:
        h, w = (eh - 1) // shrink + 1, (ew - 1) // shrink + 1
        return h + (h - 1) * (zoom - 1), w + (w - 1) * (zoom - 1)
    raise ModelError(f"{where}: interp 'align_corners' needs shrink_factor, zoom_factor or height and width; all "
                     "are 0 (the runtime's output size would be unset)", path, function.args_offset)


def setup(function, inputs, outputs, path, where):
    """The checks of InterpolationFunc::setup, on the routine's tensors -> Config."""
    if len(inputs) != 1 or len(outputs) != 1:
        raise ModelError(f"{where}: interp takes 1 input and 1 output, not {len(inputs)} and {len(outputs)}", path)
    (x,), (y,) = inputs, outputs
    ints = [get(function, k, "int", path, where) for k in ("shrink_factor", "zoom_factor", "pad_beg", "pad_end",
                                                           "height", "width")]
    mode = get(function, "coordinate_transformation_mode", "str", path, where)
    if mode not in LINEAR and not mode.startswith("nearest"):
        raise ModelError(f"{where}: interp coordinate_transformation_mode must be one of {', '.join(LINEAR)} or "
                         f"start with 'nearest', not {mode!r}", path, function.args_offset)
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise ModelError(f"{where}: interp tensors must be NCHW, not {tuple(x.shape)} -> {tuple(y.shape)}", path)
    shrink, zoom, pad_beg, pad_end = ints[:4]
    if min(shrink, zoom) < 0:
        raise ModelError(f"{where}: interp shrink_factor and zoom_factor must be >= 0, not {shrink} and {zoom}",
                         path, function.args_offset)
    if mode == "align_corners" and (pad_beg > 0 or pad_end > 0):
        raise ModelError(f"{where}: interp 'align_corners' pads must be <= 0 (my_interp asserts a crop), not "
                         f"pad_beg {pad_beg}, pad_end {pad_end}", path, function.args_offset)
    n, c, ih, iw = x.shape
    oh, ow = _out_size(function, ints + [mode, ih, iw], y, path, where)
    if min(oh, ow) < 1 or min(ih + pad_beg + pad_end, iw + pad_beg + pad_end) < 1:
        raise ModelError(f"{where}: interp sizes must be positive: input {ih}x{iw} with pads {pad_beg}, {pad_end} "
                         f"-> {oh}x{ow}", path, function.args_offset)
    if math.prod(y.shape) != n * c * oh * ow:
        raise ModelError(f"{where}: interp output {y.name!r} {tuple(y.shape)} must hold {n}x{c}x{oh}x{ow} elements",
                         path)
    if mode.startswith("nearest"):
        if x.type != y.type or not (x.type in (dtypes.INT8, dtypes.BF16) or x.type.numpy.itemsize == 4):
            raise ModelError(f"{where}: interp {mode!r} copies int8, bf16 or 4-byte elements between tensors of "
                             f"one type, not {x.type.name} -> {y.type.name}", path)
    elif x.type != dtypes.FP32 or y.type != dtypes.FP32:
        raise ModelError(f"{where}: interp {mode!r} reads and writes fp32, not {x.type.name} -> {y.type.name}", path)
    if mode in ("half_pixel", "pytorch_half_pixel"):
        # upsampleBilinear writes int64(in * (out / in)) rows and columns, fp32 products
        got = (int(F(ih) * (F(oh) / F(ih))), int(F(iw) * (F(ow) / F(iw))))
        if got != (oh, ow):
            raise ModelError(f"{where}: interp {mode!r} {ih}x{iw} -> {oh}x{ow}: the runtime computes "
                             f"{got[0]}x{got[1]} (in * scale in fp32), its output rows would not match", path)
    return Config(mode, n, c, ih, iw, oh, ow, pad_beg, pad_end, x.type.numpy)


def _bilinear_axis(size_in, size_out, scale, pytorch):
    """upsampleBilinear along one axis: (low, high, weight of low, weight of high), fp32."""
    dst = np.arange(size_out, dtype=F)
    if scale == 1:
        src = dst
    else:
        src = (dst + F(0.5)) / F(scale) - F(0.5)
        if pytorch and not size_out > 1:
            src = np.zeros_like(dst)
    src = np.maximum(F(0), np.minimum(src, F(size_in - 1)))
    lo = np.minimum(src.astype(np.int64), size_in - 1)
    hi = np.minimum(lo + 1, size_in - 1)
    w_hi = np.abs(src - lo.astype(F))                   # dy1: the weight of the high neighbour
    w_lo = np.abs(src - hi.astype(F))                   # dy2: the weight of the low one
    same = lo == hi
    w_hi[same] = F(0.5)
    w_lo[same] = F(0.5)
    return lo, hi, w_lo.astype(F), w_hi.astype(F)


def _half_pixel(x, c, pytorch):
    ylo, yhi, dy2, dy1 = _bilinear_axis(c.ih, c.oh, F(c.oh) / F(c.ih), pytorch)
    xlo, xhi, dx2, dx1 = _bilinear_axis(c.iw, c.ow, F(c.ow) / F(c.iw), pytorch)
    X11, X21 = x[:, ylo][:, :, xlo], x[:, ylo][:, :, xhi]
    X12, X22 = x[:, yhi][:, :, xlo], x[:, yhi][:, :, xhi]
    dy1, dy2, dx1, dx2 = dy1[:, None], dy2[:, None], dx1[None, :], dx2[None, :]
    return (dx2 * dy2) * X11 + (dx1 * dy2) * X21 + (dx2 * dy1) * X12 + (dx1 * dy1) * X22


def _nearest(x, c):
    scale_h, scale_w = F(c.ih) / F(c.oh), F(c.iw) / F(c.ow)
    if c.mode == "nearest_half_pixel":          # (h + 0.5) is a double: the product and ceil in double
        hs = np.ceil((np.arange(c.oh) + 0.5) * np.float64(scale_h) - 1.0).astype(np.int64)
        ws = np.ceil((np.arange(c.ow) + 0.5) * np.float64(scale_w) - 1.0).astype(np.int64)
    else:                                       # int * float: an fp32 product, truncated
        hs = (np.arange(c.oh, dtype=F) * scale_h).astype(np.int64)
        ws = (np.arange(c.ow, dtype=F) * scale_w).astype(np.int64)
    return x[:, hs][:, :, ws]


def _asymmetric(x, c):
    fh = np.minimum(np.arange(c.oh, dtype=F) * (F(c.ih) / F(c.oh)), F(c.ih - 1))
    fw = np.minimum(np.arange(c.ow, dtype=F) * (F(c.iw) / F(c.ow)), F(c.iw - 1))
    h0, h1 = np.floor(fh).astype(np.int64), np.ceil(fh).astype(np.int64)
    w0, w1 = np.floor(fw).astype(np.int64), np.ceil(fw).astype(np.int64)
    H, W = fh[:, None], fw[None, :]
    v00, v01 = x[:, h0][:, :, w0], x[:, h0][:, :, w1]
    v10, v11 = x[:, h1][:, :, w0], x[:, h1][:, :, w1]
    dw1, dw0 = w1.astype(F)[None, :] - W, W - w0.astype(F)[None, :]       # (w1 - fw), (fw - w0)
    dh1, dh0 = h1.astype(F)[:, None] - H, H - h0.astype(F)[:, None]
    full = v00 * (dw1 * dh1) + v01 * (dw0 * dh1) + v10 * (dw1 * dh0) + v11 * (dw0 * dh0)
    along_w = v00 * dw1 + v01 * dw0                 # h0 == fh
    along_h = v00 * dh1 + v10 * dh0                 # w0 == fw
    eh, ew = (h0.astype(F) == fh)[:, None], (w0.astype(F) == fw)[None, :]
    return np.where(eh & ew, v00, np.where(eh, along_w, np.where(ew, along_h, full)))


def _align_corners(x, c):
    top = -c.pad_beg                                # my_interp's x1 = y1 = -pad_beg
    h1n, w1n = c.ih + c.pad_beg + c.pad_end, c.iw + c.pad_beg + c.pad_end
    x = x[:, top:top + h1n, top:top + w1n]
    if (h1n, w1n) == (c.oh, c.ow):
        return x.copy()
    rh = F(h1n - 1) / F(c.oh - 1) if c.oh > 1 else F(0)
    rw = F(w1n - 1) / F(c.ow - 1) if c.ow > 1 else F(0)
    hr, wr = F(rh) * np.arange(c.oh, dtype=F), F(rw) * np.arange(c.ow, dtype=F)
    h1, w1 = hr.astype(np.int64), wr.astype(np.int64)
    hp, wp = (h1 < h1n - 1).astype(np.int64), (w1 < w1n - 1).astype(np.int64)
    l1h, l1w = hr - h1.astype(F), wr - w1.astype(F)
    l0h, l0w = F(1) - l1h, F(1) - l1w
    l1h, l0h, l1w, l0w = l1h[:, None], l0h[:, None], l1w[None, :], l0w[None, :]
    p00, p01 = x[:, h1][:, :, w1], x[:, h1][:, :, w1 + wp]
    p10, p11 = x[:, h1 + hp][:, :, w1], x[:, h1 + hp][:, :, w1 + wp]
    return l0h * (l0w * p00 + l1w * p01) + l1h * (l0w * p10 + l1w * p11)


def run(config, arrays):
    """[input (N, C, H, W)] -> [output (N, C, oh, ow)] in the input's type (fp32 for linear modes)."""
    c = config
    x = np.ascontiguousarray(arrays[0]).reshape(c.n * c.c, c.ih, c.iw)
    if c.mode.startswith("nearest"):
        if c.dtype.itemsize == 4 and c.dtype != np.float32:
            x = x.view(np.float32)                  # the C++ default case copies 4-byte elements as float
        out = _nearest(x, c).view(c.dtype)
    else:
        x = x.astype(F, copy=False)
        with np.errstate(all="ignore"):             # inf/NaN inputs propagate as the C++ floats do
            if c.mode in ("half_pixel", "pytorch_half_pixel"):
                out = _half_pixel(x, c, c.mode == "pytorch_half_pixel")
            elif c.mode == "asymmetric":
                out = _asymmetric(x, c)
            else:
                out = _align_corners(x, c)
        out = out.astype(F, copy=False)
    return [out.reshape(c.n, c.c, c.oh, c.ow)]
