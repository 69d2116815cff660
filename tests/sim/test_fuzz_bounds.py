"""Hostile commands, each bounded in time and memory (issue 24 item 3).

The cases of the issue, fuzzed as a hostile user would: race detection between commands on
big tensors (the cost follows address intervals, not bytes), bm1684 GDMA commands with extreme
sizes and strides, bm1684x commands whose result does not fit (refused before any work), bm1684
convolutions of extreme shapes, reads and dumps of gmem of any size. Every case: a BmkError or a
result, within a few seconds and 600 MiB (wall time, and growth of resident memory in a forked
child: tests/bounded.py). Seeded."""
import os
import random

import attrs
import numpy as np
import pytest

import bmk
from bmk import bm1684, bm1684x
from bmk.isa import load_chip
from bmk.sim.races import find_races
from tests.bounded import bounded
from tests.vectors.vendor import streams as vendor_streams

G = 0x100000000


def _unsynced(records):
    ids = ("cmd_id_dep", "cmd_id_tpu", "cmd_id_gdma", "eng0_sync_id", "eng1_sync_id", "eng3_sync_id")
    return [attrs.evolve(r, fields={**r.fields, **{k: 0 for k in ids if k in r.fields}}) for r in records]


# -- races -------------------------------------------------------------------------------------------
def _acc(dims, strides, base=0, write=True, space="lmem"):
    hi = base + sum((d - 1) * s for d, s in zip(dims, strides)) + 1
    return (space, (1 << 64) - 1, base, hi, write, (base, dims, strides))


HOSTILE_LAYOUTS = [   # pairs of one access each, up to 2^25 bytes: the old detector enumerated them
    ((64, 512, 1024), (1 << 19, 1024, 1)), ((64, 512, 1024), (1 << 19, 1024, 1)),       # the same bytes
    ((1 << 24,), (2,)), ((1 << 24,), (2,)),                                              # even bytes
    ((1 << 22,), (3,)), ((1 << 22,), (5,)),                                              # coprime strides
    ((4096, 4096, 2), (4097, 1, 1 << 13)), ((2048, 8192), (8191, 1)),                     # skewed rows
    ((1 << 12, 1 << 12), (1 << 12, 1)), ((1 << 12, 1 << 12), (1, 1 << 12)),               # a transpose
]


def _ranges(out):
    return [(r.lo, r.hi) for r in out[0]]


@pytest.mark.parametrize("k", range(0, len(HOSTILE_LAYOUTS), 2))
def test_race_detection_costs_intervals_not_bytes(k):
    a, b = HOSTILE_LAYOUTS[k], HOSTILE_LAYOUTS[k + 1]
    acc = [(_acc(*a),), (_acc(*b, base=1 if k == 2 else 0),)]
    found = bounded(find_races, [0], [1], [-1, -1], acc, 1000, 64, seconds=0.5, nbytes=64 << 20, show=_ranges)
    if k == 0:
        assert found == [[0, 1 << 25]]
    elif k == 2:
        assert found == []                          # even and odd bytes: never the same
    elif k == 4:                                    # multiples of 15 up to 12582900: within the boxes' overlap
        (lo, hi), = found
        assert lo == 0 and 12582901 <= hi <= 3 * ((1 << 22) - 1) + 1
    else:
        assert len(found) == 1


def test_a_short_raw_stream_of_big_racing_commands_runs_quickly():
    """16 unsynchronized bm1684x commands (1.4 KB of raw streams), every GDMA copy racing every
    TIU op on 4 MiB of the same local bytes: 64 racing pairs (the old detector: 10 s in all, the
    run itself 1 s)."""
    ctx = bm1684x.Context()
    s = bm1684x.dim4(1, 64, 256, 256)
    for _ in range(8):
        ctx.gdma_cpy_S2L(0, G, s, None, None, bm1684x.DT_INT8)
        ctx.bdc_min_C(0, 0, 1, s, None, None, bm1684x.DT_INT8)
    raw = bmk.encode("bm1684x", _unsynced(bmk.decode("bm1684x", ctx.acquire_streams())), raw=True)
    assert sum(map(len, raw.values())) <= 2048
    races = bounded(bmk.Simulator("bm1684x").run, raw, seconds=4.0,
                    show=lambda rep: sorted({(r.lo, r.hi, len(rep.races)) for r in rep.races}))
    assert races == [[0, 256 * 256, 64]]


# -- bm1684 GDMA -------------------------------------------------------------------------------------
def _bm1684_gdma():
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(0, G, bm1684.dim4(1, 64, 16, 16))
    return [r for r in bmk.decode("bm1684", ctx.acquire_streams()) if r.kind == "dma.tensor"][0]


def _gdma_cases(rng, n):
    base = _bm1684_gdma()
    local, glob = 0x8000000, G
    for _ in range(n):
        f = dict(base.fields)
        f["src_data_format"] = f["dst_data_format"] = rng.choice([0, 1, 2, 3])
        bits = [0, 0, 0, 0]                  # 2^10 .. 2^26 elements (the bound per operand: 2^25)
        for _ in range(rng.choice([10, 20, 24, 25, 26])):
            k = rng.choice([k for k in range(4) if bits[k] < 15])
            bits[k] += 1
        shape = [1 << b for b in bits]
        for side in ("src", "dst"):
            f.update({f"{side}_{d}size": v for d, v in zip("nchw", shape)})
            kind = rng.choice(["zero", "contiguous", "random", "pages"])
            st = {"zero": (0, 0, 0, 0), "random": tuple(rng.randrange(1 << 32) for _ in range(4)),
                  "pages": ((1 << 24) + 1, 1 << 20, 4097, 1),
                  "contiguous": (shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1)}[kind]
            f.update({f"{side}_{d}stride": v for d, v in zip("nchw", st)})
            addr = rng.choice([local, glob, glob + rng.randrange(1 << 33)])
            f[f"{side}_start_addr_l32"], f[f"{side}_start_addr_h8"] = addr & 0xFFFFFFFF, addr >> 32
        yield attrs.evolve(base, fields=f)


