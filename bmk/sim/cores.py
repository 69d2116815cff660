"""Several cores running one command group each, ordered by messages (BM1688 and later).

Sources: isa-facts newer-chips.md 1 "Multi-core messages" (TIU send_msg / wait_msg, GDMA
sys_send / sys_wait; a message id is a counter the cores share: each send adds one, a wait
needs its count) and section 3 (how the vendor's disassembler cuts each core's commands at its
messages); specs/<chip>/chip.toml [engines.*] messages (kinds, id and count bits).

The public multi-core streams use messages as barriers: every engine of every core sends id X,
then waits for X with a count equal to the number of engines taking part (BM1688 2 cores: TIU
and GDMA of each, count 4). So a program is a sequence of rounds: round s of an engine's stream
is what follows its s-th wait up to and including its (s+1)-th; no command of round s + 1 starts
before every command of round s, on every core, has ended. bmk runs round after round, and in a
round each core's commands on that core's Simulator (its own local and static memories; the
global memory and the spaces the chip marks shared, BM1690's L2 SRAM, shared), core after core:
between two barriers nothing orders one core against another, so any order is a legal one (a
program whose result depends on it races).

Races: inside a core's round the simulator finds them as in any run; across cores,
`cross_core_races` compares the shared bytes each core's commands of a round touched (their
exact strided bytes, bmk/sim/races.py common_bytes), and a model run with race detection
refuses a round where two cores touch common bytes, one writing (bmk/models/run.py).

A stream the chip's spec marks `barrier` (BM1690's HAU: opaque bytes, facts engines.hau.barrier)
takes part in every barrier without a readable message: the waits count it, and it runs nothing
(its records are dropped from the rounds). Its bytes cannot say whether it takes part, so the
counts do: every wait counts all the silent streams, or (the older sg2260 yolov5s layout, whose
waits count TIU and GDMA only) none of them, the same at every barrier.

`rounds` checks that protocol and refuses (SimulationError naming the instruction and the rule)
any other use of messages: a wait whose id, count or round differ from the other streams', a
stream with more or fewer barriers than the others. A wait on the other engine of its own core
(cmd_id_dep) that names a command of an earlier round is met; one naming a later round is a
deadlock (refused when the round is compiled, bmk/sim/core.py).
"""
import bisect
import itertools
import typing

from bmk.errors import SimulationError
from bmk.sim.races import common_bytes


class Round(typing.NamedTuple):
    """One core's part of one round: its records in stream order and, per engine, how many of
    that engine's commands ran in earlier rounds (its implicit ids continue from there)."""
    core: int
    records: list
    done: dict


def _messages(chip):
    return {e.name: e.messages for e in chip.encoded_engines if e.messages is not None}


