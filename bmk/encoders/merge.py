"""Program order: decoded raw streams (one per engine, per core) merged into one list.

Every instruction comes after every instruction it waits for:
- on its own core, the id it waits for on another engine (`wait_for`; the id is the waited-for
  command's own-id field, or with `ids = "implicit"` its 1-based position in its stream; only
  the `wait_mask` bits of a wait field count; a class without the wait field waits for nothing,
  or with `missing_wait = "next"` as the next command of its stream that has the field);
- across cores, messages (`messages`, newer-chips.md 1): the k-th wait on message id m of a
  stream comes after the k-th send on m of every stream that sends m at least k times. bmk
  reads a message as a barrier round instead of counting: the count names every sender,
  including streams bmk cannot read (BM1690 HAU), so a wait could never see its full count.

Among the streams whose next instruction may go, the first in priority goes first: core 0's
engines in the chip's engine order, then core 1's, ..., opaque streams (no layout, no ids)
last. With TIU before GDMA this is the vendor's order ("DMA keyed by its position, TIU by
the DMA it waits for, DMA first on ties": a TIU command follows the DMA it waits for, ahead of
the next DMA); with several cores a core runs until a message wait stops it, which gives the
vendor's segments (newer-chips.md 3: segment 0 of every core, then segment 1 ...). Ids that
never resolve keep stream order.
"""
from collections import defaultdict


def merge_cores(chip, cores):
    """[{engine: [Records]} per core] -> one program order (see the module docstring)."""
    queues = []                         # (core, Engine, records), in priority order
    for core, streams in enumerate(cores):
        queues += [(core, e, streams[e.name]) for e in chip.encoded_engines if streams.get(e.name)]
    for core, streams in enumerate(cores):
        queues += [(core, e, streams[e.name]) for e in chip.engines if e.opaque and streams.get(e.name)]
    if len(queues) == 1:
        return list(queues[0][2])
    where = {(core, e.name): q for q, (core, e, _) in enumerate(queues)}
    waits = [_waits(e, recs, core, where) for core, e, recs in queues]
    msgs = [_messages(e, recs) for _, e, recs in queues]
    # message id -> [(queue, number of sends)] of every stream that sends it
    senders = defaultdict(list)
    for q, (_, _, counts) in enumerate(msgs):
        for m, n in counts.items():
            senders[m].append((q, n))
    heads = [0] * len(queues)
    done = [0] * len(queues)            # the last own id emitted (explicit) or the count (implicit)
    sent = defaultdict(int)             # (queue, message id) -> sends emitted
    out, total = [], sum(len(recs) for _, _, recs in queues)

    def ready(q):
        i = heads[q]
        for other, value in waits[q][i]:
            if value > (done[other] if other is not None else 0):
                return False
        wait = msgs[q][0].get(i)
        if wait is not None:
            m, k = wait
            return all(sent[(s, m)] >= k for s, n in senders[m] if n >= k)
        return True

    live = list(range(len(queues)))
    while len(out) < total:
        pick = next((q for q in live if ready(q)), live[0])
        core, eng, recs = queues[pick]
        i = heads[pick]
        rec = recs[i]
        heads[pick] = i + 1
        done[pick] = i + 1 if eng.implicit_ids else rec.fields.get(eng.own_id, 0) if eng.own_id else 0
        m = msgs[pick][1].get(i)
        if m is not None:
            sent[(pick, m)] += 1
        out.append(rec)
        if heads[pick] == len(recs):
            live.remove(pick)
    return out


def _waits(eng, recs, core, where):
    """Per record: ((queue of the waited-for stream or None, id), ...) for each wait_for field."""
    mask = eng.wait_mask
    fields = [(where.get((core, other)), fname) for other, fname in eng.wait_for]
    if not fields:
        return [()] * len(recs)
    out = [None] * len(recs)
    lent = [0] * len(fields)            # missing_wait "next": the next command's values, walking back
    for i in range(len(recs) - 1, -1, -1):
        values = recs[i].fields
        row = []
        for j, (q, fname) in enumerate(fields):
            v = values.get(fname)
            if v is None:
                v = lent[j] if eng.missing_wait == "next" else 0
            else:
                if mask is not None:
                    v &= mask
                lent[j] = v
            row.append((q, v))
        out[i] = tuple(row)
    return out


def _messages(eng, recs):
    """({index of a message wait: (id, k)}, {index of a send: id}, {id: number of sends})."""
    waits, sends, count = {}, {}, defaultdict(int)
    spec = eng.messages
    if spec is None:
        return waits, sends, count
    seen_waits = defaultdict(int)
    for i, r in enumerate(recs):
        if r.kind == spec.send:
            m = spec.msg_id(r.fields)
            sends[i] = m
            count[m] += 1
        elif r.kind == spec.wait:
            m = spec.msg_id(r.fields)
            seen_waits[m] += 1
            waits[i] = (m, seen_waits[m])
    return waits, sends, count
