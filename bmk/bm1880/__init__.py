"""bm1880: the BMKernel 1880 API (seed 002) in Python.

    from bmk import bm1880
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    a = ctx.tl_prealloc(0, bm1880.shape_t4(1, 32, 8, 8), bm1880.FMT_I8)
    ctx.gdma_load(a, 0x1000, bm1880.CTRL_NULL)
    buf = ctx.acquire_cmdbuf()
"""
import attrs

from bmk.bm1880.constants import CTRL_AL, CTRL_NULL, CTRL_RA, CTRL_RELU, CTRL_TP, FMT_I8, FMT_U8
from bmk.bm1880.context import Context, Op
from bmk.bm1880.params import *  # noqa: F401,F403  (the op records: MulParam, ConvParam, ...)
from bmk.bm1880.params import __dict__ as _params
from bmk.tensor import Shape, Stride, TensorGmem, TensorLmem, shape_t2, shape_t4, stride_t2, stride_t4


@attrs.frozen
class ChipInfo:
    """bmk1880_chip_info_t (seed 4.6)."""
    version: int
    npu_num: int
    eu_num: int
    lmem_size: int
    lmem_banks: int
    lmem_bank_size: int


def register(chip_version=1880, cmdbuf_size=1 << 20):
    """bmk1880_register (seed 3.1): a new, independent context."""
    return Context(chip_version=chip_version, cmdbuf_size=cmdbuf_size)


def chip_info():
    """bmk1880_chip_info (seed 4.6), without a context."""
    return Context().chip_info()


# The seed's misspelling of the prefix (bmkl880_*) needs no alias in Python: names drop the prefix.
__all__ = ["register", "chip_info", "ChipInfo", "Context", "Op", "Shape", "Stride", "TensorGmem", "TensorLmem",
           "shape_t2", "shape_t4", "stride_t2", "stride_t4", "FMT_I8", "FMT_U8", "CTRL_NULL", "CTRL_AL",
           "CTRL_RA", "CTRL_TP", "CTRL_RELU"] + [n for n in _params if n[0].isupper() and n.endswith(("Param",))
                                                   or n.startswith("Gdma")]
