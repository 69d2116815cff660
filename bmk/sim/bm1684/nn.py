"""Semantics of the commands the FP32 Neural Network functions lower to (seed 003 "FP32 Neural
Network Functions"; fields: bmk/bm1684/lowering/neural_network.py).

Numerics: fp32 throughout, as numpy float32: every product is rounded to fp32 and then added
(no fused multiply-add), accumulations run in a fixed order, NaN and infinities propagate as
IEEE says and raise no warning. Only fp32 operands are modelled (other precisions:
SimulationError).

- conv: out(n, oc, y, x) = sum over ic (outer), then kernel row i, then column j, of
  in_padded(n, ic, y * sy + i * dy, x * sx + j * dx) * weight(ic, oc, i, j), starting from 0;
  then + bias(oc) (tsk_opd_num 3), then old out + that (opt_res_add). in_padded: opd0 with
  opd0_{y,x}_ins0 zeros inserted between its rows / columns, then the paddings (zeros).
  The weight is the 2IC tensor (ceil(IC/2), OC, kh, kw) of fp32 pairs (geometry.py): the
  strides of opd1 count 8-byte pairs.
- pord.depthwise: the same per channel, taps in (i, j) order, weight [1, C, kh, kw]; the
  kernel's own layout (short_opd1_str aligned, the vendor's value) is compact: bm1684_defs.py
  reads a pord kernel with is_aligned False, and the vendor's GDMA lays a 128-channel 3x3
  kernel with channel slot stride 9 (retinaface; free/compact strides are taken as given).
- pord.avgpooling: sum over (i, j) of in_padded * scale (scale = the fp32 constant opd1).
- pord.maxpooling: max over (i, j) of in_padded, the padding (and inserted) value being
  -3.4028234663852886e38 (0xff7fffff, the seed's implicit padding value).
  Pooling and depthwise take n and c from res0 and h, w from opd0 (the vendor's fields).
  Every window kind honours opt_res_add (out = old out + result) and needs a padded input
  large enough for res0_h x res0_w outputs (SimulationError otherwise).
- mm.mul / mm.mac: out(x, y) = sum over k = 0 .. K-1 (in order) of left(x, k) * right(k, y),
  + bias(y) (tsk_opd_num 3), + old out for mm.mac or opt_res_add. Matrices in the matrix layout
  (geometry.py): res0 (M, ceil(N/rw), 1, rw), opd0 (M, ceil(K/lw), 1, lw) with the columns of
  its last channel in opd0_h, opd1 (K, opd1_c, 1, opd1_w), opd2 (1, res0_c, 1, res0_w). Every
  column of res0's channels is computed (the last channel's columns past N from whatever the
  right matrix's padding holds), as the engine works channel by channel.
- md_linear.mac: res0 = opd0 * opd1 + opd2 (product rounded, then the sum), each of opd1, opd2
  a constant, a per-channel tensor (short_X_str offset: the [1, C, 1, 1] compact layout) or a
  tensor of res0's shape.
"""
import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk.errors import SimulationError
from bmk.sim.bm1684 import common as c

FP32 = dtypes.FP32
MAX_POOL_PAD = np.uint32(0xFF7FFFFF).view(np.float32)
# Bounds on the work of one command, so that no decoded command (free layouts may have zero
# strides and huge shapes) makes the simulator use unbounded memory or time: an array holds at
# most what the whole local memory holds in fp32, and a command does at most 2^31 multiply-adds
# in at most 2^20 passes (conv: IC * kh * kw; pooling: kh * kw; mm: K).
MAX_STEPS = 1 << 31
MAX_LOOPS = 1 << 20


def _bounded(m, steps=0, loops=0, **arrays):
    """SimulationError unless every named array shape, the multiply-adds and the loop passes
    (numpy operations over a whole output, one per kernel tap or k) are within the bounds."""
    if loops > MAX_LOOPS:
        raise SimulationError(f"the command must take at most {MAX_LOOPS} passes over its output to be "
                              f"simulated, not {loops}")
    for name, shape in arrays.items():
        count = int(np.prod(shape, dtype=np.int64))
        if count > m.lmem.size // c.WORD_BYTES:
            raise SimulationError(f"{name} must have at most {m.lmem.size // c.WORD_BYTES} elements to be simulated, not "
                                  f"{count} (shape {tuple(shape)})")
    if steps > MAX_STEPS:
        raise SimulationError(f"the command must take at most {MAX_STEPS} multiply-adds to be simulated, not {steps}")


