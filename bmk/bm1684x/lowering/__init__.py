"""Lowering of the TPU-Kernel API (seed 001): op record -> ((engine, {field: value}), ...) of
the specs/bm1684x classes, one function per family: binary.py (and/or/xor/min/max), shift.py,
compare.py, vc.py, dma.py; the op table gives each row its function and parameters (the
instruction kind...). common.py holds the operand builders and the short/long choice.
"""
