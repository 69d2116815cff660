"""Issue 22.5 (allocator): tl_alloc / tl_alloc_bank / tl_prealloc / tl_free on bm1684 and
bm1684x (bmk/lmem.py), NPU placement and channel wrap-around counted: a 67-channel tensor
starting on NPU 10 puts channels 54..66 on NPUs 0..12 one c-stride further, which silently
overwrote another buffer when placed by hand."""
import numpy as np
import pytest

import bmk
from bmk import bm1684, bm1684x
from bmk.lmem import LocalTensor, lane_ranges

G = 0x100000000
LANE_X = bm1684x.local_mem_size_per_npu()
NPUS = bm1684x.npu_num()
WRAPPED = bm1684x.dim4(1, 67, 1, 16)        # int8: one 64-byte c-stride, 16 bytes used


def test_wrapped_tensor_reserves_its_second_c_stride():
    ctx = bm1684x.Context()
    t = ctx.tl_alloc(WRAPPED, bm1684x.DT_INT8, start_npu=10)
    assert isinstance(t, LocalTensor)
    assert (t.addr, t.start_npu, t.offset, t.slots) == (10 * LANE_X, 10, 0, 2)
    assert t.stride == bm1684x.aligned_stride(10, WRAPPED, bm1684x.DT_INT8) == (128, 64, 16, 1)
    # NPUs 0..9: slot 1 only; 10..12: slots 0 and 1; 13..63: slot 0 only
    assert t.lanes[0] == (64, 80) and t.lanes[10] == (0, 80) and t.lanes[13] == (0, 16)
    assert t.size == 80
    nxt = ctx.tl_alloc(bm1684x.dim4(1, 64, 1, 16), bm1684x.DT_INT8)
    assert nxt.offset == 128 and nxt.offset >= t.end          # past the wrapped channels on NPU 0


def test_hand_placed_buffer_on_the_wrapped_channels_is_refused():
    ctx = bm1684x.Context()
    t = ctx.tl_alloc(WRAPPED, bm1684x.DT_INT8, start_npu=10)
    with pytest.raises(bmk.AllocError) as e:
        ctx.tl_prealloc(64, bm1684x.dim4(1, 4, 1, 16), bm1684x.DT_INT8)      # NPU 0, offset 64
    msg = str(e.value)
    assert msg.startswith("tl_prealloc: addr must be such that the tensor overlaps no live tensor, but on NPUs 0-3 "
                          "lane bytes [0x40, 0x50) are also dim4(n=1, c=67, h=1, w=16) at 0x280000 (NPU 10:0x0, 2 "
                          "c-stride(s), alloc), not dim4(n=1, c=4, h=1, w=16) at 0x40 (NPU 0:0x40")
    assert ctx.tl_live() == (t,)                                      # a refused call changes nothing
    # slot 0 of NPUs 0..9 is free: the wrapped tensor has no channel there
    p = ctx.tl_prealloc(0, bm1684x.dim4(1, 10, 1, 64), bm1684x.DT_INT8)
    assert ctx.tl_live() == (t, p)
    with pytest.raises(bmk.AllocError, match="tl_prealloc: addr must be such that the tensor overlaps no live"):
        ctx.tl_prealloc(0, bm1684x.dim4(1, 11, 1, 16), bm1684x.DT_INT8)     # reaches NPU 10's slot 0


