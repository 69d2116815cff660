"""TRANS&BC, SG/SGL, RQ&DQ, SFU, LIN and SYSID against numpy references written from the
field meanings their modules document (bmk.sim.bm1684x tsbc.py, sg.py, quant.py, sfu.py,
lin.py, sysid.py), on the golden yolov5s stream's field combinations (s_distribute of the
static index table, l_copy to NPUs 6 and 12, l_bc of a 256-byte table to 64 NPUs, the
per-NPU table gather, the one-hot scatter, rq1 with per-channel triples and round half up)
and on edges (start NPUs, out-of-range indices, saturation, every rounding mode)."""
import math

import numpy as np
import pytest

import bmk
from bmk.errors import SimulationError
from tests.chips.bm1684x.sim.helpers import (CHIP, FLOATS, INTS, LANE, bits_of, from_storage, get, prec, put, rand, rec,
                                       round_shift, run, sat, to_storage)

I8, U8, I16, U16, I32, U32 = INTS
FP16, FP32, BF16 = FLOATS
STATIC = CHIP.space("static").base


def compact(addr, shape):
    n, c, h, w = shape
    return (-(-(addr // LANE + c) // 64) * h * w, h * w, w, 1)


# -- TRANS&BC -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ["TRANS&BC", "sTRANS&sBC"])
def test_s_distribute_of_the_static_sequence_like_yolo(cls):
    """The golden stream's first TIU command: 6 int32 from static memory 1472 (0, 1, 2, ...)
    to channels 0..5 of a compact (1, 6, 1, 1) result on NPU 0."""
    sim, _ = run([rec("tiu", cls, "tsbc.s_distribute", res0_n=1, res0_c=6, res0_h=1, res0_w=1, opd0_c=6, opd0_w=1,
                      res0_addr=253952, opd0_addr=STATIC + 1472, res0_prec=prec(I32))])
    np.testing.assert_array_equal(get(sim, 253952, (1, 6, 1, 1), I32, compact(253952, (1, 6, 1, 1))).ravel(),
                                  np.arange(6))


def test_s_bc_broadcasts_a_static_vector_to_every_channel():
    sim = bmk.Simulator("bm1684x")
    vec = np.arange(100, 120, dtype=np.int64)
    sim.memories["static"].store(0x800, vec.astype("<i2").view(np.uint8))
    sim, _ = run([rec("tiu", "sTRANS&sBC", "tsbc.s_bc", res0_n=1, res0_c=40, res0_h=1, res0_w=20, res0_addr=3 * LANE,
                      opd0_addr=STATIC + 0x800, res0_prec=prec(I16))], sim)
    np.testing.assert_array_equal(get(sim, 3 * LANE, (1, 40, 1, 20), I16), np.broadcast_to(vec, (1, 40, 1, 20)))


def test_s_bc_refuses_static_bytes_nothing_put_there():
    """A static vector where no table of the chip lies and nothing wrote is refused by name, never
    read as zeros (issue 29: CV184X's resize indexes came from a table bmk had not placed); so is
    one that runs a byte past what the host wrote."""
    def s_bc(sim=None):
        return run([rec("tiu", "sTRANS&sBC", "tsbc.s_bc", res0_n=1, res0_c=4, res0_h=1, res0_w=20, res0_addr=3 * LANE,
                        opd0_addr=STATIC + 0x800, res0_prec=prec(I16))], sim)
    with pytest.raises(SimulationError, match=r"tsbc.s_bc: opd0_addr 0x9000800: static memory bytes \[0x800, "
                                              r"0x828\) hold no table of this chip"):
        s_bc()
    sim = bmk.Simulator("bm1684x")
    sim.memories["static"].store(0x800, np.zeros(39, np.uint8))
    with pytest.raises(SimulationError, match="hold no table of this chip"):
        s_bc(sim)
    sim.memories["static"].store(0x827, np.zeros(1, np.uint8))
    s_bc(sim)


def test_s_bc_refuses_wrapping_past_the_last_npu():
    with pytest.raises(SimulationError, match="start NPU \\+ res0_c must be at most 64"):
        run([rec("tiu", "sTRANS&sBC", "tsbc.s_bc", res0_n=1, res0_c=10, res0_h=1, res0_w=2, res0_addr=60 * LANE,
                 opd0_addr=STATIC, res0_prec=prec(I8))])


def test_l_copy_to_other_npus_like_yolo():
    rng = np.random.default_rng(1)
    x = rand(rng, (1, 6, 1, 6), I8)
    sim = bmk.Simulator("bm1684x")
    put(sim, 254080, x, I8)
    recs = [rec("tiu", "sTRANS&sBC", "tsbc.l_copy", res0_n=1, res0_c=6, res0_h=1, res0_w=6, opd0_c=6, opd0_w=6,
                res0_addr=dst, opd0_addr=254080, res0_prec=prec(I8)) for dst in (1826944, 3399808)]
    sim, _ = run(recs, sim)
    for dst in (1826944, 3399808):           # NPU 6 and NPU 12, offset 254080
        np.testing.assert_array_equal(get(sim, dst, x.shape, I8), x)


def test_l_bc_broadcasts_channel_zero_like_yolo():
    rng = np.random.default_rng(2)
    table = rand(rng, (1, 1, 1, 256), I8)
    sim = bmk.Simulator("bm1684x")
    put(sim, 9408, table, I8)
    sim, _ = run([rec("tiu", "sTRANS&sBC", "tsbc.l_bc", res0_n=1, res0_c=64, res0_h=1, res0_w=256, opd0_c=1,
                      opd0_w=256, res0_addr=9408, opd0_addr=9408, res0_prec=prec(I8))], sim)
    np.testing.assert_array_equal(get(sim, 9408, (1, 64, 1, 256), I8), np.broadcast_to(table, (1, 64, 1, 256)))


@pytest.mark.parametrize("kind", ["tsbc.cw_ts", "tsbc.wc_ts"])
def test_cw_and_wc_transposes(kind):
    """res0[n, c, h, w] = opd0[n, w, h, c]; cw_ts reads opd0 line-aligned (T3), wc_ts aligned."""
    rng = np.random.default_rng(3)
    n, c, h, w = 2, 9, 3, 70
    x = rand(rng, (n, w, h, c), I16)
    sim = bmk.Simulator("bm1684x")
    if kind == "tsbc.cw_ts":
        hs = -(-c // 32) * 32
        put(sim, 0, x, I16, (-(-w // 64) * h * hs, h * hs, hs, 1))
    else:
        put(sim, 0, x, I16)
    sim, _ = run([rec("tiu", "sTRANS&sBC", kind, res0_n=n, res0_c=c, res0_h=h, res0_w=w, opd0_c=w, opd0_w=c,
                      res0_addr=5 * LANE + 0x4000, opd0_addr=0, res0_prec=prec(I16))], sim)
    np.testing.assert_array_equal(get(sim, 5 * LANE + 0x4000, (n, c, h, w), I16), x.transpose(0, 3, 2, 1))


# -- SG / SGL -----------------------------------------------------------------------------------
def test_pe_s_gather_of_a_per_npu_table_like_yolo():
    """The golden stream's activation lookup: a 256-entry int8 table in every NPU (T4: opd0_str
    set), indices (1, 32, 1, W) uint8: R[0, c, 0, j] = table[NPU of c][idx[0, c, 0, j]]."""
    rng = np.random.default_rng(4)
    tables = rand(rng, (1, 64, 1, 256), I8)
    idx = rng.integers(0, 256, (1, 32, 1, 400))
    sim = bmk.Simulator("bm1684x")
    put(sim, 9408, tables, I8)
    put(sim, 0x10000, idx, U8)
    sim, _ = run([rec("tiu", "sSG", "sg.pe_s_gather_d1coor", res0_n=1, res0_c=32, res0_h=1, res0_w=400, opd0_h=1,
                      opd0_w=256, opd0_str=4, opd1_c=32, opd1_w=400, res0_addr=0x20000, opd0_addr=9408,
                      opd1_addr=0x10000, res0_prec=prec(I8), opd0_prec=prec(I8), opd1_prec=prec(U8))], sim)
    want = np.take_along_axis(np.broadcast_to(tables[:, :32], (1, 32, 1, 256)), idx, axis=3)
    np.testing.assert_array_equal(get(sim, 0x20000, (1, 32, 1, 400), I8), want)


def test_pe_s_scatter_builds_the_one_hot_matrix_like_yolo():
    sim = bmk.Simulator("bm1684x")
    put(sim, 254016, np.ones((1, 6, 1, 1), np.int64), I8)
    put(sim, 253952, np.arange(6).reshape(1, 6, 1, 1), U8)
    put(sim, 254080, np.zeros((1, 6, 1, 6), np.int64), I8)
    sim, _ = run([rec("tiu", "sSG", "sg.pe_s_scatter_hzd", res0_n=1, res0_c=6, res0_h=1, res0_w=6, opd0_h=1, opd0_w=1,
                      opd1_c=6, opd1_w=1, res0_addr=254080, opd0_addr=254016, opd1_addr=253952,
                      res0_prec=prec(I8), opd0_prec=prec(I8), opd1_prec=prec(U8))], sim)
    np.testing.assert_array_equal(get(sim, 254080, (1, 6, 1, 6), I8).reshape(6, 6), np.eye(6, dtype=np.int64))


@pytest.mark.parametrize("kind", ["sg.pe_s_gather_hzd", "sg.pe_s_gather_d1coor"])
def test_pe_s_gather_out_of_range_fills_or_refuses(kind):
    rng = np.random.default_rng(5)
    a = rand(rng, (1, 3, 1, 10), I16)
    idx = np.array([0, 9, 10, 65535, 3] * 2).reshape(1, 1, 1, 10).repeat(3, 1)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I16)
    put(sim, 0x1000, idx, U16)
    f = dict(res0_n=1, res0_c=3, res0_h=1, res0_w=10, opd0_h=1, opd0_w=10, opd1_c=3, opd1_w=10, res0_addr=0x2000,
             opd0_addr=0, opd1_addr=0x1000, res0_prec=prec(I16), opd0_prec=prec(I16), opd1_prec=prec(U16))
    with pytest.raises(SimulationError, match="indices must be below 10 without fill_const"):
        run([rec("tiu", "sSG", kind, **f)], sim)
    sim, _ = run([rec("tiu", "sSG", kind, **f, opd2_const=1, opd2_addr=bits_of(-77, I16))], sim)
    safe = np.where(idx < 10, idx, 0)
    want = np.where(idx < 10, np.take_along_axis(a, safe, 3), -77)
    np.testing.assert_array_equal(get(sim, 0x2000, (1, 3, 1, 10), I16), want)


def test_limit_enable_is_refused():
    f = dict(res0_n=1, res0_c=1, res0_h=1, res0_w=1, opd0_h=1, opd0_w=1, opd1_c=1, opd1_w=1, opd3_const=1,
             opd1_prec=prec(U8))
    with pytest.raises(SimulationError, match=r"opd3_const \(limit_enable\) must be 0"):
        run([rec("tiu", "sSG", "sg.pe_s_gather_d1coor", **f)])


def test_pe_s_scatter_d1coor_and_pp():
    rng = np.random.default_rng(6)
    n, c, wa, wr = 2, 5, 4, 9
    a = rand(rng, (1, c, 1, wa), I32)
    a2 = rand(rng, (n, c, 1, wa), I32)
    idx = np.stack([rng.permutation(wr)[:wa] for _ in range(n * c)]).reshape(n, c, 1, wa)
    old = rand(rng, (n, c, 1, wr), I32)
    for kind, src in (("sg.pe_s_scatter_d1coor", a), ("sg.pe_s_scatter_pp_d1coor", a2)):
        sim = bmk.Simulator("bm1684x")
        put(sim, 0, src, I32)
        put(sim, 0x1000, idx, U8)
        put(sim, 0x2000, old, I32)
        sim, _ = run([rec("tiu", "sSG", kind, res0_n=n, res0_c=c, res0_h=1, res0_w=wr, opd0_h=1, opd0_w=wa,
                          opd1_c=c, opd1_w=wa, res0_addr=0x2000, opd0_addr=0, opd1_addr=0x1000, res0_prec=prec(I32),
                          opd0_prec=prec(I32), opd1_prec=prec(U8))], sim)
        want = old.copy()
        for i in range(n):
            for j in range(c):
                want[i, j, 0, idx[i, j, 0]] = np.broadcast_to(src, (n, c, 1, wa))[i, j, 0]
        np.testing.assert_array_equal(get(sim, 0x2000, (n, c, 1, wr), I32), want)


def test_pe_m_gather_takes_one_table_per_batch():
    rng = np.random.default_rng(7)
    n, c, wa, w = 3, 64, 16, 12
    tables = rand(rng, (4, c, 1, wa), I8)
    idx = rng.integers(0, wa, (1, c, 1, w))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, tables[:1], I8)                      # T4: one plane per NPU for every table and batch
    put(sim, 0x1000, idx, U8)
    sim, _ = run([rec("tiu", "sSG", "sg.pe_m_gather_d1coor", res0_n=n, res0_c=c, res0_h=1, res0_w=w, opd0_h=1,
                      opd0_w=wa, opd0_str=4, opd1_c=c, opd1_w=w, res0_addr=0x2000, opd0_addr=0, opd1_addr=0x1000,
                      res0_prec=prec(I8), opd0_prec=prec(I8), opd1_prec=prec(U8))], sim)
    assert CHIP.code("tiu", "res0_str", "T4") == 4
    want = np.take_along_axis(np.broadcast_to(tables[:1], (n, c, 1, wa)), np.broadcast_to(idx, (n, c, 1, w)), 3)
    np.testing.assert_array_equal(get(sim, 0x2000, (n, c, 1, w), I8), want)


@pytest.mark.parametrize("kind", ["sg.pe_s_mask_select", "sg.pe_s_mask_selhzd"])
def test_mask_select_packs_the_selected_elements_and_counts_them(kind):
    rng = np.random.default_rng(8)
    n, c, wa = 2, 3, 12
    a = rand(rng, (1, c, 1, wa), I16)
    mask = rng.integers(0, 2, (n, c, 1, wa))
    old = rand(rng, (n, c, 1, wa), I16)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I16)
    put(sim, 0x1000, mask, U8)
    put(sim, 0x2000, old, I16)
    sim, _ = run([rec("tiu", "sSG", kind, res0_n=n, res0_c=c, res0_h=1, res0_w=wa, opd0_h=1, opd0_w=wa, opd1_c=c,
                      opd1_w=wa, res0_addr=0x2000, opd0_addr=0, opd1_addr=0x1000, res1_addr=0x3000,
                      res0_prec=prec(I16), opd0_prec=prec(I16), opd1_prec=prec(U8))], sim)
    want, counts = old.copy(), np.zeros((n, c, 1, 1), np.int64)
    for i in range(n):
        for j in range(c):
            sel = a[0, j, 0][mask[i, j, 0] != 0]
            want[i, j, 0, :len(sel)] = sel
            counts[i, j] = len(sel)
    np.testing.assert_array_equal(get(sim, 0x2000, (n, c, 1, wa), I16), want)
    np.testing.assert_array_equal(get(sim, 0x3000, (n, c, 1, 1), U16, compact(0x3000, (n, c, 1, 1))), counts)


@pytest.mark.parametrize("kind", ["sg.pe_s_nonzero", "sg.pe_s_nonzero_hzd"])
def test_nonzero_lists_the_positions(kind):
    rng = np.random.default_rng(9)
    n, c, w = 2, 4, 10
    a = rng.integers(-2, 3, (n, c, 1, w)) * (rng.random((n, c, 1, w)) < 0.5)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I8)
    put(sim, 0x2000, np.full((n, c, 1, w), -1), I32)
    sim, _ = run([rec("tiu", "sSG", kind, res0_n=n, res0_c=c, res0_h=1, res0_w=w, opd0_h=1, opd0_w=w,
                      res0_addr=0x2000, opd0_addr=0, res1_addr=0x3000, res0_prec=prec(I32), opd1_prec=prec(I8))], sim)
    got = get(sim, 0x2000, (n, c, 1, w), I32)
    for i in range(n):
        for j in range(c):
            pos = np.flatnonzero(a[i, j, 0])
            assert got[i, j, 0, :len(pos)].tolist() == pos.tolist()
            assert (got[i, j, 0, len(pos):] == -1).all()
    counts = get(sim, 0x3000, (n, c, 1, 1), U16, compact(0x3000, (n, c, 1, 1))).ravel()
    assert counts.tolist() == [(a[i, j] != 0).sum() for i in range(n) for j in range(c)]


def put_vector(sim, addr, v, dt):
    """A compact (1, L, 1, 1) vector from NPU 0: element j on NPU j % 64 at element j // 64."""
    put(sim, addr, np.asarray(v).reshape(1, -1, 1, 1), dt, compact(addr, (1, len(v), 1, 1)))


def test_pl_gather_and_scatter_d1coor():
    rng = np.random.default_rng(10)
    n, c, wa, wr = 2, 70, 9, 5
    a = rand(rng, (n, c, 1, wa), I8)
    idx = np.array([8, 0, 3, 3, 7])
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I8)
    put_vector(sim, 0x4000, idx, U16)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_d1coor", res0_n=n, res0_c=c, res0_h=1, res0_w=wr, opd0_h=1,
                      opd0_w=wa, opd1_c=wr, opd1_w=1, res0_addr=0x8000, opd0_addr=0, opd1_addr=0x4000,
                      res0_prec=prec(I8), opd0_prec=prec(I8), opd1_prec=prec(U16))], sim)
    np.testing.assert_array_equal(get(sim, 0x8000, (n, c, 1, wr), I8), a[..., idx])
    perm = np.array([4, 1, 6, 0, 2, 8, 3, 7, 5])
    put_vector(sim, 0x4000, perm, U8)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_scatter_d1coor", res0_n=n, res0_c=c, res0_h=1, res0_w=wa, opd0_h=1,
                      opd0_w=wa, opd1_c=wa, opd1_w=1, res0_addr=0x8000, opd0_addr=0, opd1_addr=0x4000,
                      res0_prec=prec(I8), opd0_prec=prec(I8), opd1_prec=prec(U8))], sim)
    want = np.empty_like(a)
    want[..., perm] = a
    np.testing.assert_array_equal(get(sim, 0x8000, (n, c, 1, wa), I8), want)


