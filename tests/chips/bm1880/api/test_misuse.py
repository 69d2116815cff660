"""Misuse that used to pass silently is an error at the call (issue 12, item 11): a tensor of
another context, a tensor used after tl_free, parallel groups that do not pair up (the seed,
002 ch. 3, defines a group only from serial order: nesting and groups inside streams are
errors). Gmem extents: tests/chips/bm1880/sim/test_gmem_window.py. A failed call changes nothing."""
import pytest

import bmk
from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8

S = bm1880.shape_t4(1, 32, 4, 4)


def unchanged(ctx, error, match, call, *args, **kwargs):
    before = ctx.acquire_cmdbuf()
    with pytest.raises(error, match=match):
        call(*args, **kwargs)
    assert ctx.acquire_cmdbuf() == before


def test_tensor_of_another_context():
    ctx, other = bm1880.register(), bm1880.register()
    a, b = ctx.tl_prealloc(0, S, FMT_I8), other.tl_prealloc(64, S, FMT_I8)
    unchanged(ctx, bmk.ArgumentError, r"tpu_mul: b must be a tensor of this context", ctx.tpu_mul,
              res_low=a, a=a, b=b)
    unchanged(ctx, bmk.ArgumentError, r"gdma_load: t must be a tensor of this context", ctx.gdma_load,
              b, 0x1000, CTRL_NULL)


def test_tensor_used_after_tl_free():
    ctx = bm1880.register()
    a = ctx.tl_alloc(S, FMT_I8)
    r = ctx.tl_alloc(S, FMT_I8)
    ctx.tpu_relu(ofmap=r, ifmap=a)          # memoized: the repeat below must still be checked
    ctx.gdma_store(r, 0x1000, CTRL_NULL)
    ctx.tl_free(r)
    unchanged(ctx, bmk.ArgumentError, r"tpu_relu: ofmap must be a live tensor \(it was freed by tl_free\)",
              ctx.tpu_relu, ofmap=r, ifmap=a)
    unchanged(ctx, bmk.ArgumentError, r"gdma_store: t must be a live tensor", ctx.gdma_store, r, 0x1000, CTRL_NULL)
    ctx.tpu_relu(ofmap=a, ifmap=a)          # a is still live
    again = ctx.tl_alloc(S, FMT_I8)         # same address, a new tensor: fine
    ctx.tpu_relu(ofmap=again, ifmap=a)


def test_parallel_groups_must_pair():
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, S, FMT_I8)
    with pytest.raises(bmk.ScheduleError, match=r"parallel_disable: no parallel group is open \(mode is serial\)"):
        ctx.parallel_disable()
    ctx.parallel_enable()
    ctx.gdma_load(t, 0x1000, CTRL_NULL)
    with pytest.raises(bmk.ScheduleError, match=r"parallel_enable: a parallel group opens only in serial mode, "
                                                r"not in parallel mode \(groups do not nest\)"):
        ctx.parallel_enable()
    ctx.parallel_disable()                  # still closes the one group
    with pytest.raises(bmk.ScheduleError, match=r"parallel_disable: no parallel group is open"):
        ctx.parallel_disable()
    ctx.create_streams(2)
    with pytest.raises(bmk.ScheduleError, match=r"parallel_enable: .* not in streams mode \(destroy_streams first\)"):
        ctx.parallel_enable()
    with pytest.raises(bmk.ScheduleError, match=r"parallel_disable: no parallel group is open \(mode is streams\)"):
        ctx.parallel_disable()
    ctx.destroy_streams()
    with ctx.parallel():
        ctx.gdma_load(t, 0x2000, CTRL_NULL)
