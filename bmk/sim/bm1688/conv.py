"""CONV on BM1688: BM1684X's convolution (bmk/sim/bm1684x/conv.py) with BM1688's int8 operands.

Sources: tpu-mlir python/debugger/target_1688/opparam.py (sCONV: opd2 the bias, one int32 per
output channel, compact or a constant; opd3 the pad values; with opt_rq: opd4 the kernel zero
point, an int16 constant in register 5 or a tensor, and opd5 the requant parameters, rq.py;
sym_range, do_relu, round_mode = opd2_n_str), the shared tdl_models streams (cls_sound_babay_cry
bm1688: a conv's result read by the next conv as unsigned when opt_res0_sign is 0 with every
operand signed and opt_relu set: the result's sign is opt_res0_sign, not the operands' as
opparam derives it).

Integer input: y = sum over the window of x * (w - kzp) + bias (exact), then with opt_rq
requantized per output channel (rq.py), relu applied to the sum first (max(requant(s), yzp) =
requant(max(s, 0)) for a monotone requant: the quantized relu), saturated into (res0_prec,
opt_res0_sign). Without opt_rq the sum is the result (bias added). Refused (check): a kernel zero
point tensor (opt_rq with opt_opd4_const 0: no shared stream has one), sym_range, opt_res_add with
opt_rq. A chip without the opd4 register (CV184X: its facts) takes no kernel zero point and
reads no opt_opd4_const. Float input: BM1684X's (bias fp32 in opd2), and with opt_rq the sum
plus bias times the rescale (rq.py), before relu; a float input reads no opd4 and no constant
shift or zero point. The kernel's precision opd1_prec is the input's (opparam's opd1 dtype; the
family reads the kernel in opd0's type: bm1684x/conv.py), and opd2_prec names the bias: 0, or fp32
with a float input (the family's bias type); any other value is refused by name (a CV184X
tdl_models build's bf16 deconvolution sets opd1_prec bf16 beside its bf16 input; the BM1690 f16
streams set opd2_prec fp32).

A bf16 / fp16 input is summed as the vendor's CV184X cmodel does (bit for bit on 1x1 and 3x1
bf16 convolutions of the CV184X license plate reader, random inputs of our choosing through a
one-command bmodel, where one exact sum rounded once missed 0-3 of 28,800): an fp32 accumulator
starts at the bias (a subnormal bias taken as zero: an all-zero channel comes out +0.0), then
for each cube of input channels (ic_parallel_int8 * 8 / 16 of them, the kernel layout's cube)
and each tap in order (ky, kx) adds the cube's products at that tap, summed exactly, rounding to
fp32 at each addition; the result is rounded once into res0.
"""
import numpy as np

from bmk import numerics
from bmk.sim.bm1684x import conv
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x import pord
from bmk.sim.bm1684x.operands import const, dt, read, tensor
from bmk.sim.bm1688 import rq
from bmk.sim.bm1688.registers import FIELDS_READ, check_written, has_register, register

KIND = "conv.normal"


def terms(m, f, ic, oc, w):
    """-> (weights minus the kernel zero point, bias per output channel, result sign)."""
    b_dt = dt(m, f, "opd2", prec=m.chip.code("tiu", "res0_prec", "int32"), sign=1)
    if f.get("opd2_const", 0):
        bias = np.full(oc, const(f, "opd2", b_dt))
    else:
        bias = read(m, tensor(m, f, "opd2", (1, oc, 1, 1), b_dt, "compact")).reshape(oc)
    if f.get("opt_rq", 0) and has_register(m.chip, "opd4"):
        w = w - int(np.int16(register(f, "opd4", KIND) & 0xFFFF))
    return w, bias, f.get("opt_res0_sign", 0)


def finish(m, f, acc):
    if not f.get("opt_rq", 0):
        return acc, False
    if f.get("relu", 0):
        acc = np.maximum(acc, 0)
    return rq.requantize(m, f, acc, acc.shape[1], KIND), True


def half_cube(chip):
    """The input channels a half-precision conv (or the inner dimension an mm2) adds at once: the
    kernel layout's cube, ic_parallel_int8 * 8 / 16."""
    return max(1, chip.param("ic_parallel_int8") * 8 // 16)


def fp32_start(bias):
    """An fp32 accumulator's first value: the bias, a subnormal one as zero."""
    return numerics.flush_subnormals(np.asarray(bias, np.float32))


def cube_sums(m, in_dt, wt, wins, bias, ic):
    """A half-precision input's sums plus bias (module docstring); None for fp32 (the family's)."""
    if in_dt.bits != 16:
        return None
    cube = half_cube(m.chip)
    n, oc = wins[0].shape[0], wt.shape[0]
    oh, ow = wins[0].shape[2:]
    acc = np.zeros((n, oc, oh * ow), np.float32) + fp32_start(bias).reshape(1, oc, 1)
    for c0 in range(0, ic, cube):
        for t, win in enumerate(wins):
            part = wt[:, t * ic + c0:t * ic + min(ic, c0 + cube)] @ win[:, c0:c0 + cube].reshape(n, -1, oh * ow)
            acc = (acc + part.astype(np.float32)).astype(np.float32)
    return acc.astype(np.float64).reshape(n, oc, oh, ow)


def rescale(m, f, acc):
    return rq.rescale(m, f, acc, KIND)


def check_precisions(chip, f):
    """The kernel has the input's precision; the bias field is 0, or fp32 with a float input."""
    F.check_input_precision(KIND, f, "opd1_prec", "the family's kernel has the input's precision")
    bias = f.get("opd2_prec", 0)
    if bias and not (bias == chip.code("tiu", "res0_prec", "fp32") and pord.is_float(chip, f)):
        raise F.refuse(KIND, "opd2_prec", bias, "must be 0, or fp32 with a float input (the family's bias type)")


def check(chip, f):
    conv.CHECKS[KIND](chip, f)
    check_precisions(chip, f)
    floats = pord.is_float(chip, f)
    check_written(f, KIND, reads=("opd5",) if floats else ("opd4", "opd5"), constants=not floats)
    if f.get("sym_range", 0):
        raise F.refuse(KIND, "sym_range", f["sym_range"], "must be 0 (the symmetric range is not modelled)")
    if f.get("opt_rq", 0):
        if floats and f.get("opt_opd4_const", 0):
            raise F.refuse(KIND, "opt_opd4_const", f["opt_opd4_const"], "must be 0 with a float input (no "
                           "kernel zero point)")
        if has_register(chip, "opd4") and not floats and not f.get("opt_opd4_const", 0):
            raise F.refuse(KIND, "opt_opd4_const", 0, "must be 1 with opt_rq (a kernel zero point tensor is not "
                           "modelled)")
        if f.get("res_add", 0):
            raise F.refuse(KIND, "res_add", f["res_add"], "must be 0 with opt_rq (not modelled)")


KINDS = {KIND: conv.convolution(KIND, terms, finish, rescale, cube_sums)}
FIELDS = {KIND: conv.FIELDS[KIND] | {"opt_rq", "opt_opd4_const", "opt_opd5_const", "opt_res0_sign", "sym_range",
                                     "opd2_n_str", "opd1_prec", "opd2_prec"} | set(FIELDS_READ)}
CHECKS = {KIND: check}