def test_allocated_buffers_survive_the_wrapped_load():
    """X then the wrapped T, both from tl_alloc; loading T leaves X as loaded."""
    ctx = bm1684x.Context()
    xs = bm1684x.dim4(1, 8, 1, 16)
    x = ctx.tl_alloc(xs, bm1684x.DT_INT8)
    t = ctx.tl_alloc(WRAPPED, bm1684x.DT_INT8, start_npu=10)
    ctx.gdma_cpy_S2L(x.addr, G, x.shape, x.stride, None, x.dtype)
    ctx.gdma_cpy_S2L(t.addr, G + 0x1000, t.shape, t.stride, None, t.dtype)
    ctx.gdma_cpy_L2S(G + 0x2000, x.addr, x.shape, None, x.stride, x.dtype)
    ctx.gdma_cpy_L2S(G + 0x3000, t.addr, t.shape, None, t.stride, t.dtype)
    rng = np.random.default_rng(5)
    xv = rng.integers(-128, 127, xs, dtype=np.int8)
    tv = rng.integers(-128, 127, WRAPPED, dtype=np.int8)
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G, xv)
    sim.gmem_write(G + 0x1000, tv)
    sim.run(ctx.acquire_streams())
    assert np.array_equal(np.frombuffer(sim.gmem_read(G + 0x2000, xv.nbytes), np.int8).reshape(xs), xv)
    assert np.array_equal(np.frombuffer(sim.gmem_read(G + 0x3000, tv.nbytes), np.int8).reshape(WRAPPED), tv)


def test_bm1684_4n_tensor_counts_words_and_batch_groups():
    ctx = bm1684.Context()
    s = bm1684.dim4(5, 67, 3, 3)
    t = ctx.tl_alloc(s, "int8", start_npu=10)
    assert t.stride == bm1684.aligned_stride_for_8bit(10, s) == (64, 32, 3, 1)
    # 2 groups of 4 batches, 2 slots, 32-word c-stride: the last word at group 1, slot 1
    assert t.size == 4 * (64 + 32 + 2 * 3 + 2 + 1)
    assert t.lanes[0][0] == 4 * 32                                  # NPU 0 starts at slot 1
    f = ctx.tl_alloc(bm1684.dim4(1, 64, 2, 2), "fp32")
    assert f.offset == 512 and f.offset % 128 == 0                  # the chip's 128-byte channel alignment
    assert (f.stride, f.size) == ((32, 32, 2, 1), 16)


