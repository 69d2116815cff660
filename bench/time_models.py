"""`bmk time` speed on the shared models (issue 31: under a second per 10,000 commands). Times
bmk.timeline on each model (the file read and decoded, every command scheduled) and prints
commands, seconds and seconds per 10,000 commands; a model whose chip has no cost model says so.

    PYTHONPATH=. python bench/time_models.py [/work/shared/models]
"""
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bmk  # noqa: E402


def main(argv):
    top = pathlib.Path(argv[1] if len(argv) > 1 else "/work/shared/models")
    worst = 0.0
    for path in sorted(p for p in top.rglob("*") if p.suffix in (".bmodel", ".cvimodel")):
        t0 = time.perf_counter()
        try:
            m = bmk.load_model(str(path))
            entries = bmk.timeline(m.chip, m)
        except bmk.BmkError as e:
            print(f"{path.relative_to(top)}: {e}")
            continue
        dt = time.perf_counter() - t0
        n = len(entries)
        rate = dt / max(n, 1) * 10000
        worst = max(worst, rate) if n >= 1000 else worst
        print(f"{str(path.relative_to(top)):70} {m.chip:8} {n:>8} commands {dt:7.2f} s  {rate:6.2f} s / 10k")
    print(f"worst (models of 1,000 commands or more): {worst:.2f} s per 10,000 commands")


if __name__ == "__main__":
    main(sys.argv)
