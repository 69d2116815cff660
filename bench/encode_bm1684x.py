"""Encoding throughput of the bm1684x TPU-Kernel API beside bm1880's (bench/encode.py's
encode_mix), for issue 11: within 1.5x of bm1880's speed per op.

Mix, one command per call like bm1880's: 40% element-wise tensor ops (bdc_max, bdc_and;
bm1880: int16 add), 20% constant ops (bdc_arithmetic_shift_C, bdc_min_C; bm1880: mul), 20%
gdma_cpy_S2L / L2S (bm1880: loads/stores), 10% bdc_greater (select, three operands) and 10%
bdc_vc_max (bm1880: conv and pooling, which TPU-Kernel seed 001 has not); serial mode; a
fresh context per run, then acquire_streams. Two address patterns, as bench/encode.py's:
- distinct (what a tiled kernel does): every load/store has its own system address;
- repeated: every call repeats its arguments.
The calls are bound before timing. ops/s = ops / (calls + acquire_streams), best of three runs;
bm1880's figure is encode.py's run_speed on today's code, measured in the same run; ratio =
bm1880 / bm1684x.
Run: python bench/encode_bm1684x.py [N] [--long]   (--long: the long command forms)
"""
import sys
import time

from bmk import bm1684x as x
from bm1880_figures import compare
from encode import ORIGINS

G = 0x100000000


def plan(ctx, n, distinct):
    """[(method, args)]: n calls, rounds of 10; distinct: round k loads from / stores to its own addresses."""
    s = x.dim4(1, 64, 8, 8)
    a, b, r, m = 0x0, 0x1000, 0x2000, 0x3000
    i16 = x.DT_INT16
    out = []
    for k in range(n // 10):
        step = 0x100 * k if distinct else 0
        out += [(ctx.bdc_max, (r, a, b, s, None, None, None, i16))] * 2
        out += [(ctx.bdc_and, (r, a, b, s, None, None, None, i16))] * 2
        out += [(ctx.bdc_arithmetic_shift_C, (m, a, -3, s, None, None, i16, i16, x.RM_HALF_UP)),
                (ctx.bdc_min_C, (m, a, 100, s, None, None, i16)),
                (ctx.gdma_cpy_S2L, (a, G + 0x10000 + step, s, None, None, i16)),
                (ctx.gdma_cpy_L2S, (G + 0x4000000 + step, r, s, None, None, i16)),
                (ctx.bdc_greater, (m, a, b, 1, s, None, None, None, x.DT_INT8, i16)),
                (ctx.bdc_vc_max, (0x8000, 0x4000, 0x6000, 64, 1024, 16, 16, x.DT_INT8))]
    return out


def run_once(n, distinct, long_form):
    ctx = x.Context(cmdbuf_size=1 << 30, long_form=long_form)
    ctx.record_origins = ORIGINS
    calls = plan(ctx, n, distinct)
    start = time.perf_counter()
    for method, args in calls:
        method(*args)
    emitted = time.perf_counter()
    streams = ctx.acquire_streams()
    done = time.perf_counter()
    return sum(map(len, streams.values())), emitted - start, done - emitted, done - start


def measure(n, distinct, long_form=False, repeat=3):
    """Best ops/s of `repeat` runs (printing each)."""
    best = None
    for i in range(repeat):
        nbytes, calls, acquire, total = run_once(n, distinct, long_form)
        print(f"  run {i + 1}: {n} ops, {nbytes} bytes; calls {calls:.3f} s + acquire_streams {acquire:.3f} s "
              f"= {total:.3f} s -> {n / total:,.0f} ops/s")
        best = total if best is None else min(best, total)
    return n / best


def main(n=200_000, long_form=False, repeat=3):
    compare("bm1684x" + (" (long forms)" if long_form else ""),
            lambda distinct: measure(n, distinct, long_form, repeat), n, repeat)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--long"]
    main(int(args[0]) if args else 200_000, "--long" in sys.argv[1:])
