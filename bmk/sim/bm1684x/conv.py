"""CONV (tsk_typ 0, long CONV and short sCONV): convolution, and its requantizing variants.

Sources: isa-facts bm1684x-lowering.md (eu 0 normal, 1 wrq, 2 wrqrelu), tpu-mlir
python/debugger/target_1684x/opparam.py `sCONV_t_converter` (operands, types, layouts,
attributes), tpu-mlir python/debugger/target_1684x/memmap.py (`CUBE_NUM`, the weight
layouts' IC parallelism) and target_1684x/cmodel.py `get_alignic_data` (the weight layout),
the TPU1686 firmware's conv gen_cmd and tpu-mlir third_party/ppl/runtime/checker/src/atomic_conv.c
(the output-size formula, the asserts: weight, bias and result on the result's NPUs), the
golden yolov5s stream (68 int8 convs into int32) and its vendor disassembly.

Geometry (pads, inserted values, dilation, strides, pad values): window.py.
Operands:
  opd0  the input (res0_n, opd0_c, opd0_h, opd0_w) of (opd0_prec, opd0_sign), aligned or in
        free strides (opd0_str, opd0_n/c/h/w_str)
  opd1  the weights (res0_c, opd0_c, opd1_h, opd1_w) of opd0's precision with opd1_sign, or
        one constant (opd1_const). Layout (cmodel `get_alignic_data`): output channel o on
        the NPU (s + o) % npu_num, its group g = (s + o) // npu_num; inside a lane, for every
        group, ceil(IC / cube) blocks of (kh, kw, cube) with cube = the IC parallelism of the
        type (memmap `CUBE_NUM`: ic_parallel_int8 / bytes for 8- and 16-bit data, 1 for
        32-bit): element (o, i, y, x) at g * ALIGN(IC, cube) * kh * kw + (i // cube) * cube *
        kh * kw + (y * kw + x) * cube + i % cube
  opd2  int8 input: the kernel zero point, one int8 (opd2_sign) per input channel (a compact
        (1, IC, 1, 1) tensor or a constant), subtracted from every weight; float input: the
        bias, one fp32 per output channel (compact (1, OC, 1, 1) or a constant), added
  opd3  the pad / insert values (window.py)
  res0  (res0_n, res0_c, res0_h, res0_w) aligned, (res0_prec, sign): int8 input: opd0_sign |
        opd1_sign | opd2_sign | (a non-zero constant kernel zero point) (opparam); float input:
        the float result
Integer sums are exact (float64 products and sums below 2**53 are exact for 8/16-bit data);
float ones are computed in float64 and rounded once to the result (bmk's assumption: the
hardware's accumulation order and precision are not public). res_add adds the result to what
res0 holds; kernel_rotate turns the kernel by 180 degrees (deconvolution); the long class's
relu clamps the result at 0. The result saturates to its integer type.
wrq / wrqrelu (int8 only; opparam asserts constant opd2 and opd3 there): the sum plus the
int16 constant opd2 (opd2_sign) is shifted right by the uint8 constant opd3_addr, rounded
half up, (and clamped at 0 for wrqrelu) and saturated to the result (bmk's assumption: what
"with requant" can do with the operands opparam names; no public stream uses them). Their
pads are zero.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x import window as W
from bmk.sim.bm1684x.operands import check_shape, const, dt, read, shape_of, tensor, to_values, write


# The most elements the unfolded input (taps * IC, OH * OW) of one GEMM may have (256 MiB of
# float32); a larger convolution multiplies tap by tap.
IM2COL_ELEMENTS = 1 << 26


def cube(m, dtype):
    """The weight layout's IC parallelism (memmap CUBE_NUM): 1 for 32-bit types."""
    if dtype.bits >= 32:
        return 1
    return m.chip.param("ic_parallel_int8") * 8 // dtype.bits


