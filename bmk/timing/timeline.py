"""`bmk.timeline(chip, cores)`: when every command of decoded streams starts and ends, from
the chip's cost model (bmk/timing/models.py) and the streams' sync ids alone: no semantics, no
data, so it works on every chip with a cost model, simulated or decode-only.

Dependencies are the ones program order honours (bmk/encoders/merge.py): a command waits for
the command of another engine of its core that its wait field names (implicit ids: the 1-based
position; explicit ids: the last command of that engine, in program order, with that own id;
a class without the wait field waits for nothing: `missing_wait = "next"` orders listings only,
and the BM1688 profile shows its SYS_TR_ACC commands running before the DMA the next command
waits for has ended); across cores
the k-th wait on message m waits for the k-th send on m of every stream that sends m at least
k times. The times come from bmk/timing/schedule.py's list_schedule, the simulator's own.
"""
from collections import defaultdict

import attrs

from bmk.encoders import Record
from bmk.encoders.columns import StreamRecords
from bmk.encoders.merge import MessageLog, Queue, merge_runs
from bmk.errors import ArgumentError, BmkError, SimulationError
from bmk.timing.models import cost_model
from bmk.timing.schedule import list_schedule


@attrs.frozen(slots=True)
class Entry:
    """One command's time: core, engine, index (its position in that core's engine stream), kind,
    start and end in nanoseconds, cycles (its engine's clock), group (a model's group label, or "")."""

    core: int
    engine: str
    index: int
    kind: str
    start: float
    end: float
    cycles: int
    group: str = ""

    @property
    def duration(self):
        return self.end - self.start


def timeline(chip, cores):
    """[Entry] of every command, in program order. `cores`: a list of {engine: bytes or [Record]}
    (one per core; one dict: one core), a cmd_hdr_t buffer (bytes) or a list of Records (one
    core), a Group of a model, or a Model (every net, stage and
    subnet in file order, one after another; a subnet's groups run on their cores at once).
    ArgumentError for a chip without a cost model or an input of another type; DecodeError for
    bad streams; SimulationError when the waits can never be met (naming each stuck stream)."""
    from bmk.isa import load_chip
    from bmk.models.model import Group, Model
    if isinstance(chip, str):
        chip = load_chip(chip)
    model = cost_model(chip)
    if isinstance(cores, Model):
        from bmk.models.decoding import model_spec
        if cores.chip == chip.name:     # the build's own wait mask (BM1690's older builds)
            chip = model_spec(cores)
        return _model_timeline(chip, model, cores)
    if isinstance(cores, Group):
        return _timeline(chip, model, {cores.core: cores.streams}, cores.label)
    if isinstance(cores, (bytes, bytearray, memoryview)):
        from bmk.encoders import decode_cmdbuf
        cores = decode_cmdbuf(chip, bytes(cores))
    if isinstance(cores, (list, tuple, StreamRecords)) and cores and all(isinstance(r, Record) for r in cores):
        one = {}
        for r in cores:
            one.setdefault(r.engine, []).append(r)
        cores = [one]
    if isinstance(cores, dict):
        cores = [cores]
    if not isinstance(cores, (list, tuple)) or not all(isinstance(c, dict) for c in cores):
        raise ArgumentError(f"timeline: cores must be a list of {{engine: bytes}} (one per core), a dict, a Group or "
                            f"a Model, not {type(cores).__name__}")
    return _timeline(chip, model, dict(enumerate(cores)), "")


def _model_timeline(chip, model, m):
    out, at = [], 0.0
    for net in m.nets:
        for st in net.stages:
            for sn in st.subnets:
                buckets = defaultdict(dict)
                for g in sn.groups:
                    buckets[g.index][g.core] = g
                for _, groups in sorted(buckets.items()):
                    label = "/".join(next(iter(groups.values())).label.split("/")[:3])
                    part = _timeline(chip, model, {c: g.streams for c, g in groups.items()}, label, at)
                    out += part
                    at = max([at] + [e.end for e in part])
    return out


def _split(chip, streams):
    """{engine: [Record]} of one core's streams (bytes decoded; Records kept)."""
    from bmk.encoders.framing import decode
    out, raw = {}, {}
    for name, s in streams.items():
        if isinstance(s, (bytes, bytearray, memoryview)) or hasattr(s, "read"):
            raw[name] = s
        else:
            out[name] = list(s)
    if raw:
        for r in decode(chip, raw):
            out.setdefault(r.engine, []).append(r)
    return out


