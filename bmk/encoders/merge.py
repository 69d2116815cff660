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
from array import array
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
    columns = []
    for core, e, recs in queues:
        own = [r.fields.get(e.own_id, -1) for r in recs] if e.own_id and not e.implicit_ids else None
        waits = [[r.fields.get(fname, -1) for r in recs] for _, fname in e.wait_for]
        columns.append(Queue(core, e, len(recs), own, waits, _messages(e, recs)))
    order_q, order_j = merge_order(columns, where)
    return [queues[q][2][j] for q, j in zip(order_q, order_j)]


class Queue:
    """One stream to merge, as columns: `n` commands; `own`: each one's own id (-1: its class
    has none; None for implicit ids or an engine without them); `waits`: per wait_for field of
    the engine, each command's value (-1: its class has no such field), turned in place into
    what it waits for (`merge_order`); `msgs`: _messages (or MessageLog.result) of the stream."""

    __slots__ = ("core", "eng", "n", "own", "waits", "msgs")

    def __init__(self, core, eng, n, own, waits, msgs):
        self.core, self.eng, self.n, self.own, self.waits, self.msgs = core, eng, n, own, waits, msgs


def merge_order(queues, where):
    """[Queue] in priority order, where: {(core, engine name): queue number} -> (queue, index)
    of each command in program order (array('H'), array('I')), by the module docstring's rule."""
    waits = [_waits(qu.eng, qu.core, qu.waits, where) for qu in queues]
    msgs = [qu.msgs for qu in queues]
    # message id -> [(queue, number of sends)] of every stream that sends it
    senders = defaultdict(list)
    for q, (_, _, counts) in enumerate(msgs):
        for m, n in counts.items():
            senders[m].append((q, n))
    heads = [0] * len(queues)
    done = [0] * len(queues)            # the last own id emitted (explicit) or the count (implicit)
    sent = defaultdict(int)             # (queue, message id) -> sends emitted
    total = sum(qu.n for qu in queues)
    order_q, order_j = array("H"), array("I")
    own = [qu.own for qu in queues]
    implicit = [qu.eng.implicit_ids for qu in queues]
    wait_msgs = [m[0] for m in msgs]
    send_msgs = [m[1] for m in msgs]

    def ready(q):
        i = heads[q]
        for other, values in waits[q]:
            if values[i] > (done[other] if other is not None else 0):
                return False
        wait = wait_msgs[q].get(i) if wait_msgs[q] else None
        if wait is not None:
            m, k = wait
            return all(sent[(s, m)] >= k for s, n in senders[m] if n >= k)
        return True

    live = [q for q in range(len(queues)) if queues[q].n]
    count = 0
    while count < total:
        pick = next((q for q in live if ready(q)), live[0])
        i = heads[pick]
        heads[pick] = i + 1
        if implicit[pick]:
            done[pick] = i + 1
        else:
            v = own[pick][i] if own[pick] is not None else 0
            done[pick] = v if v >= 0 else 0
        if send_msgs[pick]:
            m = send_msgs[pick].get(i)
            if m is not None:
                sent[(pick, m)] += 1
        order_q.append(pick)
        order_j.append(i)
        count += 1
        if heads[pick] == queues[pick].n:
            live.remove(pick)
    return order_q, order_j


def _waits(eng, core, columns, where):
    """[(queue of the waited-for stream or None, values)] for each wait_for field: each
    command's value made what it waits for (the wait_mask bits; a class without the field: 0,
    or with missing_wait "next" the next command's value), in place."""
    mask = eng.wait_mask
    out = []
    for (other, _), values in zip(eng.wait_for, columns):
        lent = 0                        # missing_wait "next": the next command's value, walking back
        nxt = eng.missing_wait == "next"
        for i in range(len(values) - 1, -1, -1):
            v = values[i]
            if v is None or v < 0:
                values[i] = lent if nxt else 0
            else:
                if mask is not None:
                    v &= mask
                    values[i] = v
                lent = v
        out.append((where.get((core, other)), values))
    return out


class MessageLog:
    """A stream's message sends and waits, command by command: `add(i, record)`; `result()`:
    ({index of a message wait: (id, k)}, {index of a send: id}, {id: number of sends})."""

    def __init__(self, spec):
        self.spec = spec
        self.waits, self.sends, self.count, self.seen = {}, {}, defaultdict(int), defaultdict(int)

    def add(self, i, r):
        spec = self.spec
        if r.kind == spec.send:
            m = spec.msg_id(r.fields)
            self.sends[i] = m
            self.count[m] += 1
        elif r.kind == spec.wait:
            m = spec.msg_id(r.fields)
            self.seen[m] += 1
            self.waits[i] = (m, self.seen[m])

    def result(self):
        return self.waits, self.sends, self.count


def _messages(eng, recs):
    """({index of a message wait: (id, k)}, {index of a send: id}, {id: number of sends})."""
    if eng.messages is None:
        return {}, {}, defaultdict(int)
    log = MessageLog(eng.messages)
    for i, r in enumerate(recs):
        log.add(i, r)
    return log.result()