def _fp32(m, f, *slots):
    for slot in slots:
        name = c.prec_name(m, f, slot)
        if name != "fp32":
            raise SimulationError(f"opt_{slot}_prec must be fp32 (only fp32 is modelled here), not {name}")


def _tensors(m, f, *slots):
    for slot in slots:
        if f[f"opt_{slot}_const"]:
            raise SimulationError(f"opt_{slot}_const must be 0 here ({slot} is a tensor), not 1")


def _layout(m, f, slot):
    return c.member(m, f"short_{slot}_str", f[f"short_{slot}_str"])


def _channel_operand(m, f, slot, channels):
    """A constant (numpy scalar) or a (1, C, 1, 1) per-channel array of operand `slot`."""
    if f[f"opt_{slot}_const"]:
        return c.const(f, slot, FP32)
    shape = (1, channels, 1, 1)
    if _layout(m, f, slot) == "offset":
        return c.view(m, f, slot, FP32, shape, stride=(1, 1, 1, 1)).read()
    return c.view(m, f, slot, FP32, shape).read()


def _operand(m, f, slot, shape):
    """Constant, per-channel (offset layout) or full tensor of `shape`."""
    if f[f"opt_{slot}_const"] or _layout(m, f, slot) == "offset":
        return _channel_operand(m, f, slot, shape[1])
    return c.read(m, f, slot, FP32, shape)


def _finish(m, f, result):
    """opt_res_add, then store into res0."""
    if f["opt_res_add"]:
        result = c.read(m, f, "res0", FP32, c.res0_shape(f)) + result
    c.write(m, f, "res0", FP32, result)


# -- windows -----------------------------------------------------------------------------------
def _padded(m, x, f, value):
    """opd0 with opd0_{y,x}_ins0 inserted elements between rows / columns and the paddings."""
    dy, dx = f["opd0_y_ins0"] + 1, f["opd0_x_ins0"] + 1
    up, dn, lf, rt = f["opd0_up_pad"], f["opd0_dn_pad"], f["opd0_lf_pad"], f["opd0_rt_pad"]
    n, ch, h, w = x.shape
    hh, ww = (h - 1) * dy + 1, (w - 1) * dx + 1
    _bounded(m, padded_input=(n, ch, up + hh + dn, lf + ww + rt))
    out = np.full((n, ch, up + hh + dn, lf + ww + rt), value, np.float32)
    out[:, :, up:up + hh:dy, lf:lf + ww:dx] = x
    return out


def _taps(f, padded, oh, ow):
    """[(i, j, window)]: the (N, C, oh, ow) inputs under kernel tap (i, j)."""
    kh, kw = f["opd1_h"], f["opd1_w"]
    sy, sx = f["res_op_y_str"], f["res_op_x_str"]
    dy, dx = f["opd1_y_ins0"] + 1, f["opd1_x_ins0"] + 1
    if min(sy, sx) < 1:
        raise SimulationError(f"res_op_y_str and res_op_x_str must be at least 1, not {sy}, {sx}")
    if min(kh, kw) < 1:
        raise SimulationError(f"opd1_h and opd1_w (the kernel) must be at least 1, not {kh}, {kw}")
    for side, k, d, s, out, size in (("h", kh, dy, sy, oh, padded.shape[2]), ("w", kw, dx, sx, ow, padded.shape[3])):
        need = (k - 1) * d + (out - 1) * s + 1
        if need > size:
            raise SimulationError(f"res0_{side} = {out} needs a padded input of at least {need} along {side} "
                                  f"(kernel {k}, dilation {d}, stride {s}), not {size}")
    return [(i, j, padded[:, :, i * dy:i * dy + (oh - 1) * sy + 1:sy, j * dx:j * dx + (ow - 1) * sx + 1:sx])
            for i in range(kh) for j in range(kw)]


