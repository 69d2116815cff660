"""Small BM1684 kernels of a kernel author's daily loop (issue 22): a double-buffered ReLU whose
raw streams, merged by their sync ids, interleave the engines in another order than the
program's (the TIU command of a parallel group goes before the group's load)."""
from bmk import bm1684

G = 0x100000000
SHAPE = bm1684.dim4(1, 64, 8, 8)
TILE = 32 * 1024


def double_buffered(tiles=3, extra_load=False, parallel=True, relu_at=None):
    """Tile i+1 loads while tile i's ReLU runs; each tile stored after its ReLU.

    extra_load: one more load up front; parallel=False: every call waits for the previous one;
    relu_at: {tile: local source offset} to read another buffer."""
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(0, G, SHAPE)
    if extra_load:
        ctx.gdma_32bit_cpy_S2L(0x1000, G + 0x5000, SHAPE)
    for i in range(tiles):
        cur, nxt = (i % 2) * TILE, ((i + 1) % 2) * TILE
        if parallel:
            ctx.parallel_enable()
        if i + 1 < tiles:
            ctx.gdma_32bit_cpy_S2L(nxt, G + 0x10000 * (i + 1), SHAPE)
        src = (relu_at or {}).get(i, cur)
        ctx.bdc_relu(2 * TILE + cur, src, SHAPE, None, None)
        if parallel:
            ctx.parallel_disable()
        ctx.gdma_32bit_cpy_L2S(G + 0x100000 + 0x10000 * i, 2 * TILE + cur, SHAPE)
    return ctx
