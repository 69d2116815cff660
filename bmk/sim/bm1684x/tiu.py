"""bm1684x TIU semantics: AR (tsk_typ 3), CMP (13), VC (14) and SYSID (15), long and short.

Kinds are the spec's names (specs/bm1684x/tiu.toml); a short class shares its long class's
kinds and is read by the same function (operands.py: fields a class lacks read as 0).

AR (seed 001 element-wise functions). Shape: res0_n/c/h/w for every operand. Data types: opd0
(opd0_prec, opd0_sign), opd1 (opd1_prec, opd1_sign); the result's precision is res0_prec and
its sign (no res0_sign field exists) follows tpu-mlir's reading of the registers: opd0_sign
or opd1_sign, except
  cast (data_convert)            opd2_sign
  logicShift, ashift             opd0_sign (the shift operand is always signed)
  selectGreat/Equal/Less         opd2_sign (the selected value's sign)
Integer arithmetic is exact (int64); the stored result wraps modulo 2**bits (add, sub, mul,
not, and, or, xor, copy) or saturates to the destination type (adds, subs, muls, max, min,
shifts, cast). With tsk_opd_num = 3, add/sub/mul (+ satu) shift the exact result by the
constant opd2 (its low 8 bits as a signed int8: > 0 left, < 0 right, rounded by the mode in
opd2_n_str) before storing, as the vendor's arith.muls does in the golden stream.
Shifts: shift values are saturated to the seed's range [-32, 31]; a right shift by n rounds
by `rounding_mode` (opd2_n_str, numerics.Round) exactly, from the int64 value;
  ashift      x << s (exact) or round(x / 2**-s), saturated to the destination;
  logicShift  on the source's bit pattern (read unsigned): x << s exact (seed 001's
              dst = src << shift: a u8 255 << 3 into u32 is 2040), x >> n fills zeros,
              rounding by the mode; the result saturates to the (unsigned) destination.
Selects: res = true_val (opd2, a constant or a tensor) where opd0 > / == / < opd1, else 0,
stored as a bit pattern of the destination width.

CMP (comparisons with true_val): sel_gt / sel_eq / sel_lt: res0 = opd2 where opd0 > / == / <
opd1, else opd3 (true_val and 0); gt_and_sel / lt_and_sel also write res0 = the larger /
smaller of opd0 and opd1 and the selected value to res1 (tpu-mlir's operand reading). opd1
has opd0's type in the short class (it has no opd1_prec/opd1_sign); opd3 has opd2's type;
opd2/opd3 tensors and the results are aligned (the long class's res0_str is honoured).

VC (vectors in, matrix out; bm1684x-memory.md "vector layout", "matrix layout", tpu-mlir's
sVC reading): src0 is the aligned tensor (1, opd0_c, 1, opd0_w) and its length is
(opd0_c - 1) * opd0_w + opd1_w (opd1_w: the elements in its last channel); src1 is the aligned
tensor (1, res0_c, 1, res0_w); dst is the aligned tensor (rows, res0_c, 1, res0_w), row m
holding op(src0[m], src1[j]) at channel j // res0_w, position j % res0_w for every j <
res0_c * res0_w (the last channel's tail beyond src1's length is computed from src1's tail).
Types as AR; select's true_val is opd2_addr in the destination's type.

SYSID: end, nop, intr_barrier and data_barrier change no memory.
"""
import numpy as np

from bmk.errors import SimulationError
from bmk import numerics
from bmk.sim.bm1684x.operands import check_shape, const, dtype_of, operand, read, tensor, write

SHIFT_MIN, SHIFT_MAX = -32, 31


def _shape(f):
    return tuple(f.get(f"res0_{d}", 0) for d in "nchw")


def _dt(m, f, name, sign=None):
    s = f.get(f"{name}_sign", 0) if sign is None else sign
    return dtype_of(m, f.get(f"{name}_prec", 0), s, name)


def _int_only(kind, *dts):
    for dt in dts:
        if dt.is_float:
            raise SimulationError(f"{kind} operands must have integer precisions, not {dt!r}")


def _mode(f):
    return numerics.as_mode(f.get("opd2_n_str", 0))


