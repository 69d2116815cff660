"""SG and SGL (tsk_typ 6; long SG/SGL and short sSG/sSGL): gathers, scatters, mask select, nonzero.

Sources: isa-facts bm1684x-lowering.md (codes), tpu-mlir
python/debugger/target_1684x/opparam.py `sSG_t_converter` and `SGL_t_converter` (operand
shapes, layouts, index types, fill_const = opd2_const with its value in opd2_addr,
limit_enable = opd3_const), tpu-mlir third_party/ppl/runtime/checker/src/atomic_sg.c and
atomic_sgl.c (the TPU1686 firmware's checks, whose comments give the shapes below: "A" the
source, "B" the indices, "R" the result; start NPUs; index types), the golden yolov5s stream
(pe_s_gather_d1coor: a 256-entry lookup table per NPU; pe_s_scatter_hzd: a one-hot matrix)
and its vendor disassembly.

Index tensors (opd1) are unsigned integers of opd1_prec. An index past its axis takes the
constant opd2_addr (in the result's type) when fill_const (opd2_const) is set; otherwise the
command is refused (what the hardware reads there is not public). limit_enable (opd3_const)
must be 0: its effect is not public. Scatters write only the indexed elements (the rest of
the result keeps its bytes); with repeated indices the last source element wins (assumed).
Data moves as bit patterns of res0_prec's width: every precision of the prec enum that is a
BM1684X type (int8, int16, int32, fp16, bf16, fp32; int4 as nibbles; fp8 is refused), the
source's opd0_prec naming the same type (opparam types A by opd0_prec and R by res0_prec; a
gather converts nothing, so opd0_prec != res0_prec is refused by `check` before any run; the
real networks gather fp16 (tdl_models topformer_seg_motion: pl_gather_d1coor with int16
indices, its resize) and fp32 (hand_keypoint_cls: pe_s_gather_hzd) with both fields equal).

PL ("parallel lanes": one index vector for every NPU, compact (1, L, 1, 1) from NPU 0):
  pl_gather_d1coor   A (N, C, 1, opd0_w) aligned, B (1, res0_w, 1, 1): R[n, c, 0, j] = A[n, c, 0, B[j]]
  pl_scatter_d1coor  A (N, C, 1, opd0_w), B (1, opd0_w, 1, 1): R[n, c, 0, B[j]] = A[n, c, 0, j]
  pl_gather_d2coor   A (N, C, opd0_h, opd0_w), B (1, res0_w, 1, 1) of int32 (h, w) pairs:
                     R[n, c, 0, j] = A[n, c, B[j].h, B[j].w]
  pl_scatter_d2coor  A (N, C, 1, opd0_w), B (1, opd0_w, 1, 1) pairs: R[n, c, B[j].h, B[j].w] = A[n, c, 0, j]
  (a pair: "uint16 stored as INT32 with [h, w]" in the firmware's words; bmk assumes h in the
  low 16 bits, w in the high 16, little-endian order)
  pl_gather_rec      A (N, C, opd0_h, opd0_w), B (1, res0_w, 1, 4) compact uint16 rectangles,
                     kh = opd3_addr >> 16, kw = opd3_addr & 0xffff (opparam):
                     R[n, c, i * kw + k, j] = A[n, c, B[j][0] + i, B[j][1] + k] in the line
                     layout; bmk assumes a rectangle is (h start, w start, -, -)
  pl_gather_perw / pl_scatter_perw (no public shapes; bmk's reading of "per w"): B (1, W, 1, 1)
                     gives each column its row: R[n, c, 0, w] = A[n, c, B[w], w] /
                     R[n, c, B[w], w] = A[n, c, 0, w]
PE_S ("per NPU": each NPU gathers from its own data; A is (1, C, 1, opd0_w) aligned, or one
(1, opd0_w) plane per NPU shared by its channels (T4) when opd0_str is set; all on one start NPU):
  pe_s_gather_d1coor, pe_s_gather_hzd   B (N, C, 1, res0_w): R[n, c, 0, j] = A[0, c, 0, B[n, c, 0, j]]
  pe_s_scatter_d1coor, pe_s_scatter_hzd B (N, C, 1, opd0_w): R[n, c, 0, B[n, c, 0, j]] = A[0, c, 0, j]
  (hzd: the same operation that tolerates bank conflicts, the firmware comment says)
  pe_s_scatter_pp_d1coor (opparam reads only its indices; bmk assumes a per-batch source):
                     A (N, C, 1, opd1_w) aligned: R[n, c, 0, B[n, c, 0, j]] = A[n, c, 0, j]
  pe_m_gather_d1coor A (opd0_n <= 4 tables, C, 1, opd0_w) in the T4 (opd0_str 4) or T5
                     layout, B (1, C, 1, res0_w): R[n, c, 0, j] = A[n, c, 0, B[0, c, 0, j]]
                     (bmk's reading of opparam's (4, C, 1, W) source)
  pe_s_mask_select, pe_s_mask_selhzd    A (1, C, 1, opd0_w), B (N, C, 1, opd0_w) mask:
                     R[n, c, 0, :k] = the A[0, c, 0, j] whose B[n, c, 0, j] != 0, in order;
                     k, per (n, c), to res1 as a compact (N, C, 1, 1) uint16
  pe_s_nonzero, pe_s_nonzero_hzd        A (N, C, 1, opd0_w): R[n, c, 0, :k] = the j with
                     A[n, c, 0, j] != 0 (R of res0_prec, int16/int32), k to res1 (uint16)
SGL (lines):
  pe_s_gather_line   A (1, C, opd0_h, res0_w) in the line (opd0_str 3) or T4 layout,
                     B (N, C, res0_h, 1) compact: R[n, c, h, :] = A[0, c, B[n, c, h, 0], :]
  pe_s_scatter_line  B (N, C, opd0_h, 1): R[n, c, B[n, c, h, 0], :] = A[0, c, h, :]
  R is in the line layout (T3).
"""
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import (PRECS, check_shape, const_bits, dt, raw_dtype, read, read_raw, shape_of,
                                      start_npu, tensor, write)


