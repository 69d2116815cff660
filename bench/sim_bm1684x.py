"""bm1684x simulator speed (issue 21 item 5), run by hand: python bench/sim_bm1684x.py [REPEAT]

1. demo rows: the `bmk demo --chip bm1684x` kernel (bmk/cli/demo_bm1684x.py) on a (1, 128, ROWS,
   32) int32 tensor for ROWS = 1024 and 4096: microseconds per instruction of `Simulator.run`.
   At 4096 rows the tensor spans 64 MiB of global memory, so tiles cross the simulator's 16 MiB
   pages; the figure must not grow with the rows (an instruction's cost follows the bytes it
   moves, not the span of memory around them).
2. yolov5s: the real int8 yolov5s streams (tests/golden/bm1684x, 572 commands, coefficients
   stripped) run to their end commands: instructions per second of `Simulator.run` (decode,
   checks, execution, timing, races), best of REPEAT runs on a fresh Simulator each.

Times are process CPU seconds (the machine may be shared), one BLAS thread.
"""
import os
import pathlib
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import bmk  # noqa: E402
import bmk.bm1684x  # noqa: E402,F401
from bmk.cli import demo_bm1684x as demo  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "bm1684x"


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def demo_rows(rows, repeat):
    demo.SHAPE = (1, 128, rows, 32)
    demo.G_OUT = demo.G_IN + 128 * rows * 32 * 4
    ctx = bmk.bm1684x.Context()
    demo.build(ctx)
    streams = ctx.acquire_streams()
    n = len(bmk.decode(bmk.isa.load_chip("bm1684x"), streams))
    x = np.random.default_rng(0).integers(-12000, 12000, demo.SHAPE, dtype=np.int32)

    sims = []

    def once():                 # timed: the run only
        sim = sims[-1]
        sim.run(streams)

    times = []
    for _ in range(repeat):
        sims.append(bmk.Simulator("bm1684x"))
        sims[-1].gmem_write(demo.G_IN, x)
        times.append(best(once, 1))
    got = np.frombuffer(sims[-1].gmem_read(demo.G_OUT, x.size), np.int8).reshape(demo.SHAPE)
    assert np.array_equal(got, demo.reference(x.astype(np.int64)))
    return n, min(times)


def yolov5s(repeat):
    streams = {e: (GOLDEN / f"yolov5s_bm1684x_int8_sym.{e}.bin").read_bytes() for e in ("tiu", "gdma")}
    reports = []

    def once():
        reports.append(bmk.Simulator("bm1684x").run(streams))
    t = best(once, repeat)
    r = reports[-1]
    return len(r.instructions), t, len(r.races), r.total_cycles


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    demo_rows(256, 1)           # warm-up: the first run of a process pays its page faults
    for rows in (1024, 4096):
        n, t = demo_rows(rows, repeat)
        print(f"demo {rows:5d} rows: {n} instructions, {t * 1e3:8.1f} ms, {t / n * 1e6:7.1f} us/instruction")
    try:
        n, t, races, cycles = yolov5s(repeat)
    except bmk.BmkError as e:
        print(f"yolov5s: not simulated ({e})")
        return
    print(f"yolov5s int8: {n} instructions, {t * 1e3:8.1f} ms, {n / t:9.0f} instructions/s, "
          f"{races} races, {cycles} cycles")


if __name__ == "__main__":
    main()
