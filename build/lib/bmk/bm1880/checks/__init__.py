"""Argument checks: one function per API function, named after it, grouped by family like
lowering/ (dma.py, eltwise.py, conv.py, matrix.py). Each raises ArgumentError before anything
is recorded, with the message "<call>: <argument> must be <rule>, not <value!r>".
"""
from bmk.bm1880.checks.dma import *  # noqa: F401,F403
from bmk.bm1880.checks.eltwise import *  # noqa: F401,F403
from bmk.bm1880.checks.conv import *  # noqa: F401,F403
from bmk.bm1880.checks.matrix import *  # noqa: F401,F403