def _input(m, f, n, ch):
    return c.read(m, f, "opd0", FP32, (n, ch, f["opd0_h"], f["opd0_w"]))


def _conv_weight(m, f, ic, oc, kh, kw):
    """The 2IC weight as an (IC, OC, kh, kw) float32 array."""
    shape = (-(-ic // 2), oc, kh, kw)
    addr = c.local_offset(m, f, "opd1")
    mode = _layout(m, f, "opd1")
    if mode == "free":
        stride = (f["opd1_n_str"], f["opd1_c_str"], f["opd1_h_str"], f["opd1_w_str"])
    elif mode == "compact":
        stride = chip_layout.compact_stride(shape, m.npu_num, addr // m.lmem.lane_size)
    else:
        raise SimulationError(f"short_opd1_str must be free or compact for the 2IC weight, not {mode!r}")
    pairs = m.lmem.tensor("opd1", addr, shape, stride, m.log, False, np.dtype(f"<u{2 * c.WORD_BYTES}")).read()
    words = np.ascontiguousarray(pairs).view("<f4").reshape(shape + (2,))
    return words.transpose(0, 4, 1, 2, 3).reshape((2 * shape[0],) + shape[1:])[:ic]


def conv(m, f):
    with_bias = f["tsk_opd_num"] == 3
    _fp32(m, f, "res0", "opd0", "opd1", *(("opd2",) if with_bias else ()))
    _tensors(m, f, "opd0", "opd1")
    n, oc, oh, ow = c.res0_shape(f)
    ic, kh, kw = f["opd0_c"], f["opd1_h"], f["opd1_w"]
    _bounded(m, ic * kh * kw * n * oc * oh * ow, ic * kh * kw, res0=(n, oc, oh, ow),
             opd0=(n, ic, f["opd0_h"], f["opd0_w"]), opd1=(ic, oc, kh, kw))
    x = _input(m, f, n, ic)
    weight = _conv_weight(m, f, ic, oc, kh, kw)
    taps = _taps(f, _padded(m, x, f, 0.0), oh, ow)
    with np.errstate(all="ignore"):
        acc = np.zeros((n, oc, oh, ow), np.float32)
        for ci in range(ic):
            for i, j, win in taps:
                acc += win[:, ci:ci + 1] * weight[ci, :, i, j].reshape(1, oc, 1, 1)
        if with_bias:
            acc = acc + _channel_operand(m, f, "opd2", oc)
        _finish(m, f, acc)


def depthwise(m, f):
    with_bias = f["tsk_opd_num"] == 3
    _fp32(m, f, "res0", "opd0", "opd1", *(("opd2",) if with_bias else ()))
    _tensors(m, f, "opd0")
    n, ch, oh, ow = c.res0_shape(f)
    kh, kw = f["opd1_h"], f["opd1_w"]
    _pord_bounds(m, f, n, ch, oh, ow)
    weight = _pord_kernel(m, f, ch, kh, kw)
    taps = _taps(f, _padded(m, _input(m, f, n, ch), f, 0.0), oh, ow)
    with np.errstate(all="ignore"):
        acc = np.zeros((n, ch, oh, ow), np.float32)
        for i, j, win in taps:
            acc += win * weight[:, :, i:i + 1, j:j + 1]
        if with_bias:
            acc = acc + _channel_operand(m, f, "opd2", ch)
        _finish(m, f, acc)


def _pord_kernel(m, f, ch, kh, kw):
    """The depthwise kernel (1, C, kh, kw): compact when short_opd1_str is aligned (the engine's
    own layout for a pord kernel: bm1684_defs.py reads it with is_aligned False), else as given."""
    shape = (1, ch, kh, kw)
    stride = None
    if _layout(m, f, "opd1") == "aligned":
        stride = chip_layout.compact_stride(shape, m.npu_num, c.local_offset(m, f, "opd1") // m.lmem.lane_size)
    return c.view(m, f, "opd1", FP32, shape, stride=stride).read()


def _pord_bounds(m, f, n, ch, oh, ow):
    taps = f["opd1_h"] * f["opd1_w"]
    _bounded(m, taps * n * ch * oh * ow, taps, res0=(n, ch, oh, ow),
             opd0=(n, ch, f["opd0_h"], f["opd0_w"]), opd1=(1, ch, f["opd1_h"], f["opd1_w"]))


def avgpooling(m, f):
    _fp32(m, f, "res0", "opd0", "opd1")
    _tensors(m, f, "opd0")
    n, ch, oh, ow = c.res0_shape(f)
    _pord_bounds(m, f, n, ch, oh, ow)
    scale = c.const(f, "opd1", FP32)
    taps = _taps(f, _padded(m, _input(m, f, n, ch), f, 0.0), oh, ow)
    with np.errstate(all="ignore"):
        acc = np.zeros((n, ch, oh, ow), np.float32)
        for _, _, win in taps:
            acc += win * scale
        _finish(m, f, acc)


def maxpooling(m, f):
    _fp32(m, f, "res0", "opd0")
    _tensors(m, f, "opd0")
    n, ch, oh, ow = c.res0_shape(f)
    _pord_bounds(m, f, n, ch, oh, ow)
    taps = _taps(f, _padded(m, _input(m, f, n, ch), f, MAX_POOL_PAD), oh, ow)
    with np.errstate(all="ignore"):
        acc = taps[0][2].copy()
        for _, _, win in taps[1:]:
            np.maximum(acc, win, out=acc)
        _finish(m, f, acc)


# -- matrices ----------------------------------------------------------------------------------
def mm(m, f, accumulate):
    with_bias = f["tsk_opd_num"] == 3
    _fp32(m, f, "res0", "opd0", "opd1", *(("opd2",) if with_bias else ()))
    _tensors(m, f, "opd0", "opd1", *(("opd2",) if with_bias else ()))
    rows, cr, _, rw = c.res0_shape(f)
    cl, lw, last = f["opd0_c"], f["opd0_w"], f["opd0_h"]
    if not 1 <= last <= lw:
        raise SimulationError(f"opd0_h (the columns of the left's last channel) must be in [1, {lw}], not {last}")
    if (f["opd1_c"], f["opd1_w"]) != (cr, rw):
        raise SimulationError(f"opd1_c, opd1_w must equal res0_c, res0_w ({cr}, {rw}), not "
                              f"({f['opd1_c']}, {f['opd1_w']})")
    k = (cl - 1) * lw + last
    _bounded(m, k * rows * cr * rw, k, res0=(rows, cr, 1, rw), opd0=(rows, cl, 1, lw), opd1=(k, cr, 1, rw))
    left = c.read(m, f, "opd0", FP32, (rows, cl, 1, lw)).reshape(rows, cl * lw)[:, :k]
    right = c.read(m, f, "opd1", FP32, (k, cr, 1, rw)).reshape(k, cr * rw)
    with np.errstate(all="ignore"):
        acc = np.zeros((rows, cr * rw), np.float32)
        for kk in range(k):
            acc += left[:, kk:kk + 1] * right[kk:kk + 1]
        if with_bias:
            acc = acc + c.read(m, f, "opd2", FP32, (1, cr, 1, rw)).reshape(1, cr * rw)
        acc = acc.reshape(rows, cr, 1, rw)
        if accumulate:
            acc = c.read(m, f, "res0", FP32, (rows, cr, 1, rw)) + acc
            f = {**f, "opt_res_add": 0}
        _finish(m, f, acc)


def mdlinear_mac(m, f):
    _fp32(m, f, "res0", "opd0", "opd1", "opd2")
    shape = c.res0_shape(f)
    _bounded(m, res0=shape)
    x = c.read(m, f, "opd0", FP32, shape)
    with np.errstate(all="ignore"):
        result = x * _operand(m, f, "opd1", shape) + _operand(m, f, "opd2", shape)
    c.write(m, f, "res0", FP32, result)


KINDS = {
    ("tiu", "conv"): conv,
    ("tiu", "pord.depthwise"): depthwise,
    ("tiu", "pord.avgpooling"): avgpooling,
    ("tiu", "pord.maxpooling"): maxpooling,
    ("tiu", "mm.mul"): lambda m, f: mm(m, f, False),
    ("tiu", "mm.mac"): lambda m, f: mm(m, f, True),
    ("tiu", "md_linear.mac"): mdlinear_mac,
}