def _timeline(chip, model, cores, group, offset=0.0):
    queues = []                                 # (core, Engine, records), in merge priority
    per_core = {c: _split(chip, s) for c, s in sorted(cores.items())}
    for c, streams in per_core.items():
        queues += [(c, e, streams[e.name]) for e in chip.encoded_engines if streams.get(e.name)]
    where = {(c, e.name): q for q, (c, e, _) in enumerate(queues)}
    first = [0]
    for _, _, recs in queues:
        first.append(first[-1] + len(recs))
    n = first[-1]
    columns = [_queue(c, e, recs) for c, e, recs in queues]
    raw = [[list(w) for w in qu.waits] for qu in columns]     # merge_runs lends waits (missing_wait) in place
    order = _program_order(columns, where)
    for qu, w in zip(columns, raw):
        qu.waits = w
    targets = _targets(queues, columns, where, first, order)
    cycles, ns = [0] * n, [0.0] * n
    kinds = [""] * n
    for q, (c, e, recs) in enumerate(queues):
        scale = 1000.0 / model.freq.get(e.name, 1000)
        for j, r in enumerate(recs):
            i = first[q] + j
            kind = r.kind or r.cls or "?"
            kinds[i] = kind
            try:
                cyc = int(model.cycles(e.name, kind, r.fields))
            except BmkError:
                raise
            except Exception as exc:        # a cost model reading a field a hand-made record lacks
                raise ArgumentError(f"timeline: {e.name} command {j} of core {c} ({kind}) has fields the cost "
                                    f"model cannot read: {type(exc).__name__}: {exc}") from None
            cycles[i], ns[i] = cyc, cyc * scale
    seqs = [list(range(first[q], first[q + 1])) for q in range(len(queues))]
    start, end, done = [0.0] * n, [None] * n, []

    def deadlock(heads):
        stuck = [f"core {queues[q][0]} {queues[q][1].name} command {h}" for q, h in enumerate(heads)
                 if h < len(seqs[q])]
        return SimulationError(f"timeline: waits that are never met: {', '.join(stuck)} wait for commands "
                               f"that wait for them")

    for _ in list_schedule(seqs, targets, ns.__getitem__, start, end, done, deadlock):
        pass
    out = []
    for i in order:
        q = _queue_of(first, i)
        c, e, _ = queues[q]
        out.append(Entry(c, e.name, i - first[q], kinds[i], start[i] + offset, end[i] + offset, cycles[i], group))
    return out


def _queue_of(first, i):
    lo, hi = 0, len(first) - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if first[mid] <= i:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _queue(core, eng, recs):
    own = [r.fields.get(eng.own_id, -1) for r in recs] if eng.own_id and not eng.implicit_ids else None
    waits = [[r.fields.get(fname, -1) for r in recs] for _, fname in eng.wait_for]
    if eng.messages is None:
        msgs = ({}, {}, defaultdict(int))
    else:
        log = MessageLog(eng.messages)
        for j, r in enumerate(recs):
            log.add(j, r)
        msgs = log.result()
    return Queue(core, eng, len(recs), own, waits, msgs)


def _program_order(columns, where):
    """Global command numbers in program order (merge.merge_runs); it also turns each queue's
    wait columns into what each command waits for."""
    first = [0]
    for qu in columns:
        first.append(first[-1] + qu.n)
    out, heads = [], [0] * len(columns)
    for q, e in zip(*merge_runs(columns, where)):
        out.extend(range(first[q] + heads[q], first[q] + e))
        heads[q] = e
    return out


def _targets(queues, columns, where, first, order):
    """Per command (global number), the commands it waits for."""
    n = first[-1]
    targets = [()] * n
    extra = defaultdict(list)
    # message sends per (queue, message id), in stream order
    sends = defaultdict(list)
    for q, qu in enumerate(columns):
        for j, m in sorted(qu.msgs[1].items()):
            sends[(q, m)].append(first[q] + j)
    for q, qu in enumerate(columns):
        for j, (m, k) in qu.msgs[0].items():
            for s in range(len(columns)):
                got = sends.get((s, m))
                if got and len(got) >= k:
                    extra[first[q] + j].append(got[k - 1])
    last = [dict() for _ in columns]        # explicit ids: own id -> latest command, in program order
    for i in order:
        q = _queue_of(first, i)
        qu, j = columns[q], i - first[q]
        c, eng, _ = queues[q]
        ts = extra.get(i, [])
        for (other, _), values in zip(eng.wait_for, qu.waits):
            k = values[j]
            o = where.get((c, other))
            if o is None or k is None:
                continue
            if eng.wait_mask is not None:       # (CV184X: bit 20 set, the id 0: no wait)
                k &= eng.wait_mask
            if k <= 0:
                continue
            if columns[o].own is None:          # implicit ids: the k-th command of the other stream
                if k <= columns[o].n:
                    ts.append(first[o] + k - 1)
            else:
                t = last[o].get(k)
                if t is not None:
                    ts.append(t)
        if qu.own is not None and qu.own[j] >= 0:
            last[q][qu.own[j]] = i
        if ts:
            targets[i] = tuple(ts)
    return targets
