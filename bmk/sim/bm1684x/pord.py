"""PorD (tsk_typ 1, long PorD and short sPorD): depthwise convolution and pooling, with ROI forms.

Sources: isa-facts bm1684x-lowering.md (eu 0 depthwise, 1 avgpool, 2 depthwise+relu,
4 maxpool, 5..7 ROI forms), tpu-mlir python/debugger/target_1684x/opparam.py
`sPorD_t_converter` (operands, types, layouts; round_mode = opd2_n_str; shift = res1_addr
read as an int8; the ROI forms' opd3 = (1, res0_w, 1, 4) int16), tpu-mlir
third_party/ppl/runtime/checker/src/atomic_pooling_depthwise.c (the firmware's checks), the
golden yolov5s stream (depthwise with a one-hot kernel: the Focus layer's row picking;
maxpool 5x5 pad 2 with -128) and its vendor disassembly.

Geometry and pad values: window.py. Operands: opd0 the input (res0_n, res0_c, opd0_h,
opd0_w) aligned, of (opd0_prec, opd0_sign); res0 (res0_n, res0_c, res0_h, res0_w) aligned.
  depthwise      res0[n, c] = sum over the window of x * opd1 + opd2, then shifted right by
                 `shift` (res1_addr's low byte as an int8; > 0 right, rounded by opd2_n_str;
                 bmk's assumption: the field holds the fixed-point result's right shift) and
                 saturated; kernel_rotate turns the kernel by 180 degrees. opd1: the kernel (1, C, kh, kw) compact of opd0's precision with
                 opd1_sign, or a constant; opd2: the bias (1, C, 1, 1) compact, int32 for int8
                 input and opd0's type otherwise (opparam), or a constant. Result sign:
                 opd0_sign | opd1_sign | opd2_sign.
  depthwiserelu  the same clamped at 0; the result is signed only when it is int32 (opparam)
  avgpooling     the window sum times opd1 (the scale: a constant, or a (1, C, kh, kw) kernel),
                 shifted and rounded as depthwise, no bias: an average is a depthwise
                 convolution with a constant kernel (bmk's reading: the PorD AVG unit has no
                 divisor field, and opparam names no other operand). Result: opd0's sign,
                 saturated. Integer input: the right shift is opd2_addr, a count 0..31 (an
                 unsigned number; res1_addr must then be 0), rounded by opd2_n_str:
                 res0 = sat((sum(x) * opd1) >> opd2_addr). Float input: opd2_addr must be 0.
                 Derived from the real networks (no public source names the field for
                 BM1684X; opparam reads no opd2 for avgpool, and the BM1688 firmware moves its
                 multiplier/shift to registers): tdl_models' cls_sound_babay_cry int8 2x2
                 average pools carry (opd1, opd2_addr) = (0x33, 7), (0x51, 8), (0x2f, 7),
                 (5, 4), i.e. multiplier / 2**shift = 0.398, 0.316, 0.367, 0.3125: a quarter
                 times an input/output scale ratio near 1, and exactly the pairs tpu-mlir's
                 int8 lowering makes (Pool2D inference: to_int(sum) * multiplier >> rshift,
                 saturated; its get_scale_and_shift keeps the smallest shift of equal error:
                 5 >> 4 rather than 80 >> 8); the commands' round mode is half_up, as that
                 inference's rounding. The BM1688 build of the same network (tdl_models
                 bm1688/) confirms it: before each of these pools a system_tr_wr.wr_imm writes
                 the registers the BM1688 firmware's atomic_avg_pooling_fixed_gen_cmd names
                 {mul, shift, yzp} (6, 32, 33) = (1, -7 / -8 / -7 / -4, 0) (an s8 shift,
                 negative to the right as the TPU1686 requant's, quant.py), and the pool
                 carries the same kernel constants 0x33, 0x51, 0x2f, 5 in opd1_addr and round
                 mode half_up: BM1684X's opd2_addr is that right shift.
  maxpooling     the window maximum (pads take the pad value; a NaN never wins a float window,
                 IEEE 754-2019 maximumNumber: bmk's reading of the fp8 streams' pad 0x7F, NaN in
                 both fp8 formats, which they write where the fp16 ones pad with -65504).
                 Result: opd0's type and sign.
  roiDepthwise, roiavgpooling, roimaxpooling: the same over windows placed by ROIs: opd3 is
                 (1, res0_w, 1, 4) int16 compact, output column r pools the kh x kw window
                 whose top-left input element is (roi[r][0], roi[r][1]) (bmk's assumption on
                 the order of the four values, whose last two it does not read); res0_h must
                 be 1; elements outside the input read 0. These forms have no pad operand.
Floats are summed in float64 and rounded once (by opd2_n_str); integers are exact.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x import window as W
from bmk.sim.bm1684x.operands import check_shape, const, dt, mode_of, read, shape_of, tensor, write


# the largest right shift an avgpool's opd2_addr may hold (an int32 sum has 31 value bits)
MAX_AVG_SHIFT = 31


def _shift(f, kind):
    if kind == "pord.avgpooling" and f.get("opd2_addr", 0):
        return f["opd2_addr"]
    s = f.get("res1_addr", 0) & 0xFF
    return s - 256 if s >= 128 else s


def is_float(chip, f):
    """Whether a command's input (opd0_prec) is a float type (fp8, fp16, bf16, fp32): at check time."""
    name = chip.member("tiu", "res0_prec", f.get("opd0_prec", 0)) or ""
    return name.startswith(("fp", "bf"))


