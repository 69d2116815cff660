"""Helpers of the bm1684 tests: put tensors into a simulator, run a context's streams, read back.

Every API test goes through bytes: the Context's raw streams are decoded and executed by the
Simulator, which never sees the op records.
"""
import numpy as np

import bmk
from bmk import bm1684

LANE = bm1684.local_mem_size_per_npu()
GMEM = 0x100000000


def npu_addr(npu, offset=0):
    """The local_addr_t of `offset` in NPU `npu`."""
    return npu * LANE + offset


def aligned(addr, shape):
    return bm1684.aligned_stride_for_32bit(bm1684.start_npu_index(addr), shape)


def put(sim, addr, values, stride=None, dtype="fp32", pack=1):
    """Store an (N, C, H, W) array as a local tensor (stride None: the 128-byte aligned layout)."""
    values = np.asarray(values)
    stride = aligned(addr, values.shape) if stride is None else stride
    sim.lmem_write_array(addr, values, stride, dtype, pack)


def get(sim, addr, shape, stride=None, dtype="fp32", pack=1):
    stride = aligned(addr, shape) if stride is None else stride
    return sim.lmem_read_array(addr, shape, stride, dtype, pack)


def run(ctx, sim=None, **kwargs):
    """Run the context's raw streams (round-tripped through bytes) on a simulator; return it."""
    sim = sim or bmk.Simulator("bm1684")
    streams = ctx.acquire_streams()
    again = bmk.encode("bm1684", bmk.decode("bm1684", streams), raw=True)
    assert again == {engine: data for engine, data in streams.items() if data}
    sim.run(streams, **kwargs)
    return sim


def unchanged_after(ctx, call, *args, match=None, error=bmk.BmkError):
    """`call(*args)` raises `error` (message matching `match`) and the context's bytes stay the same."""
    import pytest
    before = ctx.acquire_cmdbuf()
    with pytest.raises(error, match=match):
        call(*args)
    assert ctx.acquire_cmdbuf() == before