def weights(m, f, oc, ic, kh, kw, dtype):
    """(OC, IC, kh, kw) values of opd1 in the IC-parallel layout (or its constant)."""
    if f.get("opd1_const", 0):
        return np.full((oc, ic, kh, kw), const(f, "opd1", dtype))
    q = cube(m, dtype)
    blocks = -(-ic // q)
    addr = f.get("opd1_addr", 0)
    strides = (q * kh * kw, blocks * q * kh * kw, q, 1)
    check_shape(m, "opd1", (blocks, oc, kh * kw, q))
    view = m.lmem.tensor("opd1", addr, (blocks, oc, kh * kw, q), strides, m.log, False, dtype.numpy)
    raw = np.array(view.read())                                       # (blocks, oc, taps, q)
    w = to_values(raw, dtype).transpose(1, 0, 3, 2).reshape(oc, blocks * q, kh, kw)
    return w[:, :ic]


def _per_channel(m, f, name, c, dtype):
    if f.get(f"{name}_const", 0):
        return np.full(c, const(f, name, dtype))
    return read(m, tensor(m, f, name, (1, c, 1, 1), dtype, "compact")).reshape(c)


def int8_terms(m, f, ic, oc, w):
    """BM1684X's int8 operands: opd2 is the kernel zero point per input channel, subtracted
    from the weights; no bias. -> (weights, bias per output channel, result sign)."""
    kzp_dt = dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "int8"))
    kzp = _per_channel(m, f, "opd2", ic, kzp_dt)
    sign = (f.get("opd0_sign", 0) | f.get("opd1_sign", 0) | f.get("opd2_sign", 0)
            | int(bool(f.get("opd2_const", 0) and f.get("opd2_addr", 0))))
    return w - kzp.reshape(1, ic, 1, 1), np.zeros(oc), sign


def plain_sum(m, f, acc):
    """BM1684X's conv.normal ends at the sum (no requantization step): -> (acc, relu applied)."""
    return acc, False


