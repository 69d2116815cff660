"""Matrix multiplication (seed 4.46, 4.47) through encode -> bytes -> simulator.

A 16-bit matrix (the (2R, C) res with RA or a 16-bit result, the (2, C) bias) is its low
8-bit rows followed by its high 8-bit rows (low parts at lower addresses, seed 4.46).
"""
import numpy as np
import pytest

from bmk.bm1880 import CTRL_NULL, CTRL_RA, CTRL_RELU, shape_t2, shape_t4

from .helpers import I8, U8, get, new, put, rand, rshift, run, sat


def planes(v):
    u = np.asarray(v, np.int64) & 0xFFFF
    return np.concatenate([u & 0xFF, u >> 8]).astype(np.uint8)


def value16(rows, signed):
    r = rows.shape[0] // 2
    v = (rows[:r].astype(np.int64) & 0xFF) | ((rows[r:].astype(np.int64) & 0xFF) << 8)
    return np.where(v >= 32768, v - 65536, v) if signed else v


CASES = [
    # R, K, C, fmts left/right/bias, bias, ctrls, res_is_int8, lshift, rshift
    (4, 20, 40, (I8, I8, I8), True, CTRL_NULL, True, 0, 4),
    (7, 29, 61, (U8, I8, I8), True, CTRL_RA, False, 3, 7),
    (7, 29, 61, (U8, I8, I8), True, CTRL_RA, True, 2, 9),
    (5, 33, 70, (I8, I8, I8), False, CTRL_RELU, True, 0, 6),
    (6, 12, 10, (U8, U8, U8), True, CTRL_NULL, False, 0, 0),
    (3, 600, 20, (I8, U8, I8), True, CTRL_RELU, False, 0, 2),
    (8, 16, 16, (U8, U8, U8), False, CTRL_NULL, True, 0, 0),
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_matrix_mac(case):
    r, k, c, (fl, fr, fb), has_bias, ctrls, res_is_int8, lsh, rsh = case
    rng = np.random.default_rng(200)
    ctx, sim = new()
    signed = I8 in (fl, fr) or (has_bias and fb == I8)
    fo = I8 if signed else U8
    wide = ctrls == CTRL_RA or not res_is_int8
    left = ctx.tl_prealloc_align(0, shape_t2(r, k), fl)
    right = ctx.tl_prealloc_align(4096, shape_t2(k, c), fr)
    bias = ctx.tl_prealloc_align(16384, shape_t2(2, c), fb)
    res = ctx.tl_prealloc_align(17408, shape_t2(2 * r if wide else r, c), fo)
    vl, vr = rand(rng, (r, k), fl), rand(rng, (k, c), fr)
    vb = rng.integers(-20000, 20000, (1, c)) if fb == I8 else rng.integers(0, 40000, (1, c))
    old = rng.integers(-2000, 2000, (r, c)) if signed else rng.integers(0, 4000, (r, c))
    put(sim, left, vl), put(sim, right, vr), put(sim, bias, planes(vb))
    if wide:
        put(sim, res, planes(old))
    ctx.tpu_matrix_mac(res=res, left=left, right=right, bias=bias if has_bias else None, lshift_width=lsh,
                       rshift_width=rsh, res_is_int8=res_is_int8, ctrls=ctrls)
    run(ctx, sim)
    acc = vl.astype(np.int64) @ vr.astype(np.int64) + (vb if has_bias else 0)
    if ctrls == CTRL_RA:
        acc = acc + (old << lsh)
    if ctrls == CTRL_RELU:
        acc = np.maximum(acc, 0)
    ref = sat(rshift(acc, rsh), signed, 8 if res_is_int8 else 16)
    got = get(sim, res)
    if res_is_int8:
        np.testing.assert_array_equal(got[:r], ref)
        if wide:   # only the low rows are written
            np.testing.assert_array_equal(got[r:] & 0xFF, planes(old)[r:])
    else:
        np.testing.assert_array_equal(value16(got, signed), ref)


def test_matrix_mac_2():
    rng = np.random.default_rng(201)
    ctx, sim = new()
    left = ctx.tl_prealloc_align(0, shape_t4(1, 256, 1, 256), I8)
    right = ctx.tl_prealloc_align(8192, shape_t4(256, 16, 1, 16), I8)
    res = ctx.tl_prealloc_align(16384, shape_t4(1, 256, 1, 256), I8)
    vl, vr = rand(rng, (256, 256), I8, -4, 4), rand(rng, (256, 256), I8, -4, 4)
    # left and res are read and written in the FC matrix layout of a (256, 256) matrix
    put(sim, ctx.tl_prealloc_align(left.la, shape_t2(256, 256), I8), vl)
    put(sim, ctx.tl_prealloc_align(right.la, shape_t2(256, 256), I8), vr)
    ctx.tpu_matrix_mac_2(res=res, left=left, right=right)
    run(ctx, sim)
    got = get(sim, ctx.tl_prealloc_align(res.la, shape_t2(256, 256), I8))
    np.testing.assert_array_equal(got, sat(vl.astype(np.int64) @ vr, True))