def _data_dtype(m, f):
    return raw_dtype(m, f.get("res0_prec", 0), "res0")


def _index(m, f, shape, layout, name="opd1"):
    d = dt(m, f, name, 0)
    if d.is_float:
        raise SimulationError(f"{name}_prec must be an integer precision (indices), not {d!r}")
    return read(m, tensor(m, f, name, shape, d, layout))


def _gathered(f, kind, table, idx, axis_len, res_dtype):
    """table[..., idx] with the out-of-range rule (fill_const or refusal)."""
    bad = None
    if idx.size and (idx.min() < 0 or idx.max() >= axis_len):
        bad = (idx < 0) | (idx >= axis_len)
        if not f.get("opd2_const", 0):
            raise SimulationError(f"indices must be below {axis_len} without fill_const (opd2_const), not "
                                  f"{int(idx[bad].max())}")
        idx = np.where(bad, 0, idx)
    out = take_last(table, idx)
    if bad is not None:
        out = np.where(bad, np.asarray(const_bits(f.get("opd2_addr", 0), res_dtype)).astype(out.dtype), out)
    return out


def take_last(table, idx):
    """np.take_along_axis(table, idx, axis=-1) (indices in range): as one flat take over the
    table's rows, several times faster than the per-axis index arrays take_along_axis builds."""
    lead = np.broadcast_shapes(table.shape[:-1], idx.shape[:-1])
    rows = np.ascontiguousarray(np.broadcast_to(table, lead + table.shape[-1:])).reshape(-1, table.shape[-1])
    flat = np.broadcast_to(idx, lead + idx.shape[-1:]).reshape(rows.shape[0], idx.shape[-1])
    flat = flat + (np.arange(rows.shape[0], dtype=np.int64) * rows.shape[1])[:, None]
    return np.take(rows.reshape(-1), flat).reshape(lead + idx.shape[-1:])


def _in_range(kind, idx, axis_len):
    if idx.size and (idx.min() < 0 or idx.max() >= axis_len):
        raise SimulationError(f"scatter indices must be below {axis_len}, not {int(idx.max())}")


def _pl_vector(m, f, count, prec_name="opd1"):
    """The shared index vector: compact (1, count, 1, 1) from NPU 0 (the firmware check)."""
    t = tensor(m, f, "opd1", (1, count, 1, 1), dt(m, f, prec_name, 0), "compact")
    if start_npu(m, t.addr) != 0:
        raise SimulationError(f"opd1 (the index vector) must start on NPU 0, not {start_npu(m, t.addr)}")
    return read(m, t).reshape(-1)


