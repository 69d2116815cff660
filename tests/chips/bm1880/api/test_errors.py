"""Every misuse raises a BmkError naming call, argument, value and rule, and changes nothing."""
import re

import pytest

import bmk
from bmk import bm1880
from bmk.bm1880 import CTRL_AL, CTRL_NULL, CTRL_RA, CTRL_TP, FMT_I8, FMT_U8

S = bm1880.shape_t4(1, 32, 8, 8)


@pytest.fixture
def ctx():
    c = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    t = c.tl_prealloc(0, S, FMT_I8)
    c.gdma_load(t, 0x1000, CTRL_NULL)       # something in the buffer to compare
    return c


def tensors(ctx):
    p = ctx.tl_prealloc
    return dict(a_l=p(0, S, FMT_I8), a_h=p(64, S, FMT_I8), b_l=p(128, S, FMT_I8), b_h=p(192, S, FMT_I8),
                r_l=p(256, S, FMT_I8), r_h=p(320, S, FMT_I8), u=p(384, S, FMT_U8),
                small=p(448, bm1880.shape_t4(1, 32, 4, 4), FMT_I8))


def assert_unchanged(ctx, error, message, call, *args, **kwargs):
    before = ctx.acquire_cmdbuf()
    with pytest.raises(error) as e:
        call(*args, **kwargs)
    assert str(e.value) == message
    assert ctx.acquire_cmdbuf() == before


def test_register_errors():
    with pytest.raises(bmk.ArgumentError, match=re.escape("register: chip_version must be 1880 (or 18802), not 1822")):
        bm1880.register(chip_version=1822)
    with pytest.raises(bmk.ArgumentError, match=re.escape("register: cmdbuf_size must be a non-negative integer, not -1")):
        bm1880.register(cmdbuf_size=-1)


@pytest.mark.parametrize("args, message", [
    ((0, bm1880.shape_t4(1, 32, 8, 4096), FMT_I8), "tl_prealloc: shape.w must be in [1, 4095], not 4096"),
    ((0, bm1880.shape_t4(0, 32, 8, 8), FMT_I8), "tl_prealloc: shape.n must be in [1, 4095], not 0"),
    ((0, S, 3), "tl_prealloc: fmt must be FMT_I8 (4) or FMT_U8 (9), not 3"),
    ((32768, S, FMT_I8), "tl_prealloc: la must be an lmem offset in [0, 32767], not 32768"),
    ((32720, S, FMT_I8), "tl_prealloc: la must be such that la + 64 bytes fit in the 32768-byte lmem lane, not 32720"),
])
def test_tensor_errors(ctx, args, message):
    assert_unchanged(ctx, bmk.ArgumentError, message, ctx.tl_prealloc, *args)


def test_tl_alloc_lifo_and_capacity(ctx):
    a = ctx.tl_alloc(S, FMT_I8, CTRL_NULL)
    b = ctx.tl_alloc(S, FMT_I8, CTRL_AL)
    assert (a.la, b.la) == (0, 64)
    with pytest.raises(bmk.AllocError, match="tensors must be freed last-allocated first"):
        ctx.tl_free(a)
    ctx.tl_free(b)
    ctx.tl_free(a)
    with pytest.raises(bmk.AllocError, match="must be a live allocation"):
        ctx.tl_free(a)
    big = ctx.tl_alloc(bm1880.shape_t4(1, 32, 100, 200), FMT_I8, CTRL_NULL)
    with pytest.raises(bmk.AllocError, match=re.escape("tl_alloc: shape shape_t4(1, 32, 100, 200) needs 20000 bytes "
                                                       "per lane, only 12768 are free")):
        ctx.tl_alloc(bm1880.shape_t4(1, 32, 100, 200), FMT_I8, CTRL_NULL)
    ctx.tl_free(big)
    with pytest.raises(bmk.ArgumentError, match=re.escape("tl_alloc: ctrl must be CTRL_NULL or CTRL_AL, not 32")):
        ctx.tl_alloc(S, FMT_I8, CTRL_TP)
    assert ctx.tl_alloc(S, FMT_I8, CTRL_NULL).la == 0


