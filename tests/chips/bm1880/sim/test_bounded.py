"""The simulator on instructions the API never emits but the decoder accepts (issue 12, items
7 and 8): work and memory bounded by what the bytes address, SimulationError (naming the
instruction) for what cannot be executed, 16-bit convolution results executed, Ctrl-C
never swallowed. Random fields: tests/chips/bm1880/sim/test_fuzz_sim.py."""
import time

import attrs
import numpy as np
import pytest

import bmk
from bmk.bm1880 import CTRL_NULL, shape_t2, shape_t4
from bmk.encoders import decode_cmdbuf, encode_cmdbuf
from bmk.isa import load_chip
from bmk.sim.semantics import Semantics
from bmk.sim.bm1880 import SEMANTICS

from .helpers import I8, conv_ref, get, new, put, rand, sat
from .test_conv import put_weight

CHIP = load_chip("bm1880")
TDMA = CHIP.engine("tdma").format


def one(ctx, engine, **changes):
    """The single descriptor of ctx's program, decoded, with some fields changed."""
    (rec,) = [r for r in decode_cmdbuf(CHIP, ctx.acquire_cmdbuf()) if r.engine == engine]
    return attrs.evolve(rec, fields={**rec.fields, **changes})


def refused(records, match):
    sim = bmk.Simulator("bm1880")
    t0 = time.process_time()
    with pytest.raises(bmk.SimulationError, match=match):
        sim.run(encode_cmdbuf(CHIP, records))
    assert time.process_time() - t0 < 1


def zero_strides(side):
    return {f"{side}_n_stride": 0, f"{side}_h_stride": 0, **TDMA.split(f"{side}_c_stride", 0)}


def test_zero_stride_load_of_65535_batches_is_refused():
    ctx, _ = new()
    ctx.gdma_load(ctx.tl_prealloc(0, shape_t4(1, 32, 8, 8), I8), 0x1000, CTRL_NULL)
    rec = one(ctx, "tdma", src_n=65535, **zero_strides("src"), **zero_strides("dst"))
    assert len(encode_cmdbuf(CHIP, [rec])) == 72
    refused([rec], r"instruction 0 \(byte 0, tdma\): load: .* elements .* more than the simulator's bound")


def test_zero_stride_fill_is_refused():
    ctx, _ = new()
    ctx.gdma_lrn_shift(*[ctx.tl_prealloc(la, shape_t4(1, 32, 4, 4), I8) for la in (0, 1024)], True, 1)
    (_, fill) = decode_cmdbuf(CHIP, ctx.acquire_cmdbuf())
    fill = attrs.evolve(fill, fields={**fill.fields, "src_n": 65535, "dst_c": 65535, "dst_h": 65535,
                                      "dst_w": 65535, "wait_id_tpu": 0, **zero_strides("dst")})
    refused([fill], r"instruction 0 \(byte 0, tdma\): fill: .* more than the simulator's bound")


def test_sparse_gmem_transfer_touches_only_its_bytes():
    """A load whose gmem batches are 2 GiB apart: executed, moving just those bytes."""
    rng = np.random.default_rng(7)
    ctx, sim = new()
    t = ctx.tl_prealloc(0, shape_t4(3, 4, 2, 8), I8)
    ctx.gdma_load_stride(t, 0x1000, (1 << 31, 16, 8, 1), CTRL_NULL)
    ctx.gdma_store_stride(t, 0x7000, (3 << 30, 16, 8, 1), CTRL_NULL)
    data = rand(rng, (3, 4, 2, 8), I8)
    for n in range(3):
        sim.gmem_write(0x1000 + n * (1 << 31), data[n])
    sim.run(ctx.acquire_cmdbuf())
    np.testing.assert_array_equal(get(sim, t), data)
    for n in range(3):
        assert sim.gmem_read(0x7000 + n * (3 << 30), 64) == data[n].tobytes()
    assert len(sim.gmem.pages) <= 6


def test_matrix_mac_with_res0_h_not_1_is_a_simulation_error():
    ctx, _ = new()
    left = ctx.tl_prealloc_align(0, shape_t2(4, 16), I8)
    right = ctx.tl_prealloc_align(256, shape_t2(16, 16), I8)
    res = ctx.tl_prealloc_align(1024, shape_t2(4, 16), I8)
    ctx.tpu_matrix_mac(res=res, left=left, right=right, res_is_int8=True)
    refused([one(ctx, "tiu", res0_h=2)], r"instruction 0 \(byte 0, tiu\): matrix_mac: res0_h must be 1")


def test_conv_with_a_16_bit_result_is_executed():
    rng = np.random.default_rng(8)
    ctx, sim = new()
    x_t = ctx.tl_prealloc_align(0, shape_t4(1, 16, 6, 6), I8)
    w_t = ctx.tl_prealloc(1024, shape_t4(16, 8, 3, 3), I8)
    o_t = ctx.tl_prealloc_align(4096, shape_t4(1, 8, 4, 4), I8)
    hi_t = ctx.tl_prealloc_align(4096 + 256, shape_t4(1, 8, 4, 4), I8)
    x, wt = rand(rng, (1, 16, 6, 6), I8), rand(rng, (16, 8, 3, 3), I8)
    put(sim, x_t, x), put_weight(ctx, sim, w_t, wt)
    ctx.tpu_conv(ofmap=o_t, ifmap=x_t, weight=w_t, stride_h=1, stride_w=1, dilation_h=1, dilation_w=1,
                 rshift_width=2)
    rec = one(ctx, "tiu", opt_res0_int8=0, res0_b_str=256)
    sim.run(encode_cmdbuf(CHIP, [rec]))
    got = get(sim, o_t).astype(np.uint8).astype(np.int64) | (get(sim, hi_t).astype(np.int64) << 8)
    np.testing.assert_array_equal(got, sat(conv_ref(x, wt, rshift_width=2), True, 16))
    assert np.abs(got).max() > 127            # really 16-bit


def test_keyboard_interrupt_is_never_swallowed():
    def interrupted(m, f):
        raise KeyboardInterrupt
    sem = attrs.evolve(SEMANTICS, kinds={**SEMANTICS.kinds, ("tdma", "load"): interrupted})
    ctx, _ = new()
    ctx.gdma_load(ctx.tl_prealloc(0, shape_t4(1, 32, 8, 8), I8), 0x1000, CTRL_NULL)
    with pytest.raises(KeyboardInterrupt):
        bmk.Simulator("bm1880", sem).run(ctx.acquire_cmdbuf())


def test_unexpected_defects_become_simulation_errors():
    def broken(m, f):
        raise ValueError("a defect")
    sem = Semantics({**SEMANTICS.kinds, ("tdma", "load"): broken}, SEMANTICS.check, SEMANTICS.cycles)
    ctx, _ = new()
    ctx.gdma_load(ctx.tl_prealloc(0, shape_t4(1, 32, 8, 8), I8), 0x1000, CTRL_NULL)
    with pytest.raises(bmk.SimulationError, match=r"instruction 0 \(byte 0, tdma\): load: cannot be simulated "
                                                  r"\(ValueError: a defect\)"):
        bmk.Simulator("bm1880", sem).run(ctx.acquire_cmdbuf())