def _pairs(m, f, count):
    t = tensor(m, f, "opd1", (1, count, 1, 1), dtypes.UINT32, "compact")
    if start_npu(m, t.addr) != 0:
        raise SimulationError(f"opd1 (the coordinate vector) must start on NPU 0, not {start_npu(m, t.addr)}")
    v = read(m, t).reshape(-1)
    return v & 0xFFFF, v >> 16


def _opening(m, f, kind):
    """What every gather/scatter kind checks first: res0's shape (returned) and the data dtype
    (returned); the field limits are CHECKS'."""
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    return shape, _data_dtype(m, f)


def pl_gather_d1coor(m, f):
    shape, d = _opening(m, f, "sg.pl_gather_d1coor")
    n, c, h, w = shape
    wa = f.get("opd0_w", 0)
    a = read_raw(m, tensor(m, f, "opd0", (n, c, 1, wa), d, "aligned"))
    idx = _pl_vector(m, f, w)
    out = _gathered(f, "sg.pl_gather_d1coor", a, np.broadcast_to(idx, (n, c, 1, w)), wa, d)
    write(m, tensor(m, f, "res0", (n, c, 1, w), d, "aligned"), out, False, f)


def pl_scatter_d1coor(m, f):
    shape, d = _opening(m, f, "sg.pl_scatter_d1coor")
    n, c, h, w = shape
    wa = f.get("opd0_w", 0)
    a = read_raw(m, tensor(m, f, "opd0", (n, c, 1, wa), d, "aligned"))
    idx = _pl_vector(m, f, wa)
    _in_range("sg.pl_scatter_d1coor", idx, w)
    res = tensor(m, f, "res0", (n, c, 1, w), d, "aligned")
    out = read_raw(m, res)
    out[..., idx] = a
    write(m, res, out, False, f)


def pl_gather_d2coor(m, f):
    shape, d = _opening(m, f, "sg.pl_gather_d2coor")
    n, c, h, w = shape
    ha, wa = f.get("opd0_h", 0), f.get("opd0_w", 0)
    a = read_raw(m, tensor(m, f, "opd0", (n, c, ha, wa), d, "aligned")).reshape(n, c, 1, ha * wa)
    hi, wi = _pairs(m, f, w)
    flat = np.where((hi < ha) & (wi < wa), hi * wa + wi, ha * wa)
    out = _gathered(f, "sg.pl_gather_d2coor", a, np.broadcast_to(flat, (n, c, 1, w)), ha * wa, d)
    write(m, tensor(m, f, "res0", (n, c, 1, w), d, "aligned"), out, False, f)


def pl_scatter_d2coor(m, f):
    shape, d = _opening(m, f, "sg.pl_scatter_d2coor")
    n, c, h, w = shape
    wa = f.get("opd0_w", 0)
    a = read_raw(m, tensor(m, f, "opd0", (n, c, 1, wa), d, "aligned"))
    hi, wi = _pairs(m, f, wa)
    _in_range("sg.pl_scatter_d2coor", hi, h)
    _in_range("sg.pl_scatter_d2coor", wi, w)
    res = tensor(m, f, "res0", shape, d, "aligned")
    out = read_raw(m, res)
    out[:, :, hi, wi] = a[:, :, 0, :]
    write(m, res, out, False, f)


def pl_gather_rec(m, f):
    shape, d = _opening(m, f, "sg.pl_gather_rec")
    n, c, rh, w = shape
    kh, kw = f.get("opd3_addr", 0) >> 16, f.get("opd3_addr", 0) & 0xFFFF
    if kh * kw != rh or kh < 1:
        raise SimulationError(f"res0_h must be kh * kw (opd3_addr {f.get('opd3_addr', 0):#x}), "
                              f"not {rh}")
    ha, wa = f.get("opd0_h", 0), f.get("opd0_w", 0)
    a = read_raw(m, tensor(m, f, "opd0", (n, c, ha, wa), d, "aligned")).reshape(n, c, 1, ha * wa)
    rect = read(m, tensor(m, f, "opd1", (1, w, 1, 4), dtypes.UINT16, "compact")).reshape(w, 4)
    ii, kk = np.divmod(np.arange(rh), kw)
    hh = rect[None, :, 0] + ii[:, None]                      # (rh, w)
    ww = rect[None, :, 1] + kk[:, None]
    flat = np.where((hh < ha) & (ww < wa), hh * wa + ww, ha * wa).reshape(1, 1, 1, rh * w)
    out = _gathered(f, "sg.pl_gather_rec", a, np.broadcast_to(flat, (n, c, 1, rh * w)), ha * wa, d)
    write(m, tensor(m, f, "res0", shape, d, "line"), out.reshape(shape), False, f)