def test_tl_alloc_bank(ctx):
    t = ctx.tl_alloc_bank(2, S, FMT_I8, CTRL_NULL)
    assert t.la == 2 * 4096
    u = ctx.tl_alloc_bank(2, S, FMT_I8, CTRL_NULL)
    assert u.la == 2 * 4096 + 64
    with pytest.raises(bmk.ArgumentError, match=re.escape("tl_alloc_bank: bank_id must be in [0, 7], not 8")):
        ctx.tl_alloc_bank(8, S, FMT_I8, CTRL_NULL)
    with pytest.raises(bmk.AllocError, match="bank 3 has 4096 free"):
        ctx.tl_alloc_bank(3, bm1880.shape_t4(1, 32, 80, 80), FMT_I8, CTRL_NULL)
    with pytest.raises(bmk.AllocError, match="freed last-allocated first"):
        ctx.tl_free(t)


def test_tl_free_other_context(ctx):
    other = bm1880.register()
    t = other.tl_alloc(S, FMT_I8, CTRL_NULL)
    with pytest.raises(bmk.AllocError, match="must belong to this context"):
        ctx.tl_free(t)


def test_elementwise_rules(ctx):
    t = tensors(ctx)
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_add: a_high must be a TensorLmem (not NULL), not None",
                     ctx.tpu_add, res_low=t["r_l"], a_low=t["a_l"], b_high=t["b_h"], b_low=t["b_l"])
    assert_unchanged(ctx, bmk.ArgumentError,
                     "tpu_mul: b.shape must be the shape of a shape_t4(1, 32, 8, 8), not shape_t4(1, 32, 4, 4)",
                     ctx.tpu_mul, res_low=t["r_l"], a=t["a_l"], b=t["small"])
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_mul: rshift_width must be an integer in [0, 31], not 32",
                     ctx.tpu_mul, res_low=t["r_l"], a=t["a_l"], b=t["b_l"], rshift_width=32)
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_mul_const: b must be an integer in [-128, 127], not 200",
                     ctx.tpu_mul_const, res_low=t["r_l"], a=t["a_l"], b=200, b_is_signed=True)
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_add_const: b must be an integer in [0, 65535], not -1",
                     ctx.tpu_add_const, res_low=t["r_l"], a_high=t["a_h"], a_low=t["a_l"], b=-1)
    assert_unchanged(ctx, bmk.ArgumentError,
                     "tpu_mac: res_high must be a TensorLmem (mac reads a 16-bit res: res_high must not be NULL), not None",
                     ctx.tpu_mac, res_low=t["r_l"], a=t["a_l"], b=t["b_l"])
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_sub: res_low.fmt must be FMT_I8 (the difference is signed), not 'FMT_U8'",
                     ctx.tpu_sub, res_low=t["u"], a_high=t["a_h"], a_low=t["a_l"], b_high=t["b_h"], b_low=t["b_l"])
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_max: b.fmt must be as signed as a (FMT_I8), not 'FMT_U8'",
                     ctx.tpu_max, max=t["r_l"], a=t["a_l"], b=t["u"])
    assert_unchanged(ctx, bmk.ArgumentError,
                     "tpu_add: a_high.la must be above a_low.la (0x40) by at most 0xffff, not 0",
                     ctx.tpu_add, res_low=t["r_l"], a_high=t["a_l"], a_low=t["a_h"], b_high=t["b_h"], b_low=t["b_l"])
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_arith_shift: res_high must be a TensorLmem (the result is 16-bit), not None",
                     ctx.tpu_arith_shift, res_low=t["r_l"], a_high=t["a_h"], a_low=t["a_l"], bits=t["b_l"])
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_and_int16: res_high must be a TensorLmem (the result is 16-bit), not None",
                     ctx.tpu_and_int16, res_low=t["r_l"], a_high=t["a_h"], a_low=t["a_l"], b_high=t["b_h"], b_low=t["b_l"])
    assert_unchanged(ctx, bmk.ArgumentError, "tpu_mul: no argument named 'rshift'; tpu_mul takes res_high, res_low, a, b, rshift_width",
                     ctx.tpu_mul, res_low=t["r_l"], a=t["a_l"], b=t["b_l"], rshift=1)
    with pytest.raises(bmk.ArgumentError, match="pass either one MulParam or keyword fields, not both"):
        ctx.tpu_mul(bm1880.MulParam(res_low=t["r_l"], a=t["a_l"], b=t["b_l"]), rshift_width=1)


