"""bm1684x instruction semantics for the simulator, and its cost model.

`SEMANTICS` maps (engine, kind) to the function executing one decoded command of that kind;
the kinds are the spec's (specs/bm1684x/*.toml), shared by a long class and its short form,
and one function reads both (operands.py: a field a class lacks reads as 0). One module per
family, each exporting KINDS = {kind: fn(m, fields)} and FIELDS = {kind: the fields it
executes} (fields.py: every other field of the command must be 0, or the command is refused),
and optionally CHECKS = {kind: fn(chip, fields)}: the refusals that depend on the fields alone,
made by `check` before anything runs:

  ar.py        AR      arith.* (31 EU types)        cmp.py     CMP      cmp.*
  vc.py        VC      vc.*                          sysid.py   SYSID    sys.*
  conv.py      CONV    conv.normal / wrq / wrqrelu   pord.py    PorD     pord.* (depthwise, pooling, ROI)
  mm.py        MM/MM2  mm.*, mm2.nn / nt / tt        quant.py   RQ&DQ    quant.rq0..2, dq0..2
  tsbc.py      TRANS&BC  tsbc.* (transposes, lane / static broadcasts)
  sg.py        SG/SGL  sg.*, sgl.* (gathers, scatters, mask select, nonzero)
  sfu.py       SFU     sfu.* (taylor, normalize, rsqrt)   lin.py   LIN   lin.*
  lar.py       LAR     lar.* (AR on a (1, C, 1, W) tensor)
  gdma.py      DMA_tensor, DMA_general, sDMA_sys: dma.tensor.*, dma.general.*, dma.sys.*
  dma_index.py DMA_matrix, cw_transpose, masked_select, nonzero, gather, scatter
Shared: operands.py (types, layouts, tensors, constants, lane masks), window.py (CONV/PorD
windows), tables.py (the static memory's lookup tables, written when a Simulator is made).
SEG/sSEG have no kind (the spec gives them no decoder key), so nothing runs them.

Cost model (cycles of a 1 GHz clock, as the vendor compiler's estimate counts them; not checked
against hardware: TIU made up but monotone in the work, like bm1880's, so runs are comparable;
GDMA set from the vendor compiler's per-command estimate, sophgo/tpu-mlir
regression/profile/bmprofile_data-1_bm1684x/net_stat.sim, whose 224,969 cycles are 0.224969 ms):
- TIU: TIU_STARTUP + ceil(N * ceil((s + C) / npu_num) * H * W * taps / eu), the res0 shape,
  s its start NPU, eu the EUs per NPU of the widest operand (eu_bytes / element bytes); taps =
  kh * kw for PorD, IC * kh * kw for CONV, K for MM/MM2 (opd0_c * opd0_w or opd1_c), 1 else.
- VC: the same with the matrix (rows, res0_c, 1, res0_w) as the shape.
- GDMA: GDMA_STARTUP + ceil(bytes / GDMA_BYTES_PER_CYCLE), bytes = destination elements *
  element size (a fill counts its destination). net_stat.sim moves contiguous loads at 54 bytes
  a cycle ((229,376 - 13,824) bytes in (4,246 - 255) cycles) and costs its smallest transfers
  (8 and 384 bytes) 37 cycles: GDMA_BYTES_PER_CYCLE and GDMA_STARTUP (were 32 and 96, made up).
  Its stores run at 41 bytes a cycle and strided transfers slower still: one rate here.
- SYSID, dma.sys: SYS_CYCLES.
"""
import math

from bmk.errors import SimulationError
from bmk.sim.bm1684x import (ar, cmp, conv, dma_index, fields, gdma, lar, lin, mm, pord, quant, sfu, sg, sysid, tables,
                             tsbc, vc)
from bmk.sim.semantics import Semantics

TIU_FAMILIES = (ar, cmp, vc, sysid, conv, pord, mm, quant, tsbc, sg, sfu, lin, lar)
GDMA_FAMILIES = (gdma, dma_index)

TIU_STARTUP = 16
GDMA_STARTUP = 37              # net_stat.sim: an 8-byte and a 384-byte load, 37 cycles each
GDMA_BYTES_PER_CYCLE = 54      # net_stat.sim: contiguous loads, 13,824 to 229,376 bytes
SYS_CYCLES = 1


