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
from bisect import bisect_left
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
    out, heads = [], [0] * len(queues)
    for q, end in zip(*merge_runs(columns, where)):
        out += queues[q][2][heads[q]:end]
        heads[q] = end
    return out


class Queue:
    """One stream to merge, as columns: `n` commands; `own`: each one's own id (-1: its class
    has none; None for implicit ids or an engine without them); `waits`: per wait_for field of
    the engine, each command's value (-1: its class has no such field), turned in place into
    what it waits for (`merge_runs`); `msgs`: MessageLog.result() of the stream."""

    __slots__ = ("core", "eng", "n", "own", "waits", "msgs")

    def __init__(self, core, eng, n, own, waits, msgs):
        self.core, self.eng, self.n, self.own, self.waits, self.msgs = core, eng, n, own, waits, msgs


def merge_order(queues, where):
    """[Queue] in priority order, where: {(core, engine name): queue number} -> (queue, index)
    of each command in program order (array('H'), array('I')): merge_runs, spelled out."""
    order_q, order_j = array("H"), array("I")
    heads = [0] * len(queues)
    for q, end in zip(*merge_runs(queues, where)):
        order_q += array("H", [q]) * (end - heads[q])
        order_j.extend(range(heads[q], end))
        heads[q] = end
    return order_q, order_j


def merge_runs(queues, where):
    """[Queue] in priority order, where: {(core, engine name): queue number} -> program order by
    the module docstring's rule, as runs: (queue of each run, array('H'); the index in its queue
    after its last command, array('I')); a run goes on from where its queue's previous one ended.

    The rule picks, command by command, the first queue whose next command may go. It is
    applied a run at a time: once queue p is picked, its next commands go too for as long as
    the rule would pick p again, that is while p's next command may go and no queue before p
    may (those were not ready, and only p's commands change what they wait for: they become
    ready when p's last id reaches their wait on p, `_threshold`). A message command (a send
    changes what message waits see) and a stream waiting for itself go one at a time."""
    if len(queues) == 1:
        return array("H", [0] if queues[0].n else []), array("I", [queues[0].n] if queues[0].n else [])
    k = len(queues)
    waits = [_waits(qu.eng, qu.core, qu.waits, where) for qu in queues]
    wait_msgs = [qu.msgs[0] for qu in queues]
    send_msgs = [qu.msgs[1] for qu in queues]
    # message id -> [(queue, number of sends)] of every stream that sends it
    senders = defaultdict(list)
    for q, qu in enumerate(queues):
        for m, n in qu.msgs[2].items():
            senders[m].append((q, n))
    marks = [sorted(set(wait_msgs[q]) | set(send_msgs[q])) for q in range(k)]    # message commands
    alone = [any(other == q for other, _ in waits[q]) for q in range(k)]        # waits for itself
    ns = [qu.n for qu in queues]
    own = [qu.own for qu in queues]
    implicit = [qu.eng.implicit_ids for qu in queues]
    heads = [0] * k
    done = [0] * k                      # the last own id emitted (explicit) or the count (implicit)
    sent = defaultdict(int)             # (queue, message id) -> sends emitted
    run_q, run_end = array("H"), array("I")

    def message_ready(q, i):
        wait = wait_msgs[q].get(i) if wait_msgs[q] else None
        if wait is None:
            return True
        m, c = wait
        return all(sent[(s, m)] >= c for s, n in senders[m] if n >= c)

    def ready(q):
        i = heads[q]
        for other, values in waits[q]:
            if values[i] > (done[other] if other is not None else 0):
                return False
        return message_ready(q, i)

    live = [q for q in range(k) if ns[q]]
    while live:
        for p in live:
            if ready(p):
                break
        else:
            p = live[0]                 # none may go: the first goes (ids that never resolve)
        start = heads[p]
        n = ns[p]
        e = start + 1                   # the picked command goes; then the run, if any
        if not alone[p]:
            lim = n
            if marks[p]:
                at = bisect_left(marks[p], start)
                if at < len(marks[p]):
                    lim = start if marks[p][at] == start else marks[p][at]
            if lim > start:
                thr = _threshold(p, live, waits, heads, done, message_ready)
                column = None           # the ids the threshold is compared with, None: the count
                if implicit[p]:
                    lim = lim if thr is None else min(lim, thr)
                    thr = None
                elif own[p] is None:
                    thr = None          # no own ids: done stays 0, below every threshold
                else:
                    column = own[p]
                e = _run(e, lim, [(values, done[other] if other is not None else 0) for other, values in waits[p]],
                         column, thr)
        heads[p] = e
        run_q.append(p)
        run_end.append(e)
        if implicit[p]:
            done[p] = e
        else:
            v = own[p][e - 1] if own[p] is not None else 0
            done[p] = v if v >= 0 else 0
        if send_msgs[p]:
            m = send_msgs[p].get(start)     # a message command goes alone
            if m is not None:
                sent[(p, m)] += 1
        if e == n:
            live.remove(p)
    return run_q, run_end


