"""Issue 30 item 3: cvimodel CPU routines read fully and run in numpy (bmk/models/cpu).

The references below are element-by-element loops written from the vendor's C++ (cviruntime
src/common/cpu_function/argmax_v3.cpp and interpolation.cpp), every product and sum an fp32
scalar operation in the C++'s order; bmk's implementations are vectorised numpy."""
import json
import math

import attrs
import flatbuffers
import numpy as np
import pytest

import bmk
from bmk import dtypes
from bmk.errors import ModelError
from bmk.models import read_model
from bmk.models.cpu import known
from bmk.models.cpu.params import CpuFunction, read_params
from bmk.models.cpu.runner import run_cpu_subnet, setup_cpu_subnet
from bmk.models.model import IOTensor, Net, Subnet
from tests.models import files as F

SEG_181X = F.HERE / "cv181x" / "topformer_seg_person_face_vehicle_384_640_INT8_cv181x.cvimodel"
f32 = np.float32
MEMBER = {"float": 0, "bool": 1, "int": 2, "str": 3, "float_array": 4, "int_array": 5}


def params_bytes(attributes, empty_member=False):
    """A cvi.cpu_op.Parameter FlatBuffer (tpu-mlir parameter.fbs) of [(kind, key, value)]."""
    b = flatbuffers.Builder(256)
    offsets = []
    for kind, key, value in attributes:
        k = b.CreateString(key)
        v = None
        if kind == "str":
            v = b.CreateString(value)
        elif kind.endswith("_array"):
            b.StartVector(4, len(value), 4)
            for x in reversed(value):
                (b.PrependFloat32 if kind == "float_array" else b.PrependInt32)(x)
            v = b.EndVector()
        b.StartObject(2)
        b.PrependUOffsetTRelativeSlot(0, k, 0)
        if v is not None:
            b.PrependUOffsetTRelativeSlot(1, v, 0)
        elif kind == "int":
            b.PrependInt32Slot(1, value, 0)
        elif kind == "float":
            b.PrependFloat32Slot(1, value, 0.0)
        else:
            b.PrependBoolSlot(1, value, False)
        inner = b.EndObject()
        b.StartObject(6)
        if not empty_member:
            b.PrependUOffsetTRelativeSlot(MEMBER[kind], inner, 0)
        offsets.append(b.EndObject())
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    vec = b.EndVector()
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, vec, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def function(name, attributes):
    data = params_bytes(attributes)
    return CpuFunction(name, read_params(data, 0, len(data), "<params>"), 0, len(data))


def tensor(name, dtype, shape, address=0):
    return IOTensor(name, dtype, tuple(shape), address)


@pytest.fixture(scope="module")
def seg():
    return bmk.load_model(SEG_181X)


# -- reading ----------------------------------------------------------------------------------


def test_the_models_cpu_routine_is_read_with_its_parameters(seg):
    st = seg.nets[0].stages[0]
    assert [sn.kind for sn in st.subnets] == ["tpu", "cpu"]
    sn = st.subnets[1]
    fn = sn.function
    assert fn.name == "argmax_v3" and fn.args_size == 112
    assert [(p.key, p.kind, p.value) for p in fn.params] == [("axis", "int", 3),
                                                              ("scale", "float", float(f32(1 / 127)))]
    # the offsets are the file's: the parameters read again from there are the same
    assert read_params(seg.data, fn.args_offset, fn.args_size, "x") == fn.params
    assert [(t.name, t.type, t.shape, t.address) for t in sn.inputs] == [
        ("output_ArgMax_permute", dtypes.INT8, (1, 48, 80, 5), 2 << 40),
        ("output_ArgMax_trans1", dtypes.INT8, (1, 48, 80, 1), (2 << 40) + 0x4b00)]
    assert [(t.name, t.type, t.shape) for t in sn.outputs] == [
        ("output_ArgMax", dtypes.FP32, (1, 48, 80, 1)), ("523_ReduceMax_r_values", dtypes.FP32, (1, 48, 80, 1))]
    assert sn.inputs[0].scale == pytest.approx(1 / 127)
    assert st.outputs == sn.outputs


