"""Start-up of the command line (issue 24 item 4): `bmk-disasm` of a 4-record file beside
`bmk --help`, today's code and the base commit's, in the same run.

Each figure is the minimum, over --repeat runs (base and today interleaved, after a warm-up
that fills the bytecode and spec caches), of a whole process's CPU time (os.wait4; steadier than
the wall clock on a shared machine) and wall time. The file is 4 bm1684x records of the vendor's
yolov5s streams as a cmd_hdr_t buffer: its chip is found from its first byte.
Target: bmk-disasm within 1.3x of bmk --help (issue 34 item 5; issue 24 asked 1.5x).
Run: python bench/startup.py [--base REV] [--repeat N]
"""
import argparse
import sys
import tempfile
from pathlib import Path

from worktree import DEFAULT_BASE, ROOT, base_tree, best

DISASM = "import sys; from bmk.cli.main import disasm; sys.argv = ['bmk-disasm'] + sys.argv[1:]; disasm()"
HELP = "import sys; from bmk.cli.main import bmk; sys.argv = ['bmk', '--help']; bmk()"


def small_file(folder):
    sys.path.insert(0, str(ROOT))
    import bmk
    from tests.vectors import vendor
    path = Path(folder) / "small.bin"
    path.write_bytes(bmk.encode("bm1684x", bmk.decode("bm1684x", vendor.streams("bm1684x"))[:4]))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=DEFAULT_BASE)
    ap.add_argument("--repeat", type=int, default=9)
    opts = ap.parse_args()
    trees = {"now": ROOT, "base": base_tree(opts.base)}
    with tempfile.TemporaryDirectory() as work:
        path = small_file(work)
        helps = best(trees, HELP, (), opts.repeat)
        disasms = best(trees, DISASM, (path, "-o", Path(work) / "out.s"), opts.repeat)
    print(f"base {opts.base}; min of {opts.repeat} runs; CPU ms (wall ms)")
    for label in trees:
        h, d = helps[label], disasms[label]
        print(f"  {label:>4}: bmk --help {h[1] * 1e3:6.1f} ({h[0] * 1e3:6.1f})   bmk-disasm {d[1] * 1e3:6.1f} "
              f"({d[0] * 1e3:6.1f})   disasm / help {d[1] / h[1]:.2f}x CPU ({d[0] / h[0]:.2f}x wall)")
    now, base = disasms["now"], disasms["base"]
    print(f"  bmk-disasm: base / now = {base[1] / now[1]:.2f}x CPU ({base[0] / now[0]:.2f}x wall)")


if __name__ == "__main__":
    main()
