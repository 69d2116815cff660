"""Shared helpers of the simulator tests: contexts, data in and out of lmem, numpy references.

The references are written from the seed's chapter 4 formulas, independently of bmk.sim.
"""
import numpy as np

import bmk
from bmk import bm1880
from bmk.bm1880 import FMT_I8, FMT_U8

I8, U8 = FMT_I8, FMT_U8


def new():
    return bm1880.register(chip_version=1880, cmdbuf_size=1 << 22), bmk.Simulator("bm1880")


def rand(rng, shape, fmt, lo=None, hi=None):
    if fmt == I8:
        return rng.integers(-128 if lo is None else lo, 128 if hi is None else hi, shape).astype(np.int8)
    return rng.integers(0 if lo is None else lo, 256 if hi is None else hi, shape).astype(np.uint8)


def rand16(rng, shape, signed):
    if signed:
        return rng.integers(-32768, 32768, shape).astype(np.int64)
    return rng.integers(0, 65536, shape).astype(np.int64)


def put(sim, t, values):
    sim.lmem_write_tensor(t, values)


def put16(sim, lo, hi, values):
    """A 16-bit tensor as two 8-bit planes."""
    u = np.asarray(values).astype(np.int64) & 0xFFFF
    sim.lmem_write_tensor(lo, (u & 0xFF).astype(np.uint8))
    sim.lmem_write_tensor(hi, (u >> 8).astype(np.uint8))


def get(sim, t):
    return sim.lmem_read_tensor(t).astype(np.int64)


def get16(sim, lo, hi, signed):
    v = sim.lmem_read_tensor(lo).astype(np.int64) & 0xFF
    v |= (sim.lmem_read_tensor(hi).astype(np.int64) & 0xFF) << 8
    return np.where(v >= 32768, v - 65536, v) if signed else v


def sat(v, signed, bits=8):
    lo, hi = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
    return np.clip(v, lo, hi)


def rshift(v, r):
    """Round half up: add 2^(r-1), then shift (floor division = arithmetic shift)."""
    v = np.asarray(v, np.int64)
    return v if r == 0 else (v + (1 << (r - 1))) >> r


def run(ctx, sim):
    return sim.run(ctx.acquire_cmdbuf())


def conv_ref(x, w, *, bias=None, ins=(0, 0), ins_last=(0, 0), pad=(0, 0, 0, 0), stride=(1, 1),
             dilation=(1, 1), relu=False, rshift_width=0, fill=0, depthwise=False):
    """Seed 4.41 / 4.43: insert zeros, pad, strided dilated kernel, bias, relu, shift (no saturation).

    x (N, C, H, W); w (Cin, Cout, kh, kw), or (C, kh, kw) for depthwise; pad (top, bottom, left, right).
    """
    x = np.asarray(x, np.int64)
    n, c, h, wd = x.shape
    hp = 1 + (h - 1) * (ins[0] + 1) + ins_last[0]
    wp = 1 + (wd - 1) * (ins[1] + 1) + ins_last[1]
    xi = np.full((n, c, hp, wp), fill, np.int64)
    xi[:, :, ::ins[0] + 1, ::ins[1] + 1][:, :, :h, :wd] = x
    xp = np.full((n, c, hp + pad[0] + pad[1], wp + pad[2] + pad[3]), fill, np.int64)
    xp[:, :, pad[0]:pad[0] + hp, pad[2]:pad[2] + wp] = xi
    kh, kw = w.shape[-2:]
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    ho, wo = (xp.shape[2] - eh) // stride[0] + 1, (xp.shape[3] - ew) // stride[1] + 1
    out = 0
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dilation[0], kx * dilation[1]
            patch = xp[:, :, y0:y0 + (ho - 1) * stride[0] + 1:stride[0], x0:x0 + (wo - 1) * stride[1] + 1:stride[1]]
            if depthwise:
                out = out + patch * np.asarray(w, np.int64)[None, :, ky, kx, None, None]
            else:
                out = out + np.einsum("nchw,cd->ndhw", patch, np.asarray(w, np.int64)[:, :, ky, kx])
    if bias is not None:
        out = out + np.asarray(bias, np.int64)[None, :, None, None]
    if relu:
        out = np.maximum(out, 0)
    return rshift(out, rshift_width)


def pool_windows(x, kh, kw, *, ins=(0, 0), ins_last=(0, 0), pad=(0, 0, 0, 0), stride=(1, 1), fill=0):
    """(N, C, Ho, Wo, kh*kw) windows of the inserted, padded input."""
    x = np.asarray(x, np.int64)
    n, c, h, wd = x.shape
    hp = 1 + (h - 1) * (ins[0] + 1) + ins_last[0]
    wp = 1 + (wd - 1) * (ins[1] + 1) + ins_last[1]
    xi = np.full((n, c, hp, wp), 0, np.int64)
    xi[:, :, ::ins[0] + 1, ::ins[1] + 1][:, :, :h, :wd] = x
    xp = np.full((n, c, hp + pad[0] + pad[1], wp + pad[2] + pad[3]), fill, np.int64)
    xp[:, :, pad[0]:pad[0] + hp, pad[2]:pad[2] + wp] = xi
    ho, wo = (xp.shape[2] - kh) // stride[0] + 1, (xp.shape[3] - kw) // stride[1] + 1
    wins = [xp[:, :, ky:ky + (ho - 1) * stride[0] + 1:stride[0], kx:kx + (wo - 1) * stride[1] + 1:stride[1]]
            for ky in range(kh) for kx in range(kw)]
    return np.stack(wins, axis=-1)