def kind_tables(engines, replacing=()):
    """(kinds, executes, checks) of family modules: engines ((engine, modules), ...); replacing
    ((engine, modules), ...): a sister chip's modules whose kinds take the place of the
    family's (bmk/sim/bm1688) or add to them. A kind defined twice otherwise is an error."""
    kinds, executes, checks = {}, {}, {}
    for group, replace in ((engines, False), (replacing, True)):
        for engine, families in group:
            for module in families:
                for kind, fn in module.KINDS.items():
                    if (engine, kind) in kinds and not replace:
                        raise SimulationError(f"{module.__name__} defines {engine} {kind} again")
                    kinds[(engine, kind)] = fn
                    executes[(engine, kind)] = module.FIELDS[kind]
                    checks.pop((engine, kind), None)
                for kind, fn in getattr(module, "CHECKS", {}).items():
                    if (engine, kind) not in kinds:
                        raise SimulationError(f"{module.__name__} checks {engine} {kind}, which it does not define")
                    checks[(engine, kind)] = fn
    return kinds, executes, checks


ENGINES = (("tiu", TIU_FAMILIES), ("gdma", GDMA_FAMILIES))
KINDS, EXECUTES, CHECKS = kind_tables(ENGINES)


def check(chip, engine, f):
    """Refuse a command setting a field its kind does not execute, or a value of an executed
    field that its kind refuses whatever the data (fields.py)."""
    fields.check(chip, engine, f, EXECUTES, CHECKS)


def _bits(m, f):
    bits = [8]
    for k in ("res0_prec", "opd0_prec", "opd1_prec"):
        if k in f:
            name = m.chip.member("tiu", "res0_prec", f[k]) or ""
            digits = "".join(ch for ch in name if ch.isdigit())     # int8 -> 8, bf16 -> 16, ...
            if digits:
                bits.append(int(digits))
    return max(bits)


def _gdma_cycles(m, kind, f):
    try:
        e = gdma.element_bytes(m, f)
    except SimulationError:
        e = 1
    if kind.startswith("dma.general"):
        count = f.get("src_cstride_move_length_", 0) * max(1, f.get("dst_csize", 0) if "broadcast" in kind else 1)
    else:
        shape = tuple(f.get(f"src_{d}size", 0) for d in "nchw")
        if "broadcast" in kind:
            shape = (shape[0], f.get("dst_csize", 0)) + shape[2:]
        count = math.prod(shape)
        if "4bank" in kind:
            count *= 4
    return GDMA_STARTUP + -(-count * e // GDMA_BYTES_PER_CYCLE)


def cycles(engine, kind, f, m):
    if kind in ("dma.sys", "dma.sys.nop") or kind.startswith("sys."):
        return SYS_CYCLES
    if engine == "gdma":
        return _gdma_cycles(m, kind, f)
    eu = m.chip.param("eu_bytes") * 8 // _bits(m, f)
    start = f.get("res0_addr", 0) // m.lmem.lane_size % m.npu_num
    taps = 1
    if kind.startswith("vc."):
        n, c, hw = (f.get("opd0_c", 1) - 1) * f.get("opd0_w", 1) + f.get("opd1_w", 1), f.get("res0_c", 1), \
            f.get("res0_w", 1)
    else:
        n, c, hw = f.get("res0_n", 1) or 1, f.get("res0_c", 1), (f.get("res0_h", 1) or 1) * f.get("res0_w", 1)
        if kind.startswith("pord."):
            taps = f.get("opd1_h", 1) * f.get("opd1_w", 1)
        elif kind.startswith("conv."):
            taps = f.get("opd0_c", 1) * f.get("opd1_h", 1) * f.get("opd1_w", 1)
        elif kind.startswith("mm."):
            taps = f.get("opd0_c", 1) * f.get("opd0_w", 1)
        elif kind.startswith("mm2."):
            taps = f.get("opd1_c", 1)
    passes = -(-(start + c) // m.npu_num)
    return TIU_STARTUP + -(-(n * passes * hw * max(taps, 1)) // eu)


SEMANTICS = Semantics(KINDS, check, cycles, tables.load)
