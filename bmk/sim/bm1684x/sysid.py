"""SYSID (tsk_typ 15): the TIU's system commands. None changes memory.

Sources: isa-facts bm1684x-lowering.md (eu 0 intr_barrier, 1 spb, 2 swr, 3 swr_from_lmem,
4 swr_collect, 5 data_barrier, 30 nop, 31 end), bm1684x.json (the SYSID fields: the sync ids
and cmd_id_eng1..3, nothing else).

end closes the stream; nop does nothing; intr_barrier and data_barrier wait for the engines
(ordering: the simulator's sync ids already order commands); spb, swr, swr_from_lmem and
swr_collect_from_lmem write the chip's software/sync registers (their names), which no other
command of the simulated chip reads: bmk executes them as ordering points with no memory
effect (an assumption: their register side effects are not modelled; a stream that relies on
them reading lmem would be the first to show it, and bmk would run it without error).
"""
from bmk.sim.bm1684x import fields as F


def no_effect(m, f):
    """Ordering only: no memory effect."""


KINDS = {k: no_effect for k in ("sys.intr_barrier", "sys.spb", "sys.swr", "sys.swr_from_lmem",
                                 "sys.swr_collect_from_lmem", "sys.data_barrier", "sys.nop", "sys.end")}
FIELDS = {k: F.names() for k in KINDS}
