"""An application check (issue 30 item 5): the TDL SDK's yolov8n COCO detector, compiled for CV181X (.cvimodel)
and CV184X (.bmodel), finds the people of a crowd photo on the simulator, and the two chips' boxes agree.

The photo (tests/models/people_448.npz, source in README.md) is letterboxed to 640x640 and quantized as the
TDL SDK feeds the model; tests/models/yolov8_boxes.py decodes the six head outputs into boxes.
"""

import numpy as np
import pytest

import bmk
from tests.models import yolov8_boxes as Y
from tests.models.files import PEOPLE_448, YOLOV8_COCO_181X, YOLOV8_COCO_184X

MODELS = {"cv181x": YOLOV8_COCO_181X, "cv184x": YOLOV8_COCO_184X}
SIZE = 640


@pytest.fixture(scope="module")
def picture():
    return np.load(PEOPLE_448)["image"]


@pytest.fixture(scope="module")
def detections(picture):
    """{chip: (boxes, scores, classes)} at score >= 0.25 after NMS; each model runs once (about 3 s)."""
    return {chip: Y.detect(bmk.load_model(path), picture) for chip, path in MODELS.items()}


def _persons(found, min_score):
    boxes, scores, classes = found
    return boxes[(classes == Y.PERSON) & (scores > min_score)]


@pytest.mark.parametrize("chip", MODELS)
def test_people_found_above_half(detections, chip):
    # a crowd of some twenty people: the nearest ones score 0.7-0.85 on both chips
    assert len(_persons(detections[chip], 0.5)) >= 3


@pytest.mark.parametrize("chip", MODELS)
def test_boxes_lie_on_the_picture(detections, picture, chip):
    boxes, scores, _ = detections[chip]
    _, ratio, (px, py) = Y.letterbox(picture, SIZE)
    h, w = round(picture.shape[0] * ratio), round(picture.shape[1] * ratio)
    slack = 8  # one cell of the finest stride
    assert (boxes[:, 0] >= px - slack).all() and (boxes[:, 2] <= px + w + slack).all()
    assert (boxes[:, 1] >= py - slack).all() and (boxes[:, 3] <= py + h + slack).all()
    assert (boxes[:, 2] - boxes[:, 0] >= 16).all() and (boxes[:, 3] - boxes[:, 1] >= 16).all()
    assert (np.diff(scores) <= 0).all()


@pytest.mark.parametrize("chip, other", [("cv181x", "cv184x"), ("cv184x", "cv181x")])
def test_people_match_across_chips(detections, chip, other):
    # every confident person on one chip is found, in nearly the same place, on the other (at any score kept)
    mine = _persons(detections[chip], 0.5)
    theirs = _persons(detections[other], 0.0)
    assert Y.iou(mine, theirs).max(1).min() > 0.8


def _head(c, fh, fw, value=0):
    return np.full((1, c, fh, fw), value, np.int8)


class _T:
    """The attributes of an output tensor that decode reads."""

    def __init__(self, name, shape, scale):
        self.name, self.shape, self.scale = name, shape, scale


def _outputs(at_stride, mark, scales):
    """The six head outputs, all empty but what mark(box, cls) sets on the map of `at_stride`:
    ({name: int8 array}, [_T]) with the (box, class) scales given."""
    tensors, outputs = [], {}
    for stride in (8, 16, 32):
        n = SIZE // stride
        box, cls = _head(64, n, n), _head(80, n, n, -100)
        if stride == at_stride:
            mark(box, cls)
        for name, arr, scale in ((f"box{stride}", box, scales[0]), (f"cls{stride}", cls, scales[1])):
            tensors.append(_T(name, arr.shape, scale))
            outputs[name] = arr
    return outputs, tensors


def test_decode_one_anchor():
    # one anchor of the stride-16 map (x 3, y 5) with class 7's logit 2 and one-hot DFL bins: distances 1, 2, 3, 4
    def mark(box, cls):
        cls[0, 7, 5, 3] = 20
        for side, d in enumerate((1, 2, 3, 4)):
            box[0, side * Y.REG_MAX + d, 5, 3] = 100  # logit 50 against 0: one-hot to exp(-50)
    outputs, tensors = _outputs(16, mark, (0.5, 0.1))
    boxes, scores, classes = Y.decode(outputs, tensors, SIZE, threshold=0.5)
    np.testing.assert_allclose(boxes, [[(3.5 - 1) * 16, (5.5 - 2) * 16, (3.5 + 3) * 16, (5.5 + 4) * 16]])
    np.testing.assert_allclose(scores, [1 / (1 + np.exp(-2.0))])
    assert classes.tolist() == [7]


def test_decode_expected_distance_and_clamp():
    # two equal bins 0 and 2 expect distance 1; the corner anchor's box is clamped to the input
    def mark(box, cls):
        cls[0, 0, 0, 0] = 10
        for side in range(4):
            box[0, side * Y.REG_MAX, 0, 0] = box[0, side * Y.REG_MAX + 2, 0, 0] = 100
    outputs, tensors = _outputs(32, mark, (1.0, 1.0))
    boxes, _, classes = Y.decode(outputs, tensors, SIZE)
    np.testing.assert_allclose(boxes, [[0, 0, 1.5 * 32, 1.5 * 32]])
    assert classes.tolist() == [Y.PERSON]


def test_nms_per_class():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [1, 0, 11, 10], [50, 50, 60, 60]], float)
    scores = np.array([0.6, 0.9, 0.8, 0.7])
    classes = np.array([0, 0, 1, 0])
    # box 0 overlaps the better box 1 (IoU 9/11) of its class; box 2 is of another class
    assert Y.nms(boxes, scores, classes).tolist() == [1, 2, 3]


def test_letterbox_centres_and_pads():
    img = np.arange(2 * 4 * 3, dtype=np.uint8).reshape(2, 4, 3)
    out, ratio, (px, py) = Y.letterbox(img, 8)
    assert (ratio, px, py) == (2.0, 0, 2)
    assert (out[:2] == 114).all() and (out[6:] == 114).all()
    assert out[2:6].min() == img.min() and out[2:6].max() == img.max()


def test_quantize_input_per_dtype():
    px = np.array([[[0, 128, 255]]], np.uint8)
    assert Y.quantize_input(px, _Q(np.int8, 127.0)).ravel().tolist() == [0, 64, 127]
    assert Y.quantize_input(px, _Q(np.uint8, 255.0)).ravel().tolist() == [0, 128, 255]


class _Q:
    def __init__(self, dtype, scale):
        self.dtype, self.scale = np.dtype(dtype), scale
