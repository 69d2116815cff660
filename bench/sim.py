"""Simulator speed against plain numpy computing the same result (issue 3).

1. add: 4M-element element-wise add with an 8-bit (int8) result. The seed's tpu_add takes
   16-bit a and b (each two int8 planes), so the program loads the four planes of a tile,
   adds, and stores the int8 result: 32 tiles of (1, 32, 64, 64), 192 instructions.
   numpy: clip(a + b, -128, 127) on the int16 inputs.
2. conv: 3x3 convolution, C = 64 in and out, 56x56, pad 1, int8 with a 16-bit bias, relu,
   rshift 8: load ifmap, weight and bias, conv, store. numpy: pad, im2col (strided view),
   one matrix product, bias, relu, rounding shift, saturation.

The simulator's time is `Simulator.run` on the finished command buffer (decode, execution,
timing, race detection); building the buffer is timed apart. Best of REPEAT runs.
Run: python bench/sim.py [REPEAT]
"""
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import as_strided

import bmk
from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8

N_ADD = 4 * 1024 * 1024
TILE = (1, 32, 64, 64)
T = 32 * 64 * 64
A_LO, A_HI, B_LO, B_HI, RES = (0x1000000 * i for i in range(1, 6))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


# -- 1. element-wise add ---------------------------------------------------------------------------
def add_program():
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 24)
    s = bm1880.shape_t4(*TILE)
    al, ah, bl, bh, r = (ctx.tl_prealloc(i * 4096, s, FMT_I8) for i in range(5))
    for k in range(N_ADD // T):
        for t, g in ((al, A_LO), (ah, A_HI), (bl, B_LO), (bh, B_HI)):
            ctx.gdma_load(t, g + k * T, CTRL_NULL)
        ctx.tpu_add(res_high=None, res_low=r, a_high=ah, a_low=al, b_high=bh, b_low=bl)
        ctx.gdma_store(r, RES + k * T, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def bench_add(repeat):
    rng = np.random.default_rng(0)
    a = rng.integers(-32768, 32768, N_ADD, dtype=np.int16)
    b = rng.integers(-32768, 32768, N_ADD, dtype=np.int16)
    t_build, buf = best(add_program, 1)
    sim = bmk.Simulator("bm1880")
    for addr, v in ((A_LO, a.view(np.uint8)[0::2]), (A_HI, a.view(np.uint8)[1::2]),
                    (B_LO, b.view(np.uint8)[0::2]), (B_HI, b.view(np.uint8)[1::2])):
        sim.gmem_write(addr, np.ascontiguousarray(v))
    t_sim, report = best(lambda: sim.run(buf), repeat)
    t_np, ref = best(lambda: np.clip(a.astype(np.int32) + b, -128, 127).astype(np.int8), repeat)
    got = np.frombuffer(sim.gmem_read(RES, N_ADD), np.int8)
    assert np.array_equal(got, ref), "simulator and numpy disagree (add)"
    return "add 4M int8", len(report.instructions), t_build, t_sim, t_np


# -- 2. convolution ---------------------------------------------------------------------------------
C, H, W, K = 64, 56, 56, 3
X_G, W_G, B_G, O_G = 0x100000, 0x200000, 0x300000, 0x400000
RSHIFT = 8


def conv_program():
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    x = ctx.tl_prealloc_align(0, bm1880.shape_t4(1, C, H, W), FMT_I8)
    w = ctx.tl_prealloc(8192, bm1880.shape_t4(C, C, K, K), FMT_I8)
    w_view = ctx.tl_prealloc(8192, bm1880.shape_t4(1, C, K * K, C), FMT_I8)   # its lmem layout (seed 4.41)
    bias = ctx.tl_prealloc(10240, bm1880.shape_t4(2, C, 1, 1), FMT_I8)
    out = ctx.tl_prealloc_align(12288, bm1880.shape_t4(1, C, H, W), FMT_I8)
    ctx.gdma_load(x, X_G, CTRL_NULL)
    ctx.gdma_load(w_view, W_G, CTRL_NULL)
    ctx.gdma_load(bias, B_G, CTRL_NULL)
    ctx.tpu_conv(ofmap=out, ifmap=x, weight=w, bias=bias, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1,
                 stride_h=1, stride_w=1, dilation_h=1, dilation_w=1, relu_enable=True, rshift_width=RSHIFT)
    ctx.gdma_store(out, O_G, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def conv_numpy(x, wt, bias):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    s = xp.strides
    win = as_strided(xp, (1, H, W, C, K, K), (s[0], s[2], s[3], s[1], s[2], s[3]))
    acc = (win.reshape(H * W, C * K * K) @ wt.reshape(C * K * K, C).astype(np.float64)).astype(np.int64)
    acc = np.maximum(acc + bias, 0)
    acc = (acc + (1 << (RSHIFT - 1))) >> RSHIFT
    return np.clip(acc, -128, 127).astype(np.int8).T.reshape(1, C, H, W)


def bench_conv(repeat):
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (1, C, H, W), dtype=np.int8)
    wt = rng.integers(-128, 128, (C, K, K, C), dtype=np.int8)         # (Cin, kh, kw, Cout)
    bias = rng.integers(-32768, 32768, C, dtype=np.int16)
    t_build, buf = best(conv_program, 1)
    sim = bmk.Simulator("bm1880")
    sim.gmem_write(X_G, x)
    sim.gmem_write(W_G, np.ascontiguousarray(wt.transpose(3, 1, 2, 0)))  # (Cout, kh, kw, Cin)
    sim.gmem_write(B_G, np.stack([bias.view(np.uint8)[0::2], bias.view(np.uint8)[1::2]]))
    t_sim, report = best(lambda: sim.run(buf), repeat)
    t_np, ref = best(lambda: conv_numpy(x, wt, bias.astype(np.int64)), repeat)
    got = np.frombuffer(sim.gmem_read(O_G, C * H * W), np.int8).reshape(1, C, H, W)
    assert np.array_equal(got, ref), "simulator and numpy disagree (conv)"
    return "conv 3x3 64->64 56x56", len(report.instructions), t_build, t_sim, t_np


def main(repeat=5):
    print(f"{'case':24} {'instrs':>6} {'build ms':>9} {'sim ms':>8} {'numpy ms':>9} {'ratio':>6}")
    for bench in (bench_add, bench_conv):
        name, n, t_build, t_sim, t_np = bench(repeat)
        print(f"{name:24} {n:6d} {t_build * 1e3:9.1f} {t_sim * 1e3:8.1f} {t_np * 1e3:9.1f} {t_sim / t_np:6.2f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