def _check(kind):
    """The static refusals (CHECKS): pad_mode 0 where the kind has it (window.py); the shifts
    are an integer result's: res1_addr must be 0 for a float input (finish shifts integers
    only); an avgpool's opd2_addr is a right shift 0..MAX_AVG_SHIFT, integers only, and
    res1_addr must then be 0."""
    def check(chip, f):
        W.check_pad_mode(kind, f)
        if "res1_addr" not in FIELDS[kind]:
            return
        floats = is_float(chip, f)
        if floats and f.get("res1_addr", 0):
            raise F.refuse(kind, "res1_addr", f["res1_addr"], "(the shift) must be 0 for a float input")
        v = f.get("opd2_addr", 0) if kind == "pord.avgpooling" else 0
        if not v:
            return
        if floats:
            raise F.refuse(kind, "opd2_addr", v, "must be 0 for a float input (the shift is an integer average's)")
        if v > MAX_AVG_SHIFT:
            raise F.refuse(kind, "opd2_addr", v, f"(the right shift) must be at most {MAX_AVG_SHIFT}")
        if f.get("res1_addr", 0):
            raise F.refuse(kind, "res1_addr", f["res1_addr"], "must be 0 when opd2_addr holds the shift")
    check.__name__ = "check_" + kind.split(".")[1]
    return check


def _kernel(m, f, c, kh, kw, w_dt):
    if f.get("opd1_const", 0):
        return np.full((1, c, kh, kw), const(f, "opd1", w_dt))
    return read(m, tensor(m, f, "opd1", (1, c, kh, kw), w_dt, "compact"))


def _inputs(m, f, kind):
    n, c, oh, ow = shape = shape_of(f)
    check_shape(m, "res0", shape)
    ih, iw = f.get("opd0_h", 0), f.get("opd0_w", 0)
    in_dt = dt(m, f, "opd0")
    x = read(m, tensor(m, f, "opd0", (n, c, ih, iw), in_dt, "aligned"))
    return shape, in_dt, x


def bias_terms(m, f, kind, acc, floats):
    """BM1684X's depthwise bias (opd2) added to the sums, and the result's sign (module
    docstring). -> (acc, sign)."""
    b_dt = dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "int32") if not floats else None,
              sign=1 if not floats else None)
    bias = const(f, "opd2", b_dt) if f.get("opd2_const", 0) else \
        read(m, tensor(m, f, "opd2", (1, acc.shape[1], 1, 1), b_dt, "compact"))
    sign = f.get("opd0_sign", 0) | f.get("opd1_sign", 0) | f.get("opd2_sign", 0)
    if kind == "pord.depthwiserelu":
        sign = int(m.chip.member("tiu", "res0_prec", f.get("res0_prec", 0)) == "int32")
    return acc + bias, sign


