"""Call templates (bmk.templates): calls that differ only in int arguments, encoded through a
traced and compiled template, give the bytes and the errors of the ordinary path."""
import random

import attrs
import pytest

import bmk
import bmk.templates
import bmk.isa
from bmk import bm1880, program
from bmk.bm1880 import CTRL_NULL, CTRL_TP, FMT_I8
from bmk.optable import FIELDS, POSITIONAL, OpRow
from bmk.program import Program
from tests.vectors import vendor

S = bm1880.shape_t4(1, 32, 8, 8)


def templates(ctx):
    """{call shape: its templates} of a context (kept in its lowering memo)."""
    return ctx._templates.learned()


def tiled_kernel(ctx, rng):
    """Loads, computes and stores with int arguments (addresses, shifts, constants) that change."""
    a, b, r = (ctx.tl_prealloc(la, S, FMT_I8) for la in (0, 64, 128))
    out = []
    for i in range(60):
        out.append(ctx.gdma_load(a, 0x1000 + rng.randrange(1 << 31), CTRL_TP if i % 7 == 0 else CTRL_NULL))
        ctx.gdma_load_stride(b, rng.randrange(1 << 20), bm1880.stride_t4(4096, 128, 16, 1), CTRL_NULL)
        ctx.tpu_mul(res_high=None, res_low=r, a=a, b=b, rshift_width=rng.randrange(8))
        ctx.tpu_mul_const(res_high=None, res_low=r, a=a, b=rng.randrange(-128, 128), b_is_signed=True,
                          rshift_width=rng.randrange(4))
        out.append(ctx.gdma_store(r, rng.randrange(1 << 32), CTRL_NULL))
    ctx.add_dependency(out[3], out[10])
    return ctx.acquire_cmdbuf()


def test_templates_give_the_bytes_of_the_ordinary_path(monkeypatch):
    fast = bm1880.register(cmdbuf_size=1 << 24)
    buf = tiled_kernel(fast, random.Random(1))
    used = [k for k, v in templates(fast).items() if v]
    assert {k[0] for k in used} >= {"gdma_load", "gdma_store", "gdma_load_stride", "tpu_mul", "tpu_mul_const"}
    monkeypatch.setattr(bmk.templates, "PER_SHAPE", 0)
    slow = bm1880.register(cmdbuf_size=1 << 24)
    assert tiled_kernel(slow, random.Random(1)) == buf
    assert not any(templates(slow).values())


def test_calls_alternating_between_shapes_each_take_their_own_templates(monkeypatch):
    """The shape a call's last template served is tried first: a call of another shape (another
    tensor, another ctrl) still finds its own templates, or the ordinary path."""
    def kernel(ctx, rng):
        a, b = (ctx.tl_prealloc(la, S, FMT_I8) for la in (0, 64))
        for i in range(60):
            ctx.gdma_load(a if i % 3 else b, rng.randrange(1 << 31), CTRL_TP if i % 5 == 0 else CTRL_NULL)
        return ctx.acquire_cmdbuf()
    fast = bm1880.register(cmdbuf_size=1 << 24)
    buf = kernel(fast, random.Random(2))
    assert len([k for k, v in templates(fast).items() if v]) == 2        # one per tensor
    assert sum(len(v) for v in templates(fast).values()) >= 3          # a's: CTRL_NULL and CTRL_TP
    monkeypatch.setattr(bmk.templates, "PER_SHAPE", 0)
    assert kernel(bm1880.register(cmdbuf_size=1 << 24), random.Random(2)) == buf


def test_a_value_the_checks_reject_still_raises_their_error():
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, S, FMT_I8)
    for gaddr in (0x1000, 0x2000, 0x3000):      # traced at the second, through the template at the third
        ctx.gdma_load(t, gaddr, CTRL_NULL)
    assert any(templates(ctx).values())
    before = ctx.acquire_cmdbuf()
    for gaddr in (1 << 40, -1):
        with pytest.raises(bmk.ArgumentError, match=rf"gdma_load: gaddr must be an integer in \[0, \d+\], "
                                                    rf"not {gaddr}"):
            ctx.gdma_load(t, gaddr, CTRL_NULL)
    with pytest.raises(bmk.ArgumentError, match=r"gdma_load: ctrls must be one of CTRL_NULL \| CTRL_TP, not 3"):
        ctx.gdma_load(t, 0x3000, 3)
    for shift in (1, 2, 3):
        ctx.tpu_mul(res_high=None, res_low=t, a=t, b=t, rshift_width=shift)
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match=r"tpu_mul: rshift_width must be an integer in \[0, 31\], not 32"):
        ctx.tpu_mul(res_high=None, res_low=t, a=t, b=t, rshift_width=32)
    assert ctx.acquire_cmdbuf() == before


