"""CV184X instruction semantics: BM1688's (bmk/sim/bm1688), on CV184X's ChipSpec.

CV184X (the tpu-mlir debugger's MARS3) has BM1688's TIU and GDMA classes under the family's
names (isa-facts newer-chips.md: TIU 29 classes with an 8-byte SYS, GDMA 12), so every kind runs
the family's function, which reads every chip fact from the Simulator's ChipSpec: 8 NPUs of 64 KiB,
16-byte EUs, DMA addresses of 45 bits whose tag (bits 40..44) picks the memory (0 and 31 local,
1..30 global: specs/cv184x/chip.toml), only the low 20 bits of cmd_id_dep (wait_mask), no opd4
(kernel zero point) register, and its static memory tables where the TPU1686 kernel's MARS3
memmap.h puts them (the bf16 exponential coefficients at 0, the int32 sequence at 96, the int16
one at 352: specs/cv184x/chip.toml).
"""
from bmk.sim.bm1688 import SEMANTICS  # noqa: F401  (the family's semantics on this chip's ChipSpec)
