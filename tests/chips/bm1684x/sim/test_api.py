"""End to end through the TPU-Kernel API (bmk.bm1684x): every seed-001 function and
gdma_cpy_* for every dtype combination the remarks allow, short and long command forms:
numpy data -> gmem -> gdma_cpy_S2L -> bdc_* -> gdma_cpy_L2S -> acquire_streams() (raw
streams with their end commands) -> Simulator -> gmem -> numpy references written from the
seed's formulas."""
import itertools

import numpy as np
import pytest

import bmk
from bmk import bm1684x
from bmk.bm1684x.constants import FLOAT_DTYPES, INTEGER_DTYPES, WHOLE_BYTE_DTYPES, dtype_of
from tests.chips.bm1684x.sim.helpers import GLOBAL_BASE, from_storage, rand, round_shift, to_storage

LANE = bm1684x.local_mem_size_per_npu()
FORMS = ("short", "long")
UNSIGNED = (bm1684x.DT_UINT8, bm1684x.DT_UINT16, bm1684x.DT_UINT32)
SHIFT_DTYPES = (bm1684x.DT_INT8, bm1684x.DT_INT16, bm1684x.DT_INT32)


class Kernel:
    """A context and a simulator: inputs go in through gmem and S2L, results out through L2S."""

    def __init__(self, form, shape):
        self.ctx = bm1684x.Context(long_form=form == "long")
        self.sim = bmk.Simulator("bm1684x")
        self.shape = shape
        self.gnext = GLOBAL_BASE
        self.outs = []

    def _galloc(self, nbytes):
        addr = self.gnext
        self.gnext += -(-nbytes // 4096) * 4096
        return addr

    def load(self, laddr, values, code, shape=None):
        shape = shape or self.shape
        dt = dtype_of(code)
        g = self._galloc(int(np.prod(shape)) * dt.itemsize)
        self.sim.gmem_write(g, to_storage(np.asarray(values).reshape(shape), dt))
        self.ctx.gdma_cpy_S2L(laddr, g, shape, None, None, code)

    def store(self, laddr, code, shape=None, stride=None):
        shape = shape or self.shape
        dt = dtype_of(code)
        g = self._galloc(int(np.prod(shape)) * dt.itemsize)
        self.ctx.gdma_cpy_L2S(g, laddr, shape, None, stride, code)
        self.outs.append((g, shape, dt))
        return len(self.outs) - 1

    def run(self):
        report = self.sim.run(self.ctx.acquire_streams())
        assert report.races == ()
        out = []
        for g, shape, dt in self.outs:
            raw = np.frombuffer(self.sim.gmem_read(g, int(np.prod(shape)) * dt.itemsize), dt.numpy).reshape(shape)
            out.append(from_storage(raw, dt))
        return out


SHAPE = (2, 67, 3, 5)      # 67 channels: two channel groups from NPU 0
A, B, D = 0, 0x8000, 0x10000


def _seed(*parts):
    return hash(tuple(str(p) for p in parts)) % 2**32


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("code", WHOLE_BYTE_DTYPES, ids=lambda c: bm1684x.constants.dtype_name(c))
def test_binary_functions(form, code):
    """and, or, xor (integers), min, max (every type), each with its _C form."""
    dt = dtype_of(code)
    rng = np.random.default_rng(_seed(form, code))
    a, b = rand(rng, SHAPE, dt), rand(rng, SHAPE, dt)
    c = a.reshape(-1)[7].item()
    ops = {"max": np.maximum, "min": np.minimum}
    if not dt.is_float:
        ops.update({"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor})
    k = Kernel(form, SHAPE)
    k.load(A, a, code)
    k.load(B, b, code)
    want = []
    for i, (name, fn) in enumerate(ops.items()):
        out0, out1 = D + i * 0x4000, D + i * 0x4000 + 0x2000
        getattr(k.ctx, f"bdc_{name}")(out0, A, B, SHAPE, None, None, None, code)
        getattr(k.ctx, f"bdc_{name}_C")(out1, A, c, SHAPE, None, None, code)
        want += [(k.store(out0, code), fn(a, b)), (k.store(out1, code), fn(a, c))]
    got = k.run()
    for idx, ref in want:
        np.testing.assert_array_equal(got[idx], ref)


@pytest.mark.parametrize("code, bits", [(bm1684x.DT_FP32, np.uint32), (bm1684x.DT_FP16, np.uint16)],
                         ids=["fp32", "fp16"])
def test_bitwise_functions_of_floats_compute_on_their_bits(code, bits):
    """Issue 18: and, or, xor of a float dtype (encoded as the integer of its width) give the
    bitwise result of the float bit patterns, tensor and _C forms."""
    dt = dtype_of(code)
    rng = np.random.default_rng(_seed("float-bitwise", code))
    a, b = rand(rng, SHAPE, dt), rand(rng, SHAPE, dt)
    c = -2.5
    c_bits = np.array([c], dt.numpy).view(bits)[0]
    k = Kernel("short", SHAPE)
    k.load(A, a, code)
    k.load(B, b, code)
    want = []
    for i, (name, fn) in enumerate({"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.items()):
        out0, out1 = D + i * 0x4000, D + i * 0x4000 + 0x2000
        getattr(k.ctx, f"bdc_{name}")(out0, A, B, SHAPE, None, None, None, code)
        getattr(k.ctx, f"bdc_{name}_C")(out1, A, c, SHAPE, None, None, code)
        av, bv = a.astype(dt.numpy).view(bits), b.astype(dt.numpy).view(bits)
        want += [(k.store(out0, code), fn(av, bv)), (k.store(out1, code), fn(av, c_bits))]
    assert k.sim.run(k.ctx.acquire_streams()).races == ()
    for idx, ref in want:           # the raw bits (a float conversion would quiet signalling NaNs)
        g, shape, _ = k.outs[idx]
        raw = np.frombuffer(k.sim.gmem_read(g, int(np.prod(shape)) * dt.itemsize), bits).reshape(shape)
        np.testing.assert_array_equal(raw, ref)


def _shift_ref(x, s, src, dst, mode, logical):
    """Seed 001: dst = src << shift exactly (a logical shift reads src unsigned, which the
    checks make it), or src >> -shift rounded by the mode; saturated to dst."""
    if s > 0:
        v = int(x) << int(s)
    else:
        v = round_shift(int(x), -int(s), mode)
    return min(max(v, dst.min), dst.max)


SHIFTS = [(d, s, sh) for s in INTEGER_DTYPES for d in INTEGER_DTYPES for sh in SHIFT_DTYPES
          if (d & 1) == (s & 1) and dtype_of(sh).bits <= dtype_of(s).bits]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dst,src,shift", SHIFTS, ids=lambda c: bm1684x.constants.dtype_name(c))
def test_shifts(form, dst, src, shift):
    """arithmetic_shift (+_C) for every allowed (dst, src, shift) dtype combination, and
    logical_shift (+_C) for the unsigned ones; shifts by -32 and 31 included, a rounding mode
    per call."""
    d_dt, s_dt, sh_dt = dtype_of(dst), dtype_of(src), dtype_of(shift)
    rng = np.random.default_rng(_seed(form, dst, src, shift))
    shape = (1, 70, 2, 3)
    x = rand(rng, shape, s_dt)
    s = rng.integers(max(sh_dt.min, -32), min(sh_dt.max, 31), shape, endpoint=True)
    s.reshape(-1)[:4] = (-32, 31, 0, -1)
    k = Kernel(form, shape)
    k.load(A, x, src)
    k.load(B, s, shift)
    calls = [("arithmetic", False)] + ([("logical", True)] if src in UNSIGNED else [])
    want = []
    for j, (name, logical) in enumerate(calls):
        mode, cmode, c = int(rng.integers(0, 7)), int(rng.integers(0, 7)), int(rng.choice([-32, 31, -3, 5]))
        o0, o1 = D + j * 0x4000, D + j * 0x4000 + 0x2000
        getattr(k.ctx, f"bdc_{name}_shift")(o0, A, B, shape, None, None, None, dst, src, shift, mode)
        getattr(k.ctx, f"bdc_{name}_shift_C")(o1, A, c, shape, None, None, dst, src, cmode)
        ref0 = np.vectorize(lambda v, n: _shift_ref(v, n, s_dt, d_dt, mode, logical))(x, s)
        ref1 = np.vectorize(lambda v: _shift_ref(v, c, s_dt, d_dt, cmode, logical))(x)
        want += [(k.store(o0, dst, shape), ref0), (k.store(o1, dst, shape), ref1)]
    got = k.run()
    for idx, ref in want:
        np.testing.assert_array_equal(got[idx], ref)


CMP_COMBOS = [(d, s) for s in WHOLE_BYTE_DTYPES for d in WHOLE_BYTE_DTYPES if dtype_of(d).bits <= dtype_of(s).bits]
RELATIONS = {"greater": np.greater, "less": np.less, "equal": np.equal, "greater_equal": np.greater_equal,
             "less_equal": np.less_equal, "not_equal": np.not_equal}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dst,src", CMP_COMBOS, ids=lambda c: bm1684x.constants.dtype_name(c))
def test_comparisons(form, dst, src):
    """The six comparisons and their _C forms: true_val (at dst's bounds) or 0 in dst_dtype."""
    d_dt, s_dt = dtype_of(dst), dtype_of(src)
    rng = np.random.default_rng(_seed(form, dst, src))
    shape = (1, 66, 2, 4)
    a = rand(rng, shape, s_dt)
    b = np.where(rng.random(shape) < 0.3, a, rand(rng, shape, s_dt))
    c = a.reshape(-1)[3].item()
    k = Kernel(form, shape)
    k.load(A, a, src)
    k.load(B, b, src)
    want = []
    for j, (name, rel) in enumerate(RELATIONS.items()):
        tv = (d_dt.min, d_dt.max)[j % 2]
        o0, o1 = D + j * 0x4000, D + j * 0x4000 + 0x2000
        getattr(k.ctx, f"bdc_{name}")(o0, A, B, tv, shape, None, None, None, dst, src)
        getattr(k.ctx, f"bdc_{name}_C")(o1, A, c, tv, shape, None, None, dst, src)
        want += [(k.store(o0, dst, shape), np.where(rel(a, b), tv, 0)),
                 (k.store(o1, dst, shape), np.where(rel(a, c), tv, 0))]
    got = k.run()
    for idx, ref in want:
        np.testing.assert_array_equal(got[idx], ref)


def _matrix_get(k, addr, rows, cols, w, code):
    c = -(-cols // w)
    return k.store(addr, code, (rows, c, 1, w)), (rows, c * w, cols)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("code", WHOLE_BYTE_DTYPES, ids=lambda c: bm1684x.constants.dtype_name(c))
def test_vc_binary(form, code):
    """vc_and/or/xor (integers), vc_max/min: dst(m, n) = src0(m) op src1(n); src0 (90, 16 per
    channel, from NPU 2) and src1 (130, 32 per channel, from NPU 63: two groups)."""
    dt = dtype_of(code)
    rng = np.random.default_rng(_seed(form, code, "vc"))
    len0, len1, w0, w1 = 90, 130, 16, 32
    x, y = rand(rng, (len0,), dt), rand(rng, (len1,), dt)
    k = Kernel(form, None)
    xa, ya = 2 * LANE, 63 * LANE
    k.load(xa, np.resize(x, 6 * w0), code, (1, 6, 1, w0))
    k.load(ya, np.resize(y, 5 * w1), code, (1, 5, 1, w1))
    ops = {"max": np.maximum, "min": np.minimum}
    if not dt.is_float:
        ops.update({"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor})
    want = []
    for j, (name, fn) in enumerate(ops.items()):
        d = 63 * LANE + 0x2000 + j * 0x8000
        getattr(k.ctx, f"bdc_vc_{name}")(d, xa, ya, len0, len1, w0, w1, code)
        want.append((_matrix_get(k, d, len0, len1, w1, code), fn(x[:, None], y[None, :])))
    got = k.run()
    for (idx, (rows, width, cols)), ref in want:
        np.testing.assert_array_equal(got[idx].reshape(rows, width)[:, :cols], ref)


VC_RELATIONS = {"greater": np.greater, "less": np.less, "equal": np.equal, "greater_equal": np.greater_equal,
                "less_equal": np.less_equal, "not_equal": np.not_equal}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dst,src", CMP_COMBOS, ids=lambda c: bm1684x.constants.dtype_name(c))
def test_vc_comparisons(form, dst, src):
    d_dt, s_dt = dtype_of(dst), dtype_of(src)
    rng = np.random.default_rng(_seed(form, dst, src, "vcc"))
    len0, len1, w0, w1 = 40, 70, 8, 64
    x, y = rand(rng, (len0,), s_dt), rand(rng, (len1,), s_dt)
    y[:15] = x[:15]
    k = Kernel(form, None)
    xa, ya = 5 * LANE, 60 * LANE
    k.load(xa, x, src, (1, 5, 1, w0))
    k.load(ya, np.resize(y, 2 * w1), src, (1, 2, 1, w1))
    want = []
    for j, (name, rel) in enumerate(VC_RELATIONS.items()):
        tv = (d_dt.min, d_dt.max)[j % 2]
        d = 60 * LANE + 0x1000 + j * 0x4000
        getattr(k.ctx, f"bdc_vc_{name}")(d, xa, ya, tv, len0, len1, w0, w1, dst, src)
        want.append((_matrix_get(k, d, len0, len1, w1, dst), np.where(rel(x[:, None], y[None, :]), tv, 0)))
    got = k.run()
    for (idx, (rows, width, cols)), ref in want:
        np.testing.assert_array_equal(got[idx].reshape(rows, width)[:, :cols], ref)


@pytest.mark.parametrize("code", WHOLE_BYTE_DTYPES, ids=lambda c: bm1684x.constants.dtype_name(c))
def test_gdma_copies_every_direction(code):
    """S2L, L2L (free strides, another NPU), L2S, S2S (strided) through the API."""
    dt = dtype_of(code)
    rng = np.random.default_rng(_seed(code, "dma"))
    shape = (2, 5, 3, 7)
    x = rand(rng, shape, dt)
    k = Kernel("short", shape)
    k.load(3 * LANE + 0x40, x, code)
    free = (120, 24, 8, 1)
    k.ctx.gdma_cpy_L2L(9 * LANE + 0x1000, 3 * LANE + 0x40, shape, free, None, code)
    first = k.store(9 * LANE + 0x1000, code, stride=free)
    g_src = k.outs[first][0]
    g_dst = k._galloc(4096 * 4)
    wide = (400, 70, 21, 3)
    k.ctx.gdma_cpy_S2S(g_dst, g_src, shape, wide, None, code)
    got = k.run()
    np.testing.assert_array_equal(got[first], x)
    e = dt.itemsize
    idx = np.indices(shape).reshape(4, -1).T @ np.array(wide)
    raw = b"".join(k.sim.gmem_read(g_dst + int(o) * e, e) for o in idx)
    np.testing.assert_array_equal(from_storage(np.frombuffer(raw, dt.numpy), dt).reshape(shape), x)


def test_parallel_section_and_poll_keep_results_and_overlap():
    """Loads of the next tile inside parallel_start/end overlap the TIU; poll orders them."""
    code = bm1684x.DT_INT16
    dt = dtype_of(code)
    shape = (1, 64, 8, 16)
    rng = np.random.default_rng(9)
    tiles = [rand(rng, shape, dt) for _ in range(2)]
    k = Kernel("short", shape)
    k.load(0, tiles[0], code)
    k.ctx.parallel_start()
    k.ctx.bdc_max_C(0x8000, 0, -5, shape, None, None, code)
    k.load(0x4000, tiles[1], code)
    k.ctx.parallel_end()
    k.ctx.bdc_max_C(0xC000, 0x4000, -5, shape, None, None, code)
    k.ctx.poll()
    o0, o1 = k.store(0x8000, code), k.store(0xC000, code)
    got = k.run()
    np.testing.assert_array_equal(got[o0], np.maximum(tiles[0], -5))
    np.testing.assert_array_equal(got[o1], np.maximum(tiles[1], -5))
    assert k.sim.last_report.overlap_cycles > 0


def test_every_function_is_exercised():
    """The tests above call every seed-001 function and gdma_cpy_* of the API."""
    names = {n for n in dir(bm1684x.Context) if n.startswith(("bdc_", "gdma_cpy_"))}
    covered = {f"bdc_{o}{c}" for o in ("and", "or", "xor", "min", "max") for c in ("", "_C")}
    covered |= {f"bdc_{k}_shift{c}" for k in ("arithmetic", "logical") for c in ("", "_C")}
    covered |= {f"bdc_{r}{c}" for r in RELATIONS for c in ("", "_C")}
    covered |= {f"bdc_vc_{o}" for o in ("and", "or", "xor", "min", "max", *VC_RELATIONS)}
    covered |= {f"gdma_cpy_{d}" for d in ("S2L", "L2S", "L2L", "S2S")}
    assert names == covered
    assert len(names) == 41
    assert list(itertools.chain(INTEGER_DTYPES, FLOAT_DTYPES)) == list(WHOLE_BYTE_DTYPES)
