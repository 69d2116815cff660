"""BM1688 cost model vs the chip's measured cycles (tests/perf/bm1688_resnet50: resnet50 int8, two
cores, the vendor's iter0.profile and the compiler's net_stat.sim estimate). Prints the
per-kind table and the three issue 31 goal figures.

    PYTHONPATH=. python bench/bm1688_profile.py
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bmk.timing.compare import compare, summary, table  # noqa: E402
from tests.perf import DATA, cores  # noqa: E402


def main():
    cmp = compare("bm1688", cores(), (DATA / "iter0.profile").read_bytes(), (DATA / "net_stat.sim").read_text())
    print("\n".join(table(cmp)))
    print()
    print("\n".join(summary(cmp)))


if __name__ == "__main__":
    main()