def test_bmk_info_shows_the_function_and_its_parameters():
    from click.testing import CliRunner
    from bmk.cli.main import bmk as main
    res = CliRunner().invoke(main, ["info", str(SEG_181X)])
    assert res.exit_code == 0
    assert "    subnet1 (id 1): cpu, function argmax_v3 (axis=3, scale=0.00787402)\n" in res.output
    res = CliRunner().invoke(main, ["info", "--json", str(SEG_181X)])
    sub = json.loads(res.output)["nets"][0]["stages"][0]["subnets"][1]
    assert sub["function"] == {"name": "argmax_v3", "params": {"axis": 3, "scale": float(f32(1 / 127))}}


def test_every_parameter_kind_reads_back():
    attrs_in = [("int", "height", -7), ("float", "scale", 0.25), ("bool", "flag", True),
                ("str", "mode", "half_pixel"), ("int_array", "pads", [1, -2, 3]), ("float_array", "w", [0.5, 2.0])]
    fn = function("x", attrs_in)
    assert [(p.kind, p.key, p.value) for p in fn.params] == [
        ("int", "height", -7), ("float", "scale", 0.25), ("bool", "flag", True), ("str", "mode", "half_pixel"),
        ("int_array", "pads", (1, -2, 3)), ("float_array", "w", (0.5, 2.0))]
    assert fn.text() == "x (height=-7, scale=0.25, flag=True, mode='half_pixel', pads=[1, -2, 3], w=[0.5, 2])"


def test_ill_formed_parameters_are_refused_at_their_byte():
    data = params_bytes([("int", "axis", 3)], empty_member=True)
    with pytest.raises(ModelError, match=r"^f: byte \d+: Parameter.attributes\[0\]: an Attribute must set exactly one"):
        read_params(data, 0, len(data), "f")
    data = params_bytes([("int", "axis", 3), ("float", "axis", 1.0)])
    with pytest.raises(ModelError, match=r"byte \d+: .*key 'axis' appears twice"):
        read_params(data, 0, len(data), "f")
    data = params_bytes([("int", "axis", 3)])
    with pytest.raises(ModelError, match=r"^f: byte 65535: Parameter: table offset 65535 must leave 4 bytes"):
        read_params(b"\xff\xff\x00\x00" + data[4:], 0, len(data), "f")


def test_a_damaged_parameter_buffer_in_the_file_is_a_model_error_naming_it(seg):
    fn = seg.nets[0].stages[0].subnets[1].function
    data = bytearray(seg.data)
    data[fn.args_offset:fn.args_offset + 4] = (10_000).to_bytes(4, "little")       # root offset past the end
    rule = r"Parameter: table offset 10000 must leave 4 bytes inside the 112-byte FlatBuffer"
    with pytest.raises(ModelError, match=rf"^x.cvimodel: byte {fn.args_offset + 10_000}: {rule}"):
        read_model(bytes(data), "x.cvimodel")


def test_parameters_of_the_wrong_type_or_missing_are_refused_by_name(seg):
    sn = seg.nets[0].stages[0].subnets[1]
    bad = attrs.evolve(sn, function=function("argmax_v3", [("float", "axis", 3.0)]))
    with pytest.raises(ModelError, match=r"argmax_v3 parameter 'axis' must be an int, not a float 3.0"):
        setup_cpu_subnet(seg, bad)
    bad = attrs.evolve(sn, function=function("argmax_v3", [("float", "scale", 1.0)]))
    with pytest.raises(ModelError, match=r"argmax_v3 needs parameter 'axis' \(an int\); the routine has scale"):
        setup_cpu_subnet(seg, bad)


# -- unknown functions ------------------------------------------------------------------------


def test_an_unknown_function_is_refused_by_name_never_skipped(seg):
    data = seg.data.replace(b"argmax_v3", b"argmax_v9")
    m = read_model(data, "renamed.cvimodel")
    sn = m.nets[0].stages[0].subnets[1]
    assert sn.function.name == "argmax_v9" and known() == ["argmax_v3", "interp"]
    with pytest.raises(ModelError, match=r"CPU function 'argmax_v9' is not one bmk runs \(known: argmax_v3, interp\)"):
        run_cpu_subnet(m, sn, {})
    found = [f for f in bmk.check(m) if f.kind == "subnet"]
    assert [(f.field, f.value) for f in found] == [("function", "argmax_v9")]
    assert "known: argmax_v3, interp" in found[0].line()
    assert not [f for f in bmk.check(seg) if f.kind == "subnet"]        # a known function is no finding


# -- argmax_v3 --------------------------------------------------------------------------------