def test_pl_d2coor_gather_and_scatter():
    rng = np.random.default_rng(11)
    n, c, ha, wa = 1, 3, 4, 5
    a = rand(rng, (n, c, ha, wa), I16)
    hs, ws = np.array([0, 3, 2, 1]), np.array([4, 0, 2, 1])
    pairs = hs | (ws << 16)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I16)
    put_vector(sim, 0x4000, pairs, U32)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_d2coor", res0_n=n, res0_c=c, res0_h=1, res0_w=4, opd0_h=ha,
                      opd0_w=wa, opd1_c=4, opd1_w=1, res0_addr=0x8000, opd0_addr=0, opd1_addr=0x4000,
                      res0_prec=prec(I16), opd0_prec=prec(I16), opd1_prec=prec(U16))], sim)
    np.testing.assert_array_equal(get(sim, 0x8000, (n, c, 1, 4), I16), a[:, :, hs, ws][:, :, None, :])
    row = rand(rng, (n, c, 1, 4), I16)
    put(sim, 0x9000, row, I16)
    put(sim, 0xA000, np.zeros((n, c, ha, wa)), I16)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_scatter_d2coor", res0_n=n, res0_c=c, res0_h=ha, res0_w=wa, opd0_h=1,
                      opd0_w=4, opd1_c=4, opd1_w=1, res0_addr=0xA000, opd0_addr=0x9000, opd1_addr=0x4000,
                      res0_prec=prec(I16), opd0_prec=prec(I16), opd1_prec=prec(U16))], sim)
    want = np.zeros((n, c, ha, wa), np.int64)
    want[:, :, hs, ws] = row[:, :, 0]
    np.testing.assert_array_equal(get(sim, 0xA000, (n, c, ha, wa), I16), want)


