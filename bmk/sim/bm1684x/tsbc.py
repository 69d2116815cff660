"""TRANS&BC (tsk_typ 5, long TRANS&BC and short sTRANS&sBC): transposes and broadcasts across NPUs.

Sources: isa-facts bm1684x-lowering.md (eu 0 cw_trans, 1 wc_trans, 2 lane_copy, 3 lane_bc,
4 static_bc, 5 static_distribute), tpu-mlir python/debugger/target_1684x/opparam.py
`cw_trans_reg_format` and `bc_reg_format` (shapes, layouts, the data type res0_prec),
tpu-mlir third_party/ppl/runtime/checker/src/atomic_bc.c and atomic_cw_transpose.c (the
firmware's checks: shapes, start NPUs), the golden yolov5s stream (s_distribute of the
static memory's index table, l_copy, l_bc) and its vendor disassembly
(tests/golden/bm1684x/*.mlir.test).

Every kind moves bit patterns of res0_prec's width (no conversion; opd0 has res0's type).
  cw_ts    res0[n, c, h, w] = opd0[n, w, h, c]; res0 aligned (n, res0_c, h, w), opd0 in the
           line-aligned layout (T3) with shape (n, res0_w, h, res0_c);
  wc_ts    the same with opd0 aligned;
  l_copy   res0 = opd0, both aligned with shape res0_n/c/h/w, each from its own start NPU
           (what the plain copies cannot do: AR needs operands on the result's NPUs);
  l_bc     res0[n, c, h, w] = opd0[n, 0, h, w]: opd0 aligned (n, 1, h, w), res0 aligned; the
           result must not wrap past the last NPU (the firmware check: start + C <= npu_num);
  s_bc     res0[0, c, 0, w] = S[w]: S the vector of res0_w elements at opd0_addr in static
           memory, res0 aligned (1, res0_c, 1, res0_w), start + C <= npu_num;
  s_distribute  res0[0, c, 0, 0] = S[c]: the vector of res0_c elements at opd0_addr in static
           memory, one element to each channel, res0 compact (1, res0_c, 1, 1) starting on
           NPU 0 (the firmware check).
The long class carries opd0's own n/c/h/w, the short one opd0_c and opd0_w: they must be 0
(unset) or what the kind reads (l_copy: res0's; l_bc: c 1; cw/wc: res0_w as c, res0_c as w;
s_bc: c 1, or res0_c as BM1690's streams set it; s_distribute: res0_c and w 1).
"""
import numpy as np

from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import check_shape, raw_dtype, read_raw, shape_of, start_npu, tensor, write


def _dtype(m, f):
    return raw_dtype(m, f.get("res0_prec", 0), "res0")


def _opd0_shape(f, kind, want, also=()):
    """opd0's n, c, h, w must be 0 or `want`'s (or, per dimension, a value in `also`)."""
    for d, v in zip("nchw", want):
        got = f.get(f"opd0_{d}", 0)
        if got not in (0, v) + tuple(a for k, a in also if k == d):
            raise SimulationError(f"opd0_{d} must be 0 or {v}, not {got}")


def _static_vector(m, f, kind, count, dtype):
    """The vector of `count` elements at opd0_addr in static memory."""
    addr = f.get("opd0_addr", 0)
    sp = m.chip.space("static")
    if m.chip.param("tiu_static_offset", 0):    # BM1688: the field is an offset in static memory
        addr += sp.base
    if not sp.base <= addr < sp.base + sp.size:
        raise SimulationError(f"opd0_addr must be a static memory address [0x{sp.base:x}, "
                              f"0x{sp.base + sp.size:x}), not 0x{addr:x}")
    mem = m.memories[sp.name]
    lo = addr - sp.base
    hi = lo + count * dtype.numpy.itemsize
    if not mem.holds(lo, hi):
        # an unplaced table read as zeros made CV184X's resize indices wrong (issue 29): refuse
        raise SimulationError(f"opd0_addr 0x{f.get('opd0_addr', 0):x}: static memory bytes [0x{lo:x}, 0x{hi:x}) "
                              f"hold no table of this chip (specs params static_*_table) and nothing wrote them")
    view = mem.tensor("opd0", lo, (1, 1, 1, count), (0, 0, 0, 1), m.log, False, dtype.numpy)
    return np.array(view.read()).reshape(-1)


