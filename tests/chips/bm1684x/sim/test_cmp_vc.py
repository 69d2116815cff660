"""CMP and VC kinds (long and short) against numpy references from seed 001's formulas:
comparisons writing true_val or 0 in the destination dtype; vc_* vectors in, matrix out, the
vectors spanning several NPUs and channel groups."""
import numpy as np
import pytest

import bmk
from tests.chips.bm1684x.sim.helpers import FLOATS, INTS, LANE, bits_of, get, prec, put, rand, rec, run, sat, sign, wrap

I8, U8, I16, U16, I32, U32 = INTS
REL = {"gt": np.greater, "eq": np.equal, "lt": np.less}


def cmp(kind, cls, a, b, src, dst, true_val, false_val=0, **extra):
    shape = np.shape(a)
    sim = bmk.Simulator("bm1684x")
    put(sim, 0, a, src)
    put(sim, 0x8000, b, src)
    fields = dict(res0_n=shape[0], res0_c=shape[1], res0_h=shape[2], res0_w=shape[3], res0_addr=0x10000,
                  res1_addr=0x18000, opd0_addr=0, opd1_addr=0x8000, opd0_prec=prec(src), opd1_prec=prec(src),
                  opd0_sign=sign(src), opd1_sign=sign(src), res0_prec=prec(dst), opd2_prec=prec(dst),
                  opd2_sign=sign(dst), opd2_const=1, opd3_const=1, opd2_addr=bits_of(true_val, dst),
                  opd3_addr=bits_of(false_val, dst), tsk_opd_num=2)
    fields.update(extra)
    sim, _ = run([rec("tiu", cls, kind, **fields)], sim)
    return sim


COMBOS = [(s, d) for s in INTS + FLOATS for d in INTS + FLOATS if d.bits <= s.bits]


@pytest.mark.parametrize("cls", ["CMP", "sCMP"])
@pytest.mark.parametrize("src,dst", COMBOS, ids=str)
def test_sel(cls, src, dst):
    rng = np.random.default_rng(hash((cls, src.name, dst.name)) % 2**32)
    shape = (2, 65, 1, 3)
    a = rand(rng, shape, src)
    b = np.where(rng.random(shape) < 0.3, a, rand(rng, shape, src))
    for rel in ("gt", "eq", "lt"):
        for tv in (dst.min, dst.max):
            sim = cmp(f"cmp.sel_{rel}", cls, a, b, src, dst, tv)
            np.testing.assert_array_equal(get(sim, 0x10000, shape, dst), np.where(REL[rel](a, b), tv, 0))


@pytest.mark.parametrize("cls", ["CMP", "sCMP"])
@pytest.mark.parametrize("rel", ["gt", "lt"])
def test_and_sel_writes_winner_and_selection(cls, rel):
    rng = np.random.default_rng(11)
    shape = (1, 70, 2, 2)
    a, b = rand(rng, shape, I16), rand(rng, shape, I16)
    sim = cmp(f"cmp.{rel}_and_sel", cls, a, b, I16, U8, 200, 7)
    hit = REL[rel](a, b)
    np.testing.assert_array_equal(get(sim, 0x10000, shape, I16), np.where(hit, a, b))
    np.testing.assert_array_equal(get(sim, 0x18000, shape, U8), np.where(hit, 200, 7))


