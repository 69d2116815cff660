"""Instruction-set descriptions, loaded once from the data files under specs/.

`load_chip(name)` returns an immutable `ChipSpec`; nothing else in bmk knows a bit layout.
"""
from bmk.isa.spec import ChipSpec, Engine, Field, Format, Instruction, chips, load_chip, magic_owners, magic_table

__all__ = ["ChipSpec", "Engine", "Field", "Format", "Instruction", "chips", "load_chip", "magic_owners", "magic_table"]
