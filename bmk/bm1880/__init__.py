"""bm1880: the BMKernel 1880 API (seed 002) in Python.

    from bmk import bm1880
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    a = ctx.tl_prealloc(0, bm1880.shape_t4(1, 32, 8, 8), bm1880.FMT_I8)
    ctx.gdma_load(a, 0x1000, bm1880.CTRL_NULL)
    buf = ctx.acquire_cmdbuf()
"""
from bmk.bm1880 import api
from bmk.bm1880.constants import CTRL_AL, CTRL_NULL, CTRL_RA, CTRL_RELU, CTRL_TP, FMT_I8, FMT_U8
from bmk.bm1880.context import ChipInfo, Context, Op
from bmk.bm1880.params import *  # noqa: F401,F403  (the op records: MulParam, ConvParam, ...)
from bmk.bm1880.params import __dict__ as _params
from bmk.bm1880.tensor import Shape, Stride, TensorGmem, TensorLmem, shape_t2, shape_t4, stride_t2, stride_t4
from bmk.bm1880.weights import conv_weight_from_image, conv_weight_image, conv_weight_image_shape


def register(chip_version=1880, cmdbuf_size=1 << 20):
    """bmk1880_register (seed 3.1): a new, independent context."""
    return Context(chip_version=chip_version, cmdbuf_size=cmdbuf_size)


def chip_info():
    """bmk1880_chip_info (seed 4.6), without a context."""
    return Context().chip_info()


# -- the seed's global-context style (bmk1880_enter / bmk1880_exit), over an explicit Context -------
_entered = []


def enter(ctx):
    """bmk1880_enter: make `ctx` the context of the module-level calls (nestable)."""
    if not isinstance(ctx, Context):
        from bmk.errors import ArgumentError, must
        raise ArgumentError(must("enter", "ctx", "a bm1880.Context", ctx))
    _entered.append(ctx)


def exit():  # noqa: A001  (the seed's name)
    """bmk1880_exit: leave the context entered last."""
    if not _entered:
        from bmk.errors import ArgumentError
        raise ArgumentError("exit: no context was entered (call enter(ctx) first)")
    _entered.pop()


# The lmem tensor calls of Context, then every op-table name (aliases included), then the
# system calls of bmk.program.Program.
TENSOR_CALLS = ("tl_prealloc", "tl_prealloc_align", "tl_alloc", "tl_alloc_bank", "tl_free")
API_NAMES = TENSOR_CALLS + api.NAMES + Context.SYSTEM_CALLS


def _current(name):
    if not _entered:
        from bmk.errors import ArgumentError
        raise ArgumentError(f"{name}: no context was entered: call bm1880.enter(ctx) or use ctx.{name}(...)")
    return _entered[-1]


def __getattr__(name):
    """Module-level API calls on the entered context; bmk1880_ / bmkl880_ prefixes accepted."""
    for prefix in ("bmk1880_", "bmkl880_"):
        if name.startswith(prefix):
            return globals().get(name[len(prefix):]) or __getattr__(name[len(prefix):])
    if name in API_NAMES:
        def call(*args, **kwargs):
            return getattr(_current(name), name)(*args, **kwargs)
        call.__name__ = name
        call.__doc__ = getattr(Context, name).__doc__
        return call
    raise AttributeError(f"module 'bmk.bm1880' has no attribute {name!r}")


__all__ = ["register", "chip_info", "enter", "exit", "conv_weight_image", "conv_weight_from_image",
           "conv_weight_image_shape", "ChipInfo", "Context", "Op", "Shape", "Stride", "TensorGmem", "TensorLmem",
           "shape_t2", "shape_t4", "stride_t2", "stride_t4", "FMT_I8", "FMT_U8", "CTRL_NULL", "CTRL_AL",
           "CTRL_RA", "CTRL_TP", "CTRL_RELU"] + [n for n in _params if n[0].isupper() and n.endswith(("Param",))
                                                   or n.startswith("Gdma")]
