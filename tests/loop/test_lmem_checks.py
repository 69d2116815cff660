"""Issue 22.5 (simulator): local-memory warnings (bmk/sim/lmemcheck.py) in the Report, with the
instruction index and its origin: a read of local bytes never written, and a dead write onto a
live tensor that a later instruction reads as if unchanged (the 67-channel tensor from NPU 10
whose wrapped channels land on a buffer of NPU 0). strict=True / bmk-run --strict fail on them;
m.run checks nothing; no warning on programs that do it right (in place, fill then load, reuse
after the last read) nor on the vendor's bm1684 models."""
import numpy as np
import pytest
from click.testing import CliRunner

import bmk
from bmk import bm1684, bm1684x
from bmk.cli.main import run as run_cli
from bmk.sim.report import OVERWRITTEN, UNINITIALIZED
from tests.models.files import FACE_DETECTION, FACE_INT8, YUV2RGB

G = 0x100000000
LANE = bm1684x.local_mem_size_per_npu()
I8 = bm1684x.DT_INT8
SMALL = bm1684x.dim4(1, 8, 1, 16)
X = bm1684x.dim4(1, 4, 1, 16)               # a buffer on NPUs 0..3
WRAPPED = bm1684x.dim4(1, 67, 1, 16)        # from NPU 10: channels 54..66 on NPUs 0..12, slot 1


def _sim(chip="bm1684x"):
    sim = bmk.Simulator(chip)
    sim.gmem_write(G, np.arange(1, 1 + 0x2000, dtype=np.int64).astype(np.int8))     # loads change bytes
    return sim


def _run(ctx, **kw):
    sim = _sim(ctx.chip.name)
    return sim, sim.run(ctx.acquire_cmdbuf(), **kw).named(ctx.origins())


def _uninitialized():
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0, G, SMALL, None, None, I8)
    ctx.bdc_and(0x1000, 0, 0x2000, SMALL, None, None, None, I8)      # src1 at 0x2000: never written
    ctx.gdma_cpy_L2S(G + 0x4000, 0x1000, SMALL, None, None, I8)
    return ctx


def _clobbered():
    """X loaded at NPU 0 offset 64, then the wrapped tensor at NPU 10 offset 0, then X stored."""
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(64, G, X, None, None, I8)
    ctx.gdma_cpy_S2L(10 * LANE, G + 0x1000, WRAPPED, None, None, I8)
    ctx.gdma_cpy_L2S(G + 0x4000, 64, X, None, None, I8)
    ctx.gdma_cpy_L2S(G + 0x5000, 10 * LANE, WRAPPED, None, None, I8)
    return ctx


def test_read_of_local_memory_never_written():
    sim, report = _run(_uninitialized())
    (w,) = report.warnings
    assert (w.kind, w.index, w.lanes, w.lo, w.hi) == (UNINITIALIZED, 1, tuple(range(8)), 0x2000, 0x2010)
    assert str(w).startswith("instruction 1 (test_lmem_checks.py:")
    assert "bdc_and(0x1000, 0, 0x2000, dim4(n=1, c=8, h=1, w=16), None, None, None, DT_INT8)) reads lmem " \
           "lanes 0-7 offsets [0x2000, 0x2010), never written" in str(w)
    assert "warning: instruction 1 (" in str(report)
    assert report.to_dict()["warnings"][0]["kind"] == "uninitialized"


def test_host_writes_count_as_written():
    ctx = _uninitialized()
    sim = bmk.Simulator("bm1684x")
    sim.lmem_write(0x2000, bytes(16))                   # NPU 0 only
    (w,) = sim.run(ctx.acquire_cmdbuf()).warnings
    assert w.lanes == tuple(range(1, 8))
    for lane in range(8):
        sim.lmem_write(lane * LANE + 0x2000, bytes(16))
    assert sim.run(ctx.acquire_cmdbuf()).warnings == ()       # and the first run's writes count too


def test_wrapped_channels_overwriting_a_live_buffer():
    sim, report = _run(_clobbered())
    (w,) = report.warnings
    assert (w.kind, w.index, w.writer, w.clobber) == (OVERWRITTEN, 2, 0, 1)
    assert (w.lanes, w.lo, w.hi) == ((0, 1, 2, 3), 0x40, 0x50)
    text = str(w)
    assert text.startswith("instruction 2 (test_lmem_checks.py:")
    assert "reads the tensor instruction 0 (test_lmem_checks.py:" in text
    assert "but instruction 1 (test_lmem_checks.py:" in text
    assert "gdma_cpy_S2L(0x280000, 0x100001000, dim4(n=1, c=67, h=1, w=16), None, None, DT_INT8)) overwrote its " \
           "lmem lanes 0-3 offsets [0x40, 0x50) in between (and wrote outside it)" in text
    assert report.races == ()