def test_pl_gather_rec_crops_rectangles():
    rng = np.random.default_rng(12)
    n, c, ha, wa, kh, kw, R = 1, 2, 6, 7, 2, 3, 3
    a = rand(rng, (n, c, ha, wa), I8)
    rects = np.array([[0, 0, 0, 0], [4, 4, 0, 0], [5, 6, 0, 0]])
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I8)
    put(sim, 0x4000, rects.reshape(1, R, 1, 4), U16, compact(0x4000, (1, R, 1, 4)))
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_rec", res0_n=n, res0_c=c, res0_h=kh * kw, res0_w=R, opd0_h=ha,
                      opd0_w=wa, opd1_c=R, opd1_w=4, res0_addr=0x8000, opd0_addr=0, opd1_addr=0x4000,
                      opd3_addr=(kh << 16) | kw, opd2_const=1, opd2_addr=bits_of(99, I8), res0_prec=prec(I8),
                      opd0_prec=prec(I8), opd1_prec=prec(U16))], sim)
    want = np.full((n, c, kh * kw, R), 99, np.int64)
    for r, (y0, x0, _, _) in enumerate(rects):
        for i in range(kh):
            for k in range(kw):
                if y0 + i < ha and x0 + k < wa:
                    want[:, :, i * kw + k, r] = a[:, :, y0 + i, x0 + k]
    hs = -(-R // 64) * 64
    np.testing.assert_array_equal(get(sim, 0x8000, want.shape, I8, (kh * kw * hs, kh * kw * hs, hs, 1)), want)


def test_pl_perw_gather_and_scatter():
    rng = np.random.default_rng(13)
    n, c, h, w = 1, 3, 5, 6
    a = rand(rng, (n, c, h, w), I32)
    rows = np.array([4, 0, 2, 2, 1, 3])
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I32)
    put_vector(sim, 0x4000, rows, U8)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_gather_perw", res0_n=n, res0_c=c, res0_h=1, res0_w=w, opd0_h=h, opd0_w=w,
                      opd1_c=w, opd1_w=1, res0_addr=0x8000, opd0_addr=0, opd1_addr=0x4000, res0_prec=prec(I32),
                      opd0_prec=prec(I32), opd1_prec=prec(U8))], sim)
    np.testing.assert_array_equal(get(sim, 0x8000, (n, c, 1, w), I32)[:, :, 0], a[:, :, rows, np.arange(w)])
    put(sim, 0xC000, np.zeros((n, c, h, w)), I32)
    sim, _ = run([rec("tiu", "sSG", "sg.pl_scatter_perw", res0_n=n, res0_c=c, res0_h=h, res0_w=w, opd0_h=1,
                      opd0_w=w, opd1_c=w, opd1_w=1, res0_addr=0xC000, opd0_addr=0x8000, opd1_addr=0x4000,
                      res0_prec=prec(I32), opd0_prec=prec(I32), opd1_prec=prec(U8))], sim)
    want = np.zeros((n, c, h, w), np.int64)
    want[:, :, rows, np.arange(w)] = a[:, :, rows, np.arange(w)]
    np.testing.assert_array_equal(get(sim, 0xC000, (n, c, h, w), I32), want)


