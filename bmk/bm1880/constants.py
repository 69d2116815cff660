"""Constants of the BMKernel 1880 API (seed 4.1; ctrl flags as in the public v2 library)."""
from bmk.bm1880.tensor import FMT_I8, FMT_U8

CTRL_NULL = 0
CTRL_AL = 1       # tl_alloc: aligned strides
CTRL_RA = 4       # matrix_mac: accumulate into res
CTRL_TP = 32      # gdma: N/C (tensor) or row/column (matrix) transposition
CTRL_RELU = 256   # matrix_mac: ReLU

__all__ = ["FMT_I8", "FMT_U8", "CTRL_NULL", "CTRL_AL", "CTRL_RA", "CTRL_TP", "CTRL_RELU"]
