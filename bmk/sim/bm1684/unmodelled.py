"""The TIU classes whose meaning no public source gives: each kind refuses every command
with a SimulationError naming the instruction kind and what is missing, before any work.

- mm2 (mm2_op, eu add_tree): bm1684_defs.py (FC2) reads an int8 256 x 256 left and right
  matrix and a result, 4-byte elements, with no formula, no shape fields and no rounding.
  A real run would check: identity left matrix, a known right one.
- lmem_arrangement (lma_op): a table of opd1_n entries of 64 bytes at opd1_addr rearranging a
  (1, 64, 1, 32) fp32 tensor: the table's format is not public.
- decompress (decompress_op): a compressed tensor plus int16 coefficients (bm1684_defs.py);
  the compression format is not public.
"""
from bmk.errors import SimulationError
from bmk.sim.bm1684.contract import refused


def _refuse(kind, why):
    def fn(m, f):
        raise SimulationError(f"{kind}: not simulated: {why}")
    return refused(fn)


KINDS = {
    ("tiu", "mm2"): _refuse("mm2", "the int8 256x256 FC2 operation has no public formula (bm1684_defs.py "
                                   "gives its operands only)"),
    ("tiu", "lmem_arrangement"): _refuse("lmem_arrangement", "the arrangement table's format is not public"),
    ("tiu", "decompress"): _refuse("decompress", "the compression format is not public"),
}
