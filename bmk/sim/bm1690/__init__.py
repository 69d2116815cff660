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
  fp8    prec 7, E4M3 when the operand's sign bit is 1 and E5M2 when 0 (bmk/dtypes.py
         of_precision; bmk/numerics.py fp8_*: values, rounding with saturation), in the kinds FP8_KINDS
         names (the family's float semantics: read as values, computed in float64, rounded
         once; a float conv or average pool with opt_rq scales by its fp32 rescale,
         bmk/sim/bm1688/rq.py); an fp8 operand of any other kind is refused by name.
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

# The kinds whose fp8 operands and results run (the shared f8e5m2 resnet50's, each pinned by a
# numpy test in tests/chips/bm1690/test_fp8.py): the family's float paths with fp8 values.
FP8_KINDS = frozenset({"conv.normal", "pord.avgpooling", "pord.maxpooling", "arith.add", "arith.copy", "arith.cast"})


def check(chip, engine, f):
    """Refuse a field its kind does not execute, or a value its kind refuses (bm1684x/fields.py);
    refuse an fp8 operand outside FP8_KINDS by name."""
    bm1684x.fields.check(chip, engine, f, EXECUTES, CHECKS)
    if engine == "tiu":
        for name in _PRECS:
            if name in f and chip.member("tiu", "res0_prec", f[name]) == "fp8":
                _, kind = bm1684x.fields.kind_of(chip, engine, f)
                if kind not in FP8_KINDS:
                    raise bm1684x.fields.refuse(kind, name, f[name], f"must not be fp8 in {kind} (bmk runs fp8 in "
                                                f"{', '.join(sorted(FP8_KINDS))})")


def cycles(engine, kind, f, m):
    """The family's cost model; an SDMA command costs as the GDMA command of its kind."""
    return bm1684x.cycles("gdma" if engine == "sdma" else engine, kind, f, m)


SEMANTICS = Semantics(KINDS, check, cycles, bm1688.tables.load, bm1688.registers.prepare)