def _perw(scatter):
    kind = f"sg.pl_{'scatter' if scatter else 'gather'}_perw"

    def run(m, f):
        shape, d = _opening(m, f, kind)
        n, c, h, w = shape
        ha = f.get("opd0_h", 0)
        if scatter:
            a = read_raw(m, tensor(m, f, "opd0", (n, c, 1, w), d, "aligned"))
            idx = _pl_vector(m, f, w)
            _in_range(kind, idx, h)
            res = tensor(m, f, "res0", shape, d, "aligned")
            out = read_raw(m, res)
            out[:, :, idx, np.arange(w)] = a[:, :, 0, :]
            write(m, res, out, False, f)
            return
        a = read_raw(m, tensor(m, f, "opd0", (n, c, ha, w), d, "aligned"))
        idx = _pl_vector(m, f, w)
        col = np.moveaxis(a, 2, 3)                              # (n, c, w, ha): rows per column
        out = _gathered(f, kind, col, np.broadcast_to(idx.reshape(1, 1, w, 1), (n, c, w, 1)), ha, d)
        write(m, tensor(m, f, "res0", (n, c, 1, w), d, "aligned"), np.moveaxis(out, 2, 3), False, f)
    run.__name__ = kind.split(".")[1]
    return run


def _pe_table(m, f, c, d):
    """A (1, C, 1, opd0_w): aligned, or one plane per NPU (T4) when opd0_str is set."""
    if f.get("opd0_h", 1) not in (0, 1):
        raise SimulationError(f"opd0_h must be 1 (A is (1, C, 1, opd0_w)), not {f.get('opd0_h')}")
    layout = "T4" if f.get("opd0_str", 0) else "aligned"
    return read_raw(m, tensor(m, f, "opd0", (1, c, 1, f.get("opd0_w", 0)), d, layout))


def _pe_gather(kind):
    def run(m, f):
        shape, d = _opening(m, f, kind)
        n, c, h, w = shape
        a = _pe_table(m, f, c, d)
        idx = _index(m, f, (n, c, 1, w), "aligned")
        out = _gathered(f, kind, np.broadcast_to(a, (n, c, 1, a.shape[3])), idx, a.shape[3], d)
        write(m, tensor(m, f, "res0", (n, c, 1, w), d, "aligned"), out, False, f)
    run.__name__ = kind.split(".")[1]
    return run


def _scatter_into(kind, out, a, idx, w):
    _in_range(kind, idx, w)
    n, c = idx.shape[:2]
    nn, cc, _, jj = np.meshgrid(np.arange(n), np.arange(c), [0], np.arange(idx.shape[3]), indexing="ij")
    out[nn, cc, 0, idx] = np.broadcast_to(a, idx.shape)


def _pe_scatter(kind, per_batch=False):
    def run(m, f):
        shape, d = _opening(m, f, kind)
        n, c, h, w = shape
        if per_batch:
            wb = f.get("opd1_w", 0)
            a = read_raw(m, tensor(m, f, "opd0", (n, c, 1, wb), d, "aligned"))
        else:
            a = _pe_table(m, f, c, d)
            wb = a.shape[3]
        idx = _index(m, f, (n, c, 1, wb), "aligned")
        res = tensor(m, f, "res0", (n, c, 1, w), d, "aligned")
        out = read_raw(m, res)
        _scatter_into(kind, out, a, idx, w)
        write(m, res, out, False, f)
    run.__name__ = kind.split(".")[1]
    return run


