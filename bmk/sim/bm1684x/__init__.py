"""bm1684x instruction semantics for the simulator, and its cost model.

`SEMANTICS` maps (engine, kind) to the function executing one decoded command of that kind;
the kinds are the spec's (specs/bm1684x/*.toml), shared by a long class and its short form,
and one function reads both (bmk/sim/bm1684x/operands.py), so both simulate identically.

TPU-Kernel function (seed 001, API.md) -> kind(s) it lowers to (isa-facts
bm1684x-lowering.md) -> function here:
  bdc_and/or/xor (+_C) -> arith.and/or/xor;  bdc_max/min (+_C) -> arith.max/min;
  bdc_arithmetic_shift (+_C) -> arith.ashift;  bdc_logical_shift (+_C) -> arith.logicShift;
  bdc_greater/less/equal (+_C) -> arith.selectGreat/selectLess/selectEqual or
  cmp.sel_gt/sel_lt/sel_eq; the *_equal / not_equal forms -> two of those (tiu.py);
  bdc_vc_* -> vc.and/or/xor/max/min/select_gt/select_lt/select_eq (tiu.py);
  also arith.add/sub/mul (+ adds/subs/muls), not, copy, cast; cmp.gt_and_sel/lt_and_sel;
  gdma_cpy_S2L/L2S/L2L/S2S -> dma.tensor (+ .transpose, .broadcast), dma.general (gdma.py);
  stream ends -> sys.end (TIU), dma.sys (GDMA); sys.nop, barriers, dma.sys.nop.

Cost model (cycles; made up but monotone in the work, like bm1880's, so runs are comparable):
- TIU element-wise (AR, CMP): TIU_STARTUP + ceil(N * ceil((s + C) / npu_num) * H * W / eu),
  the res0 shape, s its start NPU, eu the EUs per NPU for the widest operand (64 / 32 / 16
  for 8 / 16 / 32-bit elements: eu_bytes // element bytes).
- VC: the same with the matrix (rows, res0_c, 1, res0_w) as the shape.
- GDMA copies: GDMA_STARTUP + ceil(bytes / GDMA_BYTES_PER_CYCLE), bytes = destination
  elements * element size (a fill counts its destination).
- SYSID, dma.sys: SYS_CYCLES.
"""
import math

from bmk.errors import SimulationError
from bmk.sim.bm1684x import gdma, tiu
from bmk.sim.bm1684x.operands import _enum
from bmk.sim.semantics import Semantics

KINDS = {"tiu": tiu.KINDS, "gdma": gdma.KINDS}

TIU_STARTUP = 16
GDMA_STARTUP = 96
GDMA_BYTES_PER_CYCLE = 32
SYS_CYCLES = 1

_PREC_BITS = {"int8": 8, "fp16": 16, "fp32": 32, "int16": 16, "int32": 32, "bf16": 16}
# Long-class fields (convolution-style ins, pads, shifts, accumulation) element-wise kinds
# do not model: they must be 0.
_TIU_UNMODELLED = ("res_add", "relu", "left_tran", "kernel_rotate", "opd0_x_ins0", "opd0_y_ins0",
                   "opd1_x_ins0", "opd1_y_ins0", "opd0_up_pad", "opd0_dn_pad", "opd0_lf_pad", "opd0_rt_pad",
                   "res0_h_shift", "res0_w_shift", "opd0_h_shift", "opd0_w_shift", "opd1_h_shift",
                   "opd1_w_shift")


def check(chip, engine, f):
    if engine == "gdma":
        gdma.check(f)
        return
    for name in _TIU_UNMODELLED:
        if f.get(name, 0):
            raise SimulationError(f"{name} must be 0 (not modelled for element-wise kinds), not {f[name]!r}")
    lanes = f.get("tsk_lane_num")          # long classes only; a short command runs on every NPU
    if lanes is not None and lanes != chip.all_lanes:
        raise SimulationError(f"tsk_lane_num must be 0x{chip.all_lanes:x} (every NPU; lane masks are not modelled), "
                              f"not 0x{lanes:x}")


def _bits(m, f):
    names = _enum(m.chip, "tiu", "res0_prec")
    return max([_PREC_BITS.get(names.get(f[k]), 8) for k in ("res0_prec", "opd0_prec", "opd1_prec") if k in f]
               or [8])


def cycles(engine, kind, f, m):
    if kind in ("dma.sys", "dma.sys.nop") or kind.startswith("sys."):
        return SYS_CYCLES
    if engine == "gdma":
        e = gdma.element_bytes(m, f)
        if kind == "dma.general":
            count = f.get("src_cstride_move_length_", 0)
        else:
            shape = tuple(f.get(f"src_{d}size", 0) for d in "nchw")
            if kind == "dma.tensor.broadcast":
                shape = (shape[0], f.get("dst_csize", 0)) + shape[2:]
            elif not f.get("nchw_copy", 0) and kind == "dma.tensor":
                shape = tuple(f.get(f"dst_{d}size", 0) for d in "nchw")
            count = math.prod(shape)
        return GDMA_STARTUP + -(-count * e // GDMA_BYTES_PER_CYCLE)
    eu = m.chip.param("eu_bytes") * 8 // _bits(m, f)
    start = f.get("res0_addr", 0) // m.lmem.lane_size
    if kind.startswith("vc."):
        rows = (f.get("opd0_c", 1) - 1) * f.get("opd0_w", 1) + f.get("opd1_w", 1)
        n, c, hw = rows, f.get("res0_c", 1), f.get("res0_w", 1)
    else:
        n, c, hw = f.get("res0_n", 1), f.get("res0_c", 1), f.get("res0_h", 1) * f.get("res0_w", 1)
    passes = -(-(start % m.npu_num + c) // m.npu_num)
    return TIU_STARTUP + -(-(n * passes * hw) // eu)


SEMANTICS = Semantics({(engine, kind): fn for engine, table in KINDS.items() for kind, fn in table.items()},
                      check, cycles)
