"""Lowering of the OKKernel API (seeds 003, 004): op record -> ((engine, {field: value}), ...)
of the specs/bm1684 TIU and GDMA commands, one module per seed group, one function per family
`fn(chip, p, **params)`; the op table gives each row its function and parameters. common.py
holds the operand builders; every code comes from the chip the lowering is given.
"""
