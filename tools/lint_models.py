"""Every compiled model under a folder (default: tests/models): reads, decodes and encodes back to
its own bytes (tools/conformance.py `decodes`), and its `bmk lint` findings, with the time lint
takes on each (issue 33's closing figures). Run by hand:

    python tools/lint_models.py [DIR ...]      # e.g. /work/shared/models

Prints one line per model (path, chip, size, round trip, findings, lint seconds), the findings,
then the totals and the largest model's lint time. Exit 1 when a model does not read.
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for where in (ROOT, ROOT / "tools"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import bmk  # noqa: E402
from bmk.errors import BmkError  # noqa: E402
from conformance import decodes  # noqa: E402


def main(argv=None):
    dirs = [Path(d) for d in (argv if argv is not None else sys.argv[1:])] or [ROOT / "tests" / "models"]
    paths = sorted(p for d in dirs for p in d.rglob("*") if p.suffix in (".bmodel", ".cvimodel"))
    unreadable, clean, times = 0, 0, {}
    for p in paths:
        try:
            m = bmk.load_model(p)
        except (BmkError, OSError) as e:
            unreadable += 1
            print(f"{p}: does not read: {e}")
            continue
        nets = len(m.nets)
        trip = decodes(m)
        t = time.perf_counter()
        found = bmk.lint(m)
        times[p] = time.perf_counter() - t
        clean += not found
        print(f"{p}: {m.chip} ({m.target}), {p.stat().st_size} bytes, {nets} net{'s' * (nets != 1)}; round trip "
              f"{trip}; lint {'clean' if not found else f'{len(found)} findings'} in {times[p]:.3f} s")
        for f in found:
            print(f"    {f.rule} {f.where()}: {f.why}")
    print(f"{len(paths)} models: {len(paths) - unreadable} read, {clean} lint clean, {unreadable} do not read")
    if times:
        big = max(times, key=lambda p: p.stat().st_size)
        print(f"largest: {big} ({big.stat().st_size} bytes): lint {times[big]:.3f} s")
    return 1 if unreadable else 0


if __name__ == "__main__":
    sys.exit(main())
