"""Lowering: op record -> descriptors ({field: value} of the bm1880 TIU / TDMA formats).

One function per API function, named after it, grouped by family:
dma.py (seed 4.12-4.18), eltwise.py (4.19-4.40), conv.py (4.41-4.45), matrix.py (4.46-4.47).
Shared helpers and the field-value constants are in common.py.
"""
# The families; the op table (bmk/bm1880/api.py) names each function as <family>.<call>.
from bmk.bm1880.lowering import conv, dma, eltwise, matrix  # noqa: F401
