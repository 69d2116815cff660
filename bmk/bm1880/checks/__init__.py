"""Argument checks: one function per API function, named after it, grouped by family like
lowering/ (dma.py, eltwise.py, conv.py, matrix.py). Each raises ArgumentError before anything
is recorded, with the message "<call>: <argument> must be <rule>, not <value!r>".
"""
# The families; the op table (bmk/bm1880/api.py) names each function as <family>.<call>.
from bmk.bm1880.checks import conv, dma, eltwise, matrix  # noqa: F401
