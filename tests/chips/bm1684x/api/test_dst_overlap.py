"""Issue 32.14 on bm1684x: dst of an element-wise call (and of a vector cross call) is each
source exactly (in place: the same address, dtype size and strides) or apart from it; a partial
overlap is refused by the shared rule (bmk.checks.Check.in_place_or_apart), the call named with
both arguments, both addresses and the lane bytes they share, and nothing recorded. In place
and apart, the simulator's results equal numpy's."""
import numpy as np
import pytest

import bmk
from bmk import bm1684x as x

S = x.dim4(2, 70, 3, 5)          # two channel slots from NPU 0: 64-byte aligned int16 slots of 15 elements
A, B, D = 0x400, 0x2000, 0x4000
LANE = x.local_mem_size_per_npu()
rng = np.random.default_rng(3214)
X = rng.integers(-3000, 3000, S).astype(np.int16)
Y = rng.integers(-3000, 3000, S).astype(np.int16)
SH = rng.integers(-4, 5, S).astype(np.int16)

CALLS = {   # name: (args from (dst, src0, src1), numpy of (x, y) or None, sources)
    "bdc_max": (lambda d, a, b: (d, a, b, S, None, None, None, x.DT_INT16), np.maximum, 2),
    "bdc_xor": (lambda d, a, b: (d, a, b, S, None, None, None, x.DT_INT16), np.bitwise_xor, 2),
    "bdc_and_C": (lambda d, a, b: (d, a, 0x0ff0, S, None, None, x.DT_INT16), lambda p, q: p & 0x0ff0, 1),
    "bdc_greater_equal": (lambda d, a, b: (d, a, b, 9, S, None, None, None, x.DT_INT16, x.DT_INT16),
                          lambda p, q: np.where(p >= q, 9, 0).astype(np.int16), 2),
    "bdc_less_C": (lambda d, a, b: (d, a, 100, 9, S, None, None, x.DT_INT16, x.DT_INT16),
                   lambda p, q: np.where(p < 100, 9, 0).astype(np.int16), 1),
    "bdc_arithmetic_shift": (lambda d, a, b: (d, a, b, S, None, None, None, x.DT_INT16, x.DT_INT16, x.DT_INT16,
                                              x.RM_DOWN), None, 2),
    "bdc_logical_shift_C": (lambda d, a, b: (d, a, 3, S, None, None, x.DT_UINT16, x.DT_UINT16, x.RM_DOWN), None, 1),
}
SRC_NAMES = {"bdc_arithmetic_shift": ("src_addr", "shift_addr")}


def src_name(name, which):
    n = CALLS[name][2]
    return SRC_NAMES.get(name, ("src0_addr", "src1_addr") if n == 2 else ("src_addr",))[which]


@pytest.mark.parametrize("name, which", [(n, w) for n, (_, _, k) in CALLS.items() for w in range(k)])
@pytest.mark.parametrize("delta", [0x40, 0x80, 0xc0, -0x40])     # a NULL stride: 64-byte aligned
def test_partial_overlap_is_refused(name, which, delta):
    args = CALLS[name][0]
    addr = (A, B)[which]
    ctx = x.Context()
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError) as e:
        getattr(ctx, name)(*args(addr + delta, A, B))
    src = src_name(name, which)
    assert str(e.value).startswith(
        f"{name}: dst_addr must be the address of {src}'s tensor exactly (in place: the same address and layout) or "
        f"of a tensor apart from it, not partly overlapping it ({src} is 0x{addr:x} (NPU 0:0x{addr:x}); on NPUs "), \
        str(e.value)
    assert ctx.acquire_cmdbuf() == before


def test_the_message_names_the_shared_bytes():
    with pytest.raises(bmk.ArgumentError) as e:
        x.Context().bdc_max(A + 0x40, A, B, S, None, None, None, x.DT_INT16)
    # A's int16 tensor (strides 64, 32, 5, 1): lane bytes [0x400, 0x4de) on NPUs 0-5 (two slots),
    # [0x400, 0x49e) on NPUs 6-63; dst's 0x40 further
    assert str(e.value) == (
        "bdc_max: dst_addr must be the address of src0_addr's tensor exactly (in place: the same address and layout) "
        "or of a tensor apart from it, not partly overlapping it (src0_addr is 0x400 (NPU 0:0x400); on NPUs 0-63 "
        "both use lane bytes [0x440, 0x4de)), not 0x440 (NPU 0:0x440)")


def test_free_strides_two_bytes_apart_are_partial():
    st = x.aligned_stride(0, S, x.DT_INT16)
    with pytest.raises(bmk.ArgumentError, match=r"^bdc_min: dst_addr must be the address of src1_addr's tensor.*"
                                                r"both use lane bytes \[0x2002, 0x20de\)\), not 0x2002"):
        x.Context().bdc_min(B + 2, A, B, S, st, None, st, x.DT_INT16)
    x.Context().bdc_min(B, A, B, S, st, None, None, x.DT_INT16)       # the aligned layout given: in place


def test_another_dtype_at_the_same_address_is_partial():
    """An int8 result at an int16 source's address reads a source element after writing it."""
    with pytest.raises(bmk.ArgumentError, match="^bdc_less: dst_addr must be the address of src0_addr's tensor"):
        x.Context().bdc_less(A, A, B, 1, S, None, None, None, x.DT_INT8, x.DT_INT16)


def test_tensors_on_other_npus_are_apart():
    """vc's src0 may start on another NPU: its lane bytes there are not dst's. dst (1 row of 16
    per channel) on NPUs 0-3 and src0 (16 elements, 16 a channel) on NPU 8 at the same offset."""
    ctx = x.Context()
    ctx.bdc_vc_max(0x10000, 8 * LANE + 0x10000, 0x20000, 1, 64, 16, 16, x.DT_INT8)
    with pytest.raises(bmk.ArgumentError, match="^bdc_vc_max: dst_addr must be the address of src0_addr's tensor.*"
                                                r"on NPU 3 both use lane bytes \[0x10000, 0x10010\)"):
        ctx.bdc_vc_max(0x10000, 3 * LANE + 0x10000, 0x20000, 1, 64, 16, 16, x.DT_INT8)


def compute(name, dst):
    args, ref, n = CALLS[name]
    ctx = x.Context()
    getattr(ctx, name)(*args(dst, A, B))
    sim = bmk.Simulator("bm1684x")
    st = x.aligned_stride(0, S, x.DT_INT16)
    for addr, v in ((A, X), (B, Y)):
        sim.lmem_write_array(addr, v, st, "int16")
    sim.run(ctx.acquire_streams())
    return sim.lmem_read_array(dst, S, st, "int16"), ref(X, Y)


@pytest.mark.parametrize("name, where", [(n, w) for n, (_, ref, k) in CALLS.items() if ref is not None
                                         for w in ("src0", "apart", "right after") + ("src1",) * (k == 2)])
def test_in_place_and_apart_compute_the_reference(name, where):
    dst = {"src0": A, "src1": B, "apart": D, "right after": A + 0x100}[where]
    got, want = compute(name, dst)
    assert np.array_equal(got, want)