def test_sgl_gather_and_scatter_lines():
    rng = np.random.default_rng(14)
    n, c, ha, h, w = 2, 3, 5, 4, 20
    hs = 64
    a = rand(rng, (1, c, ha, w), I8)
    idx = rng.integers(0, ha, (n, c, h, 1))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, I8, (0, ha * hs, hs, 1))                         # opd0_str 3: the line layout
    put(sim, 0x2000, idx, U8, compact(0x2000, (n, c, h, 1)))
    line = (h * hs, h * hs, hs, 1)                                  # c < 64: one channel group
    sim, _ = run([rec("tiu", "sSGL", "sgl.pe_s_gather_line", res0_n=n, res0_c=c, res0_h=h, res0_w=w, opd0_h=ha,
                      opd0_str=3, res0_addr=0x4000, opd0_addr=0, opd1_addr=0x2000, res0_prec=prec(I8),
                      opd0_prec=prec(I8), opd1_prec=prec(U8))], sim)
    want = np.take_along_axis(np.broadcast_to(a, (n, c, ha, w)), np.broadcast_to(idx, (n, c, h, w)), 2)
    np.testing.assert_array_equal(get(sim, 0x4000, (n, c, h, w), I8, line), want)
    perm = np.stack([rng.permutation(h)[: min(h, ha)] for _ in range(n * c)]).reshape(n, c, min(h, ha), 1)
    src = rand(rng, (1, c, min(h, ha), w), I8)
    put(sim, 0x6000, src, I8, (0, min(h, ha) * hs, hs, 1))
    put(sim, 0x7000, perm, U8, compact(0x7000, perm.shape))
    put(sim, 0x8000, np.zeros((n, c, h, w)), I8, line)
    sim, _ = run([rec("tiu", "sSGL", "sgl.pe_s_scatter_line", res0_n=n, res0_c=c, res0_h=h, res0_w=w,
                      opd0_h=min(h, ha), opd0_str=3, res0_addr=0x8000, opd0_addr=0x6000, opd1_addr=0x7000,
                      res0_prec=prec(I8), opd0_prec=prec(I8), opd1_prec=prec(U8))], sim)
    want = np.zeros((n, c, h, w), np.int64)
    for i in range(n):
        for j in range(c):
            want[i, j, perm[i, j, :, 0]] = src[0, j]
    np.testing.assert_array_equal(get(sim, 0x8000, (n, c, h, w), I8, line), want)


