"""A timeline summarised (`bmk time`) and written as a Perfetto / Chrome trace (`bmk time
--trace`, `bmk profile`): one process per core, one thread per engine, one event per command
named by bmk's kind, times in microseconds as the trace format counts them (1 us = 1000 ns).
"""
import json
from collections import defaultdict

from bmk.timing.schedule import multi_busy


def _streams(entries):
    by = defaultdict(list)
    for e in entries:
        by[(e.group, e.core, e.engine)].append(e)
    return by


def _us(ns):
    return f"{ns / 1000:,.1f} us"


def summary_lines(entries, top=10):
    """Lines: span, per core and engine its busy time (share of the span), the overlap of each
    core's engines, and the `top` longest commands."""
    if not entries:
        return ["no commands"]
    t0 = min(e.start for e in entries)
    span = max(e.end for e in entries) - t0
    lines = [f"{len(entries)} commands, span {_us(span)}"]
    cores = defaultdict(dict)
    for (group, core, engine), es in sorted(_streams(entries).items()):
        cores[(group, core)][engine] = es
    for (group, core), engines in cores.items():
        where = f"{group} core {core}" if group else f"core {core}"
        parts = []
        for engine, es in engines.items():
            busy = sum(e.duration for e in es)
            parts.append(f"{engine} {_us(busy)} ({busy / span:.0%}, {len(es)} commands)")
        overlap = multi_busy([[(e.start, e.end) for e in es] for es in engines.values()])
        lines.append(f"{where}: busy {', '.join(parts)}; overlap {_us(overlap)}")
    lines.append(f"longest {min(top, len(entries))} commands:")
    for e in sorted(entries, key=lambda e: -e.duration)[:top]:
        where = (f"{e.group} " if e.group else "") + f"core {e.core} {e.engine} #{e.index}"
        lines.append(f"  {_us(e.duration):>14}  {e.cycles:>10} cycles  {e.kind:24} {where}")
    return lines


def per_kind_lines(entries):
    """Lines: per engine and kind, the count and total time (busiest first)."""
    by = defaultdict(list)
    for e in entries:
        by[(e.engine, e.kind)].append(e)
    rows = sorted(by.items(), key=lambda kv: -sum(e.duration for e in kv[1]))
    return [f"  {engine:6} {kind:28} {len(es):>6}  {_us(sum(e.duration for e in es)):>14}" for (engine, kind), es
            in rows]


def trace_events(entries, name):
    """Chrome trace-event objects: a process per (group, core), a thread per engine."""
    events, pids, tids = [], {}, {}
    for group, core, engine in sorted(_streams(entries)):
        if (group, core) not in pids:
            pids[(group, core)] = len(pids)
            label = f"{name} {group} core {core}" if group else f"{name} core {core}"
            events.append({"name": "process_name", "ph": "M", "pid": pids[(group, core)], "args": {"name": label}})
        tid = tids.setdefault((group, core, engine), len(tids))
        events.append({"name": "thread_name", "ph": "M", "pid": pids[(group, core)], "tid": tid,
                       "args": {"name": engine}})
    for e in entries:
        events.append({"name": e.kind, "cat": e.engine, "ph": "X", "pid": pids[(e.group, e.core)],
                       "tid": tids[(e.group, e.core, e.engine)], "ts": e.start / 1000, "dur": e.duration / 1000,
                       "args": {"index": e.index, "cycles": e.cycles}})
    return events


def write_trace(path, entries, name, source):
    """Write the trace JSON (Perfetto and chrome://tracing open it); source says where the times
    come from (bmk's cost model, or a chip's measured cycles)."""
    with open(path, "w") as fh:
        json.dump({"traceEvents": trace_events(entries, name), "displayTimeUnit": "ns",
                   "otherData": {"chip": name, "times": source, "time_unit": "1 us"}}, fh)


def per_layer_lines(layers, timelines):
    """Lines: per layer (`layers`: {(core, engine, index): name}, profile.read_layers) its commands
    and, for each (title, entries) of `timelines`, its window (first start to last end) and the
    busy time of its TIU and GDMA commands, in layer order of first issue."""
    heads = "".join(f"  {title + ' window':>16} {'tiu busy':>10} {'gdma busy':>10}" for title, _ in timelines)
    lines = [f"  {'layer':20} {'cmds':>5}{heads}"]
    stats = []
    for _, entries in timelines:
        per = defaultdict(list)
        for e in entries:
            name = layers.get((e.core, e.engine, e.index))
            if name is not None:
                per[name].append(e)
        stats.append(per)
    order = sorted(stats[0], key=lambda n: min(e.start for e in stats[0][n])) if stats else []
    for name in order:
        row = f"  {name:20} {len(stats[0][name]):>5}"
        for per in stats:
            es = per.get(name, [])
            if not es:
                row += f"  {'-':>16} {'-':>10} {'-':>10}"
                continue
            window = max(e.end for e in es) - min(e.start for e in es)
            busy = {g: sum(e.duration for e in es if e.engine == g) for g in ("tiu", "gdma")}
            row += f"  {window / 1000:>13,.1f} us {busy['tiu'] / 1000:>7,.1f} us {busy['gdma'] / 1000:>7,.1f} us"
        lines.append(row)
    return lines
