"""topformer_seg_motion, the same network and calibration compiled for BM1684X (TPU1686 family)
and CV181X (the bm1880 lineage, int8 + bf16): two simulators of two ISAs given the same moving
frames agree (issues 29, 30). It pins what this agreement rests on: a TPU1686 integer
subtraction's result is signed (bmk/sim/bm1684x/ar.py; read unsigned, cosine 0.72 here), and the
CV181X simulator's int8 and bf16 kinds on this network."""
import numpy as np

import bmk
from tests.models import files as F

H, W = 512, 960


def _frame(shift):
    """A blocky image (32x32 blocks of seeded normal values, scaled to 0..255), moved `shift`
    pixels down and right: the frames of a scene panning by a few pixels."""
    z = np.random.default_rng(3).normal(size=(H // 32 + 2, W // 32 + 2))
    img = np.kron(z, np.ones((32, 32)))
    img = (img - img.min()) / (img.max() - img.min()) * 255
    return img[shift:shift + H, shift:shift + W][None, None]


def _run(path, frames):
    """The model's fp32 output for pixel frames, each quantized by its input's scale, q =
    round(pixel / 255 * scale) (uint8 scale 255 on BM1684X: the pixel; int8 scale 127 on CV181X)."""
    m = bmk.load_model(path)
    inputs = {}
    for t, pixels in zip(m.nets[0].stages[0].inputs, frames):
        lim = np.iinfo(t.dtype)
        inputs[t.name] = np.clip(np.round(pixels / 255 * t.scale), lim.min, lim.max).astype(t.dtype)
    (y,) = m.run(inputs).values()
    return y.astype(np.float64)


def test_bm1684x_and_cv181x_builds_agree_on_moving_frames():
    frames = [_frame(s) for s in (0, 8, 16)]
    a, b = _run(F.TOPFORMER_1684X, frames), _run(F.TOPFORMER_181X, frames)
    cos = float(a.ravel() @ b.ravel() / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert cos >= 0.99
    assert (a[0].argmax(0) == b[0].argmax(0)).mean() >= 0.99
    assert (a[0].argmax(0) != 0).mean() > 0.5           # the whole scene pans: most blocks move
