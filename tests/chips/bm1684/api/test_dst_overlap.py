"""Issue 32.14: dst of an element-wise call is each source exactly (in place) or apart from it;
a partial overlap (dst's lane bytes meet a source's, another view) is refused by the shared
rule (bmk.checks.Check.in_place_or_apart), naming the call, both arguments, both addresses and
the NPUs and lane bytes they share; nothing is recorded. In place and apart, results equal
numpy's."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from tests.chips.bm1684.helpers import get, npu_addr, put, run

SHAPE = bm1684.dim4(2, 8, 4, 8)           # 32 fp32 a channel: 128 lane bytes a batch, 0x100 a tensor
A, B, D = 0x800, 0x1800, 0x3000
RULE = "must be the address of {src}'s tensor exactly (in place: the same address and layout) or of a tensor " \
       "apart from it, not partly overlapping it ({src} is {addr}; on NPUs 0-7 both use lane bytes"

rng = np.random.default_rng(32)
X = rng.uniform(0.5, 4, SHAPE).astype(np.float32)
Y = rng.uniform(0.5, 4, SHAPE).astype(np.float32)

CALLS = {   # name: (args from (dst, src0, src1), numpy of (x, y), sources)
    "bdc_add": (lambda d, a, b: (d, a, b, SHAPE, None, None, None), lambda x, y: x + y, 2),
    "bdc_mul_C": (lambda d, a, b: (d, a, 3.0, SHAPE, None, None), lambda x, y: x * np.float32(3), 1),
    "bdc_max": (lambda d, a, b: (d, a, b, SHAPE, None, None, None), np.maximum, 2),
    "bdc_32bit_cpy": (lambda d, a, b: (d, a, SHAPE, None, None), lambda x, y: x, 1),
    "bdc_neg": (lambda d, a, b: (d, a, SHAPE, None, None), lambda x, y: -x, 1),
    "bdc_relu": (lambda d, a, b: (d, a, SHAPE, None, None), lambda x, y: np.maximum(x, 0), 1),
    "bdc_rsqrt": (lambda d, a, b: (d, a, SHAPE), None, 1),
    "bdc_32bit_and": (lambda d, a, b: (d, a, b, SHAPE, None, None, None), None, 2),
}


def compute(name, dst, src0, src1):
    args, ref, _ = CALLS[name]
    ctx = bm1684.Context()
    getattr(ctx, name)(*args(dst, src0, src1))
    sim = bmk.Simulator("bm1684")
    put(sim, src0, X)
    put(sim, src1, Y)
    run(ctx, sim)
    return get(sim, dst, SHAPE), ref(X, Y)


SOURCES = [(name, which) for name, (_, _, n) in CALLS.items() for which in ("src0", "src1")[:n]]


@pytest.mark.parametrize("name, which", SOURCES)
@pytest.mark.parametrize("delta", [4, 0x80, 0xfc, -0x80])
def test_partial_overlap_is_refused(name, which, delta):
    args, _, n = CALLS[name]
    src = "src1_addr" if which == "src1" else "src0_addr" if n == 2 else "src_addr"
    addr = B if which == "src1" else A
    ctx = bm1684.Context()
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError) as e:
        getattr(ctx, name)(*args(addr + delta, A, B))
    want = f"{name}: dst_addr " + RULE.format(src=src, addr=f"0x{addr:x} (NPU 0:0x{addr:x})")
    assert str(e.value).startswith(want), str(e.value)
    assert ctx.acquire_cmdbuf() == before                # nothing recorded


def test_the_message_names_the_shared_bytes():
    ctx = bm1684.Context()
    with pytest.raises(bmk.ArgumentError) as e:
        ctx.bdc_add(0x840, 0x800, B, SHAPE, None, None, None)
    assert str(e.value) == (
        "bdc_add: dst_addr must be the address of src0_addr's tensor exactly (in place: the same address and layout) "
        "or of a tensor apart from it, not partly overlapping it (src0_addr is 0x800 (NPU 0:0x800); on NPUs 0-7 both "
        "use lane bytes [0x840, 0x900)), not 0x840 (NPU 0:0x840)")


@pytest.mark.parametrize("name, where", [(name, where) for name, (_, ref, n) in CALLS.items() if ref is not None
                                         for where in ("src0", "apart", "right after") + ("src1",) * (n == 2)])
def test_in_place_and_apart_compute_the_reference(name, where):
    dst = {"src0": A, "src1": B, "apart": D, "right after": A + 0x100}[where]   # A's tensor takes 0x100 lane bytes
    got, want = compute(name, dst, A, B)
    assert np.array_equal(got, want)


def test_other_strides_at_the_same_address_are_partial():
    """The same address with another layout (here w stride 2) is not in place."""
    ctx = bm1684.Context()
    with pytest.raises(bmk.ArgumentError, match="^bdc_add: dst_addr must be the address of src0_addr's tensor exactly"):
        ctx.bdc_add(A, A, B, SHAPE, (512, 256, 16, 2), None, None)


def test_fixed_point_result_of_another_type_is_never_in_place():
    """S8 OP S8 -> S16 at src0's address: dst (2N) and src0 (4N) are other views of shared bytes."""
    ctx = bm1684.Context()
    s = bm1684.dim4(4, 8, 4, 8)
    with pytest.raises(bmk.ArgumentError, match="^bdc_fixed_point_packed_add: dst_addr must be the address of "
                                                "src0_addr's tensor exactly"):
        ctx.bdc_fixed_point_packed_add(0, 0, 0x1000, s, None, None, None, bm1684.S8_OP_S8_TO_S16, 0)
    ctx.bdc_fixed_point_packed_add(0, 0, 0x1000, s, None, None, None, bm1684.S8_OP_S8_TO_S8, 0)     # in place


def test_bias_tensor_overlapping_dst_is_refused():
    ctx = bm1684.Context()
    with pytest.raises(bmk.ArgumentError, match="^bdc_bias: dst_addr must be the address of bias_addr's tensor"):
        ctx.bdc_bias(0, 0x1000, 0x40, SHAPE, None, None)
