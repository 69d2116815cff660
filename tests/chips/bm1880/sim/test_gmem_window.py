"""gmem addresses are 40-bit (issue 12, items 1 and 11): seed 4.14 takes `u64 gaddr`; the v2
encoder writes base + gaddr into src/dst_base_addr_low|high. Every address those fields hold
is accepted, encoded and simulated; a larger one, or a transfer running past the end of that
window, is refused at the call."""
import numpy as np
import pytest

import bmk
from bmk.bm1880 import CTRL_NULL, CTRL_TP, TensorGmem, shape_t2, shape_t4, stride_t4
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip

from .helpers import I8, new, rand

CHIP = load_chip("bm1880")
TDMA = CHIP.engine("tdma").format
BASE = CHIP.space("global").base
# The composed address fields' width, from the spec.
LIMIT = (1 << sum(TDMA.field(p).width for p in dict(TDMA.composed)["src_addr"])) - BASE


def test_window_is_what_the_address_fields_hold():
    assert CHIP.space("global").size == LIMIT == 0xFF00000000


def test_load_and_store_above_4_gib():
    rng = np.random.default_rng(1)
    ctx, sim = new()
    t = ctx.tl_prealloc(0, shape_t4(1, 4, 2, 8), I8)
    data = rand(rng, (1, 4, 2, 8), I8)
    sim.gmem_write(0x200000040, data)
    ctx.gdma_load(t, 0x200000040, CTRL_NULL)
    ctx.gdma_store(t, LIMIT - data.size, CTRL_NULL)        # the very last bytes of the window
    buf = ctx.acquire_cmdbuf()
    load, store = decode_cmdbuf(CHIP, buf)
    assert TDMA.compose("src_addr", load.fields) == BASE + 0x200000040
    assert load.fields["src_base_addr_high"] == (BASE + 0x200000040) >> 32
    assert TDMA.compose("dst_addr", store.fields) == BASE + LIMIT - data.size
    sim.run(buf)
    np.testing.assert_array_equal(sim.lmem_read_tensor(t), data)
    assert sim.gmem_read(LIMIT - data.size, data.size) == data.tobytes()


@pytest.mark.parametrize("call", ["gdma_load", "gdma_store"])
def test_address_past_the_fields_is_refused(call):
    ctx, _ = new()
    t = ctx.tl_prealloc(0, shape_t4(1, 1, 1, 1), I8)
    getattr(ctx, call)(t, LIMIT - 1, CTRL_NULL)
    with pytest.raises(bmk.ArgumentError, match=rf"{call}: gaddr must be an integer in \[0, {LIMIT - 1}\]"):
        getattr(ctx, call)(t, LIMIT, CTRL_NULL)


@pytest.mark.parametrize("call, shape, last_fit, more", [
    # last_fit: the largest gaddr whose transfer ends inside gmem (span of the gmem side)
    ("gdma_load", shape_t4(2, 3, 4, 5), LIMIT - 120, (CTRL_NULL,)),
    ("gdma_store", shape_t4(2, 3, 4, 5), LIMIT - 120, (CTRL_NULL,)),
    ("gdma_load", shape_t4(2, 3, 4, 5), LIMIT - 120, (CTRL_TP,)),
    ("gdma_store", shape_t2(4, 20), LIMIT - 80, (CTRL_NULL,)),
    ("gdma_load_stride", shape_t4(2, 3, 4, 5), LIMIT - (4096 + 2 * 60 + 3 * 5 + 4 + 1),
     (stride_t4(4096, 60, 5, 1), CTRL_NULL)),
])
def test_transfer_past_the_end_of_gmem_is_refused(call, shape, last_fit, more):
    ctx, _ = new()
    t = ctx.tl_prealloc(0, shape, I8)
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match=rf"{call}: gaddr must be such that the transfer ends inside gmem"):
        getattr(ctx, call)(t, last_fit + 1, *more)
    assert ctx.acquire_cmdbuf() == before
    getattr(ctx, call)(t, last_fit, *more)


def test_copy_gmem_past_the_end_is_refused():
    ctx, _ = new()
    ok, bad = TensorGmem(LIMIT - 24, (1, 2, 3, 4)), TensorGmem(LIMIT - 23, (1, 2, 3, 4))
    ctx.gdma_copy_gmem(ok, TensorGmem(0, (1, 2, 3, 4)), CTRL_NULL)
    with pytest.raises(bmk.ArgumentError, match=r"gdma_copy_gmem: dst.addr must be such that the transfer ends"):
        ctx.gdma_copy_gmem(bad, TensorGmem(0, (1, 2, 3, 4)), CTRL_NULL)
