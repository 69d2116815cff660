"""The shared Program on the new chips' machinery, before their APIs exist: a test op table
that replays decoded vendor commands (records -> the same fields) exercises multi-class
packing, 20-bit ids, end commands and raw stream framing on bm1684x and bm1684."""
import attrs
import pytest

import bmk
import bmk.isa
from bmk.optable import FIELDS, OpRow
from bmk.program import Program
from tests.vectors import vendor


@attrs.frozen
class Replay:
    engine: str
    fields: dict = attrs.field(eq=False)


def _check(ctx, record):
    return None


def _lower(chip, record):
    return ((record.engine, record.fields),)


def replay_program(chip_name):
    class Ctx(Program):
        OPS = (OpRow("replay", Replay, _check, _lower, "replay", "-", call=FIELDS),)

    return Ctx(bmk.isa.load_chip(chip_name), 1 << 24)


def test_bm1684x_streams_are_closed_by_end_commands_like_the_vendors():
    recs = bmk.decode("bm1684x", vendor.streams("bm1684x"))
    body = [r for r in recs if r.kind not in ("sys.end", "dma.sys")][:40]
    ctx = replay_program("bm1684x")
    for r in body:
        ctx.replay(engine=r.engine, fields=dict(r.fields))
    streams = ctx.acquire_streams()
    assert len(streams["tiu"]) % 128 == 0
    out = {e: bmk.decode("bm1684x", {e: s}) for e, s in streams.items()}
    vend = {e: bmk.decode("bm1684x", {e: s}) for e, s in vendor.streams("bm1684x").items()}
    for engine in ("tiu", "gdma"):
        mine = out[engine]
        n = sum(r.engine == engine for r in body)
        assert [r.fields["cmd_id"] for r in mine] == list(range(1, n + 2))       # own ids, then the end
        # every command keeps its class and its non-sync fields; the end command is the vendor's,
        # except for its own id
        sync = {"cmd_id", "cmd_id_dep", "cmd_id_en"}
        assert [(r.cls, {k: v for k, v in r.fields.items() if k not in sync}) for r in mine[:-1]] == \
            [(r.cls, {k: v for k, v in r.fields.items() if k not in sync}) for r in body if r.engine == engine]
        end, theirs = mine[-1], vend[engine][-1]
        assert end.kind == theirs.kind
        assert {**end.fields, "cmd_id": 0} == {**theirs.fields, "cmd_id": 0}
    assert ctx.acquire_cmdbuf() == bmk.encode("bm1684x", bmk.decode("bm1684x", ctx.acquire_cmdbuf()))


@pytest.mark.parametrize("chip", vendor.API_CHIPS)
def test_ids_wrap_at_the_spec_width(chip):
    ctx = replay_program(chip)
    assert ctx._max_id == {e.name: e.id_max for e in bmk.isa.load_chip(chip).encoded_engines}


def test_bm1684_streams_use_128_byte_slots_and_no_end():
    recs = bmk.decode("bm1684", vendor.streams("bm1684"))[:30]
    ctx = replay_program("bm1684")
    for r in recs:
        ctx.replay(engine=r.engine, fields=dict(r.fields))
    streams = ctx.acquire_streams()
    for engine, data in streams.items():
        assert len(data) == 128 * sum(r.engine == engine for r in recs)
    again = bmk.decode("bm1684", streams)
    assert [(r.engine, r.kind) for r in again] == [(r.engine, r.kind) for r in recs]


def test_the_ordering_calls_name_themselves_and_acquire_waits_for_a_closed_group():
    """Issue 32.15: acquire_streams() inside an open parallel group succeeded; bm1684x's
    parallel_end with none open named parallel_disable; a Simulator given another chip's
    Streams reported a truncated command."""
    import bmk
    from bmk import bm1684, bm1684x, bm1880
    ctx = bm1684x.Context()
    with pytest.raises(bmk.ScheduleError, match=r"^parallel_end: no parallel group is open \(mode is serial\): "
                                                r"call parallel_start first$"):
        ctx.parallel_end()
    for chip in (bm1684, bm1684x):
        ctx = chip.Context()
        ctx.parallel_start()
        for call in ("acquire_streams", "acquire_cmdbuf"):
            with pytest.raises(bmk.ScheduleError, match=f"^{call}: the parallel section must be closed first "
                                                        r"\(parallel_end\)"):
                getattr(ctx, call)()
        ctx.parallel_end()
        assert ctx.acquire_streams() is not None
    ctx = bm1880.register()                    # BMKernel hands over what was generated so far, any time
    ctx.parallel_enable()
    assert ctx.acquire_cmdbuf() == b""
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0, 0x100000000, bm1684x.dim4(1, 4, 4, 4), None, None, bm1684x.DT_INT16)
    streams = ctx.acquire_streams()
    with pytest.raises(bmk.ArgumentError, match=r"^run: cmdbuf must be streams of bm1684, the Simulator's chip, not "
                                                r"bm1684x's streams \(acquire_streams of a bm1684x Context\)$"):
        bmk.Simulator("bm1684").run(streams)
    assert bmk.Simulator("bm1684x").run(streams).instructions