def pe_m_gather(m, f):
    kind = "sg.pe_m_gather_d1coor"
    n, c, h, w = shape = shape_of(f)
    check_shape(m, "res0", shape)
    tables = f.get("opd0_n", 0) or n
    if not 1 <= n <= tables <= 4:
        raise SimulationError(f"res0_n must be at most opd0_n (tables, at most 4), not {n} > {tables}")
    code = f.get("opd0_str", 0)
    layout = "T4" if m.chip.member("tiu", "res0_str", code) == "T4" else "T5"
    d = _data_dtype(m, f)
    a = read_raw(m, tensor(m, f, "opd0", (tables, c, 1, f.get("opd0_w", 0)), d, layout))[:n]
    idx = _index(m, f, (1, c, 1, w), "aligned")
    out = _gathered(f, kind, a, np.broadcast_to(idx, (n, c, 1, w)), a.shape[3], d)
    write(m, tensor(m, f, "res0", (n, c, 1, w), d, "aligned"), out, False, f)


def _selected_first(sel):
    """Per (n, c): the positions j along the last axis, the selected ones first, in order."""
    return np.argsort(~sel, axis=3, kind="stable")


def _first_k(out, values, counts):
    """out with its first k[n, c] elements along the last axis replaced by values'."""
    w = out.shape[3]
    k = min(w, values.shape[3])
    keep = np.arange(k)[None, None, None, :] < counts
    out = out.copy()
    out[..., :k] = np.where(keep, values[..., :k], out[..., :k])
    return out


def _count(m, f, shape, counts):
    write(m, tensor(m, f, "res1", shape[:2] + (1, 1), dtypes.UINT16, "compact"), counts, True, f)


def _mask_select(kind):
    def run(m, f):
        n, c, h, w = shape = shape_of(f)
        check_shape(m, "res0", shape)
        d = _data_dtype(m, f)
        a = _pe_table(m, f, c, d)
        wa = a.shape[3]
        mask = _index(m, f, (n, c, 1, wa), "aligned") != 0
        res = tensor(m, f, "res0", (n, c, 1, w), d, "aligned")
        out = read_raw(m, res)
        counts = mask.sum(axis=3).reshape(n, c, 1, 1)
        if counts.max() > w:
            raise SimulationError(f"res0_w must hold the selected elements, not {w} < {int(counts.max())}")
        picked = take_last(np.broadcast_to(a, mask.shape), _selected_first(mask))
        write(m, res, _first_k(out, picked, counts), False, f)
        _count(m, f, shape, counts)
    run.__name__ = kind.split(".")[1]
    return run


def _nonzero(kind):
    def run(m, f):
        n, c, h, w = shape = shape_of(f)
        check_shape(m, "res0", shape)
        wa = f.get("opd0_w", 0) or w
        a = read(m, tensor(m, f, "opd0", (n, c, 1, wa), dt(m, f, "opd0"), "aligned"))
        r_dt = dt(m, f, "res0", 0)
        res = tensor(m, f, "res0", (n, c, 1, w), r_dt, "aligned")
        out = read(m, res)
        nz = a != 0
        counts = nz.sum(axis=3).reshape(n, c, 1, 1)
        if counts.max() > w:
            raise SimulationError(f"res0_w must hold the indices, not {w} < {int(counts.max())}")
        write(m, res, _first_k(out, _selected_first(nz), counts), False, f)
        _count(m, f, shape, counts)
    run.__name__ = kind.split(".")[1]
    return run


def _line(scatter):
    kind = f"sgl.pe_s_{'scatter' if scatter else 'gather'}_line"

    def run(m, f):
        shape, d = _opening(m, f, kind)
        n, c, h, w = shape
        ha = f.get("opd0_h", 0)
        layout = "line" if m.chip.member("tiu", "res0_str", f.get("opd0_str", 0)) == "free" else "T4"
        a = read_raw(m, tensor(m, f, "opd0", (1, c, ha, w), d, layout))
        res = tensor(m, f, "res0", shape, d, "line")
        if scatter:
            idx = _index(m, f, (n, c, ha, 1), "compact")[..., 0]         # (n, c, ha)
            _in_range(kind, idx, h)
            out = read_raw(m, res)
            nn, cc, _ = np.meshgrid(np.arange(n), np.arange(c), np.arange(ha), indexing="ij")
            out[nn, cc, idx, :] = np.broadcast_to(a, (n, c, ha, w))
            write(m, res, out, False, f)
            return
        idx = _index(m, f, (n, c, h, 1), "compact")                    # (n, c, h, 1)
        rows = np.moveaxis(np.broadcast_to(a, (n, c, ha, w)), 2, 3)     # (n, c, w, ha)
        got = _gathered(f, kind, rows, np.broadcast_to(np.moveaxis(idx, 2, 3), (n, c, w, h)), ha, d)
        write(m, res, np.moveaxis(got, 2, 3), False, f)
    run.__name__ = kind.split(".")[1]
    return run


