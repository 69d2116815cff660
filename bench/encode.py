"""Encoding throughput: a 200,000-op mix through the bm1880 API, then acquire_cmdbuf.

Mix (issue 2): 40% int16 element-wise add, 20% mul, 20% gdma loads/stores, 10% 3x3 conv,
10% max pooling; serial mode; each run in a fresh context. Prints ops/s per run and the best
of three (the machine is shared, so single runs are noisy). Run: python bench/encode.py [N]
"""
import sys
import time

from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8


def build(ctx):
    s = bm1880.shape_t4(1, 32, 8, 8)
    t = {name: ctx.tl_prealloc(la, s, FMT_I8) for name, la in
         (("a_l", 0), ("a_h", 64), ("b_l", 128), ("b_h", 192), ("r_l", 256), ("r_h", 320), ("m", 384))}
    ifmap = ctx.tl_prealloc_align(1024, bm1880.shape_t4(1, 16, 10, 10), FMT_I8)
    weight = ctx.tl_prealloc(4096, bm1880.shape_t4(16, 32, 3, 3), FMT_I8)
    bias = ctx.tl_prealloc(8192, bm1880.shape_t4(2, 32, 1, 1), FMT_I8)
    ofmap = ctx.tl_prealloc_align(12288, bm1880.shape_t4(1, 32, 8, 8), FMT_I8)
    pooled = ctx.tl_prealloc_align(16384, bm1880.shape_t4(1, 32, 4, 4), FMT_I8)

    add = dict(res_high=t["r_h"], res_low=t["r_l"], a_high=t["a_h"], a_low=t["a_l"], b_high=t["b_h"], b_low=t["b_l"])
    mul = dict(res_high=None, res_low=t["m"], a=t["a_l"], b=t["b_l"], rshift_width=3)
    conv = dict(ofmap=ofmap, ifmap=ifmap, weight=weight, bias=bias, stride_h=1, stride_w=1,
                dilation_h=1, dilation_w=1, relu_enable=True, rshift_width=6)
    pool = dict(ofmap=pooled, ifmap=ofmap, kh=2, kw=2, stride_h=2, stride_w=2)
    # One round of 10 ops in the stated proportions.
    return [
        lambda: ctx.tpu_add(**add), lambda: ctx.tpu_add(**add), lambda: ctx.tpu_add(**add),
        lambda: ctx.tpu_add(**add),
        lambda: ctx.tpu_mul(**mul), lambda: ctx.tpu_mul(**mul),
        lambda: ctx.gdma_load(t["a_l"], 0x10000, CTRL_NULL), lambda: ctx.gdma_store(t["r_l"], 0x20000, CTRL_NULL),
        lambda: ctx.tpu_conv(**conv),
        lambda: ctx.tpu_max_pooling(**pool),
    ]


def run_once(n):
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 30)
    round_ = build(ctx)
    start = time.perf_counter()
    for _ in range(n // len(round_)):
        for call in round_:
            call()
    emitted = time.perf_counter()
    buf = ctx.acquire_cmdbuf()
    done = time.perf_counter()
    return len(buf), emitted - start, done - emitted, done - start


def main(n=200_000, repeat=3):
    best = None
    for i in range(repeat):
        nbytes, calls, acquire, total = run_once(n)
        print(f"run {i + 1}: {n} ops, {nbytes} bytes; calls {calls:.3f} s + acquire_cmdbuf {acquire:.3f} s "
              f"= {total:.3f} s -> {n / total:,.0f} ops/s")
        best = total if best is None else min(best, total)
    print(f"throughput (best of {repeat}): {n / best:,.0f} ops/s (target >= 150,000)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
