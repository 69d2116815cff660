"""Issue 29 figures: topformer_seg_motion on BM1688 vs its CV184X twin (run by hand; reads /work/shared).

Prints, for the same inputs on both builds: the output cosine on a 0/255 block image (the issue's
figure), each channel's correlation and least-squares slope, the outputs' interior value on a constant
input (three equal frames: the motion branch sees no motion, every upsampling interpolates a constant),
the cosine with one frame unlike the other two, and the cosine again with every bf16 result rounded
towards zero instead of to nearest even (how much the bf16 rounding mode can move the figure).

    PYTHONPATH=. python bench/xchip_topformer.py [seed]
"""
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bmk  # noqa: E402
from bmk import numerics  # noqa: E402

MODELS = pathlib.Path("/work/shared/models/tdl")
NAME = "topformer_seg_motion_512_960_INT8_%s.bmodel"


def _cos(x, y):
    return float(x.ravel() @ y.ravel() / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-30))


def _inputs(model, images):
    """Input i quantized from images[i] as q = round(pixel / 255 * scale), as cmp3 does."""
    out = {}
    for t, pixels in zip(model.nets[0].stages[0].inputs, images):
        lim = np.iinfo(t.dtype)
        out[t.name] = np.clip(np.round(pixels / 255 * t.scale), lim.min, lim.max).astype(t.dtype)
    return out


def _run(model, pixels):
    out = model.nets[0].stages[0].outputs[0]
    y = next(iter(model.run(_inputs(model, pixels)).values())).astype(float)
    return y * out.scale if out.dtype.kind in "iu" else y


def _block_image(shape, rng):
    n, c, h, w = shape
    blocks = rng.integers(0, 2, (n, c, -(-h // 16), -(-w // 16))) * 255
    return np.kron(blocks, np.ones((1, 1, 16, 16), int))[:, :, :h, :w]


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    a, b = (bmk.load_model(MODELS / chip / (NAME % chip)) for chip in ("bm1688", "cv184x"))
    shape = a.nets[0].stages[0].inputs[0].shape
    rng = np.random.default_rng(seed)
    pix = [_block_image(shape, rng) for _ in a.nets[0].stages[0].inputs]     # three different frames
    x, y = _run(a, pix), _run(b, pix)
    print(f"block image (seed {seed}): cos {_cos(x, y):.4f}")
    for c in range(x.shape[1]):
        slope = np.polyfit(x[0, c].ravel(), y[0, c].ravel(), 1)[0]
        print(f"  channel {c}: corr {np.corrcoef(x[0, c].ravel(), y[0, c].ravel())[0, 1]:.4f} slope {slope:.3f}")
    flat = [np.zeros(shape, int)] * len(pix)
    cx, cy = _run(a, flat), _run(b, flat)
    h, w = x.shape[2] // 2, x.shape[3] // 2
    print(f"constant input: cos {_cos(cx, cy):.4f}; interior value bm1688 {cx[0, :, h, w].round(3)} "
          f"cv184x {cy[0, :, h, w].round(3)}")
    for k in range(len(pix)):                   # frame k the only one unlike the others: which frame the gap follows
        frames = [pix[0 if k else 1]] * len(pix)
        frames[k] = pix[k]
        print(f"only frame {k} differs: cos {_cos(_run(a, frames), _run(b, frames)):.4f}")
    nearest = numerics.to_float
    numerics.to_float = lambda v, dtype, mode=numerics.Round.HALF_TO_EVEN: nearest(
        v, dtype, numerics.Round.TOWARDS_ZERO if dtype.name == "bf16" else mode)
    try:
        print(f"bf16 rounded towards zero: block image cos {_cos(x, _run(b, pix)):.4f}")
    finally:
        numerics.to_float = nearest


if __name__ == "__main__":
    main()