# -- RQ&DQ --------------------------------------------------------------------------------------
def put_params(sim, addr, cols, dt_list):
    """(1, C, 1, k) aligned int32 words: column k of each channel (bit patterns)."""
    words = np.stack([np.asarray(col) for col in cols], -1)
    c = words.shape[0]
    put(sim, addr, words.reshape(1, c, 1, len(cols)) & 0xFFFFFFFF, U32)


@pytest.mark.parametrize("cls", ["RQ&DQ", "sRQ&sDQ"])
@pytest.mark.parametrize("mode", range(7))
def test_rq1_like_yolo(cls, mode):
    """int32 sums -> int8: (x * scale) shifted (< 0: right, rounded by the mode) + zp, saturated;
    per-channel (scale, shift, zp) int32 triples (the golden stream: round half up)."""
    rng = np.random.default_rng(20 + mode)
    shape = (1, 70, 4, 5)
    x = rng.integers(-2 ** 20, 2 ** 20, shape)
    scale = rng.integers(1, 2 ** 15, 70)
    shift = rng.integers(-24, -8, 70)
    zp = rng.integers(-10, 10, 70)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I32)
    put_params(sim, 0x8000, (scale, shift, zp), None)
    sim, _ = run([rec("tiu", cls, "quant.rq1", res0_n=1, res0_c=70, res0_h=4, res0_w=5, res0_addr=0x10000,
                      opd0_addr=0, opd1_addr=0x8000, opd0_prec=prec(I32), opd0_sign=1, res0_prec=prec(I8),
                      opd2_sign=1, opd2_n_str=mode, tsk_lane_num=(1 << 64) - 1)], sim)
    c = np.arange(70).reshape(1, -1, 1, 1)
    want = np.vectorize(lambda v, s, k, z: round_shift(v * s, -k, mode) + z)(x, scale[c], shift[c], zp[c])
    np.testing.assert_array_equal(get(sim, 0x10000, shape, I8), sat(want, I8))


