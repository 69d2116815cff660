"""bm1684 instruction semantics for the simulator, and its cost model.

`SEMANTICS` maps (engine, kind) to the function executing one decoded command of that kind,
for every kind of specs/bm1684/*.toml. One module per family, each exporting
`KINDS = {(engine, kind): fn(m, fields)}`:
  elementwise.py  arith.*, md_scalar.*, md_sfu.* (every eu type)
  compare.py      md_cmp.* (and the cmp / select / cmp_select eu types of the others)
  sfu.py          lut (and the special-function numerics elementwise.py uses)
  linear.py       md_linear.*, md_sum
  nn.py           conv, pord.*, mm.*
  correlation.py  cc.*, vc.*
  unmodelled.py   mm2, lmem_arrangement, decompress (refused: no public meaning)
  gdma.py         dma.* (tensor, trans, constant, cw_trans, lrn_shift, format; winograd and
                  filter refused)
Operands and layouts: common.py. No kind is defined twice (checked at import).
No silent field (contract.py): every function carries a Contract, and `check` (run once per
distinct instruction, before any executes) refuses a field that the kind neither executes
nor ignores with a reason while it is away from its neutral value; an element-wise command
whose res0 partly overlaps an operand is refused there too (elementwise.check_overlap).
A family may export `INIT(m)`: what a fresh chip holds (sfu.py: the L2 SRAM lookup tables,
tables.py); all of them run when a Simulator is constructed (Semantics.init).

Cost model (cycles; made up but monotone in the work, documented so results are comparable;
the profiler's clocks are 550 MHz BDC and 575 MHz GDMA):
- TIU: TIU_STARTUP + ceil(work / eu_num), work = the multiply-accumulate (or element) steps one
  NPU performs: N * ceil((start NPU + C) / npu_num) * H * W of res0, times kh * kw for pooling
  and depthwise, times IC * kh * kw for conv (opd0_c * opd1_h * opd1_w), times K for matmul,
  times the number of series for md_sfu taylor (opd1_n: one multiply-add a term, Horner's
  scheme), so exp / sigmoid / tanh cost more with more num_series (issue 22.10).
- GDMA: GDMA_STARTUP + ceil(bytes / GDMA_BYTES_PER_CYCLE), bytes = destination elements * 4.
"""
from bmk.errors import SimulationError
from bmk.layout import ceil_div
from bmk.sim.bm1684 import compare, correlation, elementwise, gdma, linear, nn, sfu, unmodelled
from bmk.sim.bm1684.contract import check_fields
from bmk.sim.semantics import Semantics

FAMILIES = (
    elementwise,
    compare,
    sfu,
    linear,
    nn,
    correlation,
    unmodelled,
    gdma,
)

TIU_STARTUP = 16
GDMA_STARTUP = 64
GDMA_BYTES_PER_CYCLE = 32


def _kinds():
    kinds = {}
    for module in FAMILIES:
        for key, fn in module.KINDS.items():
            if key in kinds:
                raise SimulationError(f"{module.__name__} defines {key} again")
            kinds[key] = fn
    return kinds


KINDS = _kinds()


def check(chip, engine, fields):
    """The no-silent-field check (contract.py) of one decoded command."""
    fmt = chip.fmt(engine)
    ins = fmt.instruction_of(fields)
    fn = KINDS.get((engine, ins.name)) if ins is not None else None
    if fn is None:
        return          # the simulator names a kind without semantics itself
    check_fields(chip, engine, ins.name, fn, fields)
    if (engine, ins.name) in elementwise.KINDS:
        elementwise.check_overlap(chip, ins.name, fields)


def _lanes(m, f, slot, c):
    local, addr = m.space("local"), f[f"{slot}_addr"]
    start = (addr if addr < local.size else max(0, addr - local.base)) // m.lmem.lane_size
    return ceil_div(start % m.npu_num + c, m.npu_num)


def cycles(engine, kind, f, m):
    if engine == "gdma":
        count = f["dst_nsize"] * f["dst_csize"] * f["dst_hsize"] * f["dst_wsize"]
        return GDMA_STARTUP + ceil_div(count * 4, GDMA_BYTES_PER_CYCLE)
    work = f["res0_n"] * _lanes(m, f, "res0", f["res0_c"]) * f["res0_h"] * f["res0_w"]
    if kind == "conv":
        work *= f["opd0_c"] * f["opd1_h"] * f["opd1_w"]
    elif kind.startswith("pord"):
        work *= f["opd1_h"] * f["opd1_w"]
    elif kind.startswith("mm"):
        work *= f["opd0_w"] * ceil_div(f["opd0_c"], m.npu_num)
    elif kind == "md_sfu.taylor":
        work *= max(1, f["opd1_n"])
    return TIU_STARTUP + ceil_div(work, m.eu_num)


def init(m):
    for module in FAMILIES:
        if hasattr(module, "INIT"):
            module.INIT(m)


SEMANTICS = Semantics(KINDS, check=check, cycles=cycles, init=init)