def finish(m, f, kind, acc, res, floats):
    """Shift (integers) and store."""
    if not floats:
        s = _shift(f, kind)
        acc = np.rint(acc).astype(np.int64)
        acc = numerics.rshift_each(acc, s, mode_of(f)) if s >= 0 else acc << -s
    if kind == "pord.depthwiserelu":
        acc = np.maximum(acc, 0)
    write(m, res, acc, True, f, mode_of(f))


def exact_sum(kind, dtype, products):
    """The window's sum: the taps' products (fresh float arrays, in tap order) added in that
    order (exact for integer data: window.exact_work picks their type), into the first."""
    products = iter(products)
    acc = next(products, 0.0)
    for p in products:
        acc += p
    return acc


def windowed(kind, terms=bias_terms, finish=finish, pool_sign=None, window_sum=exact_sum):
    """A windowed PorD kind's function. terms(m, f, kind, sums, floats) -> (acc, result sign):
    a depthwise convolution's bias and sign (bias_terms: BM1684X's); finish(m, f, kind, acc,
    res, floats) shifts and stores; pool_sign(f): a pool's result sign (default opd0's);
    window_sum(kind, input dtype, products) -> the sums (exact_sum: BM1684X's). A sister chip
    requantizes in finish and sums half-precision pools its own way (bmk/sim/bm1688/pord.py)."""
    def run(m, f):
        shape, in_dt, x = _inputs(m, f, kind)
        n, c, oh, ow = shape
        pads, ins, dil, stride, kernel = W.geometry(f, kind, x.shape[2:], (oh, ow))
        W.check_work(kind, n * c * oh * ow * kernel[0] * kernel[1])
        pad, insert = W.pad_values(m, f, c, in_dt)
        floats = in_dt.is_float
        p_sign = f.get("opd0_sign", 0) if pool_sign is None else pool_sign(f)
        if kind == "pord.maxpooling":
            acc = None
            larger = np.fmax if floats else np.maximum
            for _, _, win in W.taps(W.extended(x, pads, ins, pad, insert), dil, stride, kernel, (oh, ow)):
                acc = win.copy() if acc is None else larger(acc, win)
            write(m, tensor(m, f, "res0", shape, dt(m, f, "res0", p_sign), "aligned"), acc, True, f)
            return
        w_dt = dt(m, f, "opd1", prec=f.get("opd0_prec", 0))
        k = _kernel(m, f, c, kernel[0], kernel[1], w_dt)
        work = W.exact_work(in_dt, (x, pad, insert), k, kernel[0] * kernel[1])
        k = k.astype(work)
        if f.get("kernel_rotate", 0):
            k = k[:, :, ::-1, ::-1]
        ext = W.extended(x, pads, ins, pad, insert, work)
        acc = np.zeros((n, c, oh, ow)) + window_sum(kind, in_dt, (
            win * k[:, :, ky:ky + 1, kx:kx + 1] for ky, kx, win in W.taps(ext, dil, stride, kernel, (oh, ow))))
        if kind == "pord.avgpooling":
            sign = p_sign
        else:
            acc, sign = terms(m, f, kind, acc, floats)
        res = tensor(m, f, "res0", shape, dt(m, f, "res0", sign), "aligned")
        finish(m, f, kind, acc, res, floats)
    run.__name__ = kind.split(".")[1]
    return run


