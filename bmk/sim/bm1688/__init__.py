"""BM1688 (CV186X) instruction semantics: the BM1684X family's (bmk/sim/bm1684x), on BM1688's
parameters, plus what BM1688 changes.

BM1688's TIU and GDMA classes are BM1684X's under the family's names (tools/facts/families.json:
`arith.add_satu` is `arith.adds`, `system.*` is `sys.*`, ...), so every kind runs BM1684X's
function, which reads every chip fact (lanes, local memory, EU width, precisions) from the
Simulator's ChipSpec. What BM1688 adds or changes, one module each:

  registers.py  system_tr_wr.wr_imm: TIU registers later commands read (their values resolved
                along the stream: `prepare`)
  rq.py         the requantization conv, PorD and MM2 fuse (opt_rq, opd5)
  conv.py       conv.normal: int8 bias in opd2, kernel zero point opd4, requant, opt_res0_sign
  pord.py       depthwise / avg / max pooling: requant, opt_res0_sign
  mm.py         mm2.nn / nt: int8 bias, zero point opd4, requant, opt_res0_sign
  quant.py      dq0 / dq2: the constant scale in opd1_addr
  div.py        arith.div: a bf16 divisor's reciprocal iterated as the cmodel does
  rsqrt.py      sfu.rsqrt: a bf16 reciprocal square root iterated as the cmodel does
  messages.py   send / wait messages between cores (their order: bmk/sim/cores.py)

Every field a kind does not execute must be 0 (bm1684x/fields.py), so a BM1688 field BM1684X
has no use for (opt_rq, opt_opd4_const, ...) is refused by name wherever it is not executed.
Cost model: BM1684X's formulas on BM1688's lanes and EU width.
"""
from bmk.sim import bm1684x
from bmk.sim.bm1684x import fields, tables
from bmk.sim.bm1688 import conv, div, messages, mm, pord, quant, registers, rsqrt
from bmk.sim.semantics import Semantics


class _DmaMessages:
    """The GDMA side of messages.py, as a family module."""
    KINDS, FIELDS = messages.DMA_KINDS, messages.DMA_FIELDS


REPLACING = (("tiu", (conv, pord, mm, quant, div, rsqrt, registers, messages)), ("gdma", (_DmaMessages,)))

KINDS, EXECUTES, CHECKS = bm1684x.kind_tables(bm1684x.ENGINES, REPLACING)


def check(chip, engine, f):
    """Refuse a field its kind does not execute, or a value its kind refuses (bm1684x/fields.py)."""
    fields.check(chip, engine, f, EXECUTES, CHECKS)


SEMANTICS = Semantics(KINDS, check, bm1684x.cycles, tables.load, registers.prepare)
