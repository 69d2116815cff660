"""m.run: coefficients and inputs at their device addresses (4N/2N applied), every TPU subnet in
order, outputs read back in their logical shape and dtype; what cannot run is refused first.

The plumbing is proved on a model built here from bm1684 kernels (tests/models/build.py) whose
every output has a numpy answer; the real networks show it end to end (their numbers are the
bm1684 simulator's business: issue 20)."""
import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.models import read_model
from tests.models import build
from tests.models import files as F

G = 0x100000000
X, Y, FIN, W, Z, Y2 = (G + k * 0x10000 for k in range(1, 7))
XSHAPE, FSHAPE = (5, 3, 2, 2), (1, 2, 4, 4)            # N = 5: one full 4N group and a partial one
XBYTES = 2 * 4 * 3 * 2 * 2                             # ceil(5 / 4) groups of 4 batches, 12 words each
I8, U8, F32 = 2, 3, 0                                  # bmodel data_type codes


def _copy(dst, src):
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2S(dst, src, bm1684.dim4(1, 1, 1, XBYTES // 4), None, None)
    return ctx


def _streams():
    first = _copy(Y, X).acquire_streams()              # subnet 0: x (4N bytes) -> y
    ctx = _copy(Y2, Y)                                 # subnet 1: y -> y2 (needs subnet 0 first), z = f + w
    ctx.gdma_32bit_cpy_S2L(0, FIN, FSHAPE)
    ctx.gdma_32bit_cpy_S2L(64 * 1024, W, FSHAPE)
    ctx.bdc_add(128 * 1024, 0, 64 * 1024, FSHAPE, None, None, None)
    ctx.gdma_32bit_cpy_L2S(Z, 128 * 1024, FSHAPE)
    return first, ctx.acquire_streams()


def tiny_model(subnets=None, cores=None):
    """Coefficients w = 0.5 * k, inputs x (int8 4N) and f (fp32), outputs y (x back), x_words (the raw
    4N bytes of y), y2 (y copied by the second subnet) and z = f + w."""
    w = (np.arange(32, dtype=np.float32) * 0.5).reshape(FSHAPE)
    binary, groups = bytearray(w.tobytes()), []
    for streams in _streams():
        blobs = {}
        for engine in ("tiu", "gdma"):
            data = streams.get(engine, b"")
            blobs[engine] = (len(binary), len(data))
            binary += data
        counts = {e: len(bmk.decode("bm1684", {e: streams[e]})) if streams.get(e) else 0 for e in ("tiu", "gdma")}
        groups.append({"bdc_num": counts["tiu"], "gdma_num": counts["gdma"], "bdc": blobs["tiu"],
                       "gdma": blobs["gdma"]})
    stage = {"inputs": [build.tensor("x", I8, XSHAPE, X, stmode=2, size=XBYTES),
                        build.tensor("f", F32, FSHAPE, FIN, size=128)],
             "outputs": [build.tensor("y", I8, XSHAPE, Y, stmode=2, size=XBYTES),
                         build.tensor("x_words", U8, (XBYTES,), Y, size=XBYTES),
                         build.tensor("y2", I8, XSHAPE, Y2, stmode=2, size=XBYTES),
                         build.tensor("z", F32, FSHAPE, Z, size=128)],
             "ctx_addr": X, "ctx_size": 0x70000, "coeff": (W, (0, w.nbytes)),
             "subnets": subnets or [{"groups": [g], "id": k} for k, g in enumerate(groups)]}
    if cores is not None:
        stage["subnets"] = [{"cores": [{"groups": [g]} for g in groups]}]
    return read_model(build.bmodel("BM1684", [{"name": "tiny", "stages": [stage]}], bytes(binary)),
                                 "tiny.bmodel"), w


def test_weights_inputs_storage_modes_subnet_order_and_outputs():
    m, w = tiny_model()
    assert [g.label for g in m.groups()] == ["net0/stage0/subnet0/core0/group0", "net0/stage0/subnet1/core0/group0"]
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, XSHAPE, dtype=np.int8)
    f = rng.standard_normal(FSHAPE).astype(np.float32)
    out = m.run({"x": x, "f": f})
    assert list(out) == ["y", "x_words", "y2", "z"]
    assert out["y"].dtype == np.int8 and np.array_equal(out["y"], x)
    assert np.array_equal(out["y2"], x)                 # subnet 1 ran after subnet 0
    assert out["z"].dtype == np.float32 and np.array_equal(out["z"], f + w)
    # the 4N bytes, from the layout's definition: batch 4g + i in byte i of each word of group g
    words = np.zeros((2, 3, 2, 2, 4), np.int8)
    for n in range(5):
        words[n // 4, ..., n % 4] = x[n]
    assert np.array_equal(out["x_words"], words.reshape(-1).view(np.uint8))


def test_inputs_are_checked_before_any_work():
    m, _ = tiny_model()
    f = np.zeros(FSHAPE, np.float32)
    x = np.zeros(XSHAPE, np.int8)
    for inputs, message in [
        ({"f": f}, "run: input 'x' (5, 3, 2, 2) int8 must be given"),
        ({"x": x, "f": f, "g": f}, "run: no input called 'g' (inputs: x, f)"),
        ({"x": x, "f": f[0]}, "run: input 'f' must have shape (1, 2, 4, 4), not (2, 4, 4)"),
        ({"x": x.astype(np.float32), "f": f}, "run: input 'x' must have a dtype that casts to int8 (int8), "
                                              "not float32")]:
        with pytest.raises(bmk.ModelError) as e:
            m.run(inputs)
        assert str(e.value) == f"tiny.bmodel: {message}"
    # a wider integer type of the same kind is cast
    assert np.array_equal(m.run({"x": x.astype(np.int32), "f": f})["y"], x)


def test_input_values_are_checked_never_wrapped():
    """Issue 32.4: uint16 300 reached a uint8 input as 44, int64 2**40 into int32 wrapped, a
    masked array lost its mask, float64 into float32 was rounded silently."""
    m, w = tiny_model()
    f = np.zeros(FSHAPE, np.float32)
    x = np.zeros(XSHAPE, np.int32)
    x[4, 1, 0, 1] = 300
    with pytest.raises(bmk.ArgumentError, match=r"run: input 'x' \(int8\) values must be in \[-128, 127\], not "
                                                r"np.int32\(300\) \(index \(4, 1, 0, 1\), the first of 1\)"):
        m.run({"x": x, "f": f})
    x[4, 1, 0, 1] = 0
    big = np.zeros(FSHAPE, np.int64)
    big[0, 1, 2, 3] = 2 ** 40
    with pytest.raises(bmk.ArgumentError, match=r"input 'f' \(float32\) must convert exactly from int64, but "
                                                r"np.int64\(1099511627777\) \(index \(0, 1, 2, 3\)"):
        m.run({"x": x, "f": big + 1})
    f64 = np.full(FSHAPE, 0.1)
    with pytest.raises(bmk.ArgumentError, match=r"input 'f' \(float32\) must convert exactly from float64, but "
                                                r"np.float64\(0.1\) \(index \(0, 0, 0, 0\), the first of 32\) "
                                                r"becomes np.float32\(0.1\); run\(..., exact=False\) rounds"):
        m.run({"x": x, "f": f64})
    assert np.array_equal(m.run({"x": x, "f": f64}, exact=False)["z"], np.float32(0.1) + w)
    halves = np.full(FSHAPE, 0.5)                          # exact in float32: taken
    assert np.array_equal(m.run({"x": x, "f": halves})["z"], np.float32(0.5) + w)
    masked = np.ma.masked_array(np.zeros(XSHAPE, np.int8), mask=np.zeros(XSHAPE, bool))
    masked.mask[2, 0, 1, 1] = True
    with pytest.raises(bmk.ArgumentError, match=r"input 'x' must be plain values, not a masked array with masked "
                                                r"elements \(the first at index \(2, 0, 1, 1\)\)"):
        m.run({"x": masked, "f": f})
    masked.mask[:] = False
    assert np.array_equal(m.run({"x": masked, "f": f})["y"], masked.data)


@pytest.mark.parametrize("subnet, message", [
    ({"mode": 1, "id": 7}, r"net0/stage0/subnet1 \(id 7\) is a CPU subnet \(cpu op types \[\]\)"),
    ({"dynamic": 1, "id": 3, "ir_len": 40}, r"net0/stage0/subnet1 \(id 3\) is a DYNAMIC subnet \(40 bytes of "
                                            r"firmware IR\)")])
def test_cpu_and_dynamic_subnets_are_refused_by_name(subnet, message):
    empty = {"bdc_num": 0, "gdma_num": 0, "bdc": (0, 0), "gdma": (0, 0)}
    m2, _ = tiny_model(subnets=[{"groups": [empty]}, subnet])
    assert [sn.kind for sn in m2.nets[0].stages[0].subnets] == ["tpu", "cpu" if "mode" in subnet else "dynamic"]
    with pytest.raises(bmk.ModelError, match=message + "; bmk simulates static TPU subnets only"):
        m2.run({})


def test_a_second_core_is_refused():
    m, _ = tiny_model(cores=True)
    assert [g.label for g in m.groups()] == ["net0/stage0/subnet0/core0/group0", "net0/stage0/subnet0/core1/group0"]
    with pytest.raises(bmk.ModelError, match="run: net0/stage0/subnet0/core1/group0 runs on core 1: bmk simulates "
                                             "one core"):
        m.run({})


def without_trans(monkeypatch):
    """The bm1684 semantics less dma.trans (every bm1684 kind has semantics now: issue 20)."""
    from bmk.sim import semantics
    from bmk.sim.bm1684 import SEMANTICS
    less = semantics.Semantics({k: v for k, v in SEMANTICS.kinds.items() if k != ("gdma", "dma.trans")},
                               SEMANTICS.check, SEMANTICS.cycles, SEMANTICS.init)
    real = semantics.semantics_for
    monkeypatch.setattr(semantics, "semantics_for", lambda chip: less if chip == "bm1684" else real(chip))


def test_a_kind_without_semantics_is_named_before_any_work(monkeypatch):
    m = bmk.load_model(F.FACE_DETECTION)
    without_trans(monkeypatch)

    def no_work(*args, **kwargs):
        raise AssertionError("the simulator was started")
    monkeypatch.setattr("bmk.sim.Simulator.__init__", no_work)
    with pytest.raises(bmk.ModelError) as e:
        m.run({"data": np.zeros((1, 3, 320, 320), np.float32)})
    assert str(e.value) == (f"{F.FACE_DETECTION}: run: 6 instructions cannot be simulated; the first: gdma.dma.trans: "
                            "gdma kind 'dma.trans' must have simulator semantics (the bm1684 simulator has none) "
                            "(6 instructions, first net0/stage0/subnet0/core0/group0 gdma #147 (byte 18816)); nothing "
                            "was run")


def test_a_chip_without_a_decoder_is_named(monkeypatch):
    monkeypatch.setattr("bmk.isa.chips", lambda: ("bm1684", "bm1684x", "bm1880"))
    m = bmk.load_model(F.YOLO_1688)
    with pytest.raises(bmk.ModelError, match=r"model is for chip bm1688, which bmk cannot decode yet \(chips with a "
                                             r"decoder: bm1684, bm1684x, bm1880\); run needs its decoder and "
                                             r"simulator"):
        m.run({})


def test_retinaface_runs_end_to_end():
    m = bmk.load_model(F.RETINAFACE)
    x = np.load(F.HERE / "bm1684" / "retinaface_face4_input.npz")["input"]
    out = m.run({"input": x})
    assert {k: (v.shape, v.dtype) for k, v in out.items()} == {
        "loc": ((1, 10080, 4), np.float32), "cls": ((1, 10080, 2), np.float32), "land": ((1, 10080, 10), np.float32)}
    assert all(np.isfinite(v).all() and v.any() for v in out.values())


def test_yuv2rgb_runs_to_the_vendors_answer():
    """The vendor ships this kernel's own input and output bytes (tensor order, raw): the
    plumbing gives the vendor's output (the bm1684x semantics have every kind it uses, issue 21;
    tests/chips/bm1684x/sim/test_models.py checks the same bytes)."""
    m = bmk.load_model(F.YUV2RGB)
    folder = F.YUV2RGB.parent
    (x,), (y,) = m.nets[0].stages[0].inputs, m.nets[0].stages[0].outputs
    data = np.frombuffer((folder / "input_ref_data.dat").read_bytes(), x.dtype).reshape(x.shape)
    want = np.frombuffer((folder / "output_ref_data.dat").read_bytes(), y.dtype).reshape(y.shape)
    assert np.array_equal(m.run({x.name: data})[y.name], want)


def test_a_second_run_decodes_nothing_and_starts_from_a_fresh_chip(monkeypatch):
    """m.run keeps the decoded, checked and compiled stage and the Simulator it ran on; the next
    run takes that Simulator back reset to a fresh chip: what the first run left in memory is
    gone (z = f + w from this run's f only, y from this run's x)."""
    from bmk.models import decoding, run
    m, w = tiny_model()
    rng = np.random.default_rng(1)
    first = {"x": rng.integers(-128, 128, XSHAPE, dtype=np.int8), "f": rng.standard_normal(FSHAPE).astype(np.float32)}
    out = m.run(first)
    assert np.array_equal(out["z"], first["f"] + w)
    sim, clean = m.kept["simulator"]
    assert not clean
    calls, resets = [], []
    monkeypatch.setattr(decoding, "decode_group", lambda *a: calls.append(a))
    real_reset = type(sim).reset
    monkeypatch.setattr(type(sim), "reset", lambda self: resets.append(self) or real_reset(self))
    second = {"x": np.zeros(XSHAPE, np.int8), "f": np.ones(FSHAPE, np.float32)}
    out = m.run(second)
    assert calls == [] and resets == [sim] and m.kept["simulator"][0] is sim
    assert np.array_equal(out["y"], second["x"]) and np.array_equal(out["z"], 1 + w)
    assert run.prepare(m) is m.kept[(0, 0)]
    # simulate runs on a Simulator of its own, which it hands back
    outputs, reports, other = run.simulate(m, second)
    assert other is not sim and np.array_equal(outputs["z"], out["z"])
