"""RQ&DQ (tsk_typ 4, long RQ&DQ and short sRQ&sDQ): requantize and dequantize.

Sources: isa-facts bm1684x-lowering.md (eu 0..2 rq, 3..5 dq; the rounding mode in
opd2_n_str), tpu-mlir python/debugger/target_1684x/opparam.py `sRQ_sDQ_t_converter` (the
BM1684X operands: where each parameter sits, tensor or constant, the result's sign
opd2_sign), the TPU1686 firmware's rq/dq gen_cmd source (BM1688 registers, public with the
TPU1686 sources; its comments give the arithmetic: "requantize with fp32 scale and
zero-point", "RQ_1 with int scale-factor, right-shift and zp", the shift's sign "negative:
right shift, positive: left shift", and rq0's opd2_n_str = f2i_mode << 3 | i2f_mode), tpu-mlir
third_party/ppl/runtime/checker/src/atomic_rqdq.c (the precisions each takes), the golden
yolov5s stream (68 rq1: int32 sums to int8 with per-channel triples, round half up) and its
vendor disassembly.

A (opd0): res0_n/c/h/w aligned of (opd0_prec, opd0_sign); R (res0) aligned of (res0_prec,
opd2_sign). Per-channel parameters: a tensor at opd1_addr, aligned (1, C, 1, k) int32/fp32
words, or constants (opd1_const) in opd1_addr / opd2_addr as opparam reads them:
  rq0  y = fp32(A) * scale + zp in fp32, rounded into R by f2i; (scale, zp) fp32 at +0, +4 or
       the constants opd1_addr (scale bits), opd2_addr (zp bits); fp32(A) rounds by i2f;
       opd2_n_str = f2i << 3 | i2f
  rq1  y = A * scale shifted by shift (> 0 left, < 0 right rounded by opd2_n_str) + zp,
       saturated into R; (scale, shift, zp) int32 at +0, +4, +8 (shift read as an int8, zp
       as an int16 of R's sign), or the constants scale = opd1_addr, shift = opd2_addr's low
       byte, zp = the 16 bits above it
  dq0  R (fp32) = (A - zp) * scale: (zp int32, scale fp32) at +0, +4, or the constants zp =
       opd1_addr (an int32 of A's sign), scale = opd2_addr (fp32 bits): opparam's constant
       form (opd1 the zp, opd2 the scale, "if opd1 is_const: opd2 address = opd2_addr"), and
       the real networks' (tdl_models cls_attribute_face: its four sigmoid tables' uint8
       outputs dequantized with opd1_addr 0 and opd2_addr 0x3b808081 = 1/255; the reverse
       reading gives a scale of 0 and -0.0 outputs); the int -> fp32 conversion rounds by
       opd2_n_str
  dq1  y = (A - zp) * scale shifted by shift as rq1, saturated into R; (zp, scale, shift)
       int32 at +0, +4, +8, or the constants zp = opd1_addr's low 16 bits (of A's sign),
       shift = its high 16 bits (int16), scale = opd2_addr (opparam)
  rq2, dq2 (no public operand reading: opparam refuses them) are taken as rq0 and dq0 on any
       precision: rq2 also takes a float A, dq2 also writes fp16 / bf16 results (bmk's
       assumption, by symmetry with the float-scale forms).
Float steps are fp32 operations, each rounded to nearest even (bmk's assumption; i2f/f2i are
the modes the command names).
"""
import numpy as np

from bmk import dtypes
from bmk import numerics
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.ar import shift_round
from bmk.sim.bm1684x.operands import check_shape, const_bits, dt, read, shape_of, tensor, write


def _params(m, f, c, count, kinds):
    """Per-channel parameters (1, C, 1, 1) each: from the aligned int32 words at opd1_addr."""
    raw = read(m, tensor(m, f, "opd1", (1, c, 1, count), dtypes.UINT32, "aligned"))
    out = []
    for k, kind in enumerate(kinds):
        bits = raw[..., k:k + 1]
        if kind == "f32":
            out.append(bits.astype(np.uint32).view(np.float32).astype(np.float64))
        else:
            out.append(numerics.sign_extend(bits, kind))
    return out


def _fp32(x, mode=numerics.Round.HALF_TO_EVEN):
    return numerics.to_float(x, dtypes.FP32, mode).astype(np.float64)


def _a(m, f, shape):
    """A's dtype and values (an integer precision but for rq2: CHECKS)."""
    a_dt = dt(m, f, "opd0")
    return a_dt, read(m, tensor(m, f, "opd0", shape, a_dt, "aligned"))


def _modes(f):
    v = f.get("opd2_n_str", 0)
    return numerics.as_mode(v & 7), numerics.as_mode(v >> 3)


def _rq_float(floats_ok):
    kind = "quant.rq2" if floats_ok else "quant.rq0"

    def run(m, f):
        n, c, h, w = shape = shape_of(f)
        check_shape(m, "res0", shape)
        a_dt, a = _a(m, f, shape)
        i2f, f2i = _modes(f)
        if f.get("opd1_const", 0):
            scale = const_bits(f.get("opd1_addr", 0), dtypes.FP32)
            zp = const_bits(f.get("opd2_addr", 0), dtypes.FP32)
        else:
            scale, zp = _params(m, f, c, 2, ("f32", "f32"))
        y = _fp32(_fp32(_fp32(a, i2f) * scale) + zp)
        res = tensor(m, f, "res0", shape, dt(m, f, "res0", f.get("opd2_sign", 0)), "aligned")
        write(m, res, y, True, f, f2i)
    run.__name__ = kind.split(".")[1]
    return run


