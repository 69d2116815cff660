"""`bmk demo --chip bm1684x`: a TPU-Kernel kernel (seed 001) end to end.

The kernel requantizes int32 accumulators to int8 and clips them, the way a quantized layer
ends: for every tile of a (1, 128, 32, 32) int32 tensor in global memory,
  gdma_cpy_S2L                 the tile (1, 64, 16, 32) into local memory (a strided window)
  bdc_arithmetic_shift_C       x >> SHIFT, rounded half away from zero (int32)
  bdc_max_C / bdc_min_C        clip to [-128, 127]
  bdc_arithmetic_shift_C       shift 0 into int8 (narrowing; the values already fit)
  bdc_greater_C                mask = -1 (all bits) where x > THRESHOLD, else 0 (int8)
  bdc_and                      y = x AND mask: values at or below the threshold become 0
  gdma_cpy_L2S                 the int8 tile back into the output's window
with the next tile's load issued in a parallel section so that it overlaps the computation
(double buffering). The raw streams are disassembled, simulated, checked against numpy
written from the seed's formulas, and the cycle report printed.
"""
import click
import numpy as np

SHAPE = (1, 128, 32, 32)
TILE = (1, 64, 16, 32)
SHIFT, THRESHOLD = 6, 3
G_IN, G_OUT = 0x100000000, 0x100100000
# local memory (offsets in every NPU; tiles start on NPU 0): two int32 input buffers, a
# work buffer, two int8 output buffers, a mask
L_IN, L_WORK, L_OUT, L_MASK = (0x0000, 0x2000), 0x4000, (0x6000, 0x6800), 0x7000


def reference(x):
    """The seed's formulas: a right shift by SHIFT rounded half away from zero, min/max clip
    to int8, then true_val -1 where the value exceeds THRESHOLD, ANDed with the value."""
    q = np.floor(np.abs(x) / 2.0 ** SHIFT + 0.5) * np.sign(x)
    q = np.clip(q, -128, 127).astype(np.int64)
    return np.where(q > THRESHOLD, q, 0).astype(np.int8)


def tiles():
    for c0 in range(0, SHAPE[1], TILE[1]):
        for h0 in range(0, SHAPE[2], TILE[2]):
            yield c0, h0


def build(ctx):
    """The kernel's calls, into ctx (a bm1684x.Context)."""
    from bmk import bm1684x
    i32, i8 = bm1684x.DT_INT32, bm1684x.DT_INT8
    g_in = bm1684x.continuous_stride(SHAPE)
    g_out = bm1684x.continuous_stride(SHAPE)

    def src(c0, h0, elem):
        return G_IN + (c0 * g_in[1] + h0 * g_in[2]) * elem

    def dst(c0, h0):
        return G_OUT + (c0 * g_out[1] + h0 * g_out[2])

    todo = list(tiles())
    ctx.gdma_cpy_S2L(L_IN[0], src(*todo[0], 4), TILE, None, g_in, i32)
    for k, (c0, h0) in enumerate(todo):
        a, out = L_IN[k % 2], L_OUT[k % 2]
        ctx.parallel_start()
        if k + 1 < len(todo):                        # the next tile's load overlaps this tile's work
            ctx.gdma_cpy_S2L(L_IN[(k + 1) % 2], src(*todo[k + 1], 4), TILE, None, g_in, i32)
        ctx.bdc_arithmetic_shift_C(L_WORK, a, -SHIFT, TILE, None, None, i32, i32, bm1684x.RM_HALF_AWAY_FROM_ZERO)
        ctx.bdc_max_C(L_WORK, L_WORK, -128, TILE, None, None, i32)
        ctx.bdc_min_C(L_WORK, L_WORK, 127, TILE, None, None, i32)
        ctx.bdc_arithmetic_shift_C(out, L_WORK, 0, TILE, None, None, i8, i32, bm1684x.RM_HALF_TO_EVEN)
        ctx.bdc_greater_C(L_MASK, out, THRESHOLD, -1, TILE, None, None, i8, i8)
        ctx.bdc_and(out, out, L_MASK, TILE, None, None, None, i8)
        ctx.parallel_end()
        ctx.gdma_cpy_L2S(dst(c0, h0), out, TILE, g_out, None, i8)


def main(fields="changed", seed=1684):
    import bmk
    from bmk import bm1684x
    from bmk.cli.simrun import format_table
    from bmk.isa import load_chip
    from bmk.text import asm
    chip = load_chip("bm1684x")
    click.echo("bmk demo --chip bm1684x: a TPU-Kernel requantize-and-clip kernel -> raw streams -> text -> "
               "simulator")
    click.echo()
    click.secho(f"== requantize {SHAPE} int32 -> int8: >> {SHIFT} (half away from zero), clip, "
                f"zero at or below {THRESHOLD}; {len(list(tiles()))} tiles of {TILE} ==", bold=True)
    ctx = bm1684x.Context()
    build(ctx)
    streams = ctx.acquire_streams()
    click.echo("streams: " + ", ".join(f"{e} {len(b)} bytes" for e, b in streams.items()))
    records = bmk.decode(chip, streams)
    click.echo("disassembly:")
    for line in asm.disassemble(chip, records, fields).splitlines():
        click.echo(f"    {line}")

    rng = np.random.default_rng(seed)
    x = rng.integers(-12000, 12000, SHAPE, dtype=np.int64).astype(np.int32)
    x.reshape(-1)[:4] = (np.iinfo(np.int32).min, np.iinfo(np.int32).max, 32, -32)    # extremes and ties
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G_IN, x)
    report = sim.run(streams)
    click.echo("simulator:")
    for line in format_table(report).splitlines():
        click.echo(f"    {line}")

    expect = reference(x.astype(np.int64))
    got = np.frombuffer(sim.gmem_read(G_OUT, expect.size), np.int8).reshape(SHAPE)
    click.echo(f"result (gmem 0x{G_OUT:x}), channel 0, row 0: " + " ".join(f"{v}" for v in got[0, 0, 0, :12]) + " ...")
    if np.array_equal(got, expect) and not report.races:
        click.secho(f"numpy check: OK ({expect.size} values equal the reference)", fg="green")
        return 0
    bad = int(np.count_nonzero(got != expect))
    click.secho(f"numpy check: FAILED ({bad} of {expect.size} values differ from the reference; "
                f"{len(report.races)} races)", fg="red")
    return 1