def test_the_allocator_placement_has_no_warning():
    ctx = bm1684x.Context()
    x = ctx.tl_alloc(X, I8)
    t = ctx.tl_alloc(WRAPPED, I8, start_npu=10)
    ctx.gdma_cpy_S2L(x.addr, G, x.shape, x.stride, None, I8)
    ctx.gdma_cpy_S2L(t.addr, G + 0x1000, t.shape, t.stride, None, I8)
    ctx.gdma_cpy_L2S(G + 0x4000, x.addr, x.shape, None, x.stride, I8)
    ctx.gdma_cpy_L2S(G + 0x5000, t.addr, t.shape, None, t.stride, I8)    # reads the wrapped slots exactly
    sim, report = _run(ctx)
    assert report.warnings == ()
    assert sim.gmem_read(G + 0x4000, 64) == sim.gmem_read(G, 64)


def test_strict_is_a_simulation_error_after_the_run():
    sim = _sim()
    with pytest.raises(bmk.SimulationError) as e:
        sim.run(_clobbered().acquire_cmdbuf(), strict=True)
    assert str(e.value) == ("run: strict: 1 local-memory warning, the first: instruction 2 reads the tensor "
                            "instruction 0 wrote, but instruction 1 overwrote its lmem lanes 0-3 offsets [0x40, 0x50) "
                            "in between (and wrote outside it)")
    assert sim.last_report.warnings[0].kind == OVERWRITTEN
    with pytest.raises(bmk.SimulationError, match="run: strict: 1 local-memory warning, the first: instruction 1 "):
        bmk.Simulator("bm1684x").run(_uninitialized().acquire_cmdbuf(), races=False, strict=True)


def test_checks_off_without_races_or_when_asked():
    assert len(_sim().run(_clobbered().acquire_cmdbuf()).warnings) == 1
    assert _sim().run(_clobbered().acquire_cmdbuf(), races=False).warnings == ()
    assert _sim().run(_clobbered().acquire_cmdbuf(), checks=False).warnings == ()
    sim = bmk.Simulator("bm1684x")
    sim.run(_uninitialized().acquire_cmdbuf(), races=False)          # unchecked: anything may be written now
    assert sim.run(_uninitialized().acquire_cmdbuf()).warnings == ()
    sim.reset()
    assert len(sim.run(_uninitialized().acquire_cmdbuf()).warnings) == 1


def test_no_warning_when_done_right():
    ctx = bm1684.Context()
    s, big = bm1684.dim4(1, 8, 4, 8), bm1684.dim4(1, 8, 6, 8)
    # fill a padded buffer, then load into its middle rows (inside it), then read it all
    ctx.gdma_32bit_set_C_local(0x4000, 0.0, big, None)
    ctx.gdma_32bit_cpy_S2L(0x4000 + 8 * 4, G, s, (64, 64, 8, 1), None)
    ctx.gdma_32bit_cpy_L2S(G + 0x8000, 0x4000, big, None, None)
    # in place, the result straddling its source: a + a into the same bytes and past them
    ctx.gdma_32bit_cpy_S2L(0, G, s, None, None)
    ctx.bdc_add(0, 0, 0, s, None, None, None)
    # a buffer reused after its last read by a tensor straddling it
    ctx.gdma_32bit_cpy_L2S(G + 0x9000, 0, s, None, None)
    ctx.gdma_32bit_cpy_S2L(0, G + 0x100, bm1684.dim4(1, 8, 8, 8), None, None)
    ctx.gdma_32bit_cpy_L2S(G + 0xa000, 0, s, None, None)
    sim, report = _run(ctx)
    assert report.warnings == () and report.races == ()


def test_bm1684_4n_tensor_half_loaded_reads_uninitialized():
    ctx = bm1684.Context()
    s = bm1684.dim4(4, 4, 2, 2)
    ctx.gdma_8bit_cpy_S2L(0, G, bm1684.dim4(4, 4, 1, 2), bm1684.aligned_stride_for_8bit(0, s), None)   # row 0 only
    ctx.gdma_8bit_cpy_L2S(G + 0x1000, 0, s, None, None)
    (w,) = _run(ctx)[1].warnings
    assert (w.kind, w.index, w.lanes, w.lo, w.hi) == (UNINITIALIZED, 1, (0, 1, 2, 3), 8, 16)


