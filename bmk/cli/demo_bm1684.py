"""`bmk demo --chip bm1684`: an OKKernel kernel a user would write, end to end.

A conv2d layer (3x3, padding 1, bias) with ReLU, then a 2x2 max pool, over an input in global
memory larger than local memory (each NPU would need more than its local_mem_size_per_npu for
it), so the kernel is tiled by rows: each tile is loaded by GDMA (S2L, with its 3x3 halo),
computed by the BDC (okk_bdc_conv2d, okk_bdc_relu, okk_bdc_max_pool2d) and stored back (L2S).
Input and pooled buffers alternate (ping-pong), and each tile's compute runs in one parallel
group with the next tile's load and the previous tile's store (okk_parallel_start /
okk_parallel_end), so both loads and stores overlap the BDC. The program's streams are
disassembled (the first lines), simulated (with race detection) and the result is checked
against a numpy reference of the layer; the cycle report closes. Exit 0 when the check passes.

The weight is prepared on the host in the 2IC-mode by bm1684.conv_weight_image (bmk/bm1684/images.py):
fp32 pairs of input channels (2p, 2p + 1) for each (oc, i, j), continuous in global memory as
(ceil(IC/2), OC, kh, kw, 2), and loaded as the 32-bit tensor conv_weight_image_shape
(ceil(IC/2), OC, kh, 2 * kw) into the compact layout, whose strides are the pair strides doubled.
"""
import click
import numpy as np

N, IC, H, W, OC, K = 1, 8, 640, 224, 16, 3        # input (N, IC, H, W), OC output channels, K x K kernel
POOL, TILE_ROWS = 2, 16                           # max pool 2x2 stride 2; conv output rows per tile
GMEM = 0x100000000
G_INPUT, G_WEIGHT, G_BIAS, G_OUTPUT = GMEM, GMEM + 0x1000000, GMEM + 0x1010000, GMEM + 0x2000000
# local memory (offsets in NPU 0, where every tensor starts): per NPU, a tile of one input channel
# with its halo is (TILE_ROWS + 2) * W * 4 = 16128 bytes
L_INPUT = (0, 16384)                              # two input tiles (ping-pong)
L_WEIGHT, L_BIAS, L_CONV = 32768, 33792, 34816
L_POOL = (49152, 53248)                           # two pooled tiles (ping-pong): the store reads one
SHOWN_LINES = 16                                  # disassembly lines printed


