"""AR (tsk_typ 3, long AR and short sAR): the element-wise arithmetic of the TIU, all 31 EU types.

Sources: isa-facts bm1684x-lowering.md (codes, rounding mode in opd2_n_str, div's iteration
count), tpu-mlir python/debugger/target_1684x/opparam.py `sAR_t_converter` (operand shapes,
result signs, clamp and copy_mb shapes, div's `iter`), tpu-mlir
third_party/ppl/runtime/checker/src/atomic_tensor_arithmetic.c (the TPU1686 firmware's
argument checks: which precisions each op takes, the ternary form, shifts with a signed
shift operand no wider than the shifted one), the golden yolov5s stream (adds, muls with
tsk_opd_num 3, copy, cast) and the vendor's Yuv2rgb answers (fp32 mul, mac, add, sub, max,
min, cast with rounding half away from zero: bit-exact, tests/models).

Operands: shape res0_n/c/h/w for every operand; opd0 (opd0_prec, opd0_sign), opd1
(opd1_prec, opd1_sign), each a local tensor in its layout (operands.py) or a constant
(X_const). The long class also carries opd0_n/c/h/w and opd1_n/c/h/w: they must be 0 (unset),
res0's size, or 1 where the operand's stride is 0 (a broadcast dimension); anything else is
refused. The result's precision is res0_prec and its sign (no res0_sign field exists)
follows tpu-mlir's reading: opd0_sign | opd1_sign, except cast (opd2_sign) and an integer
subtraction (sub, subs), whose result is signed whatever its operands are: BM1684's seed 003
lists U8_OP_U8_TO_S8 and no U8_OP_U8_TO_U8 for sub, and the shared topformer_seg_motion builds
(BM1684X, BM1688, CV184X) subtract two uint8 frames with every sign bit 0 into a tensor their
next conv reads as signed, as the network's CV181X build computes it (a signed difference; an
unsigned one would be max(a - b, 0). On smooth frames shifted by 8-16 pixels the BM1688 build
agrees with the CV181X one at cosine 0.72 with unsigned differences, 0.999 with signed ones;
shifted by 2-4 pixels, argmax 0.62 and 0.98). Results are written in the channels the lane
mask enables (operands.py).

Integer arithmetic is exact (int64) and the stored result wraps modulo 2**bits (add, sub,
mul, not, and, or, xor, copy, mac) or saturates to the destination (adds, subs, muls, max,
min, shifts, cast, abs, clamp, mulDHR). With tsk_opd_num = 3, add/sub/mul (+ satu) shift the
exact result by the constant opd2 (a signed int8 shift: > 0 left, < 0 right, rounded by the
mode in opd2_n_str), as the vendor's arith.muls does in the golden stream; the firmware check
calls this the ternary form (opd2 an int8 for int8/int4 sources).
Float arithmetic is exact in float64 (a product of two fp32 is exact there) and rounded once
to the destination by the mode in opd2_n_str (0, nearest even, in every vendor stream): bmk
assumes the hardware rounds each result once (mac: a*b + c fused; tpu-mlir has no model).

Kinds not used by any public stream, with the meaning bmk assumes (tests pin each):
  div        opd0 / opd1, floats only (the firmware check); the hardware iterates opd2_n_str + 1
             (1..5) reciprocal refinements, bmk returns the correctly rounded quotient
             (assumed: what enough iterations converge to; the count is checked, not modelled);
  clamp      min(max(opd0, lo), hi) with (lo, hi) = opd2 read as a compact (1, C, 1, 2) tensor
             of opd0's type (opparam's clamp shape); a constant opd2 is refused (one 32-bit
             field cannot hold two bounds);
  mac        res0 = opd0 * opd1 + res0 (floats: one rounding; integers int8 x int8 -> int16
             or int4 x int4 -> int8, the firmware check; opd2 is its constant int16 operand
             and must be 0: its role is not public);
  cshift     rotate opd0's bits (its width) left by opd1 (> 0) or right (< 0), result of
             opd0's type (the firmware check: R prec = A prec);
  mulDHR     the saturating rounding doubling multiply returning the high half (by analogy
             with ARM SQRDMULH, the name's likely meaning): (2 * a * b) / 2**bits rounded by
             opd2_n_str, bits = opd0's width, saturated; integers only;
  euIdxGen   res0[n, c, h, w] = h * W + w (the element's index in its channel's plane);
  npuIdxGen  res0[n, c, h, w] = the NPU channel c lives on ((start NPU + c) % npu_num);
  abs        |opd0| saturated to the destination;
  fsubabs    |opd0 - opd1| (floats), rounded once;
  copyMb     res0[n] = opd0[0] for every n (opparam reads opd0 as (1, C, H, W): copy to many
             batches);
  getFirstOne / getFirstZero: the index (from bit 0) of the lowest 1 / 0 bit of opd0's bit
             pattern, its width when there is none, saturated to the destination.
Shift values are saturated to [-32, 31] (seed 001's range); a right shift rounds by
opd2_n_str exactly from the int64 value; logicShift works on the source's bit pattern read
unsigned, its left shift exact before narrowing (seed 001's dst = src << shift: a u8 255 << 3
into u32 is 2040).
Selects: res0 = opd2 where opd0 > / == / < opd1, else 0; opd2 is a constant or, as opparam
reads it, a compact (1, C, 1, 1) tensor: one true value per channel.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import (check_result, check_shape, const, dt, mode_of, operand, read, shape_of,
                                      start_npu, tensor, write)

SHIFT_MIN, SHIFT_MAX = -32, 31
_BIG = 1 << 62      # beyond every 32-bit type: a saturating left shift may stop here


def shift_round(x, s, mode, saturate=True):
    """x * 2**s for s > 0, x / 2**-s rounded by mode otherwise (x, s int64 arrays; |s| <= 32).

    A left shift past int64 keeps its low bits (what a wrapping store reads) or, when the
    result saturates, stops at +-2**62 (which saturates every 32-bit type the same way).
    """
    x, s = np.asarray(x, np.int64), np.asarray(s, np.int64)
    if not s.size or s.max() <= 0:             # right shifts only (the usual requantization)
        return numerics.rshift_each(x, -s, mode)
    x, s = np.broadcast_arrays(x, s)
    up = np.maximum(s, 0)
    left = x << up
    if saturate:
        big = np.abs(x) > (_BIG >> up)
        left = np.where(big, np.sign(x) * _BIG, left)
    return np.where(s > 0, left, numerics.rshift_each(x, np.maximum(-s, 0), mode))


def _int_only(kind, *dts):
    for d in dts:
        if d.is_float:
            raise SimulationError(f"operands must have integer precisions, not {d!r}")


def _float_only(kind, *dts):
    for d in dts:
        if not d.is_float:
            raise SimulationError(f"operands must have float precisions, not {d!r}")


def _check_shapes(f, shape, names):
    """The long class's opd0/opd1 shapes: 0 (unset), res0's size, or 1 on a zero stride."""
    for name in names:
        for d, size in zip("nchw", shape):
            v = f.get(f"{name}_{d}", 0)
            if v in (0, size):
                continue
            if v == 1 and f.get(f"{name}_str", 0) == 3 and f.get(f"{name}_{d}_str", 0) == 0:
                continue
            raise SimulationError(f"{name}_{d} must be 0, res0_{d} ({size}) or 1 on a zero stride, not {v}")


def _inputs(m, f, kind, n_opd=2, res_like=None):
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    _check_shapes(f, shape, ("opd0", "opd1")[:n_opd])
    a_dt = dt(m, f, "opd0")
    # the result is checked before any operand is read (issue 24 item 3); its type: res0_prec,
    # or opd0's (res_like "opd0")
    check_result(m, tensor(m, f, "res0", shape, a_dt if res_like == "opd0" else dt(m, f, "res0", 0)))
    a = operand(m, f, "opd0", shape, a_dt)
    if n_opd == 1:
        return shape, a_dt, a, None, None
    b_dt = dt(m, f, "opd1")
    b = operand(m, f, "opd1", shape, b_dt)
    return shape, a_dt, a, b_dt, b


def _res(m, f, shape, sign):
    return tensor(m, f, "res0", shape, dt(m, f, "res0", sign))


def _sign01(f):
    return f.get("opd0_sign", 0) | f.get("opd1_sign", 0)


_ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _compute(op, a, b, floats):
    """a op b exactly: float64 for floats, int64 for integers. Only uint32 x uint32 products
    can leave int64; they are exact modulo 2**64 (what a wrapping store reads) and refused
    when they reach 2**63 and the result saturates (_check_product)."""
    if floats:
        return _ARITH[op](np.asarray(a, np.float64), np.asarray(b, np.float64))
    with np.errstate(over="ignore"):
        return _ARITH[op](np.asarray(a, np.int64), np.asarray(b, np.int64))


def _check_product(op, a, b, saturate):
    if op == "mul" and saturate:
        big = np.abs(np.asarray(a, np.float64) * np.asarray(b, np.float64)) >= 2.0 ** 63
        if np.any(big):
            raise SimulationError("saturating mul products must stay below 2**63 (int64), not "
                                  "uint32 x uint32 products that large (not modelled)")


def _opd_num(f, kind, allowed):
    n = f.get("tsk_opd_num", allowed[0])
    if n not in allowed:
        raise SimulationError(f"tsk_opd_num must be {' or '.join(map(str, allowed))}, not {n}")
    return n


def _arith(op, saturate):
    kind = f"arith.{op}{'s' if saturate else ''}"

    def run(m, f):
        """res = opd0 op opd1 (then shifted by opd2 with tsk_opd_num 3), wrapped or saturated."""
        n = _opd_num(f, kind, (2, 3))
        shape, a_dt, a, b_dt, b = _inputs(m, f, kind)
        res = _res(m, f, shape, _sign01(f) | (op == "sub"))
        floats = a_dt.is_float or b_dt.is_float or res.dtype.is_float
        if not floats:
            _check_product(op, a, b, saturate)
        v = _compute(op, a, b, floats)
        if n == 3:
            if floats or not f.get("opd2_const", 0):
                raise SimulationError(f"with tsk_opd_num 3 the data must be integers and opd2 a constant (the "
                                      f"shift), not opd2_const {f.get('opd2_const', 0)}")
            int8 = m.chip.code("tiu", "res0_prec", "int8")
            if f.get("opd2_prec", int8) != int8:
                raise SimulationError(f"with tsk_opd_num 3 opd2_prec must be int8 (the shift), not "
                                      f"{f.get('opd2_prec')}")
            # the shift is signed whatever opd2_sign says: the golden stream's muls carry
            # opd2_sign 0 with 248, a right shift by 8 (a left shift by 248 means nothing)
            s = const(f, "opd2", dt(m, f, "opd2", 1, prec=int8))
            v = shift_round(v, np.clip(s, SHIFT_MIN, SHIFT_MAX), mode_of(f), saturate)
        write(m, res, v, saturate, f, mode_of(f))
    run.__name__ = kind.replace(".", "_")
    return run


_LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _logic(op):
    def run(m, f):
        """res = opd0 AND / OR / XOR opd1 (seed 001 and/or/xor, +_C), bit patterns."""
        shape, a_dt, a, b_dt, b = _inputs(m, f, op)
        _int_only(op, a_dt, b_dt)
        res = _res(m, f, shape, _sign01(f))
        _int_only(op, res.dtype)
        write(m, res, _LOGIC[op](np.asarray(a, np.int64), np.asarray(b, np.int64)), False, f)
    run.__name__ = op
    return run


def _minmax(fn):
    def run(m, f):
        """res = max / min(opd0, opd1) (seed 001 max/min, +_C); tsk_opd_num 2 (two operands, as
        every vendor max/min carries: another count's meaning is not public)."""
        _opd_num(f, f"arith.{fn.__name__[:3]}", (2,))
        shape, a_dt, a, b_dt, b = _inputs(m, f, fn.__name__)
        res = _res(m, f, shape, _sign01(f))
        write(m, res, fn(a, b), True, f, mode_of(f))
    run.__name__ = fn.__name__
    return run


def not_(m, f):
    """res = NOT opd0 (bit pattern)."""
    shape, a_dt, a, _, _ = _inputs(m, f, "not", 1)
    _int_only("not", a_dt)
    res = _res(m, f, shape, f.get("opd0_sign", 0))
    write(m, res, np.invert(np.asarray(a, np.int64)), False, f)


def copy(m, f):
    """res = opd0 (a tensor or a constant fill), wrapped to the destination. A tensor copied in
    its own type keeps every value, which the access log says (the local-memory checks count no
    read or write of a tensor copied onto itself: lmemcheck.LmemCheck._copied_onto_itself)."""
    shape, a_dt, a, _, _ = _inputs(m, f, "copy", 1)
    res = _res(m, f, shape, f.get("opd0_sign", 0))
    write(m, res, a, False, f, mode_of(f))
    if m.log is not None and not f.get("opd0_const", 0) and dt(m, f, "res0", f.get("opd0_sign", 0)) == a_dt:
        m.log.copies = True


def copy_mb(m, f):
    """res[n] = opd0[0] for every batch n (opd0 read as (1, C, H, W))."""
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    a_dt = dt(m, f, "opd0")
    a = operand(m, f, "opd0", (1,) + shape[1:], a_dt)
    res = _res(m, f, shape, f.get("opd0_sign", 0))
    write(m, res, np.broadcast_to(a, shape), False, f, mode_of(f))


def cast(m, f):
    """Data conversion: res (res0_prec, opd2_sign) = opd0 rounded by opd2_n_str's mode (float
    results, and floats into integers) and saturated. tsk_opd_num 1 (one operand, as every
    vendor cast carries: another count's meaning is not public).

    A float cast into its own precision rounds to an integral value by the mode: TPU-Kernel's
    tpu_bdc_fp_round / fp_floor / fp_ceil (tpu_kernel.h: one dtype for source and result) are
    this command. The vendor's CV184X cmodel on the softmax of the CV184X topformer_seg_person_
    face_vehicle build: its bf16 -> bf16 cast with mode 3 (down) gives floor(x * log2(e)), the
    power of two of its exponential (-0.97 -> -1.0)."""
    _opd_num(f, "arith.cast", (1,))
    shape, a_dt, a, _, _ = _inputs(m, f, "cast", 1)
    res = _res(m, f, shape, f.get("opd2_sign", 0))
    mode = mode_of(f)
    if a_dt.is_float and res.dtype == a_dt:
        a = numerics.round_float(a, mode)
    write(m, res, a, True, f, mode)


def _shift(logical):
    kind = "arith.logicShift" if logical else "arith.ashift"

    def run(m, f):
        """dst = src << shift (shift > 0) or src >> -shift rounded (seed 001 arithmetic_shift,
        logical_shift, +_C)."""
        shape, a_dt, a, b_dt, b = _inputs(m, f, kind)
        _int_only(kind, a_dt, b_dt)
        res = _res(m, f, shape, f.get("opd0_sign", 0))
        _int_only(kind, res.dtype)
        s = np.clip(np.asarray(b, np.int64), SHIFT_MIN, SHIFT_MAX)
        x = np.asarray(a, np.int64)
        if logical:                            # the source's bit pattern, read unsigned
            x = x & ((1 << a_dt.bits) - 1)
        v = shift_round(x, s, mode_of(f))
        write(m, res, v, True, f)
    run.__name__ = kind.replace(".", "_")
    return run


def cshift(m, f):
    """Rotate opd0's bit pattern (its width) left by opd1 (> 0) or right (< 0)."""
    shape, a_dt, a, b_dt, b = _inputs(m, f, "arith.cshift", res_like="opd0")
    _int_only("arith.cshift", a_dt, b_dt)
    res = tensor(m, f, "res0", shape, a_dt)
    bits = a_dt.bits
    x = np.asarray(a, np.int64) & ((1 << bits) - 1)
    s = np.asarray(b, np.int64) % bits
    v = ((x << s) | (x >> ((bits - s) % bits))) & ((1 << bits) - 1)
    write(m, res, v, False, f)


_CMP = {"gt": np.greater, "eq": np.equal, "lt": np.less}


def _select(cond):
    def run(m, f):
        """res = true_val (opd2) where opd0 > / == / < opd1, else 0 (seed 001 greater, equal,
        less, +_C)."""
        shape, a_dt, a, b_dt, b = _inputs(m, f, "select")
        res = _res(m, f, shape, f.get("opd2_sign", 0))
        t = operand(m, f, "opd2", (1, shape[1], 1, 1), dt(m, f, "opd2"), "compact")
        write(m, res, np.where(_CMP[cond](a, b), t, 0), False, f)
    run.__name__ = f"select_{cond}"
    return run


def exact_quotient(a, b, b_dt, r_dt, iterations):
    """opd0 / opd1 exactly (float64), to be rounded once into the result."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(a, np.float64) / np.asarray(b, np.float64)


def division(quotient=exact_quotient):
    """arith.div with quotient(a, b, opd1's dtype, res0's dtype, iterations) -> the values stored (a sister chip
    iterates its reciprocal: bmk/sim/bm1688/div.py)."""
    def div(m, f):
        """res = opd0 / opd1 (floats), correctly rounded by the mode; opd2_n_str + 1 iterations."""
        it = f.get("opd2_n_str", 0)
        if not 0 <= it <= 4:
            raise SimulationError(f"opd2_n_str (iterations - 1) must be in [0, 4], not {it}")
        shape, a_dt, a, b_dt, b = _inputs(m, f, "arith.div")
        res = _res(m, f, shape, _sign01(f))
        _float_only("arith.div", a_dt, b_dt, res.dtype)
        write(m, res, quotient(a, b, b_dt, res.dtype, it + 1), True, f)
    return div


div = division()


def clamp(m, f):
    """res = min(max(opd0, lo), hi), (lo, hi) = opd2 as a compact (1, C, 1, 2) tensor."""
    shape, a_dt, a, _, _ = _inputs(m, f, "arith.clamp", 1)
    if f.get("opd2_const", 0):
        raise SimulationError("opd2_const must be 0 (the bounds are a (1, C, 1, 2) tensor), not 1")
    bounds = read(m, tensor(m, f, "opd2", (1, shape[1], 1, 2), a_dt, "compact"))
    lo, hi = bounds[..., :1], bounds[..., 1:]
    res = tensor(m, f, "res0", shape, a_dt)
    write(m, res, np.minimum(np.maximum(a, lo), hi), True, f)


def mac(m, f):
    """res0 = opd0 * opd1 + res0 (floats rounded once; integers wrap)."""
    n = _opd_num(f, "arith.mac", (2, 3))
    shape, a_dt, a, b_dt, b = _inputs(m, f, "arith.mac")
    res = _res(m, f, shape, _sign01(f))
    floats = a_dt.is_float or b_dt.is_float or res.dtype.is_float
    if n == 3 and (f.get("opd2_addr", 0) or not f.get("opd2_const", 0)):
        raise SimulationError(f"opd2 (its constant int16 operand, whose role is not public) must be the "
                              f"constant 0, not opd2_const {f.get('opd2_const', 0)} opd2_addr {f.get('opd2_addr', 0)}")
    acc = read(m, res)
    if floats:
        v = np.asarray(a, np.float64) * np.asarray(b, np.float64) + acc
    else:
        v = np.asarray(a, np.int64) * np.asarray(b, np.int64) + acc
    write(m, res, v, False, f, mode_of(f))


def mul_dhr(m, f):
    """(2 * a * b) / 2**bits rounded by the mode, saturated (rounding doubling high multiply)."""
    shape, a_dt, a, b_dt, b = _inputs(m, f, "arith.mulDHR")
    _int_only("arith.mulDHR", a_dt, b_dt)
    res = _res(m, f, shape, _sign01(f))
    _check_product("mul", a, b, True)
    p = np.asarray(a, np.int64) * np.asarray(b, np.int64)
    write(m, res, numerics.rshift_each(p, a_dt.bits - 1, mode_of(f)), True, f)


def eu_idx(m, f):
    """res0[n, c, h, w] = h * W + w."""
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    res = tensor(m, f, "res0", shape, dt(m, f, "res0", f.get("opd0_sign", 0)))
    n, c, h, w = shape
    write(m, res, np.arange(h * w).reshape(1, 1, h, w), True, f)


def npu_idx(m, f):
    """res0[n, c, h, w] = the NPU of channel c."""
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    res = tensor(m, f, "res0", shape, dt(m, f, "res0", f.get("opd0_sign", 0)))
    lanes = (start_npu(m, res.addr) + np.arange(shape[1])) % m.npu_num
    write(m, res, lanes.reshape(1, -1, 1, 1), True, f)


def abs_(m, f):
    """res = |opd0|, saturated."""
    shape, a_dt, a, _, _ = _inputs(m, f, "arith.abs", 1)
    res = _res(m, f, shape, f.get("opd0_sign", 0))
    write(m, res, np.abs(a), True, f, mode_of(f))


def fsubabs(m, f):
    """res = |opd0 - opd1| (floats)."""
    shape, a_dt, a, b_dt, b = _inputs(m, f, "arith.fsubabs")
    res = _res(m, f, shape, _sign01(f))
    _float_only("arith.fsubabs", a_dt, b_dt, res.dtype)
    write(m, res, np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)), True, f, mode_of(f))


def _first(bit):
    kind = f"arith.getFirst{'One' if bit else 'Zero'}"

    def run(m, f):
        """The index of the lowest 1 (0) bit of opd0's pattern, its width when none."""
        shape, a_dt, a, _, _ = _inputs(m, f, kind, 1)
        _int_only(kind, a_dt)
        res = _res(m, f, shape, f.get("opd0_sign", 0))
        x = np.asarray(a, np.int64) & ((1 << a_dt.bits) - 1)
        if not bit:
            x = ~x & ((1 << a_dt.bits) - 1)
        low = x & -x                                      # the lowest set bit alone
        idx = np.where(x == 0, a_dt.bits, np.log2(np.maximum(low, 1)).astype(np.int64))
        write(m, res, idx, True, f)
    run.__name__ = kind.replace(".", "_")
    return run


KINDS = {
    "arith.add": _arith("add", False), "arith.sub": _arith("sub", False), "arith.mul": _arith("mul", False),
    "arith.adds": _arith("add", True), "arith.subs": _arith("sub", True), "arith.muls": _arith("mul", True),
    "arith.and": _logic("and"), "arith.or": _logic("or"), "arith.xor": _logic("xor"), "arith.not": not_,
    "arith.max": _minmax(np.maximum), "arith.min": _minmax(np.minimum), "arith.copy": copy, "arith.cast": cast,
    "arith.logicShift": _shift(True), "arith.ashift": _shift(False), "arith.cshift": cshift,
    "arith.selectGreat": _select("gt"), "arith.selectEqual": _select("eq"), "arith.selectLess": _select("lt"),
    "arith.div": div, "arith.clamp": clamp, "arith.mac": mac, "arith.mulDHR": mul_dhr,
    "arith.euIdxGen": eu_idx, "arith.npuIdxGen": npu_idx, "arith.abs": abs_, "arith.fsubabs": fsubabs,
    "arith.copyMb": copy_mb, "arith.getFirstOne": _first(1), "arith.getFirstZero": _first(0),
}

# Fields each kind executes (fields.py): the result and opd0/opd1 with their long-class shapes,
# the lane mask, the rounding mode (or div's iteration count) in opd2_n_str; opd2 where a kind
# reads it (a constant shift, mac's constant, a select's true value, clamp's bounds; cast and
# the selects take their result's sign from opd2_sign).
_BASE = F.names(F.operand("res0", shape=True), F.operand("opd0", shape=True), "tsk_lane_num", "opd2_n_str",
                "tsk_opd_num")
_TWO = _BASE | F.operand("opd1", shape=True)
_OPD2 = {"opd2_addr", "opd2_const", "opd2_prec", "opd2_sign"}
FIELDS = {k: _TWO for k in KINDS}
FIELDS.update({k: _TWO | _OPD2 for k in ("arith.add", "arith.sub", "arith.mul", "arith.adds", "arith.subs",
                                         "arith.muls", "arith.mac", "arith.selectGreat", "arith.selectEqual",
                                         "arith.selectLess")})
# One-operand kinds have no opd1: its fields describe no operand (the firmware leaves them
# as they come), so they cannot change the result and are not read.
_ONE = _BASE | F.operand("opd1", shape=True)
FIELDS.update({k: _ONE for k in ("arith.not", "arith.copy", "arith.copyMb", "arith.abs", "arith.getFirstOne",
                                 "arith.getFirstZero")})
FIELDS["arith.cast"] = _ONE | {"opd2_sign"}
for _k in ("arith.selectGreat", "arith.selectEqual", "arith.selectLess"):     # no opd3 operand
    FIELDS[_k] = FIELDS[_k] | {"opd3_addr", "opd3_const"}
FIELDS["arith.clamp"] = _ONE | {"opd2_addr", "opd2_const"}
FIELDS.update({k: _TWO for k in ("arith.euIdxGen", "arith.npuIdxGen")})    # no operands: only res0 is read
