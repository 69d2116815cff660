"""Issue 32.14 on bm1880: every result plane of an element-wise call (tpu_mul ... tpu_relu,
tpu_lut) is each source plane exactly (in place: the same la, layout and strides) or apart
from it; a partial overlap is refused by the shared rule (bmk.checks.Check.in_place_or_apart)
with the call, both arguments, both addresses and the shared lane bytes, nothing recorded. In
place and apart, the simulator's results equal numpy's."""
import numpy as np
import pytest

import bmk
from bmk.bm1880 import FMT_I8, shape_t4, stride_t4
from tests.chips.bm1880.sim.helpers import get, new, put

SHAPE = shape_t4(2, 40, 3, 5)          # 40 channels over 32 slices: 2 c-slots, 15 bytes each, unaligned
RULE = "{res} must be the address of {src}'s tensor exactly (in place: the same address and layout) or of a " \
       "tensor apart from it, not partly overlapping it ({src} is 0x{la:x} (NPU 0:0x{la:x}); on NPUs 0-"


def tensors(ctx, *las, shape=SHAPE):
    return [ctx.tl_prealloc(la, shape, FMT_I8) for la in las]


def calls(ctx, r, a, b, hi):
    """name: (call, result field, source fields) with result r and sources a, b (8-bit) or
    a/hi (16-bit a_low / a_high)."""
    return {
        "tpu_max": (lambda: ctx.tpu_max(max=r, a=a, b=b), "max", ("a", "b")),
        "tpu_xor_int8": (lambda: ctx.tpu_xor_int8(res=r, a=a, b=b), "res", ("a", "b")),
        "tpu_mul": (lambda: ctx.tpu_mul(res_high=None, res_low=r, a=a, b=b, rshift_width=0), "res_low", ("a", "b")),
        "tpu_copy": (lambda: ctx.tpu_copy(dst=r, src=a), "dst", ("src",)),
        "tpu_relu": (lambda: ctx.tpu_relu(ofmap=r, ifmap=a), "ofmap", ("ifmap",)),
        "tpu_add_const": (lambda: ctx.tpu_add_const(res_high=None, res_low=r, a_high=hi, a_low=a, b=3,
                                                    b_is_signed=True), "res_low", ("a_low", "a_high")),
    }


NAMES = list(calls(None, None, None, None, None))
A, B, HI = 0x100, 0x400, 0x800           # each tensor: 2 batches of 2 slots of 15 bytes = 60 lane bytes


@pytest.mark.parametrize("name, which", [(n, w) for n in NAMES
                                         for w in range(len(calls(None, None, None, None, None)[n][2]))])
@pytest.mark.parametrize("delta", [1, 15, 59, -30])
def test_partial_overlap_is_refused(name, which, delta):
    ctx, _ = new()
    srcs = calls(ctx, None, None, None, None)[name][2]
    la = (A, B if srcs != ("a_low", "a_high") else HI)[which]
    a, b, hi = tensors(ctx, A, B, HI)
    r, = tensors(ctx, la + delta)
    call, res, _ = calls(ctx, r, a, b, hi)[name]
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError) as e:
        call()
    assert str(e.value).startswith(f"{name}: " + RULE.format(res=res, src=srcs[which], la=la)), str(e.value)
    assert ctx.acquire_cmdbuf() == before


def test_the_message_names_the_shared_bytes():
    ctx, _ = new()
    a, b, r = tensors(ctx, A, B, A + 30)
    with pytest.raises(bmk.ArgumentError) as e:
        ctx.tpu_max(max=r, a=a, b=b)
    assert str(e.value) == (
        "tpu_max: max must be the address of a's tensor exactly (in place: the same address and layout) or of a "
        "tensor apart from it, not partly overlapping it (a is 0x100 (NPU 0:0x100); on NPUs 0-31 both use lane "
        "bytes [0x11e, 0x13c)), not 0x11e (NPU 0:0x11e)")


def test_copy_with_stride_counts_the_given_strides():
    """Two tensors 4 bytes apart whose given strides spread them over 0x80 lane bytes overlap."""
    ctx, _ = new()
    src, dst = tensors(ctx, A, A + 4)
    st = stride_t4(64, 32, 5, 1)
    with pytest.raises(bmk.ArgumentError, match="^tpu_copy_with_stride: dst must be the address of src's tensor"):
        ctx.tpu_copy_with_stride(dst=dst, dst_stride=st, src=src, src_stride=st)
    ctx.tpu_copy_with_stride(dst=src, dst_stride=st, src=src, src_stride=st)      # in place


def test_lut_table_overlapping_ofmap_is_refused():
    ctx, _ = new()
    x, t = ctx.tl_prealloc_align(0, SHAPE, FMT_I8), ctx.tl_prealloc_align(0x1000, shape_t4(1, 32, 16, 16), FMT_I8)
    y = ctx.tl_prealloc_align(0x1000 - 0x10, SHAPE, FMT_I8)
    with pytest.raises(bmk.ArgumentError, match="^tpu_lut: ofmap must be the address of table's tensor"):
        ctx.tpu_lut(ofmap=y, ifmap=x, table=t)
    ctx.tpu_lut(ofmap=x, ifmap=x, table=t)        # in place


rng = np.random.default_rng(3214)
VA = rng.integers(-128, 128, SHAPE.dims()).astype(np.int8)
VB = rng.integers(-128, 128, SHAPE.dims()).astype(np.int8)
VHI = rng.integers(-2, 2, SHAPE.dims()).astype(np.int8)
REF = {
    "tpu_max": np.maximum(VA, VB), "tpu_xor_int8": VA ^ VB, "tpu_mul": np.clip(VA.astype(int) * VB, -128, 127),
    "tpu_copy": VA, "tpu_relu": np.maximum(VA, 0),
    "tpu_add_const": np.clip(((VHI.astype(int) << 8) | (VA.astype(int) & 0xff)) + 3, -128, 127),
}


@pytest.mark.parametrize("name, where", [(n, w) for n in NAMES for w in ("a", "apart", "right after")
                                         + ("b",) * (n not in ("tpu_copy", "tpu_relu"))])
def test_in_place_and_apart_compute_the_reference(name, where):
    ctx, sim = new()
    a, b, hi = tensors(ctx, A, B, HI)
    r, = tensors(ctx, {"a": A, "b": B if name != "tpu_add_const" else HI, "apart": 0x1000,
                       "right after": A + 60}[where])
    put(sim, a, VA), put(sim, b, VB), put(sim, hi, VHI)
    calls(ctx, r, a, b, hi)[name][0]()
    sim.run(ctx.acquire_cmdbuf())
    np.testing.assert_array_equal(get(sim, r), REF[name])