def reference(x, w, b):
    """float64 conv2d (padding 1) + bias, ReLU, 2x2 max pool; and the error bound's magnitude."""
    from bmk.bm1684 import geometry
    pad = K // 2
    oh, ow = geometry.output_hw(H, W, K, K, geometry.Padding(pad, pad, pad, pad))

    def conv(x, w, b):
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        out = np.zeros((N, OC, oh, ow)) + b.reshape(1, OC, 1, 1)
        for i in range(K):
            for j in range(K):
                out += np.einsum("nchw,co->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
        return out

    def pool(y):
        return y.reshape(N, OC, oh // POOL, POOL, ow // POOL, POOL).max(axis=(3, 5))

    return pool(np.maximum(conv(x, w, b), 0)), pool(conv(np.abs(x), np.abs(w), np.abs(b)))


def weight_2ic(w):
    """(IC, OC, K, K) -> the 2IC bytes in global memory: (ceil(IC/2), OC, K, K, 2) fp32."""
    from bmk import bm1684
    return bm1684.conv_weight_image(w)


def build(ctx):
    """The kernel: load weight and bias; then per tile, in one parallel group: the next tile's
    S2L, this tile's conv + bias -> ReLU -> max pool, the previous tile's L2S."""
    from bmk import bm1684
    w_shape = bm1684.conv_weight_image_shape(IC, OC, K, K)
    ctx.gdma_32bit_cpy_S2L(L_WEIGHT, G_WEIGHT, w_shape, bm1684.compact_stride(0, w_shape), None)
    ctx.gdma_32bit_cpy_S2L(L_BIAS, G_BIAS, (1, OC, 1, 1), bm1684.compact_stride(0, (1, OC, 1, 1)), None)
    x_stride = bm1684.continuous_stride((N, IC, H, W))
    oh, ow = H // POOL, W // POOL
    y_stride = bm1684.continuous_stride((N, OC, oh, ow))
    tiles = [(r, min(TILE_ROWS, H - r)) for r in range(0, H, TILE_ROWS)]

    def load(t):
        row, rows = tiles[t]
        top, bottom = max(row - 1, 0), min(row + rows + 1, H)          # rows with the 3x3 halo
        ctx.gdma_32bit_cpy_S2L(L_INPUT[t % 2], G_INPUT + 4 * top * W, (N, IC, bottom - top, W), None, x_stride)
        return top, bottom

    def store(t):
        row, rows = tiles[t]
        ctx.gdma_32bit_cpy_L2S(G_OUTPUT + 4 * (row // POOL) * ow, L_POOL[t % 2], (N, OC, rows // POOL, ow),
                               y_stride, None)

    spans = [load(0)]
    for t, (row, rows) in enumerate(tiles):
        ctx.parallel_start()
        if t + 1 < len(tiles):
            spans.append(load(t + 1))
        top, bottom = spans[t]
        pad = bm1684.Padding(1 if top == row else 0, 1 if bottom == row + rows else 0, 1, 1)
        conv_shape = bm1684.dim4(N, OC, rows, W)
        ctx.bdc_conv2d(L_CONV, L_INPUT[t % 2], L_WEIGHT, L_BIAS, (N, IC, bottom - top, W), OC, K, K, None, None,
                       True, False, pad, None, None)
        ctx.bdc_relu(L_CONV, L_CONV, conv_shape, None, None)
        ctx.bdc_max_pool2d(L_POOL[t % 2], L_CONV, conv_shape, POOL, POOL, None, (POOL, POOL))
        if t:
            store(t - 1)
        ctx.parallel_end()
    store(len(tiles) - 1)


def input_bytes_per_npu():
    """Bytes of local memory each NPU would need to hold the whole input (channels spread over
    the NPUs, aligned layout)."""
    from bmk import bm1684
    return -(-IC // bm1684.npu_num()) * H * W * 4


def main(fields="changed", seed=1684):
    import bmk
    from bmk import bm1684
    from bmk.cli.simrun import format_table
    from bmk.text import asm
    chip = bm1684.Context().chip
    click.echo("bmk demo: an OKKernel (BM1684) kernel -> TIU and GDMA streams -> text -> simulator")
    click.echo()
    click.secho(f"== conv2d {K}x{K} + bias + ReLU + max pool {POOL}x{POOL}: ({N},{IC},{H},{W}) -> "
                f"({N},{OC},{H // POOL},{W // POOL}), {H // TILE_ROWS} tiles of {TILE_ROWS} rows ==", bold=True)
    need, have = input_bytes_per_npu(), bm1684.local_mem_size_per_npu()
    click.echo(f"the input needs {need} bytes of local memory per NPU, which has {have}: tiled by rows, "
               f"loads and stores overlapping the BDC")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, IC, H, W)).astype(np.float32)
    w = (rng.standard_normal((IC, OC, K, K)) / np.sqrt(IC * K * K)).astype(np.float32)
    b = rng.standard_normal(OC).astype(np.float32) * np.float32(0.1)

    ctx = bm1684.Context()
    build(ctx)
    streams = ctx.acquire_streams()
    records = bmk.decode(chip.name, streams)
    click.echo(f"streams: {', '.join(f'{e} {len(d)} bytes' for e, d in streams.items())}")
    lines = asm.disassemble(chip, records, fields).splitlines()
    click.echo(f"disassembly (the first {SHOWN_LINES} of {len(records)} instructions):")
    for line in lines[:SHOWN_LINES + 1]:
        click.echo(f"    {line}")
    click.echo(f"    ... {len(records) - SHOWN_LINES} more")

    sim = bmk.Simulator(chip.name)
    sim.gmem_write(G_INPUT, x)
    sim.gmem_write(G_WEIGHT, weight_2ic(w))
    sim.gmem_write(G_BIAS, b)
    report = sim.run(streams)
    click.echo("simulator:")
    for line in format_table(report).splitlines():
        click.echo(f"    {line}")

    expect, magnitude = reference(x, w, b)
    got = np.frombuffer(sim.gmem_read(G_OUTPUT, expect.size * 4), np.float32).reshape(expect.shape)
    click.echo("result (gmem 0x%x), channel 0, first rows:" % G_OUTPUT)
    for r in got[0, 0, :4]:
        click.echo("    " + " ".join(f"{v:7.3f}" for v in r[:8]) + " ...")
    # fp32 accumulation of IC*K*K products and a bias: the recursive-summation error bound
    bound = (IC * K * K + 2) * 2.0 ** -24 * magnitude
    err = np.abs(got - expect)
    if np.all(err <= bound) and not report.races:
        click.secho(f"numpy check: OK ({expect.size} values within the fp32 summation bound of the float64 "
                    f"reference; max error {err.max():.2e})", fg="green")
        return 0
    click.secho(f"numpy check: FAILED ({int(np.count_nonzero(err > bound))} of {expect.size} values outside the "
                f"bound, {len(report.races)} races)", fg="red")
    return 1
