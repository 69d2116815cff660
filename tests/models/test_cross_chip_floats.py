"""Networks of the TDL SDK compiled for CV181X and CV184X whose builds differ in what they use.

The face attribute classifier of the TDL SDK compiled for CV184X (TPU1686 family) and CV181X
(the bm1880 lineage): the CV184X build runs one bf16 deconvolution (conv.normal with opd1_prec
bf16 and inserted zeros, bmk/sim/bm1688/conv.py) inside an int8 network, which bmk refused
before; the two simulators, of two ISAs, given the same face-sized block images, agree on every
output (issues 29, 30). Each output is one sigmoid, so the builds are compared over a set of
images: the values close, and their variation across the images correlated. The glasses output
reads the deconvolution (bf16 on CV184X, int8 on CV181X): it differs by up to 0.25 with a
correlation of 0.967; giving the deconvolution a bias of 0.5 instead of its own drops the
correlation to 0.84."""
import numpy as np

import bmk
from tests.models import files as F
from tests.models.files import PEOPLE_448


def _outputs(path, images):
    """(images, outputs) fp32 values for pixel images, each quantized by the input's scale, q =
    round(pixel / 255 * scale) (int8 scale 127 on CV181X, uint8 scale 255 on CV184X)."""
    m = bmk.load_model(path)
    (t,) = m.nets[0].stages[0].inputs
    lim = np.iinfo(t.dtype)
    rows = []
    for pixels in images:
        q = np.clip(np.round(pixels / 255 * t.scale), lim.min, lim.max).astype(t.dtype)
        rows.append([float(v.ravel()[0]) for v in m.run({t.name: q}).values()])
    return np.array(rows)


def test_cv181x_and_cv184x_builds_agree_on_every_output():
    rng = np.random.default_rng(0)
    images = [np.kron(rng.integers(0, 256, (1, 3, 7, 7)), np.ones((1, 1, 16, 16))) for _ in range(6)]
    a, b = _outputs(F.FACE_MASK_181X, images), _outputs(F.FACE_MASK_184X, images)
    assert a.shape == b.shape == (6, 4)
    assert np.abs(a - b).max() <= 0.3
    for k in range(4):
        if a[:, k].std() > 0.01:
            assert np.corrcoef(a[:, k], b[:, k])[0, 1] >= 0.95


def _photo(h, w):
    """The crowd photo (tests/models/people_448.npz) resized to (h, w) by nearest rows and columns,
    as (1, 3, h, w) RGB pixels."""
    img = np.load(PEOPLE_448)["image"].astype(np.float64)
    ys = np.arange(h) * img.shape[0] // h
    xs = np.arange(w) * img.shape[1] // w
    return img[ys][:, xs].transpose(2, 0, 1)[None]


def test_a_hand_detectors_grouped_convolutions_agree_across_chips():
    """yolov8n_det_hand_mv3's grouped convolutions (2 and 4 output channels a group): on CV181X a
    group's result starts on lane 2, 4 or 6 while its weights and per-channel records are
    addressed on lane 0 (each output channel reads them on its own NPU: bm1880 common.npu_local);
    on CV184X lane copies (`tsbc.l_copy`) bring each group to lane 0. On the crowd photo the six
    head outputs agree at cosine 0.995-0.999 (each build's one-step noise floor: 0.996-0.999);
    read on the addresses' own lanes, 0.54-0.96."""
    pixels = _photo(384, 640)
    a, b = _outputs_of(F.HAND_DET_181X, pixels), _outputs_of(F.HAND_DET_184X, pixels)
    assert len(a) == len(b) == 6
    for x, y in zip(a, b):
        assert x.shape == y.shape
        assert float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y))) >= 0.99


def _outputs_of(path, pixels):
    """Every output of a model, flattened fp32, for one pixel image quantized by its input's scale."""
    m = bmk.load_model(path)
    (t,) = m.nets[0].stages[0].inputs
    lim = np.iinfo(t.dtype)
    q = np.clip(np.round(pixels / 255 * t.scale), lim.min, lim.max).astype(t.dtype)
    return [v.astype(np.float64).ravel() for v in m.run({t.name: q}).values()]
