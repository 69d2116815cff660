"""Encoding throughput of the bm1684 OKKernel API, for comparison with bench/encode.py's bm1880
figure (issue 10: within 1.5x of bm1880's per op).

Mix, the proportions of bm1880's: 40% element-wise fp32 adds (bdc_add; bm1880: int16 add), 20%
multiplications by a constant (bdc_mul_C; bm1880: mul), 20% GDMA loads/stores
(gdma_32bit_cpy_S2L / L2S), 10% 3x3 conv2d with bias, 10% 2x2 max pooling; serial mode; a fresh
context per run, then acquire_streams (and, separately timed, acquire_cmdbuf). Every call
repeats its arguments, as bm1880's mix does. Prints ops/s per run and the best of three.
Run: python bench/encode_bm1684.py [N]
"""
import sys
import time

from bmk import bm1684

G = 0x100000000


def build(ctx):
    s = bm1684.dim4(1, 64, 8, 8)
    a, b, r, m = 0x0, 0x1000, 0x2000, 0x3000
    x_in, w, bias, conv_out, pooled = 0x10000, 0x20000, 0x30000, 0x40000, 0x50000
    conv = (conv_out, x_in, w, bias, bm1684.dim4(1, 16, 10, 10), 64, 3, 3, None, None, True, False, None,
            bm1684.dim2(1, 1), bm1684.dim2(1, 1))
    pool = (pooled, conv_out, bm1684.dim4(1, 64, 8, 8), 2, 2, None, bm1684.dim2(2, 2))
    return [
        lambda: ctx.bdc_add(r, a, b, s, None, None, None), lambda: ctx.bdc_add(r, a, b, s, None, None, None),
        lambda: ctx.bdc_add(r, a, b, s, None, None, None), lambda: ctx.bdc_add(r, a, b, s, None, None, None),
        lambda: ctx.bdc_mul_C(m, a, 0.5, s, None, None), lambda: ctx.bdc_mul_C(m, a, 0.5, s, None, None),
        lambda: ctx.gdma_32bit_cpy_S2L(a, G + 0x10000, s, None, None),
        lambda: ctx.gdma_32bit_cpy_L2S(G + 0x20000, r, s, None, None),
        lambda: ctx.bdc_conv2d(*conv),
        lambda: ctx.bdc_max_pool2d(*pool),
    ]


def run_once(n):
    ctx = bm1684.Context(cmdbuf_size=1 << 31)
    round_ = build(ctx)
    start = time.perf_counter()
    for _ in range(n // len(round_)):
        for call in round_:
            call()
    emitted = time.perf_counter()
    streams = ctx.acquire_streams()
    done = time.perf_counter()
    return sum(map(len, streams.values())), emitted - start, done - emitted, done - start


def main(n=200_000, repeat=3):
    best = None
    for i in range(repeat):
        nbytes, calls, acquire, total = run_once(n)
        print(f"run {i + 1}: {n} ops, {nbytes} bytes; calls {calls:.3f} s + acquire_streams {acquire:.3f} s "
              f"= {total:.3f} s -> {n / total:,.0f} ops/s")
        best = total if best is None else min(best, total)
    print(f"bm1684 throughput (best of {repeat}): {n / best:,.0f} ops/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