def _threshold(p, live, waits, heads, done, message_ready):
    """The smallest own id (count with implicit ids) of queue p that makes a queue before p
    ready (None: none can be during p's run). Those queues are not ready; p's commands change
    only their waits on p (p sends no message during a run)."""
    thr = None
    for b in live:
        if b >= p:
            break
        i = heads[b]
        need, ok = None, True
        for other, values in waits[b]:
            if other == p:
                need = values[i] if need is None else max(need, values[i])
            elif values[i] > (done[other] if other is not None else 0):
                ok = False
        if need is not None and ok and message_ready(b, i):
            thr = need if thr is None else min(thr, need)
    return thr


def _run(e, lim, checks, own, thr):
    """The end of a run from command e (the one before it went) up to lim: commands go while
    each (wait column, the id it is compared with) check holds and, with a threshold, the own id
    of the last command gone (own[e - 1]; -1, none, counts as 0 and thr is at least 1) stays
    below thr."""
    if len(checks) == 1 and thr is None:
        ((values, d),) = checks
        while e < lim and values[e] <= d:
            e += 1
    elif len(checks) == 1:
        ((values, d),) = checks
        while e < lim and own[e - 1] < thr and values[e] <= d:
            e += 1
    else:
        while e < lim and (thr is None or own[e - 1] < thr) and all(values[e] <= d for values, d in checks):
            e += 1
    return e


def _waits(eng, core, columns, where):
    """[(queue of the waited-for stream or None, values)] for each wait_for field: each
    command's value made what it waits for (the wait_mask bits; a class without the field: 0,
    or with missing_wait "next" the next command's value), in place. Without a mask a -1 of
    missing_wait "none" is left as it is: it waits for nothing, as 0 does (ids compared are >= 0)."""
    mask = eng.wait_mask
    nxt = eng.missing_wait == "next"
    out = []
    for (other, _), values in zip(eng.wait_for, columns):
        if mask is not None or (nxt and len(values) and min(values) < 0):
            lent = 0                    # missing_wait "next": the next command's value, walking back
            for i in range(len(values) - 1, -1, -1):
                v = values[i]
                if v < 0:
                    values[i] = lent if nxt else 0
                else:
                    if mask is not None:
                        v &= mask
                        values[i] = v
                    lent = v
        out.append((where.get((core, other)), values))
    return out


class MessageLog:
    """A stream's message sends and waits, command by command (`add(i, record)`, or
    `send(i, id)` / `wait(i, id)` in stream order); `result()`:
    ({index of a message wait: (id, k)}, {index of a send: id}, {id: number of sends})."""

    def __init__(self, spec):
        self.spec = spec
        self.waits, self.sends, self.count, self.seen = {}, {}, defaultdict(int), defaultdict(int)

    def add(self, i, r):
        spec = self.spec
        if r.kind == spec.send:
            self.send(i, spec.msg_id(r.fields))
        elif r.kind == spec.wait:
            self.wait(i, spec.msg_id(r.fields))

    def send(self, i, m):
        self.sends[i] = m
        self.count[m] += 1

    def wait(self, i, m):
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
