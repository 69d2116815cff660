"""The one scheduler of bmk's timing: in-order engines, each command starting when its engine
is free and every command it waits for has ended. Used by the simulator's run loop
(bmk/sim/core.py: cycles, one clock) and by `bmk.timeline` (nanoseconds, per-engine clocks,
several cores: each (core, engine) stream is one engine here).
"""


def list_schedule(seqs, targets, cost, start, end, order, deadlock, done=None):
    """Generator over the commands in execution order (a command is yielded before its cost is
    asked, so a caller may execute it first: the simulator sets its cost then).

    seqs: per engine, its commands (numbers) in stream order; targets[i]: the commands i waits
    for; cost(i): i's duration, asked once after i is yielded; start / end: lists (by command)
    filled in; order: a list the execution order is appended to; deadlock(heads): the exception
    raised when no engine's next command can start (heads: each engine's position); done(i, e):
    called once i (on engine e) has its start and end. Among the engines' next commands the one
    that can start earliest goes next, ties to the smaller command number (program order)."""
    ne = len(seqs)
    lens = [len(q) for q in seqs]
    heads, free = [0] * ne, [0] * ne
    for _ in range(sum(lens)):
        best_s = best_i = best_e = None
        for e in range(ne):
            h = heads[e]
            if h >= lens[e]:
                continue
            i = seqs[e][h]
            s = free[e]
            for t in targets[i]:
                x = end[t]
                if x is None:
                    break
                if x > s:
                    s = x
            else:
                if best_i is None or s < best_s or (s == best_s and i < best_i):
                    best_s, best_i, best_e = s, i, e
        if best_i is None:
            raise deadlock(heads)
        s, i, e = best_s, best_i, best_e
        yield i
        order.append(i)
        start[i] = s
        end[i] = free[e] = s + cost(i)
        if done is not None:
            done(i, e)
        heads[e] += 1


def multi_busy(interval_lists):
    """Time in which at least two of the engines (each a list of disjoint (start, end)
    intervals) are busy: the simulator report's overlap, and `bmk time`'s."""
    events = sorted(ev for ivs in interval_lists for lo, hi in ivs if lo < hi for ev in ((lo, 1), (hi, -1)))
    total, busy, last = 0, 0, None
    for t, d in events:
        if busy >= 2:
            total += t - last
        busy += d
        last = t
    return total
