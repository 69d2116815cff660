"""Multi-core messages (send_msg / wait_msg on the TIU, sys_send / sys_wait on the GDMA): they
compute nothing; they order the cores, which bmk/sim/cores.py resolves before anything runs
(isa-facts newer-chips.md 1: the message id and count in imm / constant_value)."""


def message(m, f):
    """Nothing to compute: the order it imposes was resolved into rounds (bmk/sim/cores.py)."""


KINDS = {"system.send_msg": message, "system.wait_msg": message}
FIELDS = {k: frozenset({"imm"}) for k in KINDS}
DMA_KINDS = {"dma.sys.sys_send": message, "dma.sys.sys_wait": message}
DMA_FIELDS = {k: frozenset({"constant_value"}) for k in DMA_KINDS}