# -- a test op table on any chip: one command whose field `name` takes the int argument `value` ---
@attrs.frozen
class Poke:
    engine: str
    base: tuple            # ((field, value), ...): the vendor command's fields
    name: str
    value: int


def _lower_poke(chip, p):
    return ((p.engine, {**dict(p.base), p.name: p.value}),)


def _lower_escaping(chip, p):
    # reads the value through int() and a dict lookup: no template may come from this
    table = {v: v for v in range(4)}
    return ((p.engine, {**dict(p.base), p.name: table.get(int(p.value) % 4, 0)}),)


def _lower_looping(chip, p):
    # `in range(...)` compares with every element: the trace is abandoned at its guard limit
    return ((p.engine, {**dict(p.base), p.name: 1 if p.value in range(10 ** 6) else 0}),)


def _check(ctx, p):
    return None


def poke_program(chip_name, lower=_lower_poke):
    class Ctx(Program):
        OPS = (OpRow("poke", Poke, _check, lower, "poke", "-", call=FIELDS),
               OpRow("poke_at", Poke, _check, lower, "poke_at", "-", call=POSITIONAL))

    return Ctx(bmk.isa.load_chip(chip_name), 1 << 24)


def pokes(ctx, records, rng):
    """Each vendor command with some of its fields (not the class selectors) changed."""
    for r in records:
        engine = ctx.chip.engine(r.engine)
        fields = [f for f in engine.cls(r.cls).fields if f.name not in engine.selector]
        base = tuple(r.fields.items())
        for f in rng.sample(fields, min(6, len(fields))):
            for _ in range(3):
                value = rng.randrange(f.max + 1)
                ctx.poke(engine=r.engine, base=base, name=f.name, value=value)
                ctx.poke_at(r.engine, base, f.name, value)
    return ctx.acquire_cmdbuf(), ctx.acquire_streams()


@pytest.mark.parametrize("chip", vendor.API_CHIPS)
def test_templates_on_every_class_give_the_ordinary_bytes(chip, monkeypatch):
    recs = bmk.decode(chip, vendor.streams(chip))
    by_class = {}
    for r in recs:
        by_class.setdefault((r.engine, r.cls), r)
    fast = poke_program(chip)
    out = pokes(fast, list(by_class.values()), random.Random(2))
    assert any(templates(fast).values())
    # the two acquisitions agree: the raw streams are the command buffer's commands, framed
    assert out[1] == bmk.encode(chip, bmk.decode(chip, out[0]), raw=True)
    monkeypatch.setattr(bmk.templates, "PER_SHAPE", 0)
    assert pokes(poke_program(chip), list(by_class.values()), random.Random(2)) == out


@pytest.mark.parametrize("lower", [_lower_escaping, _lower_looping])
def test_calls_whose_trace_reads_the_value_get_no_template(lower):
    rec = bmk.decode("bm1684", vendor.streams("bm1684"))[0]
    ctx = poke_program("bm1684", lower)
    engine = ctx.chip.engine(rec.engine)
    sync = {engine.own_id, *(f for _, f in engine.wait_for), *(f for f, _ in engine.enable)}
    name = next(f.name for f in engine.cls(rec.cls).fields if f.width >= 24 and f.name not in sync)
    values = (1001, 2002, 3003, 2 * 10 ** 6)
    for value in values:
        ctx.poke(engine=rec.engine, base=tuple(rec.fields.items()), name=name, value=value)
    assert templates(ctx) == {} and list(ctx._templates._shapes.values()) == [False]   # never traced again
    got = [r.fields[name] for r in bmk.decode("bm1684", ctx.acquire_cmdbuf())]
    assert got == [lower(None, Poke(rec.engine, (), name, v))[0][1][name] for v in values]


def test_a_freed_tensor_meets_the_checks_again():
    ctx = bm1880.register()
    t = ctx.tl_alloc(S, FMT_I8)
    for gaddr in (0x1000, 0x2000, 0x3000):         # the shape is traced, then served by its template
        ctx.gdma_load(t, gaddr, CTRL_NULL)
    assert any(templates(ctx).values())
    ctx.tl_free(t)
    with pytest.raises(bmk.ArgumentError, match=r"gdma_load: t must be a live tensor \(it was freed by tl_free\)"):
        ctx.gdma_load(t, 0x4000, CTRL_NULL)
