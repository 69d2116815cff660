"""bmk.program.Program through bm1880: Op spans, dependency policies, end commands at
acquisition, raw per-engine streams, numpy integers, positional calls by keyword."""
import numpy as np
import pytest

import bmk
from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8
from bmk.encoders import decode_cmdbuf, decode_stream
from bmk.isa import load_chip
from bmk.optable import last_to_first
from tests.sched.test_sync_ids import ids

CHIP = load_chip("bm1880")
S = bm1880.shape_t4(1, 32, 8, 8)


def relu_then_lrn_shift(ctx):
    """In parallel mode: a TIU op, then gdma_lrn_shift (two TDMA descriptors), linked."""
    a, r = ctx.tl_prealloc(0, S, FMT_I8), ctx.tl_prealloc(1024, S, FMT_I8)
    ctx.parallel_enable()
    relu = ctx.tpu_relu(ofmap=r, ifmap=a)
    shift = ctx.gdma_lrn_shift(a, r, True, 1)
    ctx.add_dependency(relu, shift)
    return relu, shift


def test_op_spans_every_descriptor_of_its_call():
    ctx = bm1880.register()
    relu, shift = relu_then_lrn_shift(ctx)
    assert (relu.start, relu.stop, relu.first, relu.last) == (0, 1, {"tiu": 0}, {"tiu": 0})
    assert (shift.start, shift.stop, shift.first, shift.last) == (1, 3, {"tdma": 1}, {"tdma": 2})
    assert shift.index == 2 and repr(shift) == "<Op gdma_lrn_shift #2>"


def test_bm1880_links_last_to_last_as_the_v2_encoder():
    ctx = bm1880.register()
    relu_then_lrn_shift(ctx)
    # only the fill (the handle) waits for the relu; the lane-shifted copy does not
    assert ids(ctx.acquire_cmdbuf()) == [("tiu", 1, 0), ("tdma", 1, 0), ("tdma", 2, 1)]


class General(bm1880.Context):
    dependency_links = staticmethod(last_to_first)


def test_the_general_policy_links_before_last_to_after_first():
    ctx = General()
    relu_then_lrn_shift(ctx)
    # the copy waits for the relu, and the fill after it keeps waiting (TDMA inherit rule)
    assert ids(ctx.acquire_cmdbuf()) == [("tiu", 1, 0), ("tdma", 1, 1), ("tdma", 2, 1)]


class WithEnd(bm1880.Context):
    """bm1880 has no end commands; pretend it has one per engine (the default descriptor)."""
    END_COMMANDS = (("tiu", {}), ("tdma", {}))


def program(ctx):
    t = ctx.tl_prealloc(0, S, FMT_I8)
    r = ctx.tl_prealloc(1024, S, FMT_I8)
    ctx.gdma_load(t, 0x1000, CTRL_NULL)
    ctx.tpu_relu(ofmap=r, ifmap=t)
    ctx.gdma_load(t, 0x2000, CTRL_NULL)
    return t, r


def test_end_commands_get_their_own_ids_and_wait_for_nothing():
    # as the vendor's bm1684x sys.end / dma.sys: the next id of their engine, no wait
    ctx = WithEnd()
    program(ctx)
    first = ctx.acquire_cmdbuf()
    assert ids(first) == [("tdma", 1, 0), ("tiu", 1, 1), ("tdma", 2, 1),
                          ("tiu", 2, 0), ("tdma", 3, 0)]          # the two end commands
    assert ctx.acquire_cmdbuf() == first                          # acquiring changes nothing
    plain = bm1880.register()
    program(plain)
    assert first.startswith(plain.acquire_cmdbuf()[:72 * 2])


def test_end_commands_do_not_change_the_recorded_program():
    ctx = WithEnd()
    t, r = program(ctx)
    ctx.acquire_cmdbuf()
    ctx.tpu_relu(ofmap=r, ifmap=t)
    again = WithEnd()
    t2, r2 = program(again)
    again.tpu_relu(ofmap=r2, ifmap=t2)
    assert ctx.acquire_cmdbuf() == again.acquire_cmdbuf()
    assert len(decode_cmdbuf(CHIP, ctx.acquire_cmdbuf())) == 4 + 2