def test_cli_strict_exits_2_with_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ctx = _clobbered()
    ctx.save("k.cmdbuf")                                   # with its origins beside it
    np.save("g.npy", np.arange(1, 1 + 0x2000, dtype=np.int64).astype(np.int8))
    runner = CliRunner()
    res = runner.invoke(run_cli, ["k.cmdbuf", "--gmem", f"{G:#x}=g.npy"])
    assert res.exit_code == 0, res.stderr
    assert "local-memory warnings: 1" in res.stdout and "  warning: instruction 2 (test_lmem_checks.py:" in res.stdout
    res = runner.invoke(run_cli, ["k.cmdbuf", "--gmem", f"{G:#x}=g.npy", "--strict"])
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("run: --strict: 1 local-memory warning, the first: instruction 2 (test_lmem_checks.py:")
    res = runner.invoke(run_cli, ["k.cmdbuf", "--gmem", f"{G:#x}=g.npy", "--json"])
    assert '"kind": "overwritten"' in res.stdout


def test_vendor_models():
    """bm1684's face_detection reads no byte it did not write and overwrites no live tensor;
    the bm1684x Yuv2rgb reads 240 bytes a lane past the row it converted (a stride-2 read,
    values its output does not use) and overwrites half of what it computed from them unread:
    truthful warnings, so model runs check only when asked."""
    from bmk.models import run
    m = bmk.load_model(FACE_DETECTION)
    st = m.nets[0].stages[0]
    x = {t.name: np.random.default_rng(0).standard_normal(t.shape).astype(t.dtype) for t in st.inputs}
    _, reports, _ = run.simulate(m, x, checks=True)
    assert [r.warnings for _, r in reports] == [()] * len(reports)
    # its int8 b4 build neither: an in-place add reads the whole of a product that took its bytes
    # from several unread loads (20 false warnings before B's other bytes counted those taken
    # from another instruction)
    m = bmk.load_model(FACE_INT8)
    st = m.nets[0].stages[0]
    x = {t.name: np.random.default_rng(0).integers(-100, 100, t.shape).astype(t.dtype) for t in st.inputs}
    _, reports, _ = run.simulate(m, x, checks=True)
    assert [r.warnings for _, r in reports] == [()] * len(reports)
    y = bmk.load_model(YUV2RGB)
    st = y.nets[0].stages[0]
    x = {t.name: np.zeros(t.shape, t.dtype) for t in st.inputs}
    _, reports, _ = run.simulate(y, x)
    assert all(r.warnings == () for _, r in reports)                 # off by default
    _, reports, _ = run.simulate(y, x, checks=True)
    w = reports[0][1].warnings[0]
    assert (w.kind, w.index, w.lanes, w.lo, w.hi) == (UNINITIALIZED, 4, tuple(range(30)), 0x300f0, 0x301dc)
    # the row computed from them (60 values, 30 of them used) is half overwritten by the next
    # row's before anything reads it: dead writes, truthfully reported
    w = [w for w in reports[0][1].warnings if w.kind == OVERWRITTEN][0]
    assert (w.index, w.writer, w.clobber) == (45, 37, 41)


def test_m_run_checks_nothing():
    """m.run (no race detection) never makes the checks' state: no cost on models."""
    from bmk.models import run
    y = bmk.load_model(YUV2RGB)
    st = y.nets[0].stages[0]
    y.run({t.name: np.zeros(t.shape, t.dtype) for t in st.inputs})
    sim, _ = y.kept[run.IDLE]
    assert sim._lcheck is None and sim.last_report.warnings == ()


def test_cli_strict_on_a_model_checks_local_memory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    y = bmk.load_model(YUV2RGB)
    (t,) = y.nets[0].stages[0].inputs
    np.save("x.npy", np.zeros(t.shape, t.dtype))
    runner = CliRunner()
    res = runner.invoke(run_cli, [str(YUV2RGB), "--input", f"{t.name}=x.npy"])
    assert res.exit_code == 0 and "warning" not in res.stdout            # model runs check only when asked
    res = runner.invoke(run_cli, [str(YUV2RGB), "--input", f"{t.name}=x.npy", "--strict"])
    assert res.exit_code == 2
    (line,) = res.stderr.splitlines()
    assert line.startswith("run: --strict: 16 local-memory warnings, the first: net0/stage0/subnet0/core0/group0: "
                           "instruction 4 reads lmem lanes 0-29 offsets [0x300f0, 0x301dc), never written")


