"""BM1690 (SG2260) instruction semantics: the BM1684X family's (via BM1688's, bmk/sim/bm1688),
on BM1690's ChipSpec, plus what BM1690 changes.

BM1690's TIU and GDMA classes are the family's under its names (tpu-mlir python/debugger
target_1690 opdef.py / opparam.py), so every kind runs the family's function, reading every chip
fact (64 NPUs of 256 KiB, 64-byte EUs, 45-bit tagged DMA addresses with L2 SRAM at tag 30:
specs/bm1690/chip.toml) from the Simulator's ChipSpec. What BM1690 adds:

  SDMA   one stream per core read with the GDMA classes (target_1690 context.py: SDMA shares
         GDMA's opdef): every GDMA kind, the same functions, under the engine name "sdma".
  floats.py  fields the f16 streams set that are moot for a float result (result sign,
         sym_range) or the family's rule (a conv kernel of the input's precision).
  fp8    refused by name (check): the family has no fp8 arithmetic (resnet50_v2_sg2260_f8e5m2).
  CDMA   no shared model runs a CDMA command: refused by name (no semantics).
  HAU    no public register layout: its streams stay bytes; bmk/sim/cores.py counts them in
         the barriers (specs [engines.hau] barrier) and runs none of their bytes.
"""
from bmk.sim import bm1684x
from bmk.sim import bm1688
from bmk.sim.bm1690 import floats
from bmk.sim.semantics import Semantics

_SDMA = (("sdma", bm1684x.GDMA_FAMILIES + (bm1688._DmaMessages,)),)

KINDS, EXECUTES, CHECKS = bm1684x.kind_tables(bm1684x.ENGINES + _SDMA, bm1688.REPLACING + (("tiu", (floats,)),))


_PRECS = ("res0_prec", "opd0_prec", "opd1_prec", "opd2_prec")


def check(chip, engine, f):
    """Refuse a field its kind does not execute, or a value its kind refuses (bm1684x/fields.py);
    refuse fp8 operands by name: the family has no fp8 (e5m2 / e4m3) arithmetic."""
    bm1684x.fields.check(chip, engine, f, EXECUTES, CHECKS)
    if engine == "tiu":
        for name in _PRECS:
            if name in f and chip.member("tiu", "res0_prec", f[name]) == "fp8":
                _, kind = bm1684x.fields.kind_of(chip, engine, f)
                raise bm1684x.fields.refuse(kind, name, f[name], "must not be fp8 (bmk models no fp8 arithmetic)")


def cycles(engine, kind, f, m):
    """The family's cost model; an SDMA command costs as the GDMA command of its kind."""
    return bm1684x.cycles("gdma" if engine == "sdma" else engine, kind, f, m)


SEMANTICS = Semantics(KINDS, check, cycles, bm1688.tables.load, bm1688.registers.prepare)
