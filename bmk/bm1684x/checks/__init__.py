"""Argument checks of the TPU-Kernel API (seed 001): one function per API function, named
after it, grouped by family like lowering/ (binary, shift, compare, vc, dma). Each raises
ArgumentError before anything is recorded: "<call>: <argument> must be <rule>, not <value!r>".
"""
from bmk.bm1684x.checks import binary, compare, dma, shift, vc  # noqa: F401