def argmax_v3_reference(data, tmax, axis, scale, int8, values):
    """ArgMaxV3Func::argmax<T>, element by element."""
    shape = data.shape
    outer, inner = math.prod(shape[:axis]), shape[axis]
    tiles = (inner + 255) // 256
    kind = np.int8 if int8 else np.int16
    d, m = data.reshape(-1).view(kind), tmax.reshape(-1).view(kind)
    idx_out, val_out = np.zeros(outer, f32), np.zeros(outer, f32)
    for i in range(outer):
        best, t = int(m[i * tiles]), 0
        for j in range(1, tiles):
            if int(m[i * tiles + j]) > best:
                best, t = int(m[i * tiles + j]), j
        offset = t * 256
        k = 0
        for j in range(min(inner - offset, 256)):
            if int(d[i * inner + offset + j]) == best:
                k = j
                break
        idx_out[i] = f32(k + offset)
        if int8:
            val_out[i] = f32(best) * f32(scale)
        else:
            val_out[i] = np.array([(best & 0xFFFF) << 16], np.uint32).view(f32)[0]
    return [idx_out, val_out] if values else [idx_out]


def tile_max(x, kind):
    """What the TPU half computes: the max of every 256-element tile of the last axis."""
    x = x.reshape(-1, x.shape[-1]).view(kind)
    tiles = -(-x.shape[1] // 256)
    out = np.empty((x.shape[0], tiles), kind)
    for t in range(tiles):
        out[:, t] = x[:, t * 256:(t + 1) * 256].max(axis=1)
    return out


def test_argmax_v3_on_the_models_routine_matches_the_reference(seg):
    sn = seg.nets[0].stages[0].subnets[1]
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 4, (1, 48, 80, 5)).astype(np.int8)          # many ties inside a row
    m = tile_max(x, np.int8).reshape(1, 48, 80, 1)
    got = run_cpu_subnet(seg, sn, {"output_ArgMax_permute": x, "output_ArgMax_trans1": m})
    idx, val = argmax_v3_reference(x, m, 3, float(f32(1 / 127)), True, True)
    assert got["output_ArgMax"].dtype == np.float32 and got["output_ArgMax"].shape == (1, 48, 80, 1)
    assert np.array_equal(got["output_ArgMax"].ravel(), idx)
    assert np.array_equal(got["523_ReduceMax_r_values"].ravel(), val)
    assert np.array_equal(idx, np.argmax(x, axis=3).ravel())          # first of ties, as numpy's
    assert (val == x.max(axis=3).ravel().astype(f32) * f32(1 / 127)).all()