def test_a_matmul_whose_k_is_not_a_multiple_of_the_columns_per_channel_reads_only_k_columns():
    """Issue 32.13: bdc_matmul's left matrix was read whole, the unwritten columns of its last
    channel included (K = (opd0_c - 1) * opd0_w + opd1_w), so a correct kernel got a 'reads
    local memory never written' warning and failed --strict. (N is not in the command: the
    right matrix's last channel is read whole, as the hardware computes every column of res0.)"""
    G = 0x100000000
    rows, k, n, lw, rw = 10, 100, 48, 32, 16
    ctx = bm1684.Context()
    ctx.gdma_32bit_matrix_S2L(65536, G, rows, k, lw, k)
    ctx.gdma_32bit_matrix_S2L(131072, G + 0x10000, k, n, rw, n)
    ctx.bdc_matmul(0, 65536, 131072, 0, rows, k, n, lw, rw, False, False)
    ctx.gdma_32bit_matrix_L2S(G + 0x20000, 0, rows, n, rw, n)
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-4, 5, shape).astype(np.float32) for shape in ((rows, k), (k, n)))
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, a)
    sim.gmem_write(G + 0x10000, b)
    report = sim.run(ctx.acquire_streams(), strict=True)
    assert not report.warnings and not report.races
    got = np.frombuffer(sim.gmem_read(G + 0x20000, rows * n * 4), np.float32).reshape(rows, n)
    assert np.array_equal(got, a @ b)


def test_a_tensor_loaded_over_two_unread_ones_and_read_whole_has_no_warning():
    """A and A2 each load 8 channels, unread; B loads 16 channels over both (all of its bytes were
    this run's); C reads B's tensor: that is B's tensor, not A's or A2's, whatever B took from them."""
    ctx = bm1684x.Context()
    half, whole = bm1684x.dim4(1, 8, 1, 16), bm1684x.dim4(1, 16, 1, 16)
    ctx.gdma_cpy_S2L(0, G, half, None, None, I8)                    # A: lanes 0-7
    ctx.gdma_cpy_S2L(8 * LANE, G + 0x100, half, None, None, I8)     # A2: lanes 8-15
    ctx.gdma_cpy_S2L(0, G + 0x280, whole, None, None, I8)           # B: lanes 0-15, over both
    ctx.gdma_cpy_L2S(G + 0x4000, 0, whole, None, None, I8)          # C reads B's tensor
    sim, report = _run(ctx)
    assert report.warnings == ()
    # a read of only what B took from A (A's tensor, as if unchanged) is still reported
    ctx.gdma_cpy_L2S(G + 0x5000, 0, half, None, None, I8)
    sim, report = _run(ctx)
    assert [(w.kind, w.index, w.writer, w.clobber, w.lanes) for w in report.warnings] == \
        [(OVERWRITTEN, 4, 0, 2, tuple(range(8)))]


def test_bytes_copied_onto_themselves_stay_never_written():
    """BM1688 groups begin with a one-element copy of the last bytes of lane 31 onto themselves
    (arith.copy, res0 = opd0), bytes nothing wrote: no value comes of it, so no warning there;
    they stay never written (a later read of them is reported). A kind its semantics do not
    declare a copy is checked as before, even where its result left the bytes unchanged (x & x
    here, of the zeros of a fresh local memory)."""
    from tests.chips.bm1684x.sim.helpers import rec, run
    one = dict(res0_n=1, res0_c=8, res0_h=1, res0_w=16, res0_addr=0x1000, opd0_addr=0x1000, tsk_opd_num=1)
    store = bm1684x.Context()
    store.gdma_cpy_L2S(G + 0x4000, 0x1000, SMALL, None, None, I8)
    copy = rec("tiu", "sAR", "arith.copy", **one)
    _, report = run([copy] + list(bmk.decode("bm1684x", store.acquire_cmdbuf())))
    assert [(w.kind, w.index, w.lanes, w.lo, w.hi) for w in report.warnings] == \
        [(UNINITIALIZED, 1, tuple(range(8)), 0x1000, 0x1010)]
    ctx = bm1684x.Context()
    ctx.bdc_and(0x1000, 0x1000, 0x1000, SMALL, None, None, None, I8)
    sim, report = _run(ctx)
    assert [(w.kind, w.index, w.lo) for w in report.warnings] == [(UNINITIALIZED, 0, 0x1000)]