_BIG = 1 << 62      # beyond every 32-bit type: a saturating left shift may stop here


def shift_round(x, s, mode, saturate=True):
    """x * 2**s for s > 0, x / 2**-s rounded by mode otherwise (x, s int64 arrays; |s| <= 32).

    A left shift past int64 keeps its low bits (what a wrapping store reads) or, when the
    result saturates, stops at +-2**62 (which saturates every 32-bit type the same way).
    """
    x, s = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(s, np.int64))
    up = np.maximum(s, 0)
    left = x << up
    if saturate:
        big = np.abs(x) > (_BIG >> up)
        left = np.where(big, np.sign(x) * _BIG, left)
    return np.where(s > 0, left, numerics.rshift_each(x, np.maximum(-s, 0), mode))


# -- AR -------------------------------------------------------------------------------------
def _ar_inputs(m, f, kind, n_opd=2):
    shape = _shape(f)
    check_shape(m, "res0", shape)
    a_dt = _dt(m, f, "opd0")
    a = operand(m, f, "opd0", shape, a_dt)
    if n_opd == 1:
        return shape, a_dt, a, None, None
    b_dt = _dt(m, f, "opd1")
    b = operand(m, f, "opd1", shape, b_dt)
    return shape, a_dt, a, b_dt, b


def _res(m, f, shape, sign):
    return tensor(m, f, "res0", shape, _dt(m, f, "res0", sign))


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


def _arith(op, saturate):
    def run(m, f):
        """res = opd0 op opd1 (then shifted by opd2 with tsk_opd_num 3), wrapped or saturated."""
        shape, a_dt, a, b_dt, b = _ar_inputs(m, f, op)
        res = _res(m, f, shape, f.get("opd0_sign", 0) | f.get("opd1_sign", 0))
        floats = a_dt.is_float or b_dt.is_float or res.dtype.is_float
        if not floats:
            _check_product(op, a, b, saturate)
        v = _compute(op, a, b, floats)
        if f.get("tsk_opd_num", 2) == 3:
            if floats or not f.get("opd2_const", 0):
                raise SimulationError(f"{op} with tsk_opd_num 3 must be integer with a constant opd2 (the "
                                      f"shift), not opd2_const {f.get('opd2_const', 0)}")
            s = const(f, "opd2", dtype_of(m, 0, 1, "opd2"))       # the shift: a signed int8
            v = shift_round(v, np.clip(s, SHIFT_MIN, SHIFT_MAX), _mode(f), saturate)
        write(m, res, v, saturate)
    run.__name__ = f"{op}{'_satu' if saturate else ''}"
    return run


_LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _logic(op):
    def run(m, f):
        """res = opd0 AND / OR / XOR opd1 (seed 001 and/or/xor, +_C), bit patterns."""
        shape, a_dt, a, b_dt, b = _ar_inputs(m, f, op)
        _int_only(op, a_dt, b_dt)
        res = _res(m, f, shape, f.get("opd0_sign", 0) | f.get("opd1_sign", 0))
        _int_only(op, res.dtype)
        write(m, res, _LOGIC[op](np.asarray(a, np.int64), np.asarray(b, np.int64)), False)
    run.__name__ = op
    return run


def _minmax(fn):
    def run(m, f):
        """res = max / min(opd0, opd1) (seed 001 max/min, +_C)."""
        shape, a_dt, a, b_dt, b = _ar_inputs(m, f, fn.__name__)
        res = _res(m, f, shape, f.get("opd0_sign", 0) | f.get("opd1_sign", 0))
        write(m, res, fn(a, b), True)
    run.__name__ = fn.__name__
    return run


def not_(m, f):
    """res = NOT opd0 (bit pattern)."""
    shape, a_dt, a, _, _ = _ar_inputs(m, f, "not", 1)
    _int_only("not", a_dt)
    res = _res(m, f, shape, f.get("opd0_sign", 0))
    write(m, res, np.invert(np.asarray(a, np.int64)), False)