def test_rq1_constant_form():
    x = np.arange(-32, 32).reshape(1, 64, 1, 1) * 1000
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I32)
    shift, zp, scale = -7, 5, 3
    sim, _ = run([rec("tiu", "sRQ&sDQ", "quant.rq1", res0_n=1, res0_c=64, res0_h=1, res0_w=1, res0_addr=0x1000,
                      opd0_addr=0, opd0_prec=prec(I32), opd0_sign=1, res0_prec=prec(I16), opd2_sign=1,
                      opd1_const=1, opd1_addr=scale, opd2_addr=((zp & 0xFFFF) << 8) | (shift & 0xFF),
                      opd2_n_str=1)], sim)
    want = np.vectorize(lambda v: round_shift(v * scale, 7, 1) + zp)(x)
    np.testing.assert_array_equal(get(sim, 0x1000, x.shape, I16), sat(want, I16))


def f32(v):
    return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("kind", ["quant.rq0", "quant.rq2"])
@pytest.mark.parametrize("f2i", [0, 1, 2, 3])
def test_rq0_float_scale_and_zero_point(kind, f2i):
    rng = np.random.default_rng(30 + f2i)
    shape = (1, 3, 2, 8)
    x = rng.integers(-3000, 3000, shape)
    scale = f32(rng.random(3) * 0.2)
    zp = f32(rng.integers(-5, 5, 3))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I16)
    put_params(sim, 0x8000, (f32(scale).astype(np.float32).view(np.uint32), zp.astype(np.float32).view(np.uint32)),
               None)
    sim, _ = run([rec("tiu", "sRQ&sDQ", kind, res0_n=1, res0_c=3, res0_h=2, res0_w=8, res0_addr=0x10000,
                      opd0_addr=0, opd1_addr=0x8000, opd0_prec=prec(I16), opd0_sign=1, res0_prec=prec(I8),
                      opd2_sign=1, opd2_n_str=f2i << 3)], sim)
    c = np.arange(3).reshape(1, -1, 1, 1)
    y = f32(f32(x * scale[c]) + zp[c])
    rnd = {0: np.rint, 1: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5), 2: np.trunc, 3: np.floor}[f2i]
    np.testing.assert_array_equal(get(sim, 0x10000, shape, I8), sat(rnd(y), I8))