# -- VC -------------------------------------------------------------------------------------
def vector_put(sim, addr, v, w, dt):
    """A vector of length L, w per channel: the aligned tensor (1, ceil(L/w), 1, w)."""
    c = -(-len(v) // w)
    buf = np.zeros(c * w, np.float64 if dt.is_float else np.int64)
    buf[:len(v)] = v
    put(sim, addr, buf.reshape(1, c, 1, w), dt)


def matrix_get(sim, addr, rows, cols, w, dt):
    """A (rows, cols) matrix with w columns per channel: the aligned tensor (rows, ceil(cols/w), 1, w)."""
    c = -(-cols // w)
    return get(sim, addr, (rows, c, 1, w), dt).reshape(rows, c * w)[:, :cols]


def vc(kind, cls, x, y, w0, w1, src, dst, *, true_val=0, x_addr=3 * LANE, y_addr=62 * LANE, d_addr=62 * LANE + 0x8000):
    sim = bmk.Simulator("bm1684x")
    vector_put(sim, x_addr, x, w0, src)
    vector_put(sim, y_addr, y, w1, src)
    c0 = -(-len(x) // w0)
    fields = dict(opd0_addr=x_addr, opd1_addr=y_addr, res0_addr=d_addr, opd0_c=c0, opd0_w=w0,
                  opd1_w=len(x) - (c0 - 1) * w0, res0_c=-(-len(y) // w1), res0_w=w1, opd0_prec=prec(src),
                  opd1_prec=prec(src), res0_prec=prec(dst), opd0_sign=sign(src), opd1_sign=sign(src),
                  opd2_addr=bits_of(true_val, dst), opd2_prec=prec(dst), opd2_sign=sign(dst), opd2_const=1,
                  tsk_opd_num=2)
    sim, report = run([rec("tiu", cls, kind, **fields)], sim)
    return matrix_get(sim, d_addr, len(x), len(y), w1, dst)


VC_OPS = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "max": np.maximum,
          "min": np.minimum}


@pytest.mark.parametrize("cls", ["VC", "sVC"])
@pytest.mark.parametrize("dt,op", [(d, o) for d in INTS + FLOATS for o in VC_OPS
                                   if not (d.is_float and o in ("and", "or", "xor"))], ids=str)
def test_vc_binary(cls, dt, op):
    """dst(m, n) = src0(m) op src1(n); src0 100 long over 7 channels from NPU 3, src1 150 long
    over 5 channels from NPU 62 (two channel groups), as the matrix."""
    rng = np.random.default_rng(hash((cls, dt.name, op)) % 2**32)
    x, y = rand(rng, (100,), dt), rand(rng, (150,), dt)
    out = vc(f"vc.{op}", cls, x, y, 16, 32, dt, dt)
    ref = VC_OPS[op](x[:, None], y[None, :])
    np.testing.assert_array_equal(out, wrap(ref, dt) if not dt.is_float else ref)


@pytest.mark.parametrize("cls", ["VC", "sVC"])
@pytest.mark.parametrize("src,dst", COMBOS, ids=str)
def test_vc_compare_true_val(cls, src, dst):
    rng = np.random.default_rng(hash((cls, src.name, dst.name, "v")) % 2**32)
    x, y = rand(rng, (70,), src), rand(rng, (90,), src)
    y[:20] = x[:20]
    for kind, rel in (("vc.select_gt", "gt"), ("vc.select_eq", "eq"), ("vc.select_lt", "lt")):
        for tv in (dst.min, dst.max):
            out = vc(kind, cls, x, y, 8, 64, src, dst, true_val=tv)
            np.testing.assert_array_equal(out, np.where(REL[rel](x[:, None], y[None, :]), tv, 0))


@pytest.mark.parametrize("cls", ["VC", "sVC"])
@pytest.mark.parametrize("dt", INTS, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "add_satu", "sub_satu", "mul_satu"])
def test_vc_arith(cls, dt, op):
    rng = np.random.default_rng(hash((cls, dt.name, op)) % 2**32)
    x, y = rand(rng, (40,), dt), rand(rng, (33,), dt)
    if op == "mul_satu" and dt == U32:
        y %= 65536
    base = op.split("_")[0]
    exact = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[base](x.astype(object)[:, None],
                                                                          y.astype(object)[None, :])
    out = vc(f"vc.{op}", cls, x, y, 16, 16, dt, dt)
    if op.endswith("satu"):
        ref = np.array([[min(max(v, dt.min), dt.max) for v in row] for row in exact], np.int64)
    else:
        ref = np.array([[(int(v) % (1 << dt.bits)) for v in row] for row in exact], np.int64)
        ref = wrap(ref, dt)
    np.testing.assert_array_equal(out, ref)
    assert sat(out, dt).tolist() == out.tolist()