def copy(m, f):
    """res = opd0 (a tensor or a constant fill), wrapped to the destination."""
    shape, a_dt, a, _, _ = _ar_inputs(m, f, "copy", 1)
    res = _res(m, f, shape, f.get("opd0_sign", 0))
    write(m, res, a, False)


def cast(m, f):
    """Data conversion: res (res0_prec, opd2_sign) = opd0 saturated; floats -> integers rounded
    by opd2_n_str's mode."""
    shape, a_dt, a, _, _ = _ar_inputs(m, f, "cast", 1)
    res = _res(m, f, shape, f.get("opd2_sign", 0))
    if a_dt.is_float and not res.dtype.is_float:
        a = numerics.round_float(a, _mode(f))
    write(m, res, a, True)


def _shift(logical):
    def run(m, f):
        """dst = src << shift (shift > 0) or src >> -shift rounded (seed 001 arithmetic_shift,
        logical_shift, +_C)."""
        kind = "logicShift" if logical else "ashift"
        shape, a_dt, a, b_dt, b = _ar_inputs(m, f, kind)
        _int_only(kind, a_dt, b_dt)
        res = _res(m, f, shape, f.get("opd0_sign", 0))
        _int_only(kind, res.dtype)
        s = np.clip(np.asarray(b, np.int64), SHIFT_MIN, SHIFT_MAX)
        x = np.asarray(a, np.int64)
        if logical:
            x = x & ((1 << a_dt.bits) - 1)
        v = shift_round(x, s, _mode(f))
        write(m, res, v, True)
    run.__name__ = "logic_shift" if logical else "arith_shift"
    return run


_CMP = {"gt": np.greater, "eq": np.equal, "lt": np.less}


def _select(cond):
    def run(m, f):
        """res = true_val (opd2) where opd0 > / == / < opd1, else 0 (seed 001 greater, equal,
        less, +_C)."""
        shape, a_dt, a, b_dt, b = _ar_inputs(m, f, "select")
        res = _res(m, f, shape, f.get("opd2_sign", 0))
        t_dt = _dt(m, f, "opd2")
        t = operand(m, f, "opd2", shape, t_dt)
        write(m, res, np.where(_CMP[cond](a, b), t, 0), False)
    run.__name__ = f"select_{cond}"
    return run


# -- CMP ------------------------------------------------------------------------------------
def _cmp_types(m, f, short):
    a_dt = _dt(m, f, "opd0")
    b_dt = a_dt if short else _dt(m, f, "opd1")
    t_dt = _dt(m, f, "opd2", f.get("opd2_sign", 0))
    return a_dt, b_dt, t_dt


def _cmp(cond, and_sel):
    def run(m, f):
        """res0 = opd2 where opd0 cond opd1 else opd3 (seed 001 comparisons with true_val);
        the *_and_sel kinds write res0 = the winner of opd0/opd1 and res1 = the selected value."""
        short = "res0_prec" not in f
        shape = _shape(f)
        check_shape(m, "res0", shape)
        a_dt, b_dt, t_dt = _cmp_types(m, f, short)
        a = operand(m, f, "opd0", shape, a_dt)
        b = operand(m, f, "opd1", shape, b_dt)
        t = operand(m, f, "opd2", shape, t_dt, layout=0)
        e = operand(m, f, "opd3", shape, t_dt, layout=0)
        hit = _CMP[cond](a, b)
        res_layout = 0 if short else None
        if and_sel:
            win = tensor(m, f, "res0", shape, a_dt, res_layout)
            write(m, win, np.where(hit, a, b), True)
            sel = tensor(m, {**f, "res0_addr": f.get("res1_addr", 0)}, "res0", shape, t_dt, res_layout)
            write(m, sel, np.where(hit, t, e), False)
            return
        r_dt = t_dt if short else _dt(m, f, "res0", f.get("opd2_sign", 0))
        write(m, tensor(m, f, "res0", shape, r_dt, res_layout), np.where(hit, t, e), False)
    run.__name__ = f"{cond}_and_sel" if and_sel else f"sel_{cond}"
    return run