def rq1(m, f):
    n, c, h, w = shape = shape_of(f)
    check_shape(m, "res0", shape)
    a_dt, a = _a(m, f, shape)
    r_dt = dt(m, f, "res0", f.get("opd2_sign", 0))
    if f.get("opd1_const", 0):
        scale = const_bits(f.get("opd1_addr", 0), dtypes.INT32)
        bits = f.get("opd2_addr", 0)
        shift = int(numerics.sign_extend(bits, 8))
        zp = int(numerics.sign_extend(bits >> 8, 16)) if r_dt.signed else (bits >> 8) & 0xFFFF
    else:
        scale, shift, zp = _params(m, f, c, 3, (32, 8, 16))
        if not r_dt.signed:
            zp = zp & 0xFFFF
    y = shifted(np.asarray(a, np.int64) * scale, shift, numerics.as_mode(f.get("opd2_n_str", 0))) + zp
    write(m, tensor(m, f, "res0", shape, r_dt, "aligned"), y, True, f)


def shifted(x, shift, mode):
    """x << shift (> 0, saturating past 2**62) or x >> -shift rounded. Shifts are clipped to
    [-62, 62]: a product of two 32-bit values shifted right by 62 or more rounds to what it
    rounds to at 62 (its quotient is below one half), and left shifts that far saturate."""
    return shift_round(x, np.clip(np.asarray(shift, np.int64), -62, 62), mode)


def dequant_float(any_out, zp_field="opd1_addr", scale_field="opd2_addr"):
    """dq0 (any_out: dq2); the constant form's zero point and scale in zp_field and scale_field
    (BM1684X's; BM1688 swaps them: bmk/sim/bm1688/quant.py)."""
    kind = "quant.dq2" if any_out else "quant.dq0"

    def run(m, f):
        n, c, h, w = shape = shape_of(f)
        check_shape(m, "res0", shape)
        a_dt, a = _a(m, f, shape)
        if f.get("opd1_const", 0):
            zp = const_bits(f.get(zp_field, 0), dtypes.integer(32, a_dt.signed))
            scale = const_bits(f.get(scale_field, 0), dtypes.FP32)
        else:
            zp, scale = _params(m, f, c, 2, (32, "f32"))
        mode = numerics.as_mode(f.get("opd2_n_str", 0) & 7)
        y = _fp32(_fp32(np.asarray(a, np.int64) - zp, mode) * scale)
        r_dt = dt(m, f, "res0", 1)              # fp32 (dq0) or a float (dq2): CHECKS
        write(m, tensor(m, f, "res0", shape, r_dt, "aligned"), y, True, f)
    run.__name__ = kind.split(".")[1]
    return run


def dq1(m, f):
    n, c, h, w = shape = shape_of(f)
    check_shape(m, "res0", shape)
    a_dt, a = _a(m, f, shape)
    if f.get("opd1_const", 0):
        bits = f.get("opd1_addr", 0)
        zp = int(numerics.sign_extend(bits, 16)) if a_dt.signed else bits & 0xFFFF
        shift = int(numerics.sign_extend(bits >> 16, 16))
        scale = const_bits(f.get("opd2_addr", 0), dtypes.INT32)
    else:
        zp, scale, shift = _params(m, f, c, 3, (32, 32, 8))
    y = shifted((np.asarray(a, np.int64) - zp) * scale, shift, numerics.as_mode(f.get("opd2_n_str", 0)))
    write(m, tensor(m, f, "res0", shape, dt(m, f, "res0", f.get("opd2_sign", 0)), "aligned"), y, True, f)


KINDS = {"quant.rq0": _rq_float(False), "quant.rq1": rq1, "quant.rq2": _rq_float(True),
         "quant.dq0": dequant_float(False), "quant.dq1": dq1, "quant.dq2": dequant_float(True)}

_ALL = F.names({f"res0_{d}" for d in "nchw"}, {"res0_addr", "res0_prec", "opd0_addr", "opd0_prec", "opd0_sign",
                                               "opd1_addr", "opd1_const", "opd2_addr", "opd2_sign", "opd2_n_str",
                                               "tsk_lane_num"})
FIELDS = {k: _ALL for k in KINDS}


def _check(kind):
    """The static refusals (CHECKS): A of an integer precision (rq2 also takes a float); the
    result of dq0 fp32, of dq2 a float."""
    def check(chip, f):
        def is_float(field):
            return (chip.member("tiu", "res0_prec", f.get(field, 0)) or "").startswith(("fp", "bf"))
        if kind != "quant.rq2" and is_float("opd0_prec"):
            raise F.refuse(kind, "opd0_prec", f.get("opd0_prec", 0), "must be an integer precision")
        r = chip.member("tiu", "res0_prec", f.get("res0_prec", 0))
        if kind == "quant.dq0" and r != "fp32":
            raise F.refuse(kind, "res0_prec", f.get("res0_prec", 0), "must be fp32")
        if kind == "quant.dq2" and not is_float("res0_prec"):
            raise F.refuse(kind, "res0_prec", f.get("res0_prec", 0), "must be a float precision")
    check.__name__ = "check_" + kind.split(".")[1]
    return check


CHECKS = {k: _check(k) for k in KINDS}
