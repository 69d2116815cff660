"""Encoding throughput of the bm1684x TPU-Kernel API, for comparison with bench/encode.py's
bm1880 figure (issue 11: within 1.5x of bm1880's per op).

Mix, one command per call like bm1880's: 40% element-wise tensor ops (bdc_max, bdc_and;
bm1880: int16 add), 20% constant ops (bdc_arithmetic_shift_C, bdc_min_C; bm1880: mul), 20%
gdma_cpy_S2L / L2S (bm1880: loads/stores), 10% bdc_greater (select, three operands) and 10%
bdc_vc_max (bm1880: conv and pooling, which TPU-Kernel seed 001 has not); serial mode; a
fresh context per run, then acquire_streams. Prints ops/s per run and the best of three.
Run: python bench/encode_bm1684x.py [N] [--long]   (--long: the long command forms)
"""
import sys
import time

from bmk import bm1684x as x

G = 0x100000000


def build(ctx):
    s = x.dim4(1, 64, 8, 8)
    a, b, r, m = 0x0, 0x1000, 0x2000, 0x3000
    i16 = x.DT_INT16
    return [
        lambda: ctx.bdc_max(r, a, b, s, None, None, None, i16), lambda: ctx.bdc_max(r, a, b, s, None, None, None, i16),
        lambda: ctx.bdc_and(r, a, b, s, None, None, None, i16), lambda: ctx.bdc_and(r, a, b, s, None, None, None, i16),
        lambda: ctx.bdc_arithmetic_shift_C(m, a, -3, s, None, None, i16, i16, x.RM_HALF_UP),
        lambda: ctx.bdc_min_C(m, a, 100, s, None, None, i16),
        lambda: ctx.gdma_cpy_S2L(a, G + 0x10000, s, None, None, i16),
        lambda: ctx.gdma_cpy_L2S(G + 0x20000, r, s, None, None, i16),
        lambda: ctx.bdc_greater(m, a, b, 1, s, None, None, None, x.DT_INT8, i16),
        lambda: ctx.bdc_vc_max(0x8000, 0x4000, 0x6000, 64, 1024, 16, 16, x.DT_INT8),
    ]


def run_once(n, long_form):
    ctx = x.Context(cmdbuf_size=1 << 30, long_form=long_form)
    round_ = build(ctx)
    start = time.perf_counter()
    for _ in range(n // len(round_)):
        for call in round_:
            call()
    emitted = time.perf_counter()
    streams = ctx.acquire_streams()
    done = time.perf_counter()
    return sum(map(len, streams.values())), emitted - start, done - emitted, done - start


def main(n=200_000, long_form=False, repeat=3):
    best = None
    for i in range(repeat):
        nbytes, calls, acquire, total = run_once(n, long_form)
        print(f"run {i + 1}: {n} ops, {nbytes} bytes; calls {calls:.3f} s + acquire_streams {acquire:.3f} s "
              f"= {total:.3f} s -> {n / total:,.0f} ops/s")
        best = total if best is None else min(best, total)
    print(f"bm1684x throughput (best of {repeat}{', long forms' if long_form else ''}): {n / best:,.0f} ops/s")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--long"]
    main(int(args[0]) if args else 200_000, "--long" in sys.argv[1:])