def _roi(kind):
    def run(m, f):
        shape, in_dt, x = _inputs(m, f, kind)
        n, c, oh, ow = shape
        if oh != 1:
            raise SimulationError(f"res0_h must be 1 (one output per ROI along w), not {oh}")
        kh, kw = f.get("opd1_h", 0), f.get("opd1_w", 0)
        if min(kh, kw) < 1:
            raise SimulationError(f"the kernel (opd1_h, opd1_w) must be >= 1, not {(kh, kw)}")
        W.check_work(kind, n * c * ow * kh * kw)
        rois = read(m, tensor(m, f, "opd3", (1, ow, 1, 4), dt(m, f, "opd3", 1, m.chip.code("tiu", "res0_prec",
                                                                                        "int16")), "compact"))
        rois = rois.reshape(ow, 4)
        ih, iw = x.shape[2:]
        ys = rois[:, 0][None, :] + np.arange(kh)[:, None]          # (kh, R)
        xs = rois[:, 1][None, :] + np.arange(kw)[:, None]          # (kw, R)
        inside = ((ys >= 0) & (ys < ih))[:, None, :] & ((xs >= 0) & (xs < iw))[None, :, :]    # (kh, kw, R)
        win = x[:, :, np.clip(ys, 0, ih - 1)[:, None, :], np.clip(xs, 0, iw - 1)[None, :, :]]  # (n, c, kh, kw, R)
        win = np.where(inside, win, 0)
        floats = in_dt.is_float
        if kind == "pord.roimaxpooling":
            res = tensor(m, f, "res0", shape, dt(m, f, "res0", f.get("opd0_sign", 0)), "aligned")
            write(m, res, win.max(axis=(2, 3)).reshape(shape), True, f)
            return
        k = _kernel(m, f, c, kh, kw, dt(m, f, "opd1", prec=f.get("opd0_prec", 0))).astype(np.float64)
        acc = (win.astype(np.float64) * k[..., None]).sum(axis=(2, 3)).reshape(shape)
        sign = f.get("opd0_sign", 0) | (f.get("opd1_sign", 0) if kind == "pord.roiDepthwise" else 0)
        res = tensor(m, f, "res0", shape, dt(m, f, "res0", sign), "aligned")
        finish(m, f, kind, acc, res, floats)
    run.__name__ = kind.split(".")[1]
    return run


KINDS = {"pord.depthwise": windowed("pord.depthwise"), "pord.avgpooling": windowed("pord.avgpooling"),
         "pord.depthwiserelu": windowed("pord.depthwiserelu"), "pord.maxpooling": windowed("pord.maxpooling"),
         "pord.roiDepthwise": _roi("pord.roiDepthwise"), "pord.roiavgpooling": _roi("pord.roiavgpooling"),
         "pord.roimaxpooling": _roi("pord.roimaxpooling")}

_WINDOW = {"opd0_x_ins0", "opd0_y_ins0", "opd1_x_ins0", "opd1_y_ins0", "opd0_up_pad", "opd0_dn_pad", "opd0_lf_pad",
           "opd0_rt_pad", "res_op_x_str", "res_op_y_str", "pad_mode", "opd3_addr", "opd3_const"}
_BASE = F.names({f"res0_{d}" for d in "nchw"}, {"res0_addr", "res0_prec", "opd0_addr", "opd0_prec", "opd0_sign",
                                               "opd0_h", "opd0_w", "opd1_h", "opd1_w", "tsk_lane_num"})
_KERNEL = {"opd1_addr", "opd1_sign", "opd1_const", "opd2_n_str", "res1_addr", "kernel_rotate"}
# a max pool has no kernel operand: opd1's address, sign and constant flag describe nothing
_NO_KERNEL = {"opd1_addr", "opd1_sign", "opd1_const"}
FIELDS = {
    "pord.depthwise": _BASE | _WINDOW | _KERNEL | {"opd2_addr", "opd2_sign", "opd2_const"},
    "pord.depthwiserelu": _BASE | _WINDOW | _KERNEL | {"opd2_addr", "opd2_sign", "opd2_const"},
    "pord.avgpooling": _BASE | _WINDOW | _KERNEL | {"opd2_addr"},
    "pord.maxpooling": _BASE | _WINDOW | _NO_KERNEL,
    "pord.roiDepthwise": _BASE | _KERNEL | {"opd3_addr"},
    "pord.roiavgpooling": _BASE | _KERNEL | {"opd3_addr"},
    "pord.roimaxpooling": _BASE | {"opd3_addr"} | _NO_KERNEL,
}
CHECKS = {k: _check(k) for k in KINDS}
