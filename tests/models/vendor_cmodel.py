"""The vendor's cmodel as a reference: each tests/models file run by tpu-mlir's model_runner (the
tpu-mlir 1.30.2 wheel from PyPI: libcmodel_cv184x / libcmodel_bm1688 / libcmodel_bm1684x for
bmodels, the CV18xx simulator of pyruntime_cvi for cvimodels) on one deterministic input, its
outputs kept as sha256 digests in vendor_cmodel.json (made by tools/vendor_cmodel.py, by hand:
the wheel needs Python 3.10 and is not a dependency).

The input (`inputs`): an image input (4-d, 1 or 3 channels, 64 rows or more) is the crowd photo
(people_448.npz) resized by nearest rows and columns, RGB, as pixel / 255 quantized by the
input's scale, q = round(v * scale) clipped to its type (a uint8 input with scale 255 takes the
pixel, an int8 CV181X one with scale 127 takes round(pixel / 255 * 127)); any other input uniform
values in [0, r] (seeded), r the largest its type holds over its scale. The same rule as
bench/xchip_pairs.py --photo.

A digest is of the output as bmk returns it: the vendor's float output of an integer tensor is
q * scale, turned back into q = round(v / scale) in the tensor's type first."""
import hashlib
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
DIGESTS = HERE / "vendor_cmodel.json"
PHOTO = HERE / "people_448.npz"


def is_image(t):
    """An image input: 4-d, 1 or 3 channels, 64 rows or more (bench/xchip_pairs.py's rule too)."""
    return len(t.shape) == 4 and t.shape[1] in (1, 3) and t.shape[2] >= 64


def photo(h, w, c):
    """The crowd photo as (1, c, h, w) values pixel / 255, resized by nearest rows and columns, RGB."""
    img = np.load(PHOTO)["image"].astype(float)
    ys, xs = np.arange(h) * img.shape[0] // h, np.arange(w) * img.shape[1] // w
    return img[ys][:, xs].transpose(2, 0, 1)[None, :c] / 255


def inputs(model, seed=0):
    """{name: array}: the model's first stage's inputs, as the module docstring says."""
    rng = np.random.default_rng(seed)
    out = {}
    for t in model.nets[0].stages[0].inputs:
        lim = np.iinfo(t.dtype)
        if is_image(t):
            n, c, h, w = t.shape
            real = np.repeat(photo(h, w, c), n, 0)
        else:
            real = rng.uniform(0, lim.max / t.scale, t.shape)
        out[t.name] = np.clip(np.round(real * t.scale), lim.min, lim.max).astype(t.dtype).reshape(t.shape)
    return out


def as_outputs(model, vendor):
    """The vendor's outputs ({name: array}, in output order when the names differ) as bmk's
    output arrays."""
    outs = model.nets[0].stages[0].outputs
    values = [vendor[t.name] for t in outs] if all(t.name in vendor for t in outs) else list(vendor.values())
    got = {}
    for t, v in zip(outs, values):
        v = np.asarray(v)
        if np.dtype(t.dtype).kind in "iu" and v.dtype.kind == "f":
            v = np.round(v.astype(np.float64) / t.scale)
        got[t.name] = v.astype(t.dtype).reshape(t.shape)
    return got


def digests(outputs):
    return {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest() for k, v in outputs.items()}


def recorded():
    """{file name under tests/models: {output: sha256}} and the notes."""
    data = json.loads(DIGESTS.read_text())
    return data["models"], data