def _no_wrap(m, kind, res):
    if start_npu(m, res.addr) + res.shape[1] > m.npu_num:
        raise SimulationError(f"the result's start NPU + res0_c must be at most {m.npu_num}, not "
                              f"{start_npu(m, res.addr)} + {res.shape[1]}")


def _transpose(line):
    kind = "tsbc.cw_ts" if line else "tsbc.wc_ts"

    def run(m, f):
        """res0[n, c, h, w] = opd0[n, w, h, c]."""
        n, c, h, w = shape = shape_of(f)
        check_shape(m, "res0", shape)
        _opd0_shape(f, kind, (n, w, h, c))
        d = _dtype(m, f)
        src = read_raw(m, tensor(m, f, "opd0", (n, w, h, c), d, "line" if line else "aligned"))
        write(m, tensor(m, f, "res0", shape, d, "aligned"), src.transpose(0, 3, 2, 1), False, f)
    run.__name__ = kind.replace(".", "_")
    return run


def l_copy(m, f):
    """res0 = opd0 across start NPUs."""
    shape = shape_of(f)
    check_shape(m, "res0", shape)
    _opd0_shape(f, "tsbc.l_copy", shape)
    d = _dtype(m, f)
    write(m, tensor(m, f, "res0", shape, d, "aligned"), read_raw(m, tensor(m, f, "opd0", shape, d, "aligned")),
          False, f)


def l_bc(m, f):
    """res0[n, c] = opd0[n, 0] for every channel c."""
    n, c, h, w = shape = shape_of(f)
    check_shape(m, "res0", shape)
    _opd0_shape(f, "tsbc.l_bc", (n, 1, h, w))
    d = _dtype(m, f)
    res = tensor(m, f, "res0", shape, d, "aligned")
    _no_wrap(m, "tsbc.l_bc", res)
    src = read_raw(m, tensor(m, f, "opd0", (n, 1, h, w), d, "aligned"))
    write(m, res, np.broadcast_to(src, shape), False, f)


def s_bc(m, f):
    """res0[0, c, 0, w] = S[w] (S in static memory)."""
    n, c, h, w = shape = shape_of(f)
    check_shape(m, "res0", shape)
    if (n, h) != (1, 1):
        raise SimulationError(f"res0_n and res0_h must be 1 (the result is (1, C, 1, W)), not {n}, {h}")
    # CV184X's streams give opd0 the result's channels (opd0_c = res0_c): the same broadcast
    _opd0_shape(f, "tsbc.s_bc", (1, 1, 1, w), also=(("c", c),))       # BM1690 writes it so too
    d = _dtype(m, f)
    res = tensor(m, f, "res0", shape, d, "aligned")
    _no_wrap(m, "tsbc.s_bc", res)
    vec = _static_vector(m, f, "tsbc.s_bc", w, d)
    write(m, res, np.broadcast_to(vec.reshape(1, 1, 1, w), shape), False, f)


def s_distribute(m, f):
    """res0[0, c, 0, 0] = S[c] (S in static memory)."""
    n, c, h, w = shape = shape_of(f)
    check_shape(m, "res0", shape)
    if (n, h, w) != (1, 1, 1):
        raise SimulationError(f"res0_n, res0_h, res0_w must be 1 (the result is (1, C, 1, 1)), "
                              f"not {n}, {h}, {w}")
    _opd0_shape(f, "tsbc.s_distribute", (1, c, 1, 1))
    d = _dtype(m, f)
    res = tensor(m, f, "res0", shape, d, "compact")
    if start_npu(m, res.addr) != 0:
        raise SimulationError(f"res0 must start on NPU 0, not {start_npu(m, res.addr)}")
    vec = _static_vector(m, f, "tsbc.s_distribute", c, d)
    write(m, res, vec.reshape(1, c, 1, 1), False, f)


KINDS = {"tsbc.cw_ts": _transpose(True), "tsbc.wc_ts": _transpose(False), "tsbc.l_copy": l_copy,
         "tsbc.l_bc": l_bc, "tsbc.s_bc": s_bc, "tsbc.s_distribute": s_distribute}

_ALL = F.names({f"res0_{d}" for d in "nchw"}, {f"opd0_{d}" for d in "nchw"},
               {"res0_addr", "res0_prec", "opd0_addr", "tsk_lane_num"})
FIELDS = {k: _ALL for k in KINDS}
