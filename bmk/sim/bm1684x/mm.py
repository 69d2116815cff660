"""MM and MM2 (tsk_typ 2; long MM/MM2 and short sMM/sMM2): matrix multiplication.

Sources: isa-facts bm1684x-lowering.md (MM eu 1..3, MM2 eu 4 nn, 5 nt, 6 tt), tpu-mlir
python/debugger/target_1684x/opparam.py `sMM_t_converter` and `sMM2_t_converter` (shapes,
layouts, types, the bias / shift / zero point operands), target_1684x/cmodel.py
`get_matrix_data` and `get_matrix2_data` (the two matrix layouts), tpu-mlir
third_party/ppl/runtime/checker/src/atomic_mm.c and atomic_mm2.c (the firmware's checks).

MM (eu 1 normal, 2 wrq, 3 wrqrelu). Matrix layout with w columns per channel: element (r, j)
of an (R, J) matrix at n = r, channel j // w, position j % w (aligned, from the operand's
start NPU). L (opd0) is (opd0_n, (opd0_c - 1) * opd0_w + opd1_w) with opd0_w per channel, of
(opd0_prec, opd0_sign), or a constant; R (opd1) is (K, res0_c * res0_w) with res0_w per
channel, of (opd0_prec, opd1_sign); res0 is (M, res0_c * res0_w) with res0_w per channel, of
(res0_prec, signed). left_tran: L is stored transposed (K, M) and the product uses L^T.
  normal   res0 = L @ R; with fp32 data plus the bias opd2 (1, N) fp32 (a tensor in R's layout
           or a constant); with int32 data shifted by opd2 (an int8 constant or tensor:
           > 0 right, rounded by opd2_n_str; bmk's reading of opparam's "shift" operand);
           8/16-bit data have no opd2 (opparam)
  wrq      int8: (L @ R + opd2) shifted right by opd3_addr (the "shift" attribute), rounded by
           opd2_n_str, saturated; opd2 the int16 bias (1, N); wrqrelu also clamps at 0
MM2 (matrix2 layout: row r in channel r, its columns along w, aligned):
  nn       res0 (res0_c, res0_w) = L (res0_c, opd1_c) @ R (opd1_c, opd1_w)
  nt       res0 = L (res0_c, opd1_w) @ R^T, R (opd1_c, opd1_w) (res0_w = opd1_c)
  tt       res0 = L^T @ R^T, L (opd1_w, res0_c), R (opd1_c, opd1_w)
  int8 data take a zero point opd2 of R's type (opparam): nn / nt one per output column
  (a (1, npu_num, 1, res0_w) aligned tensor: every NPU's copy is the same row), subtracted
  from R's column / row; tt one per output row ((1, res0_c, 1, 1) compact), subtracted from
  L^T's row (bmk's reading of which matrix each zero point belongs to).
res_add adds res0's previous value. Integer sums are exact; float sums are computed in
float64 and rounded once (by opd2_n_str for MM). Results saturate to integer types.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x import window as W
from bmk.sim.bm1684x.operands import check_shape, const, dt, mode_of, read, tensor, write


def _matrix(m, f, name, rows, cols, per, dtype):
    """An (rows, cols) matrix in the matrix layout with `per` columns per channel."""
    if per < 1:
        raise SimulationError(f"{name}: the columns per channel must be >= 1, not {per}")
    shape = (rows, -(-cols // per), 1, per)
    check_shape(m, name, shape)
    return read(m, tensor(m, f, name, shape, dtype, "aligned")).reshape(rows, -1)[:, :cols]


def _store_matrix(m, f, rows, cols, per, dtype, values, saturate=True, mode=numerics.Round.HALF_TO_EVEN):
    shape = (rows, -(-cols // per), 1, per)
    check_shape(m, "res0", shape)
    t = tensor(m, f, "res0", shape, dtype, "aligned")
    full = read(m, t).reshape(rows, -1)
    if f.get("res_add", 0):
        values = values + full[:, :cols]
    full = full.astype(np.result_type(full, values))
    full[:, :cols] = values
    write(m, t, full.reshape(shape), saturate, f, mode)


def _mm(kind):
    def run(m, f):
        c0, w0, lw = f.get("opd0_c", 0), f.get("opd0_w", 0), f.get("opd1_w", 0)
        rows = f.get("opd0_n", 0)
        n_cols = f.get("res0_c", 0) * f.get("res0_w", 0)
        if min(c0, w0, lw, rows, n_cols) < 1 or lw > w0:
            raise SimulationError(f"opd0_n, opd0_c, opd0_w, opd1_w (<= opd0_w), res0_c, res0_w must be >= 1, "
                                  f"not {rows}, {c0}, {w0}, {lw}, {f.get('res0_c', 0)}, {f.get('res0_w', 0)}")
        stored = (rows, (c0 - 1) * w0 + lw)
        a_dt = dt(m, f, "opd0")
        b_dt = dt(m, f, "opd1", prec=f.get("opd0_prec", 0))
        a = np.full(stored, const(f, "opd0", a_dt)) if f.get("opd0_const", 0) else \
            _matrix(m, f, "opd0", stored[0], stored[1], w0, a_dt)
        if f.get("left_tran", 0):
            a = a.T
        k = a.shape[1]
        W.check_work(kind, a.shape[0] * k * n_cols)
        b = _matrix(m, f, "opd1", k, n_cols, f.get("res0_w", 0), b_dt)
        acc = a.astype(np.float64) @ b.astype(np.float64)
        name = m.chip.member("tiu", "res0_prec", f.get("opd0_prec", 0))
        floats = a_dt.is_float
        r_dt = dt(m, f, "res0", 1)
        mode = mode_of(f)
        if kind == "mm.normal":
            if name == "fp32":
                acc = acc + _row(m, f, n_cols, a_dt)
            elif name == "int32":
                s = _row(m, f, n_cols, dt(m, f, "opd2", 1, prec=m.chip.code("tiu", "res0_prec", "int8")))
                if np.any(s < 0):
                    raise SimulationError(f"opd2 (the right shift) must not be negative, not {int(s.min())}")
                acc = numerics.rshift_each(np.rint(acc).astype(np.int64), s, mode)
        else:
            if name != "int8":
                raise SimulationError(f"opd0_prec must be int8, not {name}")
            bias = _row(m, f, n_cols, dt(m, f, "opd2", 1, prec=m.chip.code("tiu", "res0_prec", "int16")))
            acc = numerics.rshift(np.rint(acc + bias).astype(np.int64), f.get("opd3_addr", 0) & 0x3F, mode)
            if kind == "mm.wrqrelu":
                acc = np.maximum(acc, 0)
        if not floats and acc.dtype.kind == "f":
            acc = np.rint(acc).astype(np.int64)
        _store_matrix(m, f, acc.shape[0], n_cols, f.get("res0_w", 0), r_dt, acc, True, mode)
    run.__name__ = kind.replace(".", "_")
    return run


def _row(m, f, cols, dtype):
    """opd2 as a (1, cols) row in R's layout, or its constant."""
    if f.get("opd2_const", 0):
        return np.full((1, cols), const(f, "opd2", dtype))
    return _matrix(m, f, "opd2", 1, cols, f.get("res0_w", 0), dtype)


