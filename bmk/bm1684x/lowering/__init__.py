"""Lowering of the TPU-Kernel API (seed 001): op record -> ((engine, {field: value}), ...) of
the specs/bm1684x classes. One function per API function, named after it, by family:
binary.py (and/or/xor/min/max), shift.py, compare.py, vc.py, dma.py; common.py holds the
operand builders and the short/long choice.
"""
from bmk.bm1684x.lowering import binary, common, compare, dma, shift, vc  # noqa: F401
