"""Issues 29 and 30: every shared network compiled for several chips, run on each chip's simulator
with the same input, beside each build's own sensitivity (run by hand; reads /work/shared).

For each network under the folders given (default /work/shared/models/{tdl/*,cv181x,cv184x}): the
cosine of every fp32 (or dequantized) output between every two builds, and each build's noise
floor: the cosine between its outputs on the input and on the same input with one quantization
step of noise (each input element moved by -1, 0 or +1, clipped to its type). Two simulators that
are right can only agree as well as the network allows: a pair's figure far below its builds'
floors points at a simulator; a figure near or above them is the network's own sensitivity to
what differs between its builds (their quantization).

Inputs: every build is given the same real values, each quantized by its own input scale, q =
round(real * scale): an image input (4-d, 1 or 3 channels, 64 rows or more) a block image of 0/255
pixels (16x16 blocks, seeded) as pixel / 255 (an int8 CV181X image input has scale 127, a uint8
one scale 255, or 1 where the file takes pixel / 255 itself); another input uniform values in [0,
r], r the largest every build's type holds (the builds' scales differ: 285.5 uint8 against 142.2
int8 for the hand gesture classifier). An index output (ArgMax) is compared by its equal share.

    PYTHONPATH=. python bench/xchip_pairs.py [--seed N] [--only NAME] [--photo] [--dither] [FOLDER ...]

--photo gives an image input the crowd photo (tests/models/people_448.npz, resized by nearest rows
and columns, RGB) instead of a block image: what detectors are made for, where a block image
drives some heads (box regressions) into their least stable range.

--dither adds each build's dithered floor: the cosine between its outputs and its outputs with
every integer requantization rounded stochastically (`dithered`). Two builds of one network have
their own per-layer scales (the vendor calibrates each chip apart: the same layer's int8 values
differ by factors of 0.89-1.12 between feature_cviface's CV181X and CV184X builds) and their own
rounding steps (CV181X rounds an element-wise sum once, CV184X each addend), so they differ by
about one rounding per layer, which the one-step input floor does not measure and the dithered
floor does. A pair at or above its builds' dithered floors is explained by that; one below both
points at a simulator (or at an approximation only one build makes: a table against a series).
An output whose values take few levels (fewer than 32, eight elements or more per level) says so
beside its figure: its cosine is bounded by its own quantization steps.

The vendor's own simulators (tpu-mlir 1.30.2's cmodels, tools/vendor_cmodel.py, README "The vendor's
cmodel as a reference") give the same bytes as bmk's for 97 of the zoo's 100 files under 4 MiB, both
builds of mbv2_det_person among them: a pair of such builds agrees exactly as well with the vendor's
simulators as with bmk's (mbv2_det_person 256x448 on the photo: the vendor cmodels' outputs give
box16 0.964, box32 0.968, box4 0.972, box8 0.975, box64 0.994, classes 0.995-0.999: bmk's figures).
The pairs below 0.99 of two exact builds are the compiles' disagreement, not a simulator's.

Measured on the vendor's whole public zoo (2026-11-29, --photo --dither, sophgo/tdl_models
@5f58c8a7: 49 networks with CV181X and CV184X builds (one also for BM1688, from its history),
fetched, not shared; the worst output per pair against the lower of its builds' dithered floors):
- 35 of 49 at 0.99 or more; 45 of 49 at or above their dithered floors (within 0.001), among them
  every pair below 0.99 but three: mbv2_det_person 256x448 0.964 (dithered floors 0.968, 0.963),
  896x896 0.958 (0.953, 0.945), 512x896 0.966 (0.948, 0.936), 256x384 0.981 (0.983, 0.974);
  topformer_seg_person_face_vehicle 0.912 of its argmax equal (0.879, 0.938); keypoint_simcc
  0.984 (0.983, 0.981); yolov8n_det_hand 0.980 (0.970, 0.974); ir_person 0.988 (0.983, 0.982);
  tracking_feartrack 0.985 (0.981, 0.971); topformer_seg_motion (three equal frames) 0.962
  (0.931, 0.990); cls_sound_xiaoaixiaoai 0.41 (0.58, 0.41; logits 3 levels wide).
- Below: keypoint_face_v2 0.9974 (0.9993; an output 5 levels wide); scrfd_det_face score_32 0.976
  (0.987, 0.994): sigmoid scores of a photo with no face at that stride, 5 levels (CV181X, steps of
  1/127) against 9 (CV184X, 1/255); yolov10n 0.988 (0.994, 0.992): agreement falls from 0.99 to
  0.86 (element correlation of int8 values) at the first convolution after its attention block
  (2 heads, 400 queries and keys). Localized to the two compiles' attention maps: the products
  q^T k agree between the chips (correlation 0.986 and 0.979 per head, CV181X bf16 matrix_mac
  against CV184X int8 mm2.nn); each chip's softmax matches numpy's softmax of its own products
  within its quantization (CV181X: of the bf16 products times 32^-0.5, then rounded to steps of
  1/127, within 1.05 steps; CV184X: of the int8 products times a fitted scale, rounded to steps of
  1/255, mean error 0.11-0.13 steps), but the builds quantize the map differently: CV181X rounds
  it to int8 steps of 1/127 before its bf16 product with v, which keeps 68% and 44% of each
  query's probability mass (a flat head's largest weight is 3 steps), CV184X to uint8 steps of
  1/255, keeping 88% and 91%; the two maps then correlate 0.85 and 0.56. A property of the two
  compiles, each simulated as its instructions say (method: the operands of every matrix_mac,
  mm2.nn and mm2.nt of one run on the crowd photo, captured by wrapping the kinds' functions);
  feature_cviface 0.960 (0.981, 0.976): no layer breaks (0.9999 at the first convolution, then a
  gradual drift through 50 layers), the drift passing the dithered one's in the 14x14 stage; not
  localized further.
- The shared files (no --photo): every pair at or above its dithered floors but
  yolov8n_det_fire_smoke's BM1688 build against the others, 0.985-0.986 (dithered floors 0.997-
  0.998): that build is another compile (its uint8 input takes pixel / 255, scale 1, below).
- Three detectors with grouped convolutions (yolov8n_det_fire, _hand, _hand_mv3) read 0.26-0.96
  before CV18xx convolutions read their weights and records on the output channels' NPUs
  (bm1880 common.npu_local), 0.980-0.995 after (each at its builds' floors); the hand_mv3 BM1688
  build agrees with the CV184X one at 1.0000.

The zoo's older BM1688, CV186X and BM1684X builds (2026-11-29, --photo, seed 0; the 76 files
under 4 MiB of sophgo/tdl_models' history, 9d03e1c..de0e6d7, fetched, not shared; each beside the
CV181X and CV184X builds of the same name): every build runs, with races and checks, no race.
- 1.0000 every pair among BM1684X, BM1688, CV186X and CV184X but three: the cls_sound, cls_attribute,
  hand_keypoint, keypoint_license_plate, topformer_seg_motion and yolov8n (hand_mv3, monitor_person,
  person_vehicle_mv2_035, pet_person_035) networks, and the old-named BM1684X / BM1688 / CV186X
  builds (baby_cry, face_attribute_cls, hardhat_detection, person_monitor, pet_detection, scrfd_500m,
  yolov8n_035x ...); the CV181X build against them 0.9918-1.0000 (within 0.0012 of its floors), cls_sound_
  xiaoaixiaoai's 0.41 and topformer_seg_motion's 0.962 (CV181X floor 0.919) as above.
- The three: yolov8n_det_ir_person, _overlook_person and _fire_smoke, whose BM1688 / CV186X builds
  (eb18933) have an input scale of 1 where the others have 255: against CV181X and CV184X 0.71, 0.78
  and 0.90 (the BM1688 and CV186X builds agree at 1.0000; their one-step floors 0.85, 0.81, 0.74).
- scrfd_det_face's BM1688 build against CV184X 0.998, against CV181X 0.975 (score_32, 8 and 5 levels).

Measured (2026-11-29, seed 0; pair: the worst output's cosine; floor: the worst output's):
- 1.0000 every pair and floor: cls_attribute_face (bm1684x, bm1688), cls_sound_babay_cry (five
  chips), hand_keypoint_cls (bm1684x, bm1688), cls_keypoint_hand_gesture (bm1688, cv181x, cv184x).
- topformer_seg_person_face_vehicle cv181x-cv184x 1.0000 (0.9998 before the CV184X softmax fixes;
  floors 1.0000); on the crowd photo (tests/models/people_448.npz) argmax agreement 0.91-0.96 by
  input normalization, 0.41-0.71 before CV18xx's mv_lut_idx fix (its bf16 reciprocal was off by
  powers of two).
- yolov8n_det_coco80 cv181x-cv184x 0.9915 (floors 0.9814, 0.9889).
- yolov8n_det_fire_smoke cv181x-cv184x 0.9976, bm1688 against either 0.985-0.986 (floors cv181x
  0.9984, cv184x 0.9987, bm1688 0.8406: that file's uint8 input has scale 1, two levels for a
  block image, and its one-step noise is a large one). The bm1688 file does take pixel / 255 as
  its integer input, not the pixel: its first conv's sums before requantization on a photo reach
  41,330 (42% saturate) from pixels and 316 (25% saturate; mean 59.5) from round(pixel / 255),
  where the cv184x build's first conv gives 254 (25%; mean 62.7) from pixels with scale 255; and
  the cv181x simulator, of another ISA, agrees with the cv184x one at 0.998.
- mbv2_det_person cv181x-cv184x 0.9764 (box4; floors 0.9697 and 0.9177: one input step moves
  either build's boxes further than the other build does).
- MIX (int8 + bf16) builds, run from copies (sophgo/tdl_models @5f58c8a7): lstr_det_lane_360_640_MIX
  cv181x-cv184x 0.9997 (floors 0.9996 both); recognition_license_plate_24_96_MIX 0.9985 (floors
  0.9998, 0.9999): the CV181X build quantizes three x^2 maps to int8 before their means where CV184X
  keeps bf16, and its output is more sensitive to those three roundings than the pair differs
  (tests/chips/cv181x/test_models.py).
- topformer_seg_motion: every pair 0.9990-1.0000 (floors 0.993-0.999). Before two fixes of this
  stop it read 0.88-0.95: CV184X's static memory lacked its int32 sequence (offset 96, which its
  2x resizes broadcast into gather indices), and the TPU1686 family read an integer subtraction
  of two unsigned frames as unsigned (bmk/sim/bm1684x/ar.py: it is signed).
"""
import argparse
import itertools
import pathlib
import re
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bmk  # noqa: E402
from tests.models.vendor_cmodel import is_image, photo as _photo  # noqa: E402  the inputs' rules, shared