def zero_point_terms(m, f, kind, a, b, mc, nw, b_dt):
    """BM1684X's int8 MM2 operand: opd2 is a zero point of R's type (module docstring); no bias.
    -> (L, R, bias row or 0)."""
    if kind in ("mm2.nn", "mm2.nt"):
        zp = _zp_row(m, f, nw, b_dt)
        b = b - (zp[None, :] if kind == "mm2.nn" else zp[:, None])
    else:
        a = a - _zp_col(m, f, mc, b_dt)[:, None]
    return a, b, 0


def plain_product(m, f, acc):
    """BM1684X's MM2 ends at the product: -> (acc, result sign)."""
    return acc, 1


def plain_float(m, f, kind, acc):
    """BM1684X's float MM2 is the product alone, rounded to nearest even: -> (acc, rounding)."""
    return acc, numerics.Round.HALF_TO_EVEN


def matrix2(kind, terms=zero_point_terms, finish=plain_product, float_finish=plain_float, float_sums=None):
    """The MM2 kind's function. terms(m, f, kind, L, R, rows, cols, R's dtype) -> (L, R, bias):
    an int8 product's operand roles; finish(m, f, acc) -> (acc, result sign): what the exact
    integer product becomes before res_add (a sister chip requantizes there:
    bmk/sim/bm1688/mm.py); float_finish(m, f, kind, acc) -> (acc, rounding): what a float
    product becomes before res_add and how it is rounded into res0 (a sister chip adds a bias);
    float_sums(m, f, kind, L, R) -> (acc, rounding) or None: a float product summed the chip's
    way, float_finish's work included (a sister chip accumulates half-precision data in fp32)."""
    def run(m, f):
        mc, nw, kc, kw = f.get("res0_c", 0), f.get("res0_w", 0), f.get("opd1_c", 0), f.get("opd1_w", 0)
        if min(mc, nw, kc, kw) < 1:
            raise SimulationError(f"res0_c, res0_w, opd1_c, opd1_w must be >= 1, not {mc}, {nw}, {kc}, {kw}")
        a_dt = dt(m, f, "opd0")
        b_dt = dt(m, f, "opd1", prec=f.get("opd0_prec", 0))
        l_shape = {"mm2.nn": (mc, kc), "mm2.nt": (mc, kw), "mm2.tt": (kw, mc)}[kind]
        a = np.full(l_shape, const(f, "opd0", a_dt)) if f.get("opd0_const", 0) else \
            _matrix2(m, f, "opd0", l_shape, a_dt)
        b = np.full((kc, kw), const(f, "opd1", b_dt)) if f.get("opd1_const", 0) else \
            _matrix2(m, f, "opd1", (kc, kw), b_dt)
        int8 = m.chip.member("tiu", "res0_prec", f.get("opd0_prec", 0)) == "int8"
        if kind == "mm2.tt":
            a = a.T
        bias = 0
        if int8:
            a, b, bias = terms(m, f, kind, a, b, mc, nw, b_dt)
        if kind != "mm2.nn":
            b = b.T
        if a.shape[1] != b.shape[0] or b.shape[1] != nw or a.shape[0] != mc:
            raise SimulationError(f"the shapes must chain ({a.shape} @ {b.shape} -> ({mc}, {nw}))")
        W.check_work(kind, mc * a.shape[1] * nw)
        sums = float_sums(m, f, kind, a, b) if float_sums is not None and a_dt.is_float else None
        sign, mode = 1, numerics.Round.HALF_TO_EVEN
        if sums is not None:
            acc, mode = sums
        elif not a_dt.is_float:
            acc, sign = finish(m, f, np.rint(a.astype(np.float64) @ b.astype(np.float64) + bias).astype(np.int64))
        else:
            acc, mode = float_finish(m, f, kind, a.astype(np.float64) @ b.astype(np.float64) + bias)
        r_dt = dt(m, f, "res0", sign)
        t = tensor(m, f, "res0", (1, mc, 1, nw), r_dt, "aligned")
        if f.get("res_add", 0):
            acc = acc + read(m, t).reshape(mc, nw)
        write(m, t, acc.reshape(1, mc, 1, nw), True, f, mode)
    run.__name__ = kind.replace(".", "_")
    return run