def test_dma_rules(ctx):
    t = tensors(ctx)
    m = ctx.tl_prealloc_align(1024, bm1880.shape_t2(4, 20), FMT_I8)
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_load: ctrls must be one of CTRL_NULL | CTRL_TP, not 4",
                     ctx.gdma_load, t["a_l"], 0x1000, CTRL_RA)
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_load: gaddr must be an integer in [0, 1095216660479], not -1",
                     ctx.gdma_load, t["a_l"], -1, CTRL_NULL)
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_load_stride: stride.w must be an integer in [1, 1], not 2",
                     ctx.gdma_load_stride, t["a_l"], 0, bm1880.stride_t4(4096, 64, 8, 2), CTRL_NULL)
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_lrn_shift: lrn_step must be an integer in [1, 31], not 32",
                     ctx.gdma_lrn_shift, t["r_l"], t["a_l"], True, 32)
    assert_unchanged(ctx, bmk.ArgumentError,
                     "gdma_lrn_shift: dst.shape must be the shape of src shape_t4(1, 32, 8, 8), not shape_t4(1, 32, 4, 4)",
                     ctx.gdma_lrn_shift, t["small"], t["a_l"], True, 1)
    g = bm1880.TensorGmem(addr=0, shape=(1, 32, 8, 8))
    h = bm1880.TensorGmem(addr=0x8000, shape=(1, 32, 8, 4))
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_copy_gmem: dst.shape must be as many elements as src (2048), not shape_t4(1, 32, 8, 4)",
                     ctx.gdma_copy_gmem, h, g, CTRL_NULL)
    gm = bm1880.TensorGmem(addr=0x8000, shape=bm1880.shape_t2(32, 64))
    assert_unchanged(ctx, bmk.ArgumentError,
                     "gdma_copy_gmem: ctrls must be one of CTRL_NULL (matrices are not transposed by gdma_copy_gmem), "
                     "not 32", ctx.gdma_copy_gmem, gm, gm, CTRL_TP)
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_copy_gmem: dst must be a tensor like src, not "
                     "TensorGmem(addr=32768, shape=shape_t2(32, 64), stride=None)", ctx.gdma_copy_gmem, gm, g, CTRL_NULL)
    assert_unchanged(ctx, bmk.ArgumentError, "gdma_copy_lmem: src must be a tensor (shape_t4), not "
                     "TensorLmem(la=0x400, shape=shape_t2(4, 20), fmt=FMT_I8, aligned=True)",
                     ctx.gdma_copy_lmem, t["a_l"], m)


def test_add_dependency_rules(ctx):
    t = tensors(ctx)
    a = ctx.gdma_load(t["a_l"], 0, CTRL_NULL)
    b = ctx.tpu_copy(dst=t["r_l"], src=t["a_l"])
    other = bm1880.register()
    o = other.gdma_load(other.tl_prealloc(0, S, FMT_I8), 0, CTRL_NULL)
    with pytest.raises(bmk.ScheduleError, match="after must be an Op of this context, not of another one"):
        ctx.add_dependency(a, o)
    with pytest.raises(bmk.ScheduleError, match="before must be an Op returned by a computation call, not None"):
        ctx.add_dependency(None, b)
    with pytest.raises(bmk.ScheduleError, match="must be issued earlier than after"):
        ctx.add_dependency(b, a)
    ctx.reset()
    with pytest.raises(bmk.ScheduleError, match="before must be an Op issued since the last reset"):
        ctx.add_dependency(a, b)