def convolution(kind, terms=int8_terms, finish=plain_sum, rescale=None, float_sums=None):
    """The conv kind's function. terms(m, f, ic, oc, w) -> (weights, bias, sign): an integer
    input's operand roles (int8_terms: BM1684X's); finish(m, f, acc) -> (acc, relu applied):
    what an integer conv.normal does to its exact sums before res_add and relu (a sister chip
    requantizes there: bmk/sim/bm1688/conv.py); rescale(m, f, acc) -> acc: what a float one does
    to its sums plus bias before res_add and relu (None: nothing; a sister chip scales there);
    float_sums(m, in_dt, wt, wins, bias, ic) -> the sums plus bias (n, oc, oh, ow), or None for the
    family's (float64 products and sums, rounded once): wt the (oc, (ky, kx, ic)) kernel, wins the
    taps' (n, ic, oh, ow) windows (a sister chip accumulates half-precision data its own way)."""
    def run(m, f):
        n, oc, oh, ow = shape = shape_of(f)
        check_shape(m, "res0", shape)
        ic, ih, iw = f.get("opd0_c", 0), f.get("opd0_h", 0), f.get("opd0_w", 0)
        in_dt = dt(m, f, "opd0")
        pads, ins, dil, stride, kernel = W.geometry(f, kind, (ih, iw), (oh, ow))
        W.check_work(kind, n * oc * oh * ow * ic * kernel[0] * kernel[1])
        x = read(m, tensor(m, f, "opd0", (n, ic, ih, iw), in_dt))
        w_dt = dt(m, f, "opd1", prec=f.get("opd0_prec", 0))
        w = weights(m, f, oc, ic, kernel[0], kernel[1], w_dt)
        if f.get("kernel_rotate", 0):
            w = w[:, :, ::-1, ::-1]
        requant = kind != "conv.normal"
        if requant and (in_dt.is_float or not (f.get("opd2_const", 0) and f.get("opd3_const", 0))):
            raise SimulationError("an int8 input with constant opd2 (bias) and opd3 (shift) is required")
        if in_dt.is_float:
            bias = _per_channel(m, f, "opd2", oc, dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "fp32")))
            # a float is signed; the bits pick an fp8 result's format (target_2260 opparam: res0's sign)
            sign = f.get("opd0_sign", 0) | f.get("opd1_sign", 0) | f.get("opd2_sign", 0)
        elif not requant:
            w, bias, sign = terms(m, f, ic, oc, w)
        else:
            bias = np.full(oc, const(f, "opd2", dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "int16"))))
            sign = f.get("opd0_sign", 0) | f.get("opd1_sign", 0) | f.get("opd2_sign", 0)
        if requant:
            pad, insert = np.zeros((1, ic, 1, 1)), np.zeros((1, ic, 1, 1))
        else:
            pad, insert = W.pad_values(m, f, ic, in_dt)
        work = W.exact_work(in_dt, (x, pad, insert), w, ic * kernel[0] * kernel[1])
        ext = W.extended(x, pads, ins, pad, insert, work)
        # one GEMM per batch over every tap at once (im2col): (OC, taps * IC) @ (taps * IC, OH * OW)
        wt = w.astype(work).transpose(0, 2, 3, 1).reshape(oc, -1)          # (oc, (ky, kx, ic))
        wins = [win for _, _, win in W.taps(ext, dil, stride, kernel, (oh, ow))]
        acc = float_sums(m, in_dt, wt, wins, bias, ic) if float_sums is not None and in_dt.is_float else None
        if acc is None:
            acc = np.empty((n, oc, oh * ow), work)
            for b in range(n):
                if wt.shape[1] * oh * ow <= IM2COL_ELEMENTS:
                    cols = np.stack([win[b] for win in wins]).reshape(-1, oh * ow)     # ((ky, kx, ic), P)
                    acc[b] = wt @ cols
                    continue
                acc[b] = 0                                                       # too big to unfold: tap by tap
                for t, win in enumerate(wins):
                    acc[b] += wt[:, t * ic:(t + 1) * ic] @ np.ascontiguousarray(win[b]).reshape(ic, -1)
            acc = acc.reshape(n, oc, oh, ow)
            if in_dt.is_float:
                acc = acc + bias.reshape(1, oc, 1, 1)
            else:       # exact integral sums, and an integer bias
                acc = acc.astype(np.int64) + np.asarray(bias, np.int64).reshape(1, oc, 1, 1)
        res = tensor(m, f, "res0", shape, dt(m, f, "res0", sign), "aligned")
        relu_done = False
        if in_dt.is_float and rescale is not None:
            acc = rescale(m, f, acc)
        if not in_dt.is_float and not requant:
            acc, relu_done = finish(m, f, acc)
        if requant:
            acc = numerics.rshift(acc, f.get("opd3_addr", 0) & 0xFF, numerics.Round.HALF_UP)
            if kind == "conv.wrqrelu":
                acc = np.maximum(acc, 0)
        if f.get("res_add", 0):
            acc = acc + read(m, res)
        if f.get("relu", 0) and not relu_done:
            acc = np.maximum(acc, 0)
        write(m, res, acc, True, f)
    run.__name__ = kind.replace(".", "_")
    return run


KINDS = {k: convolution(k) for k in ("conv.normal", "conv.wrq", "conv.wrqrelu")}

_ALL = F.names(F.operand("opd0"), {"opd0_c", "opd0_h", "opd0_w", "opd1_h", "opd1_w"},
               {f"res0_{d}" for d in "nchw"}, {"res0_addr", "res0_prec"},
               {"opd1_addr", "opd1_sign", "opd1_const", "opd2_addr", "opd2_sign", "opd2_const",
                "opd3_addr", "opd3_const"},
               {"opd0_x_ins0", "opd0_y_ins0", "opd1_x_ins0", "opd1_y_ins0", "opd0_up_pad", "opd0_dn_pad",
                "opd0_lf_pad", "opd0_rt_pad", "res_op_x_str", "res_op_y_str", "pad_mode", "kernel_rotate",
                "res_add", "relu", "tsk_lane_num"})
FIELDS = {k: _ALL for k in KINDS}


def _check(kind):
    def check(chip, f):
        W.check_pad_mode(kind, f)
    check.__name__ = "check_" + kind.split(".")[1]
    return check


CHECKS = {k: _check(k) for k in KINDS}
