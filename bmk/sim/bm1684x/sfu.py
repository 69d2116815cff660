"""SFU (tsk_typ 9, long SFU and short sSFU): special functions of float data.

Sources: isa-facts bm1684x-lowering.md (eu 12 taylor_4x, 13 taylor, 15 normalize,
17 rsqrt), tpu-mlir python/debugger/target_1684x/opparam.py `sSFU_t_converter` (opd0 and res0
aligned over res0's shape; the coefficient table opd1 (1, min(C, 64), 1, opd1_n) with
strides (0, 0, opd1_n, 1): one table per NPU; rsqrt_n = opd2_n_str + 1), the TPU-Kernel
header (tpu-mlir third_party/ppl/runtime/.../tpu_kernel.h: tpu_bdc_fp_taylor(dst, src,
coeff, shape, num, dtype), tpu_bdc_fp_exponent_part(dst, src, shape, dst_dtype, src_dtype)),
tpu-mlir python/debugger/target_1684x/cmodel.py (the static memory tables the taylor
coefficients come from, e.g. EXP_COEFF = 1/k! from k = 0).

  taylor, taylor_4x  res0 = sum_{k < opd1_n} c_k * x^k, c_k the k-th coefficient of the NPU's
             table (opd1, of opd0's type), by Horner steps in opd0's type: each product and
             each sum rounded to it, to nearest even (the vendor's CV184X cmodel, bit for bit,
             on the 1,920 bf16 exponentials of the first softmax of the CV184X
             topformer_seg_person_face_vehicle build; fp32 steps, as bmk had them, or a final
             rounding towards zero missed 35% of them by one step); taylor_4x is taken as the
             same function (its name's "4x" read as a throughput variant: an assumption); the
             last sum is stored into res0's type by the mode in opd2_n_str, as AR's results
             (CV184X's bf16 exponentials set 2, into their own type: exact)
  normalize  res0 = the exponent part of x (tpu_bdc_fp_exponent_part): the biased exponent
             field minus the bias (fp32/bf16 127, fp16 15), as an integer of res0_prec; zeros
             and subnormals give the field's value minus the bias (bmk's assumption)
  rsqrt      res0 = 1 / sqrt(x), correctly rounded to res0's type; the hardware iterates
             opd2_n_str + 1 (1..4 accepted) refinements (modelled for bf16 on the TPU1686
             family: bmk/sim/bm1688/rsqrt.py; checked elsewhere, not modelled); it has no
             table (opparam: one operand), so opd1_n selects nothing and any value is taken
             (CV184X's bf16 rsqrts set 3)
opd0's precision must be a float (opd0_prec), res0's is res0_prec.
"""
import numpy as np

from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import Tensor, check_shape, dt, mode_of, read, read_raw, rounded, shape_of, tensor, write

_BIAS = {"fp32": (23, 0xFF, 127), "bf16": (7, 0xFF, 127), "fp16": (10, 0x1F, 15)}


def _x(m, f, kind):
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    x_dt = dt(m, f, "opd0", 1)
    if not x_dt.is_float:
        raise SimulationError(f"opd0_prec must be a float precision, not {x_dt!r}")
    return shape, x_dt, tensor(m, f, "opd0", shape, x_dt, "aligned")


def _taylor(kind):
    def run(m, f):
        shape, x_dt, xt = _x(m, f, kind)
        n = f.get("opd1_n", 0)
        if n < 1:
            raise SimulationError(f"opd1_n (the number of coefficients) must be >= 1, not {n}")
        lanes = min(shape[1], m.npu_num)
        table = read(m, Tensor("opd1", f.get("opd1_addr", 0), (1, lanes, 1, n), (0, 0, n, 1), x_dt))
        x = read(m, xt)
        coeff = np.resize(table.reshape(lanes, n), (shape[1], n))      # channel c: NPU c's table
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            acc = np.broadcast_to(coeff[None, :, None, None, n - 1], x.shape)
            for k in range(n - 2, -1, -1):
                acc = rounded(rounded(acc * x, x_dt) + coeff[None, :, None, None, k], x_dt)
        write(m, tensor(m, f, "res0", shape, dt(m, f, "res0", 1), "aligned"), acc, True, f, mode_of(f))
    run.__name__ = kind.split(".")[1]
    return run


def normalize(m, f):
    shape, x_dt, xt = _x(m, f, "sfu.normalize")
    shift, mask, bias = _BIAS[x_dt.name]
    bits = read_raw(m, xt).view({32: np.uint32, 16: np.uint16}[x_dt.bits]).astype(np.int64)
    r_dt = dt(m, f, "res0", 1)
    if r_dt.is_float:
        raise SimulationError(f"res0_prec must be an integer precision, not {r_dt!r}")
    write(m, tensor(m, f, "res0", shape, r_dt, "aligned"), ((bits >> shift) & mask) - bias, True, f)


def exact_rsqrt(x, x_dt, r_dt, iterations):
    """1 / sqrt(x) exactly (float64), to be rounded once into the result."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(x)


def reciprocal_sqrt(root=exact_rsqrt):
    """sfu.rsqrt with root(x, opd0's dtype, res0's dtype, iterations) -> the values stored (a
    sister chip iterates it: bmk/sim/bm1688/rsqrt.py)."""
    def rsqrt(m, f):
        it = f.get("opd2_n_str", 0)
        if not 0 <= it <= 3:
            raise SimulationError(f"opd2_n_str (iterations - 1) must be in [0, 3], not {it}")
        shape, x_dt, xt = _x(m, f, "sfu.rsqrt")
        res = tensor(m, f, "res0", shape, dt(m, f, "res0", 1), "aligned")
        write(m, res, root(read(m, xt), x_dt, res.dtype, it + 1), True, f)
    return rsqrt


rsqrt = reciprocal_sqrt()


KINDS = {"sfu.taylor_4x": _taylor("sfu.taylor_4x"), "sfu.taylor": _taylor("sfu.taylor"),
         "sfu.normalize": normalize, "sfu.rsqrt": rsqrt}

_BASE = F.names({f"res0_{d}" for d in "nchw"}, {"res0_addr", "res0_prec", "opd0_addr", "opd0_prec", "tsk_lane_num"})
FIELDS = {"sfu.taylor_4x": _BASE | {"opd1_addr", "opd1_n", "opd2_n_str"},
          "sfu.taylor": _BASE | {"opd1_addr", "opd1_n", "opd2_n_str"},
          "sfu.normalize": _BASE, "sfu.rsqrt": _BASE | {"opd2_n_str", "opd1_n"}}
