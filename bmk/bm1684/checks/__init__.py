"""Argument checks of the OKKernel API (seeds 003, 004), one module per seed group, one
function per family; the op table (api.py) gives each row its family function and parameters.
Each takes the call's `Check` (common.py: the chip's kind of bmk.checks.Check) and the op
record, and raises ArgumentError before anything is recorded: "<call>: <argument> must be
<rule>, not <value!r>".
"""