KINDS = {
    "sg.pl_gather_d1coor": pl_gather_d1coor, "sg.pl_gather_d2coor": pl_gather_d2coor,
    "sg.pl_gather_rec": pl_gather_rec, "sg.pl_scatter_d1coor": pl_scatter_d1coor,
    "sg.pl_scatter_d2coor": pl_scatter_d2coor,
    "sg.pe_s_gather_d1coor": _pe_gather("sg.pe_s_gather_d1coor"),
    "sg.pe_s_scatter_d1coor": _pe_scatter("sg.pe_s_scatter_d1coor"),
    "sg.pe_m_gather_d1coor": pe_m_gather,
    "sg.pe_s_mask_select": _mask_select("sg.pe_s_mask_select"),
    "sg.pe_s_nonzero": _nonzero("sg.pe_s_nonzero"),
    "sg.pe_s_scatter_pp_d1coor": _pe_scatter("sg.pe_s_scatter_pp_d1coor", per_batch=True),
    "sg.pl_gather_perw": _perw(False), "sg.pl_scatter_perw": _perw(True),
    "sg.pe_s_gather_hzd": _pe_gather("sg.pe_s_gather_hzd"),
    "sg.pe_s_scatter_hzd": _pe_scatter("sg.pe_s_scatter_hzd"),
    "sg.pe_s_mask_selhzd": _mask_select("sg.pe_s_mask_selhzd"),
    "sg.pe_s_nonzero_hzd": _nonzero("sg.pe_s_nonzero_hzd"),
    "sgl.pe_s_gather_line": _line(False), "sgl.pe_s_scatter_line": _line(True),
}

_COMMON = F.names({f"res0_{d}" for d in "nchw"}, {"res0_addr", "res0_prec", "opd0_addr", "opd0_h", "opd0_w",
                                                 "opd0_str", "opd1_addr", "opd1_prec", "opd2_const", "opd2_addr",
                                                 "opd3_const", "tsk_lane_num"})
FIELDS = {k: _COMMON | {"opd1_c", "opd1_w"} for k in KINDS}
FIELDS["sg.pl_gather_rec"] = _COMMON | {"opd3_addr", "opd1_c", "opd1_w"}
FIELDS["sg.pe_m_gather_d1coor"] = _COMMON | {"opd0_n", "opd1_c", "opd1_w"}
for _k in ("sg.pe_s_mask_select", "sg.pe_s_mask_selhzd", "sg.pe_s_nonzero", "sg.pe_s_nonzero_hzd"):
    FIELDS[_k] = (_COMMON | {"res1_addr", "opd0_prec", "opd0_sign", "opd1_c", "opd1_w"}) - {"opd2_const", "opd2_addr",
                                                                                         "opd3_const"}
for _k in KINDS:
    if "nonzero" not in _k:
        FIELDS[_k] = FIELDS[_k] | {"opd0_prec"}


def _check(kind):
    """The static refusals (CHECKS): limit_enable (opd3_const) 0, the data precisions."""
    def check(chip, f):
        if f.get("opd3_const", 0):
            raise F.refuse(kind, "opd3_const", f["opd3_const"], "(limit_enable) must be 0 (its effect is not public)")
        r, a = f.get("res0_prec", 0), f.get("opd0_prec", 0)
        if chip.member("tiu", "res0_prec", r) not in PRECS:
            raise F.refuse(kind, "res0_prec", r, f"must name a BM1684X data type ({', '.join(PRECS)})")
        if a != r:
            raise F.refuse(kind, "opd0_prec", a, f"must equal res0_prec ({r}: a gather or scatter converts nothing)")
    check.__name__ = "check_" + kind.replace(".", "_")
    return check


CHECKS = {k: _check(k) for k in KINDS if "nonzero" not in k}
