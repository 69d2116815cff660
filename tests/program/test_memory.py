"""Memory per recorded op (issue 13): a tiled program with distinct gmem addresses stays under
200 bytes per op while building, and acquire_cmdbuf needs less than that again beyond the
buffer it returns."""
import gc
import tracemalloc

from bmk import acquisition, bm1880, emission
from bmk.bm1880 import CTRL_NULL, FMT_I8

CYCLES = 5_000         # x 6 calls


def test_bytes_per_op_while_building_and_at_acquisition(monkeypatch):
    # the lowering memo and the patch blocks are bounded (constants, not per op): small here, so
    # a short program shows what each op costs
    monkeypatch.setattr(emission, "MEMO_SIZE", 256)
    monkeypatch.setattr(acquisition, "PATCH_BLOCK", 1024)
    ctx = bm1880.register(cmdbuf_size=1 << 30)
    s = bm1880.shape_t4(1, 32, 8, 8)
    a_l, a_h, b_l, b_h, r_l, r_h = (ctx.tl_prealloc(64 * i, s, FMT_I8) for i in range(6))
    add = dict(res_high=r_h, res_low=r_l, a_high=a_h, a_low=a_l, b_high=b_h, b_low=b_l)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for i in range(CYCLES):
            ctx.gdma_load(a_l, 0x100000 + 0x800 * i, CTRL_NULL)
            ctx.tpu_add(**add)
            ctx.tpu_mul(res_high=None, res_low=r_l, a=a_l, b=b_l, rshift_width=2)
            ctx.tpu_add(**add)
            ctx.tpu_add(**add)
            ctx.gdma_store(r_l, 0x4000000 + 0x800 * i, CTRL_NULL)
        built = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.reset_peak()
        buf = ctx.acquire_cmdbuf()
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    ops = 6 * CYCLES
    assert built / ops < 200
    assert (peak - built - len(buf)) / ops < built / ops
