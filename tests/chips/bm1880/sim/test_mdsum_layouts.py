"""tpu_mdsum (seed 4.38) beyond the goldens' layouts (issue 12, item 2): an unaligned input
encoded as the v2 encoder does (its own strides), a 16-bit result whose high plane sits
anywhere above the low one (res0_b_str), and C > npu_num with any res_low layout; results
against numpy."""
import numpy as np
import pytest

from bmk.bm1880 import shape_t4
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip

from .helpers import I8, U8, get, new, put, rand, sat

CHIP = load_chip("bm1880")


def mdsum(shape, fmt, *, a_aligned, res_aligned, high_at=None):
    rng = np.random.default_rng(sum(shape))
    ctx, sim = new()
    c = shape[1]
    a = (ctx.tl_prealloc_align if a_aligned else ctx.tl_prealloc)(0, shape_t4(*shape), fmt)
    alloc = ctx.tl_prealloc_align if res_aligned else ctx.tl_prealloc
    low = alloc(4096, shape_t4(1, c, 1, 1), fmt)
    high = None if high_at is None else alloc(4096 + high_at, shape_t4(1, c, 1, 1), fmt)
    x = rand(rng, shape, fmt)
    put(sim, a, x)
    ctx.tpu_mdsum(res_high=high, res_low=low, a=a)
    buf = ctx.acquire_cmdbuf()
    sim.run(buf)
    ref = x.astype(np.int64).sum(axis=(0, 2, 3)).reshape(1, c, 1, 1)
    if high is None:
        got = get(sim, low).astype(np.int64)
        np.testing.assert_array_equal(got, sat(ref, fmt == I8))
    else:
        got = (get(sim, low).astype(np.uint8).astype(np.int64) | (get(sim, high).astype(np.int64) << 8))
        got = got.astype(np.uint16).astype(np.int16 if fmt == I8 else np.uint16)
        np.testing.assert_array_equal(got, sat(ref, fmt == I8, 16))
    (rec,) = decode_cmdbuf(CHIP, buf)
    return rec.fields


def test_unaligned_input_is_encoded_with_its_strides():
    f = mdsum((4, 20, 3, 3), I8, a_aligned=False, res_aligned=False)
    assert (f["opd0_n_str"], f["opd0_c_str"], f["opd0_h_str"], f["opd0_w_str"]) == (9, 9, 3, 1)
    assert f["short_opd0_str"] == 0 and f["short_res0_str"] == 1      # as for an aligned input


@pytest.mark.parametrize("high_at", [16, 48, 1000])
def test_high_plane_where_the_seed_allows(high_at):
    f = mdsum((2, 32, 4, 4), I8, a_aligned=True, res_aligned=False, high_at=high_at)
    assert f["res0_b_str"] == high_at and f["opt_res0_int8"] == 0


@pytest.mark.parametrize("res_aligned", [False, True])
@pytest.mark.parametrize("fmt, high_at", [(I8, None), (U8, 64), (I8, 64)])
def test_more_channels_than_lanes(res_aligned, fmt, high_at):
    f = mdsum((2, 40, 3, 3), fmt, a_aligned=True, res_aligned=res_aligned, high_at=high_at)
    # unaligned res_low has the engine's own layout: the v2 encoding; aligned: explicit strides
    assert f["short_res0_str"] == (3 if res_aligned else 1)