def argmax_subnet(inner, dtype, rows=3, values=True, scale=0.5):
    fn = function("argmax_v3", [("int", "axis", 1), ("float", "scale", scale)])
    tiles = -(-inner // 256)
    outs = (tensor("idx", dtypes.FP32, (rows, 1)),) + ((tensor("val", dtypes.FP32, (rows, 1)),) if values else ())
    return Subnet(0, 0, "cpu", (), (tensor("x", dtype, (rows, inner)), tensor("m", dtype, (rows, tiles))), outs,
                  (), "", fn)


def test_argmax_v3_tiles_ties_and_a_max_map_the_data_do_not_hold(seg):
    x = np.zeros((4, 600), np.int8)
    x[0, [10, 300, 590]] = 9            # equal maxima in three tiles: the first tile wins
    x[1, [300, 520]] = 9                # tiles 1 and 2 tie: tile 1, its first 9
    x[1, 301] = 9
    x[2, 599] = 5                       # the last, short tile
    x[3, 5] = 7
    m = tile_max(x, np.int8)
    m[3, 0] = 100                       # a max the tile does not hold: the tile's start (0)
    sn = argmax_subnet(600, dtypes.INT8, rows=4, scale=0.25)
    got = run_cpu_subnet(seg, sn, {"x": x, "m": m})
    idx, val = argmax_v3_reference(x, m, 1, 0.25, True, True)
    assert got["idx"].ravel().tolist() == idx.tolist() == [10, 300, 599, 0]
    assert got["val"].ravel().tolist() == val.tolist() == [2.25, 2.25, 1.25, 25.0]


def test_argmax_v3_on_bf16_compares_bit_patterns_as_int16(seg):
    """bf16 goes the C++'s int16 way: -1.0 (0xBF80) is below 0.5 (0x3F00), but -2.0 (0xC000)
    reads as a larger int16 than -1.0 (0xBF80): negative maxima come out as the runtime gives them."""
    bits = {1.0: 0x3F80, 0.5: 0x3F00, -1.0: 0xBF80, -2.0: 0xC000}
    x = np.array([[bits[0.5], bits[-1.0], bits[1.0], bits[1.0]],
                  [bits[-1.0], bits[-2.0], bits[-1.0], bits[-2.0]]], np.uint16)
    m = tile_max(x, np.int16).view(np.uint16)
    sn = argmax_subnet(4, dtypes.BF16, rows=2)
    got = run_cpu_subnet(seg, sn, {"x": x, "m": m})
    idx, val = argmax_v3_reference(x, m, 1, 1.0, False, True)
    assert got["idx"].ravel().tolist() == idx.tolist() == [2, 1]
    assert got["val"].ravel().tolist() == val.tolist() == [1.0, -2.0]


def test_argmax_v3_refuses_a_type_the_runtime_would_misread(seg):
    with pytest.raises(ModelError, match=r"argmax_v3 input 'x' must be int8 or a 2-byte type \(bf16\), not uint8"):
        setup_cpu_subnet(seg, argmax_subnet(4, dtypes.UINT8))


# -- interp -----------------------------------------------------------------------------------


def interp_subnet(mode, in_shape, out_shape, dtype=dtypes.FP32, height=0, width=0, shrink=0, zoom=0, pads=(0, 0)):
    fn = function("interp", [("int", "width", width), ("int", "height", height), ("int", "pad_beg", pads[0]),
                             ("int", "pad_end", pads[1]), ("int", "shrink_factor", shrink),
                             ("int", "zoom_factor", zoom), ("str", "coordinate_transformation_mode", mode)])
    return Subnet(0, 0, "cpu", (), (tensor("x", dtype, in_shape),), (tensor("y", dtype, out_shape),), (), "", fn)


def ref_half_pixel(x, oh, ow, pytorch):
    """upsampleBilinear with coordinate_transform, one element at a time (fp32)."""
    n, c, ih, iw = x.shape
    hs, ws = f32(oh) / f32(ih), f32(ow) / f32(iw)
    out = np.zeros((n, c, oh, ow), f32)

    def src(d, scale, length, size_in):
        if scale == f32(1):
            s = f32(d)
        elif pytorch and not length > 1:
            s = f32(0)
        else:
            s = (f32(d) + f32(0.5)) / scale - f32(0.5)
        s = max(f32(0), min(s, f32(size_in - 1)))
        lo = min(int(s), size_in - 1)
        hi = min(lo + 1, size_in - 1)
        d1, d2 = f32(abs(s - f32(lo))), f32(abs(s - f32(hi)))
        if lo == hi:
            d1 = d2 = f32(0.5)
        return lo, hi, d1, d2

    for b in range(n):
        for ch in range(c):
            X = x[b, ch]
            for y in range(oh):
                y1, y2, dy1, dy2 = src(y, hs, oh, ih)
                for xx in range(ow):
                    x1, x2, dx1, dx2 = src(xx, ws, ow, iw)
                    out[b, ch, y, xx] = (dx2 * dy2 * X[y1, x1] + dx1 * dy2 * X[y1, x2]
                                         + dx2 * dy1 * X[y2, x1] + dx1 * dy1 * X[y2, x2])
    return out


def ref_asymmetric(x, oh, ow):
    n, c, ih, iw = x.shape
    sh, sw = f32(ih) / f32(oh), f32(iw) / f32(ow)
    out = np.zeros((n, c, oh, ow), f32)
    for b in range(n):
        for ch in range(c):
            X = x[b, ch]
            for h in range(oh):
                fh = min(f32(h) * sh, f32(ih - 1))
                for w in range(ow):
                    fw = min(f32(w) * sw, f32(iw - 1))
                    h0, h1, w0, w1 = math.floor(fh), math.ceil(fh), math.floor(fw), math.ceil(fw)
                    if h0 == fh and w0 == fw:
                        v = X[h0, w0]
                    elif h0 == fh:
                        v = X[h0, w0] * (f32(w1) - fw) + X[h0, w1] * (fw - f32(w0))
                    elif w0 == fw:
                        v = X[h0, w0] * (f32(h1) - fh) + X[h1, w0] * (fh - f32(h0))
                    else:
                        v = (X[h0, w0] * ((f32(w1) - fw) * (f32(h1) - fh))
                             + X[h0, w1] * ((fw - f32(w0)) * (f32(h1) - fh))
                             + X[h1, w0] * ((f32(w1) - fw) * (fh - f32(h0)))
                             + X[h1, w1] * ((fw - f32(w0)) * (fh - f32(h0))))
                    out[b, ch, h, w] = v
    return out


def _interp_tap(ratio, i2, n1):
    """my_interp along one axis: output i2's source index, its step to the next (0 at the edge)
    and the two weights, in fp32."""
    r = ratio * f32(i2)
    i1 = int(r)
    l1 = r - f32(i1)
    return i1, 1 if i1 < n1 - 1 else 0, f32(1) - l1, l1


def ref_align_corners(x, oh, ow, pad_beg=0, pad_end=0):
    """caffe's interp (my_interp) on the window cropped by the (non-positive) pads."""
    n, c, ih, iw = x.shape
    h1n, w1n = ih + pad_beg + pad_end, iw + pad_beg + pad_end
    X0 = x[:, :, -pad_beg:-pad_beg + h1n, -pad_beg:-pad_beg + w1n]
    if (h1n, w1n) == (oh, ow):
        return X0.astype(f32)
    rh = f32(h1n - 1) / f32(oh - 1) if oh > 1 else f32(0)
    rw = f32(w1n - 1) / f32(ow - 1) if ow > 1 else f32(0)
    out = np.zeros((n, c, oh, ow), f32)
    for b in range(n):
        for ch in range(c):
            X = X0[b, ch]
            for h2 in range(oh):
                h1, hp, l0h, l1h = _interp_tap(rh, h2, h1n)
                for w2 in range(ow):
                    w1, wp, l0w, l1w = _interp_tap(rw, w2, w1n)
                    out[b, ch, h2, w2] = (l0h * (l0w * X[h1, w1] + l1w * X[h1, w1 + wp])
                                          + l1h * (l0w * X[h1 + hp, w1] + l1w * X[h1 + hp, w1 + wp]))
    return out


def ref_nearest(x, oh, ow, half_pixel):
    n, c, ih, iw = x.shape
    sh, sw = f32(ih) / f32(oh), f32(iw) / f32(ow)
    out = np.zeros((n, c, oh, ow), x.dtype)
    for h in range(oh):
        for w in range(ow):
            if half_pixel:
                hi = int(math.ceil((h + 0.5) * float(sh) - 1.0))
                wi = int(math.ceil((w + 0.5) * float(sw) - 1.0))
            else:
                hi, wi = int(f32(h) * sh), int(f32(w) * sw)
            out[:, :, h, w] = x[:, :, hi, wi]
    return out


RNG = np.random.default_rng(30)
X = RNG.standard_normal((1, 2, 5, 7)).astype(f32)


@pytest.mark.parametrize("mode", ["half_pixel", "pytorch_half_pixel"])
@pytest.mark.parametrize("out_hw", [(10, 14), (3, 4), (5, 7), (1, 9), (8, 7)])
def test_interp_bilinear_half_pixel(seg, mode, out_hw):
    oh, ow = out_hw
    sn = interp_subnet(mode, X.shape, (1, 2, oh, ow), height=oh, width=ow)
    got = run_cpu_subnet(seg, sn, {"x": X})["y"]
    want = ref_half_pixel(X, oh, ow, mode == "pytorch_half_pixel")
    assert got.dtype == np.float32 and np.array_equal(got, want)


def test_interp_pytorch_half_pixel_maps_a_length_one_output_to_the_first_row(seg):
    sn = interp_subnet("pytorch_half_pixel", X.shape, (1, 2, 1, 14), height=1, width=14)
    got = run_cpu_subnet(seg, sn, {"x": X})["y"]
    plain = run_cpu_subnet(seg, interp_subnet("half_pixel", X.shape, (1, 2, 1, 14), height=1, width=14),
                           {"x": X})["y"]
    assert np.array_equal(got, ref_half_pixel(X, 1, 14, True))
    row0 = interp_subnet("pytorch_half_pixel", (1, 2, 1, 7), (1, 2, 1, 14), height=1, width=14)
    assert np.allclose(got, run_cpu_subnet(seg, row0, {"x": np.ascontiguousarray(X[:, :, :1])})["y"], rtol=1e-6)
    assert not np.array_equal(got, plain)     # half_pixel samples the middle row (2), pytorch row 0


@pytest.mark.parametrize("out_hw", [(10, 14), (3, 4), (5, 7), (2, 3), (9, 16)])
def test_interp_asymmetric(seg, out_hw):
    oh, ow = out_hw
    sn = interp_subnet("asymmetric", X.shape, (1, 2, oh, ow), height=oh, width=ow)
    assert np.array_equal(run_cpu_subnet(seg, sn, {"x": X})["y"], ref_asymmetric(X, oh, ow))


@pytest.mark.parametrize("kw,out_hw", [
    (dict(zoom=2), (9, 13)),                          # eff + (eff - 1) * (zoom - 1)
    (dict(shrink=2), (3, 4)),                         # (eff - 1) / shrink + 1
    (dict(shrink=2, zoom=3), (7, 10)),                # shrink, then zoom
    (dict(height=8, width=3), (8, 3)),
    (dict(height=5, width=7), (5, 7)),                # equal sizes: a copy
    (dict(height=1, width=1), (1, 1)),
    (dict(zoom=2, pads=(-1, -1)), (5, 9)),            # a crop: eff = 3 x 5
])
def test_interp_align_corners(seg, kw, out_hw):
    oh, ow = out_hw
    sn = interp_subnet("align_corners", X.shape, (1, 2, oh, ow), **kw)
    got = run_cpu_subnet(seg, sn, {"x": X})["y"]
    assert got.shape == (1, 2, oh, ow)
    assert np.array_equal(got, ref_align_corners(X, oh, ow, *kw.get("pads", (0, 0))))


def test_interp_align_corners_keeps_the_corners_and_refuses_positive_pads(seg):
    got = run_cpu_subnet(seg, interp_subnet("align_corners", X.shape, (1, 2, 9, 13), zoom=2), {"x": X})["y"]
    assert np.array_equal(got[:, :, ::2, ::2], X)             # zoom 2 keeps every input on the grid
    with pytest.raises(ModelError, match=r"interp 'align_corners' pads must be <= 0 .* not pad_beg 1, pad_end 0"):
        setup_cpu_subnet(seg, interp_subnet("align_corners", X.shape, (1, 2, 9, 13), zoom=2, pads=(1, 0)))


@pytest.mark.parametrize("mode", ["nearest", "nearest_half_pixel"])
@pytest.mark.parametrize("dtype", [dtypes.INT8, dtypes.BF16, dtypes.FP32])
@pytest.mark.parametrize("out_hw", [(10, 21), (3, 4), (7, 5)])
def test_interp_nearest(seg, mode, dtype, out_hw):
    oh, ow = out_hw
    x = RNG.integers(-100, 100, (1, 2, 5, 7)).astype(dtype.numpy)
    sn = interp_subnet(mode, x.shape, (1, 2, oh, ow), dtype=dtype, height=oh, width=ow)
    got = run_cpu_subnet(seg, sn, {"x": x})["y"]
    assert got.dtype == dtype.numpy and np.array_equal(got, ref_nearest(x, oh, ow, mode == "nearest_half_pixel"))


def test_interp_nan_and_inf_propagate_as_the_fp32_sums_do(seg):
    x = X.copy()
    x[0, 0, 2, 3] = np.nan
    x[0, 1, 0, 0] = np.inf
    for mode, ref in (("asymmetric", lambda: ref_asymmetric(x, 10, 14)),
                      ("half_pixel", lambda: ref_half_pixel(x, 10, 14, False))):
        got = run_cpu_subnet(seg, interp_subnet(mode, x.shape, (1, 2, 10, 14), height=10, width=14), {"x": x})["y"]
        with np.errstate(all="ignore"):
            want = ref()
        assert np.array_equal(got, want, equal_nan=True) and np.isnan(got).any()


def test_interp_refusals_name_the_rule(seg):
    with pytest.raises(ModelError, match=r"coordinate_transformation_mode must be one of .* not 'cubic'"):
        setup_cpu_subnet(seg, interp_subnet("cubic", X.shape, (1, 2, 10, 14), height=10, width=14))
    with pytest.raises(ModelError, match=r"interp 'half_pixel' reads and writes fp32, not int8 -> int8"):
        setup_cpu_subnet(seg, interp_subnet("half_pixel", X.shape, (1, 2, 10, 14), dtype=dtypes.INT8, height=10,
                                            width=14))
    with pytest.raises(ModelError, match=r"interp output 'y' \(1, 2, 10, 10\) must hold 1x2x10x14 elements"):
        setup_cpu_subnet(seg, interp_subnet("asymmetric", X.shape, (1, 2, 10, 10), height=10, width=14))


# -- in subnet order, through global memory ---------------------------------------------------


def _with_cpu_subnets(m, before, after):
    """The model's one stage with CPU subnets before and after its TPU subnet."""
    st = m.nets[0].stages[0]
    (tpu,) = st.subnets
    subnets = (attrs.evolve(before, index=0, id=0), attrs.evolve(tpu, index=1, id=1),
               attrs.evolve(after, index=2, id=2))
    stage = attrs.evolve(st, inputs=before.inputs, outputs=after.outputs, subnets=subnets)
    return attrs.evolve(m, nets=(Net(0, m.nets[0].name, (stage,)),))


def test_m_run_runs_cpu_subnets_in_order_through_global_memory():
    """A real BM1684X network (cls_sound_babay_cry) between two CPU subnets: a nearest resize
    writes the network's input at its address, the TPU group reads it there, and a resize of its
    output is read back from where the group wrote it. The answer is the numpy references around
    the plain model's own run."""
    m = bmk.load_model(F.BABY_CRY_1684X)
    st = m.nets[0].stages[0]
    (x_in,), (y_out,) = st.inputs, st.outputs
    small = tensor("small", dtypes.INT8, (1, 1, 94, 20), 0x100200000)
    before = attrs.evolve(interp_subnet("nearest", small.shape, x_in.shape, dtype=dtypes.INT8, height=188, width=40),
                          inputs=(small,), outputs=(x_in,))
    logits = tensor(y_out.name, dtypes.FP32, (1, 1, 1, 2), y_out.address)
    wide = tensor("wide", dtypes.FP32, (1, 1, 1, 5), 0x100210000)
    after = attrs.evolve(interp_subnet("asymmetric", logits.shape, wide.shape, height=1, width=5),
                         inputs=(logits,), outputs=(wide,))
    chained = _with_cpu_subnets(m, before, after)
    xs = np.random.default_rng(7).integers(-128, 128, small.shape).astype(np.int8)
    got = chained.run({"small": xs})
    plain = m.run({x_in.name: ref_nearest(xs, 188, 40, False)})[y_out.name]
    want = ref_asymmetric(plain.reshape(1, 1, 1, 2), 1, 5)
    assert list(got) == ["wide"] and np.array_equal(got["wide"], want)
    assert want[0, 0, 0, 0] == plain[0, 0] and want[0, 0, 0, 4] == plain[0, 1] and plain[0, 0] != plain[0, 1]
    # an unknown function anywhere in the stage refuses the run before any work, by name
    renamed = attrs.evolve(after, function=attrs.evolve(after.function, name="resize_v9"))
    with pytest.raises(ModelError, match=r"CPU function 'resize_v9' is not one bmk runs .*nothing was run"):
        _with_cpu_subnets(m, before, renamed).run({"small": xs})


def test_interp_half_pixel_refuses_sizes_the_runtime_lays_out_otherwise(seg):
    """upsampleBilinear writes int64(in * (out / in)) rows, an fp32 product: 11 -> 13 rows gives
    12 (13/11 rounds down in fp32), so the runtime's output would not be the tensor's layout."""
    assert int(f32(11) * (f32(13) / f32(11))) == 12
    with pytest.raises(ModelError, match=r"interp 'half_pixel' 11x7 -> 13x7: the runtime computes 12x7"):
        setup_cpu_subnet(seg, interp_subnet("half_pixel", (1, 1, 11, 7), (1, 1, 13, 7), height=13, width=7))


def test_a_cpu_tensor_without_elements_is_refused_by_name(seg):
    sn = interp_subnet("nearest", (1, 0, 5, 7), (1, 0, 10, 14), dtype=dtypes.INT8, height=10, width=14)
    with pytest.raises(ModelError, match=r"tensor 'x' must have positive dims, not \(1, 0, 5, 7\)"):
        run_cpu_subnet(seg, sn, {"x": np.zeros((1, 0, 5, 7), np.int8)})
