"""Argument checks of the TPU-Kernel API (seed 001), one function per family, grouped like
lowering/ (binary, shift, compare, vc, dma); the op table (api.py) gives each row its family
function and parameters. Each takes the call's `Check` (common.py: the chip's kind of
bmk.checks.Check) and the op record, and raises ArgumentError before anything is recorded:
"<call>: <argument> must be <rule>, not <value!r>".
"""