def _matrix2(m, f, name, shape, dtype):
    rows, cols = shape
    check_shape(m, name, (1, rows, 1, cols))
    return read(m, tensor(m, f, name, (1, rows, 1, cols), dtype, "aligned")).reshape(rows, cols)


def _zp_row(m, f, cols, dtype):
    if f.get("opd2_const", 0):
        return np.full(cols, const(f, "opd2", dtype))
    return read(m, tensor(m, f, "opd2", (1, 1, 1, cols), dtype, "aligned")).reshape(cols)


def _zp_col(m, f, rows, dtype):
    if f.get("opd2_const", 0):
        return np.full(rows, const(f, "opd2", dtype))
    return read(m, tensor(m, f, "opd2", (1, rows, 1, 1), dtype, "compact")).reshape(rows)


KINDS = {"mm.normal": _mm("mm.normal"), "mm.wrq": _mm("mm.wrq"), "mm.wrqrelu": _mm("mm.wrqrelu"),
         "mm2.nn": matrix2("mm2.nn"), "mm2.nt": matrix2("mm2.nt"), "mm2.tt": matrix2("mm2.tt")}

_MM = F.names({"res0_addr", "res0_prec", "res0_c", "res0_w", "opd0_addr", "opd0_prec", "opd0_sign", "opd0_const",
               "opd0_n", "opd0_c", "opd0_w", "opd1_addr", "opd1_sign", "opd1_w", "opd2_addr", "opd2_const",
               "opd2_sign", "opd2_n_str", "left_tran", "res_add", "tsk_lane_num"})
_MM2 = F.names({"res0_addr", "res0_prec", "res0_c", "res0_w", "opd0_addr", "opd0_prec", "opd0_sign", "opd0_const",
                "opd1_addr", "opd1_sign", "opd1_const", "opd1_c", "opd1_w", "opd2_addr", "opd2_const", "res_add",
                "tsk_lane_num"})
FIELDS = {"mm.normal": _MM, "mm.wrq": _MM | {"opd3_addr"}, "mm.wrqrelu": _MM | {"opd3_addr"},
          "mm2.nn": _MM2, "mm2.nt": _MM2, "mm2.tt": _MM2}