SHARED = pathlib.Path("/work/shared/models")
_CHIP = re.compile(r"_(bm1684x|bm1688|cv186x|cv184x|cv181x)$")


def networks(folders):
    """{network name: {chip: path}} of the networks with builds for two chips or more."""
    out = {}
    for folder in folders:
        for p in sorted(pathlib.Path(folder).glob("*")):
            if p.suffix not in (".bmodel", ".cvimodel"):
                continue
            m = _CHIP.search(p.stem)
            if m:
                out.setdefault(p.stem[:m.start()], {}).setdefault(m.group(1), p)
    return {k: v for k, v in out.items() if len(v) > 1}


def reals(models, rng, photo=False):
    """The real input values all builds are given ({index: array}, from the first build's shapes): an
    image a block image of 0 / 1 (pixel / 255), another input values in [0, r], r the largest real
    every build's input type holds (q / scale)."""
    out = {}
    for i, t in enumerate(models[0].nets[0].stages[0].inputs):
        if is_image(t) and photo:
            n, c, h, w = t.shape
            out[i] = np.repeat(_photo(h, w, c), n, 0)
        elif is_image(t):
            n, c, h, w = t.shape
            blocks = rng.integers(0, 2, (n, c, -(-h // 16), -(-w // 16)))
            out[i] = np.kron(blocks, np.ones((1, 1, 16, 16), int))[:, :, :h, :w].astype(float)
        else:
            top = min(np.iinfo(m.nets[0].stages[0].inputs[i].dtype).max / m.nets[0].stages[0].inputs[i].scale
                      for m in models)
            out[i] = rng.uniform(0, top, t.shape)
    return out


def inputs(model, real):
    """{name: array}: each real input quantized for this build, q = round(real * scale)."""
    out = {}
    for i, t in enumerate(model.nets[0].stages[0].inputs):
        lim = np.iinfo(t.dtype)
        out[t.name] = np.clip(np.round(real[i] * t.scale), lim.min, lim.max).astype(t.dtype).reshape(t.shape)
    return out


def outputs(model, values):
    scale = {t.name: t.scale for t in model.nets[0].stages[0].outputs}
    return {k: v.astype(float) * (scale[k] if v.dtype.kind in "iu" else 1) for k, v in model.run(values).items()}


def cos(x, y):
    x, y = x.ravel(), y.ravel()
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-30))


def noisy(model, values, rng):
    out = {}
    for t in model.nets[0].stages[0].inputs:
        lim = np.iinfo(t.dtype)
        v = values[t.name].astype(int) + rng.integers(-1, 2, t.shape)
        out[t.name] = np.clip(v, lim.min, lim.max).astype(t.dtype)
    return out


class dithered:
    """Within it, every integer requantization rounds stochastically (x / 2^n to floor(x / 2^n + u), u
    uniform in [0, 1)): numerics.rshift / rshift_each, which every chip's shifts go through, and the
    CV18xx per-channel requantization (cv181x quant.qdm). A build's outputs moved by this are what a
    different rounding of every layer does to them: the noise two builds with their own scales and
    rounding steps add to each other, which the one-step input floor does not measure."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def _rshift_each(self, x, n, mode=None):
        x, n = np.broadcast_arrays(np.asarray(x, np.int64), np.asarray(n, np.int64))
        u = (self.rng.random(x.shape) * (np.int64(1) << n)).astype(np.int64)
        return (x + u) >> n

    def _qdm(self, acc, multiplier, shift):
        acc = np.clip(np.asarray(acc, np.int64), -(1 << 31), (1 << 31) - 1).astype(np.float64)
        m = np.asarray(multiplier, np.int64)
        exact = acc * np.where(m >= 1 << 31, m - (1 << 32), m) / 2.0 ** (31 + np.asarray(shift, np.float64))
        return np.floor(exact + self.rng.random(np.shape(exact))).astype(np.int64)

    def __enter__(self):
        from bmk import numerics
        from bmk.sim.cv181x import quant
        self.saved = numerics.rshift, numerics.rshift_each, quant.qdm
        numerics.rshift = lambda x, n, mode=None: self._rshift_each(x, n) if n else np.asarray(x, np.int64)
        numerics.rshift_each = self._rshift_each
        quant.qdm = self._qdm

    def __exit__(self, *exc):
        from bmk import numerics
        from bmk.sim.cv181x import quant
        numerics.rshift, numerics.rshift_each, quant.qdm = self.saved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only")
    ap.add_argument("--photo", action="store_true")
    ap.add_argument("--dither", action="store_true", help="also each build's dithered-rounding floor")
    a = ap.parse_args()
    folders = a.folders or [*sorted((SHARED / "tdl").glob("*")), SHARED / "cv181x", SHARED / "cv184x"]
    for name, builds in networks(folders).items():
        if a.only and a.only not in name:
            continue
        models = {chip: bmk.load_model(path) for chip, path in sorted(builds.items())}
        real = reals(list(models.values()), np.random.default_rng(a.seed), a.photo)
        res, floor, dfloor = {}, {}, {}
        for chip, m in models.items():
            values = inputs(m, real)
            try:
                res[chip] = outputs(m, values)
                again = outputs(m, noisy(m, values, np.random.default_rng(a.seed + 1)))
            except bmk.BmkError as e:
                print(f"{name} {chip}: {e}")
                continue
            floor[chip] = min(_agree(res[chip][k], again[k], k)[0] for k in res[chip])
            if a.dither:
                with dithered(a.seed + 2):
                    moved = outputs(m, values)
                dfloor[chip] = min(_agree(res[chip][k], moved[k], k)[0] for k in res[chip])
        pairs = []
        for x, y in itertools.combinations(sorted(res), 2):
            # outputs in file order (a cvimodel may name them apart from a bmodel)
            worst = min((*_agree(u, v, k), k, u, v) for (k, u), v in zip(res[x].items(), res[y].values()))
            levels = [len(np.unique(w)) for w in worst[3:]]
            coarse = f", {levels[0]} and {levels[1]} levels" if min(levels) < min(COARSE, worst[3].size // 8) else ""
            pairs.append(f"{x}-{y} {worst[0]:.4f} {worst[1]} ({worst[2]}{coarse})")
        dither = "; dithered floors " + ", ".join(f"{c} {v:.4f}" for c, v in dfloor.items()) if dfloor else ""
        print(f"{name}: pairs {'; '.join(pairs)}; floors " + ", ".join(f"{c} {v:.4f}" for c, v in floor.items())
              + dither, flush=True)


# an output with fewer distinct values (and eight elements or more per value) is a few quantization
# steps wide: said beside its figure
COARSE = 32


def _agree(x, y, name):
    """(figure, what): an index output (ArgMax) agrees by the fraction of equal indices, others by cosine."""
    if "argmax" in name.lower():
        return float(np.mean(x.ravel() == y.ravel())), "equal"
    return cos(x, y), "cos"


if __name__ == "__main__":
    main()