@pytest.mark.parametrize("kind,r_dt", [("quant.dq0", FP32), ("quant.dq2", FP16), ("quant.dq2", BF16)])
def test_dq_float(kind, r_dt):
    rng = np.random.default_rng(40)
    shape = (1, 66, 1, 7)
    x = rand(rng, shape, I8)
    zp = rng.integers(-5, 5, 66)
    scale = f32(rng.random(66))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    put_params(sim, 0x8000, (zp, scale.astype(np.float32).view(np.uint32)), None)
    sim, _ = run([rec("tiu", "sRQ&sDQ", kind, res0_n=1, res0_c=66, res0_h=1, res0_w=7, res0_addr=0x10000,
                      opd0_addr=0, opd1_addr=0x8000, opd0_prec=prec(I8), opd0_sign=1, res0_prec=prec(r_dt))], sim)
    c = np.arange(66).reshape(1, -1, 1, 1)
    y = f32((x - zp[c]) * scale[c])
    if r_dt == BF16:            # round the fp32 value to the nearest even bf16
        bits = y.astype(np.float32).view(np.uint32).astype(np.int64)
        want = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    else:
        want = from_storage(to_storage(y, r_dt), r_dt)
    np.testing.assert_array_equal(get(sim, 0x10000, shape, r_dt), want)


@pytest.mark.parametrize("mode", [0, 1, 5])
def test_dq1_integer_dequantize_constant_form(mode):
    x = np.arange(-64, 64).reshape(1, 64, 1, 2)
    zp, shift, scale = 3, -2, 77
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, I8)
    sim, _ = run([rec("tiu", "sRQ&sDQ", "quant.dq1", res0_n=1, res0_c=64, res0_h=1, res0_w=2, res0_addr=0x1000,
                      opd0_addr=0, opd0_prec=prec(I8), opd0_sign=1, res0_prec=prec(I16), opd2_sign=1, opd1_const=1,
                      opd1_addr=(zp & 0xFFFF) | ((shift & 0xFFFF) << 16), opd2_addr=scale, opd2_n_str=mode)], sim)
    want = np.vectorize(lambda v: round_shift((v - zp) * scale, 2, mode))(x)
    np.testing.assert_array_equal(get(sim, 0x1000, x.shape, I16), sat(want, I16))


# -- SFU / LIN ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sfu.taylor", "sfu.taylor_4x"])
def test_taylor_with_the_exp_coefficients_is_exp(kind):
    """Coefficients 1/k! (the static table the cmodel writes) copied into every NPU: the
    polynomial by fp32 Horner steps; e^x to fp32 accuracy for |x| < 1."""
    rng = np.random.default_rng(50)
    x = f32(rng.uniform(-1, 1, (1, 70, 2, 9)))
    n = 12
    coeff = f32([1 / math.factorial(k) for k in range(n)])
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, FP32)
    put(sim, 0x8000, np.broadcast_to(coeff, (1, 64, 1, n)), FP32, (0, n, n, 1))
    sim, _ = run([rec("tiu", "sSFU", kind, res0_n=1, res0_c=70, res0_h=2, res0_w=9, opd1_n=n, res0_addr=0x10000,
                      opd0_addr=0, opd1_addr=0x8000, res0_prec=prec(FP32), opd0_prec=prec(FP32))], sim)
    acc = np.full(x.shape, np.float32(coeff[-1]), np.float32)
    for k in range(n - 2, -1, -1):
        acc = (acc * x.astype(np.float32)).astype(np.float32) + np.float32(coeff[k])
    got = get(sim, 0x10000, x.shape, FP32)
    np.testing.assert_array_equal(got, acc)
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)


def test_normalize_is_the_exponent_part_and_rsqrt():
    x = f32(np.array([1.0, 2.0, 0.75, 1e-30, 3e38, -8.0, 0.0, 1.5] * 8).reshape(1, 64, 1, 1))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, FP32)
    sim, _ = run([rec("tiu", "sSFU", "sfu.normalize", res0_n=1, res0_c=64, res0_h=1, res0_w=1, res0_addr=0x1000,
                      opd0_addr=0, res0_prec=prec(I32), opd0_prec=prec(FP32)),
                  rec("tiu", "sSFU", "sfu.rsqrt", res0_n=1, res0_c=64, res0_h=1, res0_w=1, res0_addr=0x2000,
                      opd0_addr=0, res0_prec=prec(FP32), opd0_prec=prec(FP32), opd2_n_str=2)], sim)
    bits = x.astype(np.float32).view(np.uint32).astype(np.int64)
    np.testing.assert_array_equal(get(sim, 0x1000, x.shape, I32), ((bits >> 23) & 0xFF) - 127)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(get(sim, 0x2000, x.shape, FP32), f32(1 / np.sqrt(x)))