def test_cmdbuf_overflow_is_an_error_not_a_truncation():
    ctx = bm1880.register(cmdbuf_size=72 * 2)
    t = ctx.tl_prealloc(0, S, FMT_I8)
    ctx.gdma_load(t, 0, CTRL_NULL)
    ctx.gdma_load(t, 0, CTRL_NULL)
    assert_unchanged(ctx, bmk.CmdbufOverflowError,
                     "gdma_load: the command buffer would grow to 216 bytes, past cmdbuf_size 144",
                     ctx.gdma_load, t, 0, CTRL_NULL)
    assert len(ctx.acquire_cmdbuf()) == 144


def test_cleanup_closes_the_context(ctx):
    t = ctx.tl_prealloc(0, S, FMT_I8)
    ctx.cleanup()
    with pytest.raises(bmk.ArgumentError, match="gdma_load: the context was cleaned up"):
        ctx.gdma_load(t, 0, CTRL_NULL)


def test_aliases_and_record_form(ctx):
    t = tensors(ctx)
    ctx.reset()
    ctx.tl_load(t["a_l"], 0x1000, CTRL_NULL)
    ctx.tl_store(t["a_l"], 0x2000, CTRL_NULL)
    ctx.tl_and_int8(res=t["r_l"], a=t["a_l"], b=t["b_l"])
    ctx.tpu_mul(bm1880.MulParam(res_high=None, res_low=t["r_l"], a=t["a_l"], b=t["b_l"], rshift_width=1))
    keyword = ctx.acquire_cmdbuf()
    ctx.reset()
    ctx.gdma_load(t["a_l"], 0x1000, CTRL_NULL)
    ctx.gdma_store(t["a_l"], 0x2000, CTRL_NULL)
    ctx.tpu_and_int8(res=t["r_l"], a=t["a_l"], b=t["b_l"])
    ctx.tpu_mul(res_high=None, res_low=t["r_l"], a=t["a_l"], b=t["b_l"], rshift_width=1)
    assert ctx.acquire_cmdbuf() == keyword


def test_reset_and_independent_contexts():
    c0, c1 = bm1880.register(), bm1880.register()
    t0 = c0.tl_prealloc(0, S, FMT_I8)
    c0.gdma_load(t0, 0x1000, CTRL_NULL)
    assert c1.acquire_cmdbuf() == b""
    assert len(c0.acquire_cmdbuf()) == 72
    c0.reset()
    assert c0.acquire_cmdbuf() == b""


def test_entered_context_style():
    ctx = bm1880.register(cmdbuf_size=4096)
    bm1880.enter(ctx)
    try:
        t = bm1880.tl_prealloc(0, S, FMT_I8)
        bm1880.bmk1880_gdma_load(t, 0x1000, CTRL_NULL)
        bm1880.bmkl880_tl_load(t, 0x1000, CTRL_NULL)
        assert len(bm1880.acquire_cmdbuf()) == 144
    finally:
        bm1880.exit()
    with pytest.raises(bmk.ArgumentError, match=r"acquire_cmdbuf: no context was entered"):
        bm1880.acquire_cmdbuf()


@pytest.mark.parametrize("call, message", [
    (lambda c, t: c.gdma_load_stride(t, 0, [1, 2, 3], CTRL_NULL),
     "gdma_load_stride: stride must be a stride_t4 or stride_t2 (4 or 2 integers), not [1, 2, 3]"),
    (lambda c, t: c.tl_prealloc(0, (1, 2, 3), FMT_I8),
     "tl_prealloc: shape must be a shape_t4 or shape_t2 (4 or 2 integers), not (1, 2, 3)"),
    (lambda c, t: bm1880.TensorGmem(0, (1, 2, 3)),
     "TensorGmem: shape must be a shape_t4 or shape_t2 (4 or 2 integers), not (1, 2, 3)"),
    (lambda c, t: c.tpu_mul(res_low="x", a=t, b=t),
     "tpu_mul: res_low must be a TensorLmem, not 'x'"),
    (lambda c, t: c.gdma_load(t, "0x100", CTRL_NULL),
     "gdma_load: gaddr must be an integer in [0, 1095216660479], not '0x100'"),
])
def test_wrong_types_are_argument_errors(ctx, call, message):
    t = ctx.tl_prealloc(0, S, FMT_I8)
    assert_unchanged(ctx, bmk.ArgumentError, message, call, ctx, t)