# -- VC -------------------------------------------------------------------------------------
def _vc_vectors(m, f, kind):
    c0, w0, last = f.get("opd0_c", 0), f.get("opd0_w", 0), f.get("opd1_w", 0)
    c1, w1 = f.get("res0_c", 0), f.get("res0_w", 0)
    if not (c0 >= 1 and 1 <= last <= w0 and c1 >= 1 and w1 >= 1):
        raise SimulationError(f"{kind}: opd0_c, res0_c, res0_w must be >= 1 and opd1_w (src0's last-channel "
                              f"length) in [1, opd0_w], not opd0_c {c0}, opd0_w {w0}, opd1_w {last}, "
                              f"res0_c {c1}, res0_w {w1}")
    rows = (c0 - 1) * w0 + last
    a_dt, b_dt = _dt(m, f, "opd0"), _dt(m, f, "opd1")
    a = read(m, tensor(m, f, "opd0", (1, c0, 1, w0), a_dt, 0)).reshape(-1)[:rows]
    b = read(m, tensor(m, f, "opd1", (1, c1, 1, w1), b_dt, 0)).reshape(-1)
    shape = (rows, c1, 1, w1)
    check_shape(m, "res0", shape)
    return shape, a_dt, a[:, None], b_dt, b[None, :]


def _vc(op):
    def run(m, f):
        """dst(i, j) = src0(i) op src1(j) (seed 001 vc_*): a matrix from two vectors."""
        shape, a_dt, a, b_dt, b = _vc_vectors(m, f, f"vc.{op}")
        sign = f.get("opd0_sign", 0) | f.get("opd1_sign", 0)
        r_dt = _dt(m, f, "res0", sign)
        if op in _CMP:
            v, saturate = np.where(_CMP[op](a, b), const(f, "opd2", r_dt), 0), False
        elif op in _LOGIC:
            _int_only(f"vc.{op}", a_dt, b_dt, r_dt)
            v, saturate = _LOGIC[op](a, b), False
        elif op in ("max", "min"):
            v, saturate = (np.maximum if op == "max" else np.minimum)(a, b), True
        else:
            base, saturate = op.split("_")[0], op.endswith("_satu")
            floats = a_dt.is_float or b_dt.is_float or r_dt.is_float
            if not floats:
                _check_product(base, a, b, saturate)
            v = _compute(base, a, b, floats)
        write(m, tensor(m, f, "res0", shape, r_dt, 0), v.reshape(shape), saturate)
    run.__name__ = f"vc_{op}"
    return run


# -- SYSID ----------------------------------------------------------------------------------
def no_effect(m, f):
    """SYSID end / nop / barriers: ordering only, no memory effect."""


KINDS = {
    "arith.add": _arith("add", False), "arith.sub": _arith("sub", False), "arith.mul": _arith("mul", False),
    "arith.adds": _arith("add", True), "arith.subs": _arith("sub", True), "arith.muls": _arith("mul", True),
    "arith.and": _logic("and"), "arith.or": _logic("or"), "arith.xor": _logic("xor"), "arith.not": not_,
    "arith.max": _minmax(np.maximum), "arith.min": _minmax(np.minimum), "arith.copy": copy, "arith.cast": cast,
    "arith.logicShift": _shift(True), "arith.ashift": _shift(False),
    "arith.selectGreat": _select("gt"), "arith.selectEqual": _select("eq"), "arith.selectLess": _select("lt"),
    "cmp.sel_gt": _cmp("gt", False), "cmp.sel_eq": _cmp("eq", False), "cmp.sel_lt": _cmp("lt", False),
    "cmp.gt_and_sel": _cmp("gt", True), "cmp.lt_and_sel": _cmp("lt", True),
    **{f"vc.{k}": _vc(v) for k, v in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("add_satu", "add_satu"),
                                      ("sub_satu", "sub_satu"), ("mul_satu", "mul_satu"), ("max", "max"),
                                      ("min", "min"), ("and", "and"), ("or", "or"), ("xor", "xor"),
                                      ("select_gt", "gt"), ("select_eq", "eq"), ("select_lt", "lt"))},
    "sys.end": no_effect, "sys.nop": no_effect, "sys.intr_barrier": no_effect, "sys.data_barrier": no_effect,
}