@pytest.mark.parametrize("kind", ["lin.mac", "lin.square_sum", "lin.square_diff"])
@pytest.mark.parametrize("cls", ["LIN", "sLIN"])
def test_lin(kind, cls):
    rng = np.random.default_rng(60)
    shape = (2, 70, 3, 4)
    x = f32(rng.standard_normal(shape))
    a = f32(rng.standard_normal(70))
    b = f32(rng.standard_normal(70))
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, x, FP32)
    put(sim, 0x8000, a.reshape(1, 70, 1, 1), FP32, compact(0x8000, (1, 70, 1, 1)))
    sim, _ = run([rec("tiu", cls, kind, res0_n=2, res0_c=70, res0_h=3, res0_w=4, res0_addr=0x10000, opd0_addr=0,
                      opd1_addr=0x8000, opd2_const=1, opd2_addr=bits_of(float(b[0]), FP32), res0_prec=prec(FP32),
                      tsk_lane_num=(1 << 64) - 1)], sim)
    av = a.reshape(1, -1, 1, 1)
    want = {"lin.mac": x * av + b[0], "lin.square_sum": (x + av) ** 2, "lin.square_diff": (x - av) ** 2}[kind]
    np.testing.assert_array_equal(get(sim, 0x10000, shape, FP32), f32(want))


# -- SYSID --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [i.name for i in CHIP.engine("tiu").cls("SYSID").instructions])
def test_sysid_changes_no_memory(kind):
    rng = np.random.default_rng(70)
    data = rng.integers(0, 256, 0x1000, dtype=np.uint8).tobytes()
    sim = bmk.Simulator("bm1684x")
    sim.lmem_write(0, data)
    sim, report = run([rec("tiu", "SYSID", kind)], sim)
    assert sim.lmem_read(0, 0x1000) == data and report.instructions[0].kind == kind


# -- VC div, mulDHR -----------------------------------------------------------------------------
def test_vc_div_and_mul_dhr():
    """vc.div: the correctly rounded fp32 quotient of every pair; vc.mulDHR: the rounding
    doubling high multiply (int16), rounded half away from zero (opd2_n_str 1)."""
    from tests.chips.bm1684x.sim.test_cmp_vc import vc
    rng = np.random.default_rng(80)
    x, y = f32(rng.standard_normal(30)), f32(rng.standard_normal(20) + 3)
    out = vc("vc.div", "sVC", x, y, 8, 16, FP32, FP32)
    np.testing.assert_array_equal(out, f32(x[:, None] / y[None, :]))
    a, b = rand(rng, (30,), I16), rand(rng, (20,), I16)
    sim_out = _vc_dhr(a, b)
    want = np.vectorize(lambda p, q: round_shift(2 * int(p) * int(q), 16, 1))(a[:, None], b[None, :])
    np.testing.assert_array_equal(sim_out, sat(want, I16))


def _vc_dhr(a, b):
    from tests.chips.bm1684x.sim.test_cmp_vc import matrix_get, vector_put
    sim = bmk.Simulator("bm1684x")
    vector_put(sim, 0, a, 8, I16)
    vector_put(sim, 0x1000, b, 16, I16)
    sim, _ = run([rec("tiu", "sVC", "vc.mulDHR", opd0_addr=0, opd1_addr=0x1000, res0_addr=0x2000, opd0_c=4, opd0_w=8,
                      opd1_w=6, res0_c=2, res0_w=16, opd0_prec=prec(I16), opd1_prec=prec(I16), res0_prec=prec(I16),
                      opd0_sign=1, opd1_sign=1, opd2_n_str=1)], sim)
    return matrix_get(sim, 0x2000, 30, 20, 16, I16)


@pytest.mark.parametrize("table_shape, idx_shape", [((1, 4, 1, 7), (3, 4, 1, 5)), ((2, 3, 1, 6), (2, 3, 1, 9)),
                                                    ((1, 1, 1, 4), (2, 5, 1, 3)), ((4, 1, 8), (1, 6, 8)),
                                                    ((0, 4, 1, 7), (0, 4, 1, 5)), ((1, 4, 1, 7), (1, 4, 1, 0))])
def test_take_last_is_take_along_axis(table_shape, idx_shape):
    """sg.take_last (the gathers' one flat take) against numpy's take_along_axis on the two
    broadcast together: shapes, dtype and values, empty ones included."""
    from bmk.sim.bm1684x.sg import take_last
    rng = np.random.default_rng(sum(table_shape + idx_shape))
    table = rng.integers(-100, 100, table_shape).astype(np.int16)
    idx = rng.integers(0, table_shape[-1], idx_shape)
    lead = np.broadcast_shapes(table_shape[:-1], idx_shape[:-1])
    want = np.take_along_axis(np.broadcast_to(table, lead + table_shape[-1:]),
                              np.broadcast_to(idx, lead + idx_shape[-1:]), axis=-1)
    got = take_last(table, idx)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
