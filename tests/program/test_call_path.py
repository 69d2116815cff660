"""The per-call path (issue 24 item 5): a FIELDS method binds the record's fields as keyword-only
parameters (no keyword dict: its signature still reads (p=None, /, **fields)); a call served by a
template never enters the lowering memo; Op handles are tuples, or nothing with op_handles off;
the bytes never change."""
import inspect
import random

import pytest

import bmk
from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8
from bmk.optable import Op

S = bm1880.shape_t4(1, 32, 8, 8)


def kernel(ctx, rng, n=300):
    a, b, r = (ctx.tl_prealloc(la, S, FMT_I8) for la in (0, 64, 128))
    ops = []
    for _ in range(n):
        ops.append(ctx.gdma_load(a, 0x1000 + 0x800 * rng.randrange(1 << 20), CTRL_NULL))
        ops.append(ctx.tpu_mul(res_high=None, res_low=r, a=a, b=b, rshift_width=2))
        ops.append(ctx.gdma_store(r, rng.randrange(1 << 30), CTRL_NULL))
    return ops


def test_template_calls_stay_out_of_the_memo():
    ctx = bm1880.register(cmdbuf_size=1 << 24)
    kernel(ctx, random.Random(0))
    # distinct addresses: each load and store went through its template after the first few
    assert len(ctx._lowered) <= 8
    assert {k[0] for k in ctx._templates.learned()} == {"gdma_load", "gdma_store"}


def test_without_op_handles_the_bytes_are_the_same():
    on, off = bm1880.register(cmdbuf_size=1 << 24), bm1880.register(cmdbuf_size=1 << 24)
    off.op_handles = False
    handles = kernel(on, random.Random(1))
    assert all(isinstance(op, Op) for op in handles) and handles[1].call == "tpu_mul"
    assert (handles[1].start, handles[1].stop, handles[1].index) == (1, 2, 1)
    assert handles[0] != handles[3] and handles[0] == handles[0] and len({handles[0], handles[3]}) == 2
    assert set(kernel(off, random.Random(1))) == {None}
    assert on.acquire_cmdbuf() == off.acquire_cmdbuf()
    on.add_dependency(handles[0], handles[4])


def test_fields_methods_keep_their_signature_and_errors():
    ctx = bm1880.register()
    assert str(inspect.signature(bm1880.Context.tpu_mul)) == (     # the record, or its fields by name, typed
        "(self, p: 'MulParam | None' = None, /, *, res_high: 'TensorLmem | None' = None, "
        "res_low: 'TensorLmem | None' = None, a: 'TensorLmem | None' = None, b: 'TensorLmem | None' = None, "
        "rshift_width: int = 0)")
    t = ctx.tl_prealloc(0, S, FMT_I8)
    with pytest.raises(bmk.ArgumentError, match="tpu_mul: no argument named 'rshift'; tpu_mul takes res_high, "):
        ctx.tpu_mul(res_low=t, a=t, b=t, rshift=1)
    with pytest.raises(bmk.ArgumentError, match="pass either one MulParam or keyword fields, not both"):
        ctx.tpu_mul(bm1880.MulParam(res_low=t, a=t, b=t), rshift_width=1)
    by_record = bm1880.register()
    u = by_record.tl_prealloc(0, S, FMT_I8)
    by_record.tpu_mul(bm1880.MulParam(res_low=u, a=u, b=u, rshift_width=3))
    ctx.tpu_mul(rshift_width=3, b=t, a=t, res_low=t)           # any keyword order
    assert ctx.acquire_cmdbuf() == by_record.acquire_cmdbuf()


def test_a_repeated_call_is_served_only_with_equal_values_of_the_same_types():
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, S, FMT_I8)
    first = ctx.tpu_mul(res_low=t, a=t, b=t, rshift_width=2)
    for value in (2.0, True):           # equal to the last call's 2, but not an int: the checks run
        with pytest.raises(bmk.ArgumentError, match=f"tpu_mul: rshift_width must be an integer in \\[0, 31\\], "
                                                    f"not {value}"):
            ctx.tpu_mul(res_low=t, a=t, b=t, rshift_width=value)
    again = ctx.tpu_mul(res_low=t, a=t, b=t, rshift_width=2)
    assert (first.start, again.start) == (0, 1)
    u = ctx.tl_alloc(S, FMT_I8, 1)
    ctx.tpu_mul(res_low=u, a=u, b=u, rshift_width=2)
    ctx.tl_free(u)                      # the same call again must meet the checks (a live tensor)
    with pytest.raises(bmk.ArgumentError, match="tpu_mul: a must be a live tensor"):
        ctx.tpu_mul(res_low=u, a=u, b=u, rshift_width=2)
    alone = bm1880.register()
    v = alone.tl_prealloc(0, S, FMT_I8)
    alone.tpu_mul(res_low=v, a=v, b=v, rshift_width=2)
    mine, its = (bmk.decode("bm1880", c.acquire_cmdbuf()) for c in (ctx, alone))
    assert len(mine) == len(its) + 2 and mine[1].fields == mine[0].fields | {"cmd_id_tpu": 2}
    assert mine[0].fields == its[0].fields
