"""Issue 22.8: a bm1684 work tensor may overlap neither dst nor src (work_addr = dst_addr + 4 in
bdc_exp gave a relative error of 580), in every function that takes one; apart, the results
are right."""
import numpy as np
import pytest

import bmk
from bmk import bm1684

G = 0x100000000
SHAPE = bm1684.dim4(1, 8, 4, 8)           # one aligned channel slot: 32 fp32 = 128 bytes a lane
DST, SRC, WORK = 0, 0x1000, 0x2000

WORK_CALLS = [(f"bdc_{n}", ()) for n in ("exp", "sigmoid", "tanh")] + \
    [(f"bdc_{n}_tunable", (16,)) for n in ("exp", "sigmoid", "tanh")] + \
    [("bdc_4N_int8_to_fp32", (True, True)), ("bdc_int8_to_fp32", (True, True))]


@pytest.mark.parametrize("name, extra", WORK_CALLS, ids=[n for n, _ in WORK_CALLS])
@pytest.mark.parametrize("work, other", [(DST + 4, "dst_addr"), (DST + 0x40, "dst_addr"), (SRC + 4, "src_addr"),
                                         (DST + 0x80, None)])
def test_work_overlapping_dst_or_src_is_refused(name, extra, work, other):
    ctx = bm1684.Context()
    call = getattr(ctx, name)
    if other is None:                     # right after dst's 128 lane bytes: apart, accepted
        call(DST, SRC, work, SHAPE, *extra)
        return
    with pytest.raises(bmk.ArgumentError) as e:
        call(DST, SRC, work, SHAPE, *extra)
    assert str(e.value).startswith(f"{name}: work_addr must be an address whose tensor does not overlap {other}'s")
    assert ctx.acquire_cmdbuf() == bm1684.Context().acquire_cmdbuf()          # nothing recorded
    call(DST, SRC, WORK, SHAPE, *extra)                                          # apart: accepted


def test_split_low_work_may_not_overlap_src():
    ctx = bm1684.Context()
    s = bm1684.dim4(4, 8, 4, 8)
    with pytest.raises(bmk.ArgumentError, match="work_addr must be an address whose tensor does not overlap src_addr's"):
        ctx.bdc_fixed_point_packed_16bit_split_low_8bit(0, 0x1000, 0x1000 + 4, s, None, None, None)


def test_exp_with_work_apart_is_right():
    x = np.linspace(-5, 5, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(SRC, G, SHAPE)
    ctx.bdc_exp(DST, SRC, WORK, SHAPE)
    ctx.gdma_32bit_cpy_L2S(G + 0x10000, DST, SHAPE)
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, x)
    sim.run(ctx.acquire_streams())
    got = np.frombuffer(sim.gmem_read(G + 0x10000, x.nbytes), np.float32).reshape(SHAPE)
    assert np.allclose(got, np.exp(x.astype(np.float64)), rtol=1e-5)