def rounds(chip, records_by_core):
    """[[Round per core]] of {core: [Record]} (each core's records of both engines, in stream
    order, already resolved by the semantics' prepare); SimulationError for a message pattern
    that is not a barrier of every stream (module docstring)."""
    msgs = _messages(chip)
    silent = {e.name for e in chip.engines if e.barrier}
    parties = sum(1 for recs in records_by_core.values() for e in {r.engine for r in recs} if e in silent)
    records_by_core = {core: [r for r in recs if r.engine not in silent] for core, recs in records_by_core.items()}
    cuts = {}                       # (core, engine) -> [(wait index in the core's records, id, count)]
    for core, recs in records_by_core.items():
        sent = {}
        for i, r in enumerate(recs):
            m = msgs.get(r.engine)
            if m is None or r.kind not in (m.send, m.wait):
                continue
            key = (core, r.engine)
            mid, count = m.msg_id(r.fields), m.msg_count(r.fields)
            if r.kind == m.send:
                sent.setdefault(key, []).append(mid)
                continue
            waits = cuts.setdefault(key, [])
            if len(sent.get(key, ())) != len(waits) + 1 or sent[key][-1] != mid:
                raise SimulationError(f"core {core} {r.engine} command {i} ({r.kind} id {mid}): a wait must follow "
                                      f"its stream's own send of the same id (a barrier); bmk models no other use "
                                      f"of messages")
            waits.append((i, mid, count))
    streams = sorted(cuts)
    n = {len(w) for w in cuts.values()}
    if len(n) > 1:
        counts = {k: len(v) for k, v in cuts.items()}
        raise SimulationError(f"every stream must wait at as many barriers, not {counts}")
    for s in range(n.pop() if n else 0):
        ids = {cuts[k][s][1] for k in streams}
        counts = {cuts[k][s][2] for k in streams}
        if s == 0 and parties and counts == {len(streams)}:
            parties = 0             # the waits count no silent stream (an older BM1690 layout): none takes part
        if len(ids) != 1 or counts != {len(streams) + parties}:
            raise SimulationError(f"barrier {s}: every stream must wait for one message id with a count of "
                                  f"{len(streams) + parties} (its streams), not ids {sorted(ids)} counts "
                                  f"{sorted(counts)}")
    # each record's round: the waits its own stream passed before it (a wait ends its round)
    nrounds = 1 + max((len(w) for w in cuts.values()), default=0)
    out = [[] for _ in range(nrounds)]
    for core, recs in records_by_core.items():
        ends = {i for (c, _), w in cuts.items() if c == core for i, _, _ in w}
        parts = [[] for _ in range(nrounds)]
        counts = [dict() for _ in range(nrounds)]        # per round: records of each engine
        passed = {}
        for i, r in enumerate(recs):
            s = passed.get(r.engine, 0)
            parts[s].append(r)
            counts[s][r.engine] = counts[s].get(r.engine, 0) + 1
            if i in ends:
                passed[r.engine] = s + 1
        done = dict.fromkeys({r.engine for r in recs}, 0)  # each engine's commands of earlier rounds
        for s in range(nrounds):
            out[s].append(Round(core, parts[s], dict(done)))
            for e, k in counts[s].items():
                done[e] += k
    return out


class CrossCoreRace(typing.NamedTuple):
    """Two cores' commands of one round touching common bytes [lo, hi) of a memory both see
    (global, or a space the chip marks shared), one writing: nothing orders them, so the result
    depends on which runs first."""
    round: int
    first: tuple            # (core, instruction index in its round's program, kind)
    second: tuple
    lo: int
    hi: int
    space: str = "global"

    def __str__(self):
        (ca, ia, ka), (cb, ib, kb) = self.first, self.second
        return (f"round {self.round}: core {ca} instruction {ia} ({ka}) and core {cb} instruction {ib} ({kb}) "
                f"both touch {self.space} bytes [0x{self.lo:x}, 0x{self.hi:x}), one writing, with no barrier "
                f"between them")


def cross_core_races(round_index, parts, space, name="global", limit=10):
    """CrossCoreRaces of one round: parts [(core, kinds, accesses)] (accesses: Simulator.last_accesses
    of that core's run, entries (space, mask, lo, hi, write, layout)); space: the shared memory's
    name in the logs (memory.GMEM for global memory), name: the space's name in the chip's map."""
    found = []
    spans = []
    for core, kinds, accesses in parts:
        rows = [(lo, hi, w, i, layout) for i, acc in enumerate(accesses or ()) for sp, _, lo, hi, w, layout in acc
                if sp == space and hi > lo]
        spans.append((core, kinds, sorted(rows)))
    for a in range(len(spans)):
        for b in range(a + 1, len(spans)):
            (ca, ka, ra), (cb, kb, rb) = spans[a], spans[b]
            los = [r[0] for r in rb]
            reach = list(itertools.accumulate((r[1] for r in rb), max))     # the furthest end so far
            for lo, hi, w, i, layout in ra:
                k = bisect.bisect_left(los, hi)         # rb's rows that start before hi: [0, k)
                while k > 0 and reach[k - 1] > lo:      # some row up to k - 1 ends after lo
                    k -= 1
                    lo2, hi2, w2, j, layout2 = rb[k]
                    if hi2 <= lo or not (w or w2):
                        continue
                    where = common_bytes(layout, layout2, max(lo, lo2), min(hi, hi2))    # strided: exact
                    if where is not None:
                        found.append(CrossCoreRace(round_index, (ca, i, ka[i]), (cb, j, kb[j]), *where, name))
                        if len(found) >= limit:
                            return found
                        break
    return found
