"""bmk-run's work: load gmem, replay a listing on the simulator, print the report, save dumps."""
import json
import re
import sys

import click

from bmk.encoders import encode_cmdbuf
from bmk.errors import BmkError, SimulationError, quoted

PROGRESS_THRESHOLD = 10_000
_GMEM_RE = re.compile(r"^(?P<addr>[^=]+)=(?P<path>.+)$")
_DUMP_RE = re.compile(r"^(?P<addr>[^:=]+):(?P<n>[^=]+)=(?P<path>.+)$")


def _int(text, what):
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        raise BmkError(f"{what} must be an integer (e.g. 0x1000), not {quoted(text)}") from None
    if value < 0:
        raise BmkError(f"{what} must be >= 0, not {quoted(text)}")
    return value


def parse_gmem(spec):
    """'ADDR=FILE' -> (addr, path)."""
    m = _GMEM_RE.match(spec)
    if not m:
        raise BmkError(f"--gmem must be ADDR=FILE, not {quoted(spec)}")
    return _int(m["addr"], "--gmem ADDR"), m["path"]


def parse_dump(spec):
    """'ADDR:NBYTES=OUT' -> (addr, nbytes, path)."""
    m = _DUMP_RE.match(spec)
    if not m:
        raise BmkError(f"--dump must be ADDR:NBYTES=OUT, not {quoted(spec)}")
    n = _int(m["n"], "--dump NBYTES")
    if n == 0:
        raise BmkError(f"--dump NBYTES must be > 0, not {quoted(m['n'])}")
    return _int(m["addr"], "--dump ADDR"), n, m["path"]


def read_gmem_file(path):
    """A .npy file gives its array's raw bytes (C order); any other file its bytes."""
    if str(path).endswith(".npy"):
        import numpy as np
        try:
            arr = np.load(path, allow_pickle=False)
        except ValueError as e:
            raise BmkError(f"--gmem {path}: not a valid .npy file ({e})") from None
        return np.ascontiguousarray(arr).tobytes()
    with open(path, "rb") as f:
        return f.read()


def write_dump(path, sim, addr, nbytes):
    """nbytes of gmem at addr into path (.npy: a uint8 array), written chunk by chunk: a dump
    of any size takes one chunk of memory."""
    with open(path, "wb") as f:
        if str(path).endswith(".npy"):
            import numpy as np
            np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False, "shape": (nbytes,)})
        sim.gmem_dump(addr, nbytes, f)


def listing_bytes(listing):
    """The cmd_hdr_t buffer of a listing: a lazy one (binary or text) already holds it."""
    data = getattr(listing.records, "data", None)
    return bytes(data) if data is not None else encode_cmdbuf(listing.chip, listing.records)


def _run(sim, buf, n, progress):
    """sim.run(buf), with a stderr progress bar when asked."""
    if not progress:
        return sim.run(buf)
    with click.progressbar(length=n, label="simulating", file=sys.stderr, show_pos=True) as bar:
        done = [0]

        def step(count, total=None):
            bar.update(max(count - done[0], 0))
            done[0] = max(done[0], count)
        report = sim.run(buf, progress=step)
        bar.update(n - done[0])
        return report


def format_table(report):
    total = report.total_cycles or 1
    rows = [("engine", "instructions", "busy cycles", "busy %")]
    counts = {}
    for ins in report.instructions:
        counts[ins.engine] = counts.get(ins.engine, 0) + 1
    for engine, busy in report.engine_busy.items():
        rows.append((engine, str(counts.get(engine, 0)), str(busy), f"{100 * busy / total:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"chip {report.chip}: {len(report.instructions)} instructions, {report.total_cycles} cycles"]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    serial = sum(report.engine_busy.values())
    lines.append(f"overlap: {report.overlap_cycles} cycles (both engines busy); serial time would be {serial} cycles")
    if report.races:
        lines.append(f"races: {len(report.races)}" + (" (list truncated)" if getattr(report, "races_truncated", False)
                                                     else ""))
        lines += [f"  race: {r}" for r in report.races]
    else:
        lines.append("races: none")
    warnings = getattr(report, "warnings", ())
    if warnings:
        lines.append(f"local-memory warnings: {len(warnings)}")
        lines += [f"  warning: {w}" for w in warnings]
    return "\n".join(lines)


def run_listing(listing, gmem, dump, as_json, trace, strict, progress, original=None):
    """Do one bmk-run; return the exit code (0, or 1 for a race under --strict). Under --strict
    a local-memory warning (bmk/sim/lmemcheck.py) of a run without races is a failure:
    BmkError, exit 2 with one line naming the first, after the report is printed (a race
    comes first: its instructions run in an order the program does not fix, and an operand
    read before its load is one of its effects)."""
    from bmk.sim import Simulator
    loads = [parse_gmem(g) for g in gmem]
    dumps = [parse_dump(d) for d in dump]
    buf = original if original is not None else listing_bytes(listing)
    sim = Simulator(listing.chip.name)
    for addr, path in loads:
        sim.gmem_write(addr, read_gmem_file(path))
    n = len(listing.records)
    if progress is None:
        progress = n > PROGRESS_THRESHOLD
    try:
        report = _run(sim, buf, n, progress)
    except SimulationError as e:        # name the instruction where the user wrote it: file:line, stream byte
        i = getattr(e, "instruction", None)
        if i is None or not 0 <= i < n:
            raise
        raise BmkError(f"{listing.where(i)}: {e.reason}") from None
    if listing.origins is not None:
        report = report.named(listing.origins)
    for addr, nbytes, path in dumps:
        write_dump(path, sim, addr, nbytes)
    if trace:
        report.write_trace(trace)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(format_table(report))
    if strict and report.races:
        click.echo(f"{click.get_current_context().find_root().info_name}: --strict: "
                   f"{len(report.races)} race(s)", err=True)
        return 1
    if strict and report.warnings:
        n = len(report.warnings)
        raise BmkError(f"--strict: {n} local-memory warning{'s' if n > 1 else ''}, the first: {report.warnings[0]}")
    return 0
