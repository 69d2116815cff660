"""Measured vs estimated: a vendor profile's cycles (profile.py) beside bmk's cost model and
timeline, per command and per kind; the figures issue 31 sets as goals for BM1688.

Errors are |estimate - measured| / measured, in the engine's own clock; the vendor compiler's
estimate (net_stat.sim) counts in TIU cycles for both engines (its GDMA times are bytes over
its bandwidth at the TIU clock), so its GDMA figures are scaled by gdma_freq / tiu_freq.
"""
import statistics
from collections import defaultdict

import attrs

from bmk.timing.models import cost_model
from bmk.timing.profile import read_net_stat, read_profile
from bmk.timing.timeline import _split, timeline

BIG = 1000          # TIU commands measured above this many cycles count in the within-10% figure
CLOSE = 0.10


@attrs.frozen
class Row:
    core: int
    engine: str
    index: int
    kind: str
    measured: int
    estimated: int
    vendor: "int | None" = None


@attrs.frozen
class Comparison:
    rows: tuple
    span_measured: int          # core 0's TIU span, measured (TIU cycles)
    span_estimated: int         # the same span on bmk's timeline

    def _err(self, r, attr="estimated"):
        v = getattr(r, attr)
        return abs(v - r.measured) / r.measured

    def tiu_within(self, attr="estimated"):
        """(within 10%, count) of the TIU commands measured above BIG cycles."""
        rows = [r for r in self.rows if r.engine == "tiu" and r.measured > BIG and getattr(r, attr) is not None]
        return sum(self._err(r, attr) <= CLOSE for r in rows), len(rows)

    def gdma_median_error(self, attr="estimated"):
        errs = [self._err(r, attr) for r in self.rows if r.engine == "gdma" and r.measured > 0
                and getattr(r, attr) is not None]
        return statistics.median(errs) if errs else None

    @property
    def span_error(self):
        return (self.span_estimated - self.span_measured) / self.span_measured

    def per_kind(self):
        """[(engine, kind, count, measured total, bmk total, bmk median error, vendor median error or None)]."""
        groups = defaultdict(list)
        for r in self.rows:
            groups[(r.engine, r.kind)].append(r)
        out = []
        for (engine, kind), rows in sorted(groups.items()):
            live = [r for r in rows if r.measured > 0]
            err = statistics.median(self._err(r) for r in live) if live else None
            vend = [self._err(r, "vendor") for r in live if r.vendor is not None]
            out.append((engine, kind, len(rows), sum(r.measured for r in rows), sum(r.estimated for r in rows), err,
                        statistics.median(vend) if vend else None))
        return out


def compare(chip, cores, profile, net_stat=None, path="profile"):
    """Comparison of `cores` ([{engine: bytes}] per core, as `timeline` takes) with the profile
    bytes (iter*.profile) and, if given, the vendor's net_stat.sim text (core 0's commands)."""
    from bmk.isa import load_chip
    if isinstance(chip, str):
        chip = load_chip(chip)
    model = cost_model(chip)
    measured = read_profile(chip, profile, path)
    vendor = read_net_stat(net_stat) if net_stat is not None else None
    scale = {"tiu": 1.0, "gdma": model.freq.get("gdma", 1) / model.freq.get("tiu", 1)}
    rows = []
    for c, streams in enumerate(cores):
        got = measured[c] if c < len(measured) else {}
        for engine, recs in _split(chip, streams).items():
            for j, r in enumerate(recs):
                m = got.get(engine, {}).get(j)
                if m is None:
                    continue
                kind = r.kind or r.cls or "?"
                v = vendor[engine].get(j) if vendor is not None and c == 0 and engine in vendor else None
                rows.append(Row(c, engine, j, kind, m[1] - m[0], int(model.cycles(engine, kind, r.fields)),
                                None if v is None else round(v[2] * scale[engine])))
    tiu0 = measured[0].get("tiu", {}) if measured else {}
    span_m = max(e for _, e in tiu0.values()) - min(s for s, _ in tiu0.values()) if tiu0 else 0
    tl = [e for e in timeline(chip, cores) if e.core == 0 and e.engine == "tiu"]
    span_ns = max(e.end for e in tl) - min(e.start for e in tl) if tl else 0
    span_e = round(span_ns * model.freq.get("tiu", 1000) / 1000)
    return Comparison(tuple(rows), span_m, span_e)


def table(cmp):
    """The per-kind table as text lines (bmk profile, bench/bm1688_profile.py)."""
    lines = [f"{'engine':6} {'kind':24} {'n':>4} {'measured':>10} {'bmk':>10} {'bmk err':>8} {'vendor err':>10}"]
    for engine, kind, n, meas, est, err, verr in cmp.per_kind():
        e = "-" if err is None else f"{err:.1%}"
        v = "-" if verr is None else f"{verr:.1%}"
        lines.append(f"{engine:6} {kind:24} {n:>4} {meas:>10} {est:>10} {e:>8} {v:>10}")
    return lines


def summary(cmp):
    """The three BM1688 goal figures as text lines."""
    w, n = cmp.tiu_within()
    vw, vn = cmp.tiu_within("vendor")
    g, vg = cmp.gdma_median_error(), cmp.gdma_median_error("vendor")
    out = [f"TIU commands measured > {BIG} cycles within 10%: bmk {w}/{n} ({w / max(n, 1):.1%})"
           + (f", vendor {vw}/{vn} ({vw / max(vn, 1):.1%})" if vn else ""),
           f"core 0 TIU span: measured {cmp.span_measured}, bmk {cmp.span_estimated} ({cmp.span_error:+.2%})",
           "GDMA median error: bmk " + ("-" if g is None else f"{g:.1%}")
           + ("" if vg is None else f", vendor {vg:.1%}")]
    return out


def measured_timeline(chip, cores, profile, path="profile"):
    """[Entry] of the commands a profile measured, named by bmk's kinds (the decoded `cores`),
    times in ns from each engine's clock (tiu_freq_mhz, gdma_freq_mhz), each core's earliest
    record at 0; sorted by start. A measured id past its stream's end is kind "?"."""
    from bmk.isa import load_chip
    from bmk.timing.timeline import Entry
    if isinstance(chip, str):
        chip = load_chip(chip)
    model = cost_model(chip)
    measured = read_profile(chip, profile, path)
    out = []
    for c, got in enumerate(measured):
        recs = _split(chip, cores[c]) if c < len(cores) else {}
        times = []
        for engine, cyc in got.items():
            scale = 1000.0 / model.freq.get(engine, 1000)
            for j, (s, e) in cyc.items():
                rs = recs.get(engine, [])
                kind = (rs[j].kind or rs[j].cls or "?") if j < len(rs) else "?"
                times.append((s * scale, e * scale, engine, j, kind, e - s))
        base = min((t[0] for t in times), default=0.0)
        out += [Entry(c, engine, j, kind, s - base, e - base, cyc) for s, e, engine, j, kind, cyc in times]
    out.sort(key=lambda e: (e.start, e.core, e.engine, e.index))
    return out