def test_end_commands_count_in_cmdbuf_size():
    ctx = WithEnd(cmdbuf_size=72 + 120 + 72)        # a TDMA load, then the two end commands
    t = ctx.tl_prealloc(0, S, FMT_I8)
    ctx.gdma_load(t, 0x1000, CTRL_NULL)
    with pytest.raises(bmk.CmdbufOverflowError, match="would grow to 336 bytes, past cmdbuf_size 264"):
        ctx.gdma_load(t, 0x1000, CTRL_NULL)
    assert len(ctx.acquire_cmdbuf()) == 264


def test_acquire_streams_of_a_program():
    ctx = bm1880.register()
    program(ctx)
    ctx.gdma_lrn_shift(*[ctx.tl_prealloc(la, S, FMT_I8) for la in (0, 1024)], True, 1)
    records = decode_cmdbuf(CHIP, ctx.acquire_cmdbuf())
    streams = ctx.acquire_streams()
    for engine in ("tiu", "tdma"):
        expected = [r.fields for r in records if r.engine == engine]
        assert [r.fields for r in decode_stream(CHIP, engine, streams[engine])] == expected
    assert sum(map(len, streams.values())) + 8 * len(records) == len(ctx.acquire_cmdbuf())


def test_acquire_streams_with_end_commands():
    ctx = WithEnd()
    program(ctx)
    streams = ctx.acquire_streams()
    assert [len(decode_stream(CHIP, e, streams[e])) for e in ("tiu", "tdma")] == [2, 3]


def test_numpy_integers_are_integers():
    ctx = bm1880.register(cmdbuf_size=np.int64(1 << 20))
    t = ctx.tl_prealloc(np.int64(0), bm1880.shape_t4(np.int32(1), 32, 8, 8), np.int64(FMT_I8))
    r = ctx.tl_prealloc(np.uint16(1024), S, FMT_I8)
    ctx.gdma_load(t, np.int64(0x1000), np.int32(CTRL_NULL))
    ctx.tpu_mul(res_high=None, res_low=r, a=t, b=t, rshift_width=np.int8(3))
    ctx.create_streams(np.int64(2))
    ctx.set_stream(np.int64(1))
    ctx.destroy_streams()
    plain = bm1880.register()
    t, r = plain.tl_prealloc(0, S, FMT_I8), plain.tl_prealloc(1024, S, FMT_I8)
    plain.gdma_load(t, 0x1000, CTRL_NULL)
    plain.tpu_mul(res_high=None, res_low=r, a=t, b=t, rshift_width=3)
    assert ctx.acquire_cmdbuf() == plain.acquire_cmdbuf()


def test_bools_are_not_integers():
    ctx = bm1880.register()
    with pytest.raises(bmk.ArgumentError, match="tl_prealloc: la must be an lmem offset in \\[0, 32767\\], not True"):
        ctx.tl_prealloc(True, S, FMT_I8)


def test_positional_calls_by_keyword_and_their_errors():
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, S, FMT_I8)
    ctx.gdma_load(t=t, gaddr=0x1000, ctrls=CTRL_NULL)
    ctx.gdma_load(t, 0x1000)
    by_position = bm1880.register()
    by_position.gdma_load(by_position.tl_prealloc(0, S, FMT_I8), 0x1000, CTRL_NULL)
    by_position.gdma_load(by_position.tl_prealloc(0, S, FMT_I8), 0x1000, CTRL_NULL)
    before = ctx.acquire_cmdbuf()
    assert before == by_position.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match=r"^gdma_load: no argument named 'gadr'; gdma_load takes up to 3 arguments \(t, gaddr, ctrls\)$"):
        ctx.gdma_load(t=t, gadr=0x1000)
    with pytest.raises(bmk.ArgumentError, match=r"^gdma_load takes up to 3 arguments \(t, gaddr, ctrls\), not 4$"):
        ctx.gdma_load(t, 0, 0, 0)
    assert ctx.acquire_cmdbuf() == before
    assert ctx.gdma_copy_gmem(bm1880.TensorGmem(0, S), bm1880.TensorGmem(0x10000, S)) is None


def test_spec_id_widths_reach_the_scheduler():
    ctx = bm1880.register()
    assert ctx._max_id == {e: CHIP.engine(e).format.field(CHIP.engine(e).own_id).max for e in ("tiu", "tdma")}
