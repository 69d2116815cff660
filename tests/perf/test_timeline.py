"""bmk.timeline honours waits and cross-core messages (issue 31): read back from the fields
themselves, not from the timeline's own dependency lists."""
import pytest

import bmk
from bmk.timing.timeline import timeline
from tests.perf import cores


@pytest.fixture(scope="module")
def tl():
    return timeline("bm1688", cores())


def records():
    out = {}
    for c, streams in enumerate(cores()):
        for r in bmk.decode("bm1688", streams):
            out.setdefault((c, r.engine), []).append(r)
    return out


def test_every_command_once_and_engines_in_order(tl):
    recs = records()
    assert len(tl) == sum(len(v) for v in recs.values()) == 497
    by = {}
    for e in tl:
        by.setdefault((e.core, e.engine), []).append(e)
    for key, es in by.items():
        es.sort(key=lambda e: e.index)
        assert [e.index for e in es] == list(range(len(recs[key])))
        assert [e.kind for e in es] == [r.kind for r in recs[key]]
        assert all(a.end <= b.start for a, b in zip(es, es[1:]))      # an engine runs one command at a time
        assert all(e.end > e.start for e in es)


def test_no_command_starts_before_what_it_waits_for(tl):
    at = {(e.core, e.engine, e.index): e for e in tl}
    other = {"tiu": "gdma", "gdma": "tiu"}
    checked = binding = 0
    for (c, engine), recs in records().items():
        for j, r in enumerate(recs):
            k = r.fields.get("cmd_id_dep", 0)
            if k <= 0:
                continue
            waited = at[(c, other[engine], k - 1)]          # implicit ids: the 1-based position
            me = at[(c, engine, j)]
            assert me.start >= waited.end, (c, engine, j)
            checked += 1
            binding += me.start == waited.end
    assert checked > 300 and binding > 20               # the waits are there and do delay commands


def test_message_waits_come_after_every_cores_sends(tl):
    at = {(e.core, e.engine, e.index): e for e in tl}
    from bmk.isa import load_chip
    chip = load_chip("bm1688")
    sends, waits = {}, []
    for (c, engine), recs in records().items():
        msgs = chip.engine(engine).messages
        send, wait = msgs.send, msgs.wait
        seen = {}
        for j, r in enumerate(recs):
            m = msgs.msg_id(r.fields)
            if r.kind == send:
                sends.setdefault((c, engine, m), []).append(at[(c, engine, j)])
            elif r.kind == wait:
                seen[m] = seen.get(m, 0) + 1
                waits.append((at[(c, engine, j)], m, seen[m]))
    assert len(waits) == 24 and {c for (c, _, _) in sends} == {0, 1}
    cross = 0
    for w, m, k in waits:
        senders = [v[k - 1] for (c, e, mm), v in sends.items() if mm == m and len(v) >= k]
        assert len(senders) == 4                     # both engines of both cores
        assert w.start >= max(s.end for s in senders)
        last = max(senders, key=lambda s: s.end)
        cross += last.core != w.core and w.start == last.end
    assert cross > 0                                  # some waits were held by the other core


def test_one_core_alone_and_bad_input():
    one = timeline("bm1688", cores()[1])
    assert {e.core for e in one} == {0} and len(one) == 82
    with pytest.raises(bmk.ArgumentError):
        timeline("bm1688", 42)
    with pytest.raises(bmk.BmkError, match="bm9999"):
        timeline("bm9999", {})                        # no such chip


def test_waits_that_can_never_be_met_are_a_simulation_error():
    import attrs
    recs = records()
    conv = next(r for r in recs[(0, "tiu")] if r.kind == "conv.normal")
    load = next(r for r in recs[(0, "gdma")] if r.kind == "dma.tensor")
    tiu = [attrs.evolve(conv, fields={**conv.fields, "cmd_id_dep": 1})]       # waits for gdma 1 ...
    gdma = [attrs.evolve(load, fields={**load.fields, "cmd_id_dep": 1})]      # ... which waits for tiu 1
    with pytest.raises(bmk.SimulationError, match="never met"):
        timeline("bm1688", {"tiu": tiu, "gdma": gdma})
    gdma = [attrs.evolve(load, fields={**load.fields, "cmd_id_dep": 0})]
    got = timeline("bm1688", {"tiu": tiu, "gdma": gdma})
    t, g = (next(e for e in got if e.engine == x) for x in ("tiu", "gdma"))
    assert t.start == g.end > 0                                                # the conv waited for the load