def test_bm1684_gdma_commands_with_extreme_sizes_and_strides():
    rng = random.Random(1684)
    outcomes = set()
    for rec in _gdma_cases(rng, 40):
        raw = bmk.encode("bm1684", [rec], raw=True)
        assert len(raw["gdma"]) == 128
        outcomes.add(bounded(bmk.Simulator("bm1684").run, raw).split(":")[0])
    assert outcomes == {"Report", "SimulationError"}


# -- bm1684 conv ----------------------------------------------------------------------------------------
_ZERO = dict(short_opd0_str=3, opd0_n_str=0, opd0_c_str=0, opd0_h_str=0, opd0_w_str=0, short_opd1_str=3,
             opd1_n_str=0, opd1_c_str=0, opd1_h_str=0, opd1_w_str=0, opd0_up_pad=0, opd0_dn_pad=0,
             opd0_lf_pad=0, opd0_rt_pad=0, res_op_y_str=1, res_op_x_str=1)
CONVS = [   # the most passes over one output (a million: refused), the most allowed, the most multiply-adds
    (dict(opd0_c=4095, opd1_h=16, opd1_w=16, res0_c=1, res0_h=1, res0_w=1, opd0_h=16, opd0_w=16), "SimulationError"),
    (dict(opd0_c=1023, opd1_h=16, opd1_w=16, res0_c=1, res0_h=1, res0_w=1, opd0_h=16, opd0_w=16), "Report"),
    (dict(opd0_c=1, opd1_h=45, opd1_w=45, res0_c=64, res0_h=128, res0_w=128, opd0_h=172, opd0_w=172), "Report"),
    (dict(opd0_c=4, opd1_h=8, opd1_w=8, res0_c=512, res0_h=128, res0_w=128, opd0_h=135, opd0_w=135),
     "SimulationError"),
]


@pytest.mark.parametrize("change, outcome", CONVS)
def test_bm1684_convolutions_of_extreme_shapes(change, outcome):
    conv = next(r for r in bmk.decode("bm1684", vendor_streams("bm1684")) if r.kind == "conv")
    rec = attrs.evolve(conv, fields={**conv.fields, "cmd_id_gdma": 0, "res0_n": 1, **_ZERO, **change})
    got = bounded(bmk.Simulator("bm1684").run, bmk.encode("bm1684", [rec], raw=True), seconds=4.0)
    assert got.split(":")[0] == outcome, got


# -- reads and dumps ------------------------------------------------------------------------------------
def test_gmem_chunks_read_and_dump_any_size_in_bounded_memory():
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G + (5 << 30), b"\x01\x02")

    def dump():
        with open(os.devnull, "wb") as f:
            sim.gmem_dump(G, 8 << 30, f)
    bounded(dump, seconds=10.0, nbytes=64 << 20)
    pieces = bounded(lambda: [(len(p), int(p.sum())) for p in sim.gmem_chunks(G + (5 << 30) - 8, 16, 4)],
                     show=lambda x: x)
    assert pieces == [[4, 0], [4, 0], [4, 3], [4, 0]]
    with pytest.raises(bmk.ArgumentError, match=r"gmem_read: n must be at most the 8589934592 bytes of global memory, "
                                               r"not 8589934593"):
        sim.gmem_read(G, (8 << 30) + 1)            # the size is at fault, not the address (issue 32.8)
    with pytest.raises(bmk.ArgumentError, match=r"gmem_read: addr must be a global address whose 16 bytes end "
                                               r"inside global memory \[0x100000000, 0x300000000\)"):
        sim.gmem_read(G + (8 << 30) - 8, 16)       # in device addresses, as the call takes them (issue 22.7)


# -- bm1684x: refused before any work ---------------------------------------------------------------
def test_bm1684x_command_whose_result_does_not_fit_is_refused_before_work():
    """An arith command (128 bytes) over two 16M-element operands (a zero-stride free layout)
    whose result overflows its lane: refused before its operands are read (was: read, computed in
    full, 0.4 GB and 1.7 s, then refused)."""
    ctx = bm1684x.Context()
    s = bm1684x.dim4(1, 64, 8, 8)
    ctx.bdc_min(0x1000, 0, 0x800, s, None, None, None, bm1684x.DT_INT8)
    (rec,) = [r for r in bmk.decode("bm1684x", ctx.acquire_streams()) if r.kind == "arith.min"]
    free = load_chip("bm1684x").engine("tiu").cls(rec.cls).field("res0_str").enum_value("free")
    f = dict(rec.fields)
    f.update(res0_n=1, res0_c=64, res0_h=512, res0_w=512)
    f.update({k: 0 for k in f if k.endswith(("_n_str", "_c_str", "_h_str", "_w_str"))})
    f.update({k: free for k in ("res0_str", "opd0_str", "opd1_str")})
    f.update(res0_n_str=1, res0_c_str=1, res0_h_str=512, res0_w_str=1)      # 256 KiB from 0x1000
    raw = bmk.encode("bm1684x", _unsynced([attrs.evolve(rec, fields=f)]), raw=True)
    assert len(raw["tiu"]) <= 128
    out = bounded(bmk.Simulator("bm1684x").run, raw, seconds=0.5, nbytes=32 << 20)
    assert out.startswith("SimulationError") and "res0 must fit in its lmem lane" in out, out
