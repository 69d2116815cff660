"""Semantics of the neural-network TIU classes: conv_op (conv), pord_op (pord.depthwise,
.avgpooling, .maxpooling, and pord for the eu types no source defines) and mm_op (mm.mul, mm.mac).
Fields: bm1684_defs.py (tpu-mlir profile_helper, CONV_NEURON / DEPTHWISE_OR_POOLING / FC),
the OKKernel lowering (bmk/bm1684/lowering/neural_network.py) and the vendor's streams
(yolov5s, retinaface, face_detection).

Numerics: fp32 operands, and int8 conv / depthwise (below); other precisions: SimulationError. A conv or matrix sum is exact
products (float64) summed in float64 and rounded to fp32 once (one matrix product: no loop
over channels or taps); a depthwise or pooling window sums its taps in (i, j) order in fp32,
each product rounded, then added. Then the bias is added in fp32, and opt_res_add
(out = fp32(old + result)). The engine's accumulation order is not public: either is within
the rounding bound of recursive summation of the exact value. NaN and infinities propagate
as IEEE says.

- conv: out(n, oc, y, x) = sum over ic, i, j of in_padded(n, ic, y * sy + i * dy, x * sx + j * dx)
  * weight(ic, oc, i, j) (+ bias(oc) when tsk_opd_num = 3). in_padded: opd0 (N = res0_n,
  opd0_c, opd0_h, opd0_w; layout short_opd0_str) with opd0_{y,x}_ins0 zeros inserted between
  its rows / columns, then opd0_{up,dn,lf,rt}_pad zeros. sy, sx = res_op_{y,x}_str; dy, dx =
  opd1_{y,x}_ins0 + 1 (dilation). The weight is the 2IC tensor (ceil(IC/2), OC, kh, kw) of fp32
  pairs (strides count 8-byte pairs; short_opd1_str free or compact); opt_kernel_rotate = 1
  turns it by 180 degrees (weight(ic, oc, kh-1-i, kw-1-j): the vendor's deconvolutions, with
  ins0 1 and the kernel rotated, face_detection); opt_opd1_const = 1: every weight is the fp32
  constant opd1_addr. The bias (opd2, fp32) is per-channel compact (bm1684_defs.py reads a fp32
  conv's bias without strides, whatever short_opd2_str says).
- pord.depthwise: the same per channel, weight [1, C, kh, kw] compact when short_opd1_str is
  aligned (the vendor's value; bm1684_defs.py reads a pord kernel with is_aligned False: the
  vendor lays a 128-channel 3x3 kernel with channel slot stride 9, retinaface), free/compact
  strides taken as given; bias as conv's.
- pord.avgpooling: sum over (i, j) of in_padded * scale, the scale the fp32 constant opd1
  (+ bias per channel when tsk_opd_num = 3, bm1684_defs.py's with_bias for avg pooling).
- pord.maxpooling: max over (i, j), the padding (and inserted) value -3.4028234663852886e38
  (0xff7fffff, the seed's implicit padding value).
  Pooling and depthwise take n and c from res0 and h, w from opd0 (bm1684_defs.py).
- pord (any other eu type): no source defines one: SimulationError naming tsk_eu_typ.
- mm.mul / mm.mac: out(x, y) = sum over k < K of left(x, k) * right(k, y) (+ bias(y) with
  tsk_opd_num 3, + old out for mm.mac or opt_res_add). Matrices in the matrix layout
  (bmk/bm1684/geometry.py), read as bm1684_defs.py's FC reader takes them: res0 (M, ceil(N/rw),
  1, rw), opd0 (M, opd0_c, 1, opd0_w) with the columns of its last channel in opd1_w (K =
  (opd0_c - 1) * opd0_w + opd1_w), opd1 (K, res0_c, 1, res0_w), opd2 (1, res0_c, 1, res0_w);
  opt_left_tran = 1 is refused.
- int8 conv and pord.depthwise (opt_opd0_prec int8; face_detection_int8_b4, the vendor's int8
  build of face_detection, whose fp32 twin is the reference; no public formula, so derived
  there and pinned by tests/chips/bm1684/sim/test_int8_network.py on its real commands):
  opd0 int8 4N read with opt_opd0_sign; conv weight: the 4IC tensor (ceil(IC/4), OC, kh, kw)
  of 32-bit words, byte i the input channel 4g + i (as 4N stores batches), opt_opd1_sign,
  strides in words (n = the IC group; the vendor's free strides, e.g. IC 64, 3x3: (1, 145, 48,
  16)); depthwise kernel: one byte a tap, not batch-packed, [1, C, kh, kw] compact in bytes
  (aligned code; the vendor lays 3x3 kernels 9 bytes a channel, the next tensor 12 bytes on);
  bias (conv, tsk_opd_num 3): int16 with opt_opd2_sign, one per output channel, not packed,
  free layout with opd2_c_str int16 elements between the channel slots of an NPU (the vendor
  keeps it in the word after each channel's weight block: opd2_c_str = 2 * opd1_c_str).
  out = saturate((sum + bias + 2^(r-1)) >> r), r = opt_right_shift (the seed's rounding right
  shift, as its fixed-point functions state it; opt_shift_typ 1, the vendor's value on every
  conv and depthwise, is this rounding; 0 is refused), exact int64 sums; res0 int8, signed iff
  opd0, the weight or the bias is (the vendor's weights are signed and its convs' outputs are
  read signed; its upsampling depthwise, u8 input and u8 kernel, is read unsigned). The shifts
  are the calibrated ones: over the network the pre-saturation outputs stay within about
  2x of the int8 range and under 2% of any conv's outputs saturate. A depthwise bias with
  int8 operands (no stream has one), opt_opd1_const with an int8 weight, a non-free int16
  bias layout and an int16/int32 res0 are refused. In fp32 mode opt_right_shift must be 0;
  the sign fields and opt_shift_typ are not read (fp32 has no sign mode and shifts nothing;
  the vendor's fp32 convs carry opt_shift_typ 1).
Every kind: opt_relu 1 = no ReLU; 0 = no ReLU with an int8 result (the vendor's int8 convs
carry 0 and are followed by their scale, bias and an explicit max(x, 0), common.py),
tsk_lane_num executed on the store. IEEE
overflow and NaN are results, not errors (numpy's floating-point errors are off while a buffer
runs, bmk/sim/core.py).
Bounded work: an array holds at most what the whole local memory holds in fp32, and a command
does at most 2^31 multiply-adds and at most 2^20 per output element.
"""
import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk.errors import SimulationError
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684.contract import contract, refused
from bmk.sim.bounds import check_work
from bmk.sim.semantics import planned