@pytest.mark.parametrize("mod", [bm1684, bm1684x])
def test_overflow_names_call_argument_value_rule(mod):
    ctx = mod.Context()
    dtype = "fp32" if mod is bm1684 else bm1684x.DT_FP32
    lane = mod.local_mem_size_per_npu()
    big = mod.dim4(1, 64, lane // 4 // 256 + 1, 256)
    with pytest.raises(bmk.AllocError) as e:
        ctx.tl_alloc(big, dtype)
    assert str(e.value).startswith(f"tl_alloc: shape must be a tensor that fits the free lane bytes [0x0, 0x{lane:x}) "
                                   f"of every NPU ({lane} bytes), but it needs ")
    assert str(e.value).endswith(f"not dim4(n=1, c=64, h={lane // 1024 + 1}, w=256)")
    with pytest.raises(bmk.ArgumentError, match=r"tl_alloc: start_npu must be an NPU index in \[0, 63\], not 64"):
        ctx.tl_alloc(mod.dim4(1, 1, 1, 1), dtype, start_npu=64)
    assert ctx.tl_live() == ()


@pytest.mark.parametrize("mod", [bm1684, bm1684x])
def test_free_is_last_allocated_first(mod):
    ctx = mod.Context()
    dtype = "fp32" if mod is bm1684 else bm1684x.DT_FP32
    a = ctx.tl_alloc(mod.dim4(1, 64, 4, 4), dtype)
    b = ctx.tl_alloc(mod.dim4(1, 64, 4, 4), dtype)
    p = ctx.tl_prealloc(0x8000, mod.dim4(1, 1, 1, 1), dtype)
    with pytest.raises(bmk.AllocError, match=r"tl_free: t must be the last live tensor of its stack"):
        ctx.tl_free(a)
    ctx.tl_free(p)                       # a prealloc tensor: any time
    ctx.tl_free(b)
    c = ctx.tl_alloc(mod.dim4(1, 64, 4, 4), dtype)
    assert c.addr == b.addr              # the stack top went back
    ctx.tl_free(c)
    ctx.tl_free(a)
    with pytest.raises(bmk.AllocError, match=r"tl_free: t must be a live tensor \(freed already\?\)"):
        ctx.tl_free(a)
    with pytest.raises(bmk.AllocError, match=r"tl_free: t must be a tensor of this context"):
        mod.Context().tl_free(ctx.tl_alloc(mod.dim4(1, 1, 1, 1), dtype))
    with pytest.raises(bmk.ArgumentError, match=r"tl_free: t must be a LocalTensor"):
        ctx.tl_free(0)


@pytest.mark.parametrize("mod", [bm1684, bm1684x])
def test_banks_have_their_own_stacks(mod):
    ctx = mod.Context()
    chip = ctx.chip
    bank = chip.param("lmem_bank_size")
    dtype = "fp32" if mod is bm1684 else bm1684x.DT_FP32
    t = ctx.tl_alloc_bank(1, mod.dim4(1, 64, 1, 16), dtype)
    assert t.offset == bank and t.alloc == ("bank", 1)
    with pytest.raises(bmk.AllocError, match=r"tl_alloc_bank: shape must be a tensor that fits the free lane bytes"):
        ctx.tl_alloc_bank(1, mod.dim4(1, 64, 1, bank // 4), dtype)
    with pytest.raises(bmk.ArgumentError, match=r"tl_alloc_bank: bank_id must be a bank index in \[0, "
                                                f"{chip.param('lmem_banks') - 1}\\]"):
        ctx.tl_alloc_bank(chip.param("lmem_banks"), mod.dim4(1, 1, 1, 1), dtype)
    # the main stack may not grow into bank 1's live tensor
    with pytest.raises(bmk.AllocError, match=r"tl_alloc: shape must be such that the tensor overlaps no live tensor"):
        ctx.tl_alloc(mod.dim4(1, 64, 1, bank // 4 + 16), dtype)
    ctx.tl_free(t)
    ctx.tl_alloc(mod.dim4(1, 64, 1, bank // 4 + 16), dtype)


def test_prealloc_follows_the_chip_address_rules():
    with pytest.raises(bmk.ArgumentError, match=r"tl_prealloc: addr must be 64-byte aligned in its NPU"):
        bm1684x.Context().tl_prealloc(0x20, bm1684x.dim4(1, 1, 1, 1), bm1684x.DT_INT8)
    with pytest.raises(bmk.ArgumentError, match=r"tl_prealloc: addr must be divisible by 4"):
        bm1684.Context().tl_prealloc(0x22, bm1684.dim4(1, 1, 1, 1), "fp32")
    with pytest.raises(bmk.ArgumentError, match=r"tl_prealloc: addr must be such that the tensor fits its NPUs'"):
        bm1684.Context().tl_prealloc(bm1684.local_mem_size_per_npu() - 4, bm1684.dim4(1, 1, 1, 2), "fp32")


def test_lane_ranges_follow_the_placement_rule():
    """Every element's (NPU, byte) from the placement rule lies in its NPU's range, and each
    range's ends are elements' bytes."""
    npus, shape, start = 8, (2, 13, 2, 3), 5
    stride = (24, 8, 3, 1)                          # slots = ceil((5 + 13) / 8) = 3, cs 8
    ranges = lane_ranges(npus, start, 100, shape, stride, 2)
    hit = {}
    for n in range(shape[0]):
        for c in range(shape[1]):
            for h in range(shape[2]):
                for w in range(shape[3]):
                    lane, slot = (start + c) % npus, (start + c) // npus
                    b = 100 + 2 * (n * 24 + slot * 8 + h * 3 + w)
                    lo, hi = hit.get(lane, (b, b + 2))
                    hit[lane] = (min(lo, b), max(hi, b + 2))
    assert {k: v for k, v in enumerate(ranges) if v is not None} == hit
