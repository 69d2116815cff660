"""Encoding throughput of the bm1684 OKKernel API beside bm1880's (bench/encode.py's encode_mix),
for issue 10: within 1.5x of bm1880's speed per op.

Mix, the proportions of bm1880's: 40% element-wise fp32 adds (bdc_add; bm1880: int16 add), 20%
multiplications by a constant (bdc_mul_C; bm1880: mul), 20% GDMA loads/stores
(gdma_32bit_cpy_S2L / L2S), 10% 3x3 conv2d with bias, 10% 2x2 max pooling; serial mode; a fresh
context per run, then acquire_streams. Two address patterns, as bench/encode.py's:
- distinct (what a tiled kernel does): every load/store has its own system address;
- repeated: every call repeats its arguments.
The calls are bound before timing (a kernel computes its addresses). ops/s = ops / (calls +
acquire_streams), best of three runs; bm1880's figure is encode.py's run_speed on today's code
(register + calls + acquire_cmdbuf), measured in the same run; ratio = bm1880 / bm1684.
Run: python bench/encode_bm1684.py [N]
"""
import sys
import time

from bmk import bm1684
from bm1880_figures import compare
from encode import ORIGINS

G = 0x100000000


def plan(ctx, n, distinct):
    """[(method, args)]: n calls, rounds of 10; distinct: round k loads from / stores to its own addresses."""
    s = bm1684.dim4(1, 64, 8, 8)
    a, b, r, m = 0x0, 0x1000, 0x2000, 0x3000
    x_in, w, bias, conv_out, pooled = 0x10000, 0x20000, 0x30000, 0x40000, 0x50000
    conv = (conv_out, x_in, w, bias, bm1684.dim4(1, 16, 10, 10), 64, 3, 3, None, None, True, False, None,
            bm1684.dim2(1, 1), bm1684.dim2(1, 1))
    pool = (pooled, conv_out, bm1684.dim4(1, 64, 8, 8), 2, 2, None, bm1684.dim2(2, 2))
    out = []
    for k in range(n // 10):
        step = 0x100 * k if distinct else 0
        out += [(ctx.bdc_add, (r, a, b, s, None, None, None))] * 4
        out += [(ctx.bdc_mul_C, (m, a, 0.5, s, None, None))] * 2
        out += [(ctx.gdma_32bit_cpy_S2L, (a, G + 0x10000 + step, s, None, None)),
                (ctx.gdma_32bit_cpy_L2S, (G + 0x4000000 + step, r, s, None, None)),
                (ctx.bdc_conv2d, conv), (ctx.bdc_max_pool2d, pool)]
    return out


def run_once(n, distinct):
    ctx = bm1684.Context(cmdbuf_size=1 << 31)
    ctx.record_origins = ORIGINS
    calls = plan(ctx, n, distinct)
    start = time.perf_counter()
    for method, args in calls:
        method(*args)
    emitted = time.perf_counter()
    streams = ctx.acquire_streams()
    done = time.perf_counter()
    return sum(map(len, streams.values())), emitted - start, done - emitted, done - start


def measure(n, distinct, repeat=3):
    """Best ops/s of `repeat` runs (printing each)."""
    best = None
    for i in range(repeat):
        nbytes, calls, acquire, total = run_once(n, distinct)
        print(f"  run {i + 1}: {n} ops, {nbytes} bytes; calls {calls:.3f} s + acquire_streams {acquire:.3f} s "
              f"= {total:.3f} s -> {n / total:,.0f} ops/s")
        best = total if best is None else min(best, total)
    return n / best


def main(n=200_000, repeat=3):
    compare("bm1684", lambda distinct: measure(n, distinct, repeat), n, repeat)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