FP32 = dtypes.FP32
MAX_POOL_PAD = np.uint32(0xFF7FFFFF).view(np.float32)
MAX_STEPS = 1 << 31
MAX_LOOPS = 1 << 20      # taps (conv: IC * kh * kw; pooling: kh * kw) or K per output element
CHUNK = 1 << 22          # float64 window elements materialized at once (32 MiB)
KEEP_PADDED = 1 << 20    # bytes of padded input a plan keeps between its runs (_Windows)


def _bounded(m, steps=0, loops=0, **arrays):
    if loops > MAX_LOOPS:
        raise SimulationError(f"the command must take at most {MAX_LOOPS} passes over its output to be "
                              f"simulated, not {loops}")
    for name, shape in arrays.items():
        count = int(np.prod(shape, dtype=np.int64))
        if count > m.lmem.size // c.WORD_BYTES:
            raise SimulationError(f"{name} must have at most {m.lmem.size // c.WORD_BYTES} elements to be simulated, "
                                  f"not {count} (shape {tuple(shape)})")
    if steps > MAX_STEPS:
        raise SimulationError(f"the command must take at most {MAX_STEPS} multiply-adds to be simulated, not {steps}")
    check_work(steps, loops)


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


def _compact(m, f, slot, shape):
    return chip_layout.compact_stride(shape, m.npu_num, c.local_offset(m, f, slot) // m.lmem.lane_size)


def _bias(m, f, channels):
    """() -> the (1, C, 1, 1) fp32 per-channel bias (opd2), compact; a constant when opt_opd2_const."""
    if f["opt_opd2_const"]:
        value = c.const(f, "opd2", FP32)
        return lambda: value
    shape = (1, channels, 1, 1)
    return c.reader(m, f, "opd2", FP32, shape, _compact(m, f, "opd2", shape))


# -- windows -----------------------------------------------------------------------------------
def _geometry(f, ih, iw, oh, ow):
    """Checked window geometry: (inserted dy, dx, pads, strides, dilations)."""
    kh, kw = f["opd1_h"], f["opd1_w"]
    sy, sx = f["res_op_y_str"], f["res_op_x_str"]
    dy, dx = f["opd1_y_ins0"] + 1, f["opd1_x_ins0"] + 1
    iy, ix = f["opd0_y_ins0"] + 1, f["opd0_x_ins0"] + 1
    up, dn, lf, rt = f["opd0_up_pad"], f["opd0_dn_pad"], f["opd0_lf_pad"], f["opd0_rt_pad"]
    if min(sy, sx) < 1:
        raise SimulationError(f"res_op_y_str and res_op_x_str must be at least 1, not {sy}, {sx}")
    if min(kh, kw) < 1:
        raise SimulationError(f"opd1_h and opd1_w (the kernel) must be at least 1, not {kh}, {kw}")
    ph, pw = up + (ih - 1) * iy + 1 + dn, lf + (iw - 1) * ix + 1 + rt
    for side, k, d, s, out, size in (("h", kh, dy, sy, oh, ph), ("w", kw, dx, sx, ow, pw)):
        need = (k - 1) * d + (out - 1) * s + 1
        if need > size:
            raise SimulationError(f"res0_{side} = {out} needs a padded input of at least {need} along {side} "
                                  f"(kernel {k}, dilation {d}, stride {s}), not {size}")
    return (iy, ix), (up, dn, lf, rt), (ph, pw), (sy, sx), (dy, dx), (kh, kw)


class _Windows:
    """The padded input of one window instruction and its (N, C, oh, ow, kh, kw) view, the input
    under every kernel tap of every output: shapes and strides worked out once per plan. A
    padded buffer of at most KEEP_PADDED bytes is kept by the plan, its border written once
    (nothing else writes it), so a run only copies the input into its interior."""

    def __init__(self, geo, shape, oh, ow, value, dtype):
        (iy, ix), (up, dn, lf, rt), (ph, pw), (sy, sx), (dy, dx), (kh, kw) = geo
        n, ch, h, w = shape
        self.dtype = np.dtype(dtype)
        self.value = value
        self.shape = (n, ch, ph, pw)
        self.inner = (slice(None), slice(None), slice(up, up + (h - 1) * iy + 1, iy), slice(lf, lf + (w - 1) * ix + 1, ix))
        e = self.dtype.itemsize
        s = (ch * ph * pw * e, ph * pw * e, pw * e, e)        # the padded array's (C order) strides
        self.view_shape = (n, ch, oh, ow, kh, kw)
        self.view_strides = (s[0], s[1], s[2] * sy, s[3] * sx, s[2] * dy, s[3] * dx)
        self.keep = n * ch * ph * pw * e <= KEEP_PADDED
        self.kept = None

    def __call__(self, x):
        buf = self.kept
        if buf is None:
            buf = np.full(self.shape, self.value, self.dtype)
            if self.keep:
                self.kept = buf
        buf[self.inner] = x
        return np.ndarray(self.view_shape, self.dtype, buf, 0, self.view_strides)


def _rows(oh, per_row):
    """Output-row chunks [(y0, y1)] so that a chunk materializes at most CHUNK elements."""
    step = max(1, CHUNK // max(1, per_row))
    return [(y, min(oh, y + step)) for y in range(0, oh, step)]


# -- conv --------------------------------------------------------------------------------------
def _weight_stride(m, f, shape, what):
    """The word strides of a conv weight tensor `shape` (the 2IC or 4IC image, `what`): its
    free strides, or compact ones; another layout code is refused."""
    mode = _layout(m, f, "opd1")
    if mode == "free":
        return (f["opd1_n_str"], f["opd1_c_str"], f["opd1_h_str"], f["opd1_w_str"])
    if mode == "compact":
        return _compact(m, f, "opd1", shape)
    raise SimulationError(f"short_opd1_str must be free or compact for the {what} weight, not {mode!r}")


def _conv_weight(m, f, ic, oc, kh, kw):
    """() -> the (IC, OC, kh, kw) float32 weight (2IC pairs; rotated by opt_kernel_rotate)."""
    rotate = f["opt_kernel_rotate"]
    if f["opt_opd1_const"]:
        value = np.full((ic, oc, kh, kw), c.const(f, "opd1", FP32), np.float32)
        return lambda: value
    shape = (-(-ic // 2), oc, kh, kw)
    stride = _weight_stride(m, f, shape, "2IC")
    from bmk.sim.memory import AccessLog
    log = AccessLog()
    view = m.lmem.tensor("opd1", c.local_offset(m, f, "opd1"), shape, stride, log, False,
                         np.dtype(f"<u{2 * c.WORD_BYTES}"))
    entry = log.entries[0]
    trail = m.trail

    def read():
        trail.log.entries.append(entry)
        words = np.ascontiguousarray(view.read()).view("<f4").reshape(shape + (2,))
        w = words.transpose(0, 4, 1, 2, 3).reshape((2 * shape[0],) + shape[1:])[:ic]
        return w[:, :, ::-1, ::-1] if rotate else w
    return read


def _conv_weight_int8(m, f, ic, oc, kh, kw):
    """() -> the (IC, OC, kh, kw) int64 weight of an int8 conv: the 4IC tensor (ceil(IC/4), OC,
    kh, kw) of 32-bit words, byte i of a word the input channel 4g + i (as 4N stores batches),
    read with opt_opd1_sign; strides count words (free or compact); rotated by opt_kernel_rotate."""
    if f["opt_opd1_const"]:
        raise SimulationError("conv: field opt_opd1_const = 1 is not modelled with an int8 weight")
    dt = _int8(m, f, "opd1")
    shape = (-(-ic // 4), oc, kh, kw)
    stride = _weight_stride(m, f, shape, "4IC")
    words = c.reader(m, f, "opd1", dtypes.UINT32, shape, stride)
    rotate = f["opt_kernel_rotate"]

    def read():
        b = np.ascontiguousarray(words()).view(dt.numpy).reshape(shape + (4,))
        w = b.transpose(0, 4, 1, 2, 3).reshape((4 * shape[0],) + shape[1:])[:ic].astype(np.int64)
        return w[:, :, ::-1, ::-1] if rotate else w
    return read


def _int8(m, f, slot):
    """The DType of an int8 operand (opt_X_sign), SimulationError for another precision."""
    name = c.prec_name(m, f, slot)
    if name != "int8":
        raise SimulationError(f"opt_{slot}_prec must be int8 here (an int8 {slot}), not {name}")
    return c.dtype_of(m, f, slot)


def _int_bias(m, f, kind, channels):
    """() -> the (1, C, 1, 1) int64 bias of an int8 conv: int16 (opt_opd2_sign), one per output
    channel, not batch-packed, in the free layout: channel c at its NPU, opd2_c_str int16 elements
    past the previous channel of that NPU (the vendor keeps it in the word after each channel's
    weight block: opd2_c_str = 2 * opd1_c_str)."""
    if f["opt_opd2_const"]:
        raise SimulationError(f"{kind}: field opt_opd2_const = 1 is not modelled with an int8 input")
    name = c.prec_name(m, f, "opd2")
    if name != "int16":
        raise SimulationError(f"{kind}: opt_opd2_prec must be int16 (the int8 conv's bias), not {name}")
    mode = _layout(m, f, "opd2")
    if mode != "free":
        raise SimulationError(f"{kind}: short_opd2_str must be free for an int16 bias (the vendor's layout), "
                              f"not {mode!r}")
    read = c.reader(m, f, "opd2", c.dtype_of(m, f, "opd2"), (1, channels, 1, 1), (0, f["opd2_c_str"], 0, 0), pack=1)
    return lambda: np.asarray(read(), np.int64)


def _int_result(m, f, kind, signed):
    """(DType of res0, right shift): an int8 conv / depthwise result is int8, signed iff one of
    its operands is; opt_right_shift rounds as the seed's (x + 2^(r-1)) >> r with opt_shift_typ 1
    (the vendor's value on every conv and depthwise; 0 is refused)."""
    name = c.prec_name(m, f, "res0")
    if name != "int8":
        raise SimulationError(f"{kind}: opt_res0_prec must be int8 with int8 operands, not {name}")
    if f["opt_shift_typ"] != 1:
        raise SimulationError(f"{kind}: field opt_shift_typ = {f['opt_shift_typ']} is not modelled with int8 "
                              f"operands (1: the rounding right shift)")
    return dtypes.integer(8, signed), f["opt_right_shift"]


def _requantized(acc, shift, dt):
    """acc (exact int64) rounded right by `shift` bits (half up: (x + 2^(s-1)) >> s), saturated."""
    if shift:
        acc = (acc + (1 << (shift - 1))) >> shift
    return np.clip(acc, dt.min, dt.max).astype(dt.numpy)


def _no_shift(f, kind):
    if f["opt_right_shift"]:
        raise SimulationError(f"{kind}: field opt_right_shift = {f['opt_right_shift']} is not modelled in fp32 mode")


def _build_conv(m, f):
    with_bias = f["tsk_opd_num"] == 3
    if f["tsk_opd_num"] not in (2, 3):
        raise SimulationError(f"conv: field tsk_opd_num = {f['tsk_opd_num']} is not modelled (2: no bias, 3: bias)")
    if f["opt_winograd"]:
        raise SimulationError("conv: field opt_winograd = 1 is not modelled")
    integer = c.prec_name(m, f, "opd0") == "int8"
    if not integer:
        _fp32(m, f, "res0", "opd0", "opd1", *(("opd2",) if with_bias else ()))
        _no_shift(f, "conv")
    _tensors(m, f, "opd0")
    n, oc, oh, ow = c.res0_shape(f)
    ic, ih, iw = f["opd0_c"], f["opd0_h"], f["opd0_w"]
    kh, kw = f["opd1_h"], f["opd1_w"]
    _bounded(m, ic * kh * kw * n * oc * oh * ow, ic * kh * kw, res0=(n, oc, oh, ow), opd0=(n, ic, ih, iw), opd1=(ic, oc, kh, kw))
    geo = _geometry(f, ih, iw, oh, ow)
    if integer:
        x = c.reader(m, f, "opd0", _int8(m, f, "opd0"), (n, ic, ih, iw))
        weight = _conv_weight_int8(m, f, ic, oc, kh, kw)
        bias = _int_bias(m, f, "conv", oc) if with_bias else None
        signed = f["opt_opd0_sign"] or f["opt_opd1_sign"] or (with_bias and f["opt_opd2_sign"])
        res_dt, shift = _int_result(m, f, "conv", bool(signed))
    else:
        x = c.reader(m, f, "opd0", FP32, (n, ic, ih, iw))
        weight = _conv_weight(m, f, ic, oc, kh, kw)
        bias = _bias(m, f, oc) if with_bias else None

    pointwise = (kh, kw) == (1, 1) and geo[0] == (1, 1) and not any(geo[1]) and geo[3] == (1, 1) \
        and (oh, ow) == (ih, iw)
    windows = None if pointwise else _Windows(geo, (n, ic, ih, iw), oh, ow, 0.0, np.float32)
    rows = _rows(oh, ic * ow * kh * kw)

    def product():
        """The exact sums, (n, oc, oh * ow) float64."""
        w64 = weight().astype(np.float64)
        if pointwise:           # a 1x1 window is the input itself: one matrix product
            xs = np.asarray(x(), np.float64).reshape(n, ic, ih * iw)
            return np.matmul(w64[:, :, 0, 0].T, xs)
        # im2col, tap-major: (IC * kh * kw, rows * ow) columns, one product per chunk; the
        # fp32 windows are widened (exactly) as they are gathered
        win = windows(x()).transpose(0, 1, 4, 5, 2, 3)
        wmat = w64.transpose(1, 0, 2, 3).reshape(oc, ic * kh * kw)
        out = np.empty((n, oc, oh * ow), np.float64)
        for b in range(n):
            for y0, y1 in rows:
                cols = np.empty((ic, kh, kw, y1 - y0, ow), np.float64)
                np.copyto(cols, win[b, :, :, :, y0:y1])
                cols = cols.reshape(ic * kh * kw, (y1 - y0) * ow)
                if len(rows) == 1:
                    np.matmul(wmat, cols, out=out[b])
                else:
                    out[b, :, y0 * ow:y1 * ow] = wmat @ cols
        return out

    if integer:
        def compute_int():      # exact sums (float64 holds them: |sum| < 2^53), + bias, requantized
            acc = np.rint(product()).astype(np.int64).reshape(n, oc, oh, ow)
            if bias is not None:
                acc += bias()
            return res_dt, _requantized(acc, shift, res_dt)
        return c.storer(m, f, "conv", compute_int)

    # The sum rounded to fp32, then the bias added in fp32: one pass (an fp32 add of the sum
    # cast to fp32 rounds it first, as astype does).
    def compute():
        acc = product().reshape(n, oc, oh, ow)
        if bias is None:
            return FP32, acc.astype(np.float32)
        return FP32, np.add(acc, bias(), dtype=np.float32)

    def fill(out):              # compute's values, in res0's own memory
        acc = product().reshape(n, oc, oh, ow)
        if bias is None:
            np.copyto(out, acc)
        else:
            np.add(acc, np.array(bias()), out=out, dtype=np.float32)   # the bias read before res0 is written
    return c.storer(m, f, "conv", compute, into=(FP32, fill))


# -- pord --------------------------------------------------------------------------------------
def _pord_kernel(m, f, ch, kh, kw):
    shape = (1, ch, kh, kw)
    stride = _compact(m, f, "opd1", shape) if _layout(m, f, "opd1") == "aligned" else None
    return c.reader(m, f, "opd1", FP32, shape, stride)


def _pord(kind, m, f):
    n, ch, oh, ow = c.res0_shape(f)
    ih, iw = f["opd0_h"], f["opd0_w"]
    taps = f["opd1_h"] * f["opd1_w"]
    _bounded(m, taps * n * ch * oh * ow, taps, res0=(n, ch, oh, ow), opd0=(n, ch, ih, iw),
             opd1=(1, ch, f["opd1_h"], f["opd1_w"]))
    _tensors(m, f, "opd0")
    geo = _geometry(f, ih, iw, oh, ow)
    return (n, ch, oh, ow), geo, c.reader(m, f, "opd0", FP32, (n, ch, ih, iw))


def _window_sum(win, weight, acc=None):
    """sum over the kernel taps, in (i, j) order, of window * weight (win from _Windows; weight
    (1, C, kh, kw) or a scalar) in fp32: each product rounded, then added (one vectorized
    multiply and add over (N, C, oh, ow) per tap: a depthwise or pooling window has few taps).
    acc: the (N, C, oh, ow) fp32 array to sum into (zeroed first), default a new one."""
    w = np.asarray(weight, np.float32)
    kh, kw = win.shape[4:]
    if acc is None:
        acc = np.zeros(win.shape[:4], np.float32)
    else:
        acc.fill(0)
    tmp = np.empty(win.shape[:4], np.float32)
    for i in range(kh):
        for j in range(kw):
            np.multiply(win[..., i, j], w[0, :, i, j].reshape(1, -1, 1, 1) if w.ndim else w, out=tmp)
            np.add(acc, tmp, out=acc)
    return acc


def _with_bias(m, f, kind, ch):
    if f["tsk_opd_num"] not in (2, 3):
        raise SimulationError(f"{kind}: field tsk_opd_num = {f['tsk_opd_num']} is not modelled (2, or 3 with a bias)")
    if f["tsk_opd_num"] == 3:
        _fp32(m, f, "opd2")
        return _bias(m, f, ch)
    return None


def _summed(kind, m, f, windows, x, weight, bias):
    """(compute, fill) of a window sum (depthwise, average pooling): the taps summed by
    _window_sum, then the per-channel bias added in fp32. fill sums straight into res0 when
    neither the kernel nor the bias shares its memory (the input is copied into the padded
    buffer first), else into a new array then stored."""
    def compute():
        acc = _window_sum(windows(x()), weight())
        if bias is not None:
            acc = np.asarray(acc + bias(), np.float32)
        return FP32, acc

    def fill(out):
        win, w = windows(x()), weight()
        b = None if bias is None else bias()
        if np.may_share_memory(out, w) or (b is not None and np.may_share_memory(out, b)):
            acc = _window_sum(win, w)
            np.add(acc, b, out=out) if b is not None else np.copyto(out, acc)
            return
        _window_sum(win, w, out)
        if b is not None:
            np.add(out, b, out=out)
    return c.storer(m, f, kind, compute, into=(FP32, fill))


def _build_depthwise_int8(m, f):
    """int8 depthwise: opd0 int8 4N (opt_opd0_sign), kernel int8 (opt_opd1_sign) one byte per tap,
    not batch-packed, [1, C, kh, kw] compact in bytes when short_opd1_str is aligned (the vendor
    loads a 3x3 kernel as 9 bytes per channel, the next tensor 12 bytes on); exact int64 window
    sums, then the rounding right shift and saturation of _int_result (signed iff opd0 or the
    kernel is). A bias (tsk_opd_num 3) with int8 operands is refused (no stream carries one)."""
    kind = "pord.depthwise"
    _tensors(m, f, "opd1")
    if f["tsk_opd_num"] != 2:
        raise SimulationError(f"{kind}: field tsk_opd_num = {f['tsk_opd_num']} is not modelled with int8 operands "
                              f"(2: no bias)")
    n, ch, oh, ow = c.res0_shape(f)
    ih, iw, kh, kw = f["opd0_h"], f["opd0_w"], f["opd1_h"], f["opd1_w"]
    taps = kh * kw
    _bounded(m, taps * n * ch * oh * ow, taps, res0=(n, ch, oh, ow), opd0=(n, ch, ih, iw), opd1=(1, ch, kh, kw))
    geo = _geometry(f, ih, iw, oh, ow)
    x = c.reader(m, f, "opd0", _int8(m, f, "opd0"), (n, ch, ih, iw))
    kdt = _int8(m, f, "opd1")
    kshape = (1, ch, kh, kw)
    kstride = _compact(m, f, "opd1", kshape) if _layout(m, f, "opd1") == "aligned" else None
    kernel = c.reader(m, f, "opd1", kdt, kshape, kstride, pack=1)
    res_dt, shift = _int_result(m, f, kind, bool(f["opt_opd0_sign"] or f["opt_opd1_sign"]))
    windows = _Windows(geo, (n, ch, ih, iw), oh, ow, 0, np.int64)

    def compute():
        win, w = windows(x()), np.asarray(kernel(), np.int64)
        acc = np.zeros((n, ch, oh, ow), np.int64)
        for i in range(kh):
            for j in range(kw):
                acc += win[..., i, j] * w[0, :, i, j].reshape(1, -1, 1, 1)
        return res_dt, _requantized(acc, shift, res_dt)
    return c.storer(m, f, kind, compute)


def _build_depthwise(m, f):
    if c.prec_name(m, f, "opd0") == "int8":
        return _build_depthwise_int8(m, f)
    _fp32(m, f, "res0", "opd0", "opd1")
    _no_shift(f, "pord.depthwise")
    _tensors(m, f, "opd1")
    (n, ch, oh, ow), geo, x = _pord("pord.depthwise", m, f)
    weight = _pord_kernel(m, f, ch, f["opd1_h"], f["opd1_w"])
    bias = _with_bias(m, f, "pord.depthwise", ch)
    windows = _Windows(geo, (n, ch, f["opd0_h"], f["opd0_w"]), oh, ow, 0.0, np.float32)
    return _summed("pord.depthwise", m, f, windows, x, weight, bias)


def _build_avgpooling(m, f):
    _fp32(m, f, "res0", "opd0", "opd1")
    (n, ch, oh, ow), geo, x = _pord("pord.avgpooling", m, f)
    scale = c.const(f, "opd1", FP32)
    bias = _with_bias(m, f, "pord.avgpooling", ch)
    windows = _Windows(geo, (n, ch, f["opd0_h"], f["opd0_w"]), oh, ow, 0.0, np.float32)
    return _summed("pord.avgpooling", m, f, windows, x, lambda: scale, bias)


def _build_maxpooling(m, f):
    _fp32(m, f, "res0", "opd0")
    if f["tsk_opd_num"] not in (1, 2):
        raise SimulationError(f"pord.maxpooling: field tsk_opd_num = {f['tsk_opd_num']} is not modelled (1 or 2: "
                              f"no bias)")
    (n, ch, oh, ow), geo, x = _pord("pord.maxpooling", m, f)
    windows = _Windows(geo, (n, ch, f["opd0_h"], f["opd0_w"]), oh, ow, MAX_POOL_PAD, np.float32)

    def compute():
        return FP32, windows(x()).max(axis=(4, 5))

    def fill(out):
        np.max(windows(x()), axis=(4, 5), out=out)
    return c.storer(m, f, "pord.maxpooling", compute, into=(FP32, fill))


def _no_pord(m, f):
    raise SimulationError(f"pord: field tsk_eu_typ = {f['tsk_eu_typ']} has no public meaning for pord_op "
                          f"(isa-facts: eu 1 depthwise / avg pooling, 4 max pooling)")


# -- matrices ----------------------------------------------------------------------------------
def _build_mm(accumulate):
    kind = "mm.mac" if accumulate else "mm.mul"

    def build(m, f):
        with_bias = f["tsk_opd_num"] == 3
        if f["tsk_opd_num"] not in (2, 3):
            raise SimulationError(f"{kind}: field tsk_opd_num = {f['tsk_opd_num']} is not modelled (2, 3)")
        if f["opt_left_tran"]:
            raise SimulationError(f"{kind}: field opt_left_tran = 1 (a transposed left matrix) is not modelled")
        _fp32(m, f, "res0", "opd0", "opd1", *(("opd2",) if with_bias else ()))
        _tensors(m, f, "opd0", "opd1", *(("opd2",) if with_bias else ()))
        rows, cr, _, rw = c.res0_shape(f)
        cl, lw, last = f["opd0_c"], f["opd0_w"], f["opd1_w"]
        if not 1 <= last <= lw:
            raise SimulationError(f"opd1_w (the columns of the left's last channel) must be in [1, {lw}], not {last}")
        k = (cl - 1) * lw + last
        _bounded(m, k * rows * cr * rw, k, res0=(rows, cr, 1, rw), opd0=(rows, cl, 1, lw), opd1=(k, cr, 1, rw))
        left = _left_matrix(m, f, rows, cl, lw, last)
        right = c.reader(m, f, "opd1", FP32, (k, cr, 1, rw))
        bias = c.reader(m, f, "opd2", FP32, (1, cr, 1, rw)) if with_bias else None

        def compute():
            lm = left()
            rm = np.asarray(right(), np.float64).reshape(k, cr * rw)
            acc = (lm @ rm).astype(np.float32)
            with np.errstate(all="ignore"):
                if bias is not None:
                    acc = np.asarray(acc + bias().reshape(1, cr * rw), np.float32)
            return FP32, acc.reshape(rows, cr, 1, rw)
        # mm.mac adds the old result as opt_res_add does (once, whichever asks for it)
        return c.storer(m, {**f, "opt_res_add": 1} if accumulate else f, kind, compute)
    return build


def _left_matrix(m, f, rows, cl, lw, last):
    """() -> the (rows, K) left matrix in float64, reading only its K columns: the full first
    cl - 1 channels and the first `last` columns of the last channel, so the local-memory
    checks see what the command reads (the last channel's other columns are never read: a K
    that is not a multiple of the columns per channel leaves them unwritten, issue 32.13)."""
    addr = c.local_offset(m, f, "opd0")
    stride = c.strides(m, f, "opd0", (rows, cl, 1, lw), FP32, addr)
    lane = m.lmem.lane_size
    start, offset = divmod(addr, lane)
    ch = start + cl - 1             # the last channel: its NPU, and its c-stride step past the wrap
    last_addr = (ch % m.npu_num) * lane + offset + (ch // m.npu_num) * stride[1] * FP32.itemsize
    tail = c.reader(m, {**f, "opd0_addr": f["opd0_addr"] + last_addr - addr}, "opd0", FP32, (rows, 1, 1, last),
                    stride)
    head = c.reader(m, f, "opd0", FP32, (rows, cl - 1, 1, lw), stride) if cl > 1 else None

    def read():
        t = np.asarray(tail(), np.float64).reshape(rows, last)
        if head is None:
            return t
        return np.concatenate([np.asarray(head(), np.float64).reshape(rows, (cl - 1) * lw), t], axis=1)
    return read


FP32_SIGN = "fp32 has no sign mode"
NO_SHIFT = "fp32: nothing is shifted or rounded by a shift"
WINDOW = {"res0_n", "res0_c", "res0_h", "res0_w", "opd0_h", "opd0_w", "opd1_h", "opd1_w", "opd0_x_ins0",
          "opd0_y_ins0", "opd1_x_ins0", "opd1_y_ins0", "opd0_up_pad", "opd0_dn_pad", "opd0_lf_pad", "opd0_rt_pad",
          "res_op_x_str", "res_op_y_str", "opt_res_add", "opt_relu", "tsk_lane_num", "tsk_opd_num"}
SIGNS = {"opt_opd0_sign": FP32_SIGN, "opt_opd1_sign": FP32_SIGN, "opt_opd2_sign": FP32_SIGN,
         "opt_shift_typ": NO_SHIFT}
UNREAD = "not an operand of this kind"
BIAS_LAYOUT = "a fp32 bias is compact whatever its stride fields say (bm1684_defs.py)"
BIAS = {"opd2_addr", "opt_opd2_prec", "opt_opd2_const"}
BIAS_IGNORES = {"short_opd2_str": BIAS_LAYOUT, "opd2_n_str": BIAS_LAYOUT, "opd2_c_str": BIAS_LAYOUT,
                "opd2_h_str": BIAS_LAYOUT, "opd2_w_str": BIAS_LAYOUT, "opd2_n": "a bias is (1, C, 1, 1)",
                "opd2_c": "a bias is (1, C, 1, 1)", "opd2_h": "a bias is (1, C, 1, 1)", "opd2_w": "a bias is (1, C, 1, 1)"}
POOL_SHAPE = {"opd0_n": "n and c come from res0 (bm1684_defs.py)", "opd0_c": "n and c come from res0 (bm1684_defs.py)"}
NOT_WINDOW = {"opd1_n": "the kernel is (1, C, kh, kw)", "opd1_c": "the kernel's channels are res0_c"}

# int8 conv / depthwise read the signs, the right shift and its type (fp32: signs ignored by the
# build, a right shift refused); the int16 bias reads its channel stride (fp32: compact).
INT8 = {"opt_opd0_sign", "opt_opd1_sign", "opt_opd2_sign", "opt_right_shift", "opt_shift_typ"}
INT_BIAS_IGNORES = {k: v for k, v in BIAS_IGNORES.items() if k not in ("short_opd2_str", "opd2_c_str")}
INT_BIAS_IGNORES.update({k: "an int16 bias is (1, C, 1, 1): its channels step by opd2_c_str; fp32: " + BIAS_LAYOUT
                         for k in ("opd2_n_str", "opd2_h_str", "opd2_w_str")})
conv = contract(
    reads=WINDOW | BIAS | INT8 | {"opd0_c", "opt_kernel_rotate", "opt_winograd", "opd1_addr", "opt_opd1_const",
                                  "opt_opd1_prec", "short_opd1_str", "opd1_n_str", "opd1_c_str", "opd1_h_str",
                                  "opd1_w_str", "short_opd2_str", "opd2_c_str"},
    read_slots=("res0", "opd0"),
    unread_slots={"opd3": UNREAD, "res1": UNREAD},
    ignores={**INT_BIAS_IGNORES, "opd0_n": "the batch is res0_n (bm1684_defs.py)",
             "opd1_n": "the weight's input channels are opd0_c", "opd1_c": "the weight's output channels are res0_c"},
)(planned(_build_conv))

depthwise = contract(
    reads=WINDOW | BIAS | (INT8 - {"opt_opd2_sign"}) | {"opd1_addr", "opt_opd1_prec", "opt_opd1_const", "short_opd1_str",
                                                        "opd1_n_str", "opd1_c_str", "opd1_h_str", "opd1_w_str"},
    read_slots=("res0", "opd0"), unread_slots={"opd3": UNREAD, "res1": UNREAD},
    ignores={"opt_opd2_sign": "an int8 depthwise has no bias (refused); an fp32 bias has no sign mode",
             **BIAS_IGNORES, **POOL_SHAPE, **NOT_WINDOW})(planned(_build_depthwise))

avgpooling = contract(
    reads=WINDOW | BIAS | {"opd1_addr", "opt_opd1_prec", "opt_opd1_const"},
    read_slots=("res0", "opd0"), unread_slots={"opd3": UNREAD, "res1": UNREAD},
    ignores={**SIGNS, **BIAS_IGNORES, **POOL_SHAPE, **NOT_WINDOW,
             **{k: "the scale is the constant opd1_addr" for k in ("short_opd1_str", "opd1_n_str", "opd1_c_str",
                                                                    "opd1_h_str", "opd1_w_str")}})(
    planned(_build_avgpooling))

MAX_NO_KERNEL = "max pooling reads no kernel values (opd1_h, opd1_w give its size)"
maxpooling = contract(
    reads=WINDOW,
    read_slots=("res0", "opd0"), unread_slots={"opd2": "max pooling has no bias", "opd3": UNREAD, "res1": UNREAD},
    ignores={**SIGNS, **POOL_SHAPE, **NOT_WINDOW,
             **{k: MAX_NO_KERNEL for k in ("opd1_addr", "opt_opd1_prec", "opt_opd1_const", "short_opd1_str",
                                           "opd1_n_str", "opd1_c_str", "opd1_h_str", "opd1_w_str")}})(
    planned(_build_maxpooling))

pord_other = refused(_no_pord)

MM = {"res0_n", "res0_c", "res0_h", "res0_w", "opd0_c", "opd0_w", "opd1_w", "opt_res_add",
      "opt_relu", "tsk_lane_num", "tsk_opd_num", "opt_left_tran"}
MM_IGNORES = {**SIGNS, "opd0_n": "the rows are res0_n", "opd1_n": "K follows from opd0",
              "opd0_h": "matrices have h = 1 (bm1684_defs.py reads the left as (opd0_n, opd0_c, 1, opd0_w))",
              "opd1_c": "the right matrix's channels are res0_c (bm1684_defs.py)",
              "opd1_h": "matrices have h = 1", "opd2_n": "the bias is (1, res0_c, 1, res0_w)",
              "opd2_c": "the bias is (1, res0_c, 1, res0_w)", "opd2_h": "the bias is (1, res0_c, 1, res0_w)",
              "opd2_w": "the bias is (1, res0_c, 1, res0_w)"}


def _mm(accumulate):
    return contract(reads=MM, read_slots=("res0", "opd0", "opd1", "opd2"), unread_slots={"opd3": UNREAD, "res1": UNREAD},
                    ignores=MM_IGNORES)(planned(_build_mm(accumulate)))


KINDS = {
    ("tiu", "conv"): conv,
    ("tiu", "pord.depthwise"): depthwise,
    ("tiu", "pord.avgpooling"): avgpooling,
    ("tiu", "pord.maxpooling"): maxpooling,
    ("tiu", "pord"): pord_other,
    ("tiu", "mm.mul"): _mm(False),
    ("tiu", "mm.mac"): _mm(True),
}
