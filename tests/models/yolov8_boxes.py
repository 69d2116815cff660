"""Test helper: the host side of the TDL SDK's yolov8 detector, in numpy (input letterbox and quantization,
box decode, NMS).

Conventions, from sophgo/tdl_sdk src/components/nn/object_detection/yolov8.cpp (YoloV8Detection):
- preprocessing: RGB planar, mean 0, scale 0.003922 (pixel / 255), keep_aspect_ratio;
- six outputs, per stride s = input size / feature size (8, 16, 32): a box branch of 64 channels
  (4 sides x reg_max 16 DFL bins, channel side * 16 + bin) and a class branch of num_cls logits, each value
  real = stored * qscale;
- decode (decodeBboxFeatureMap): per side softmax over the 16 bins, distance = expected bin; with the anchor at
  (x + 0.5, y + 0.5) the box is ((gx - l) s, (gy - t) s, (gx + r) s, (gy + b) s), clamped to the input;
  score = sigmoid(max class logit);
- per-class NMS (DetectionHelper::nmsObjects).
The letterbox centres the picture and pads with 114 (ultralytics' LetterBox); tdl's own padding may differ,
which moves pixels only in the padding.
"""

import numpy as np

REG_MAX = 16
PERSON = 0  # COCO class 0


def resize_bilinear(img, out_h, out_w):
    """Bilinear resize with half-pixel centres (the sampling grid of OpenCV's INTER_LINEAR)."""
    def axis(n_out, n_in):
        src = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        i0 = np.floor(src).astype(int)
        return i0, np.minimum(i0 + 1, n_in - 1), src - i0

    y0, y1, fy = axis(out_h, img.shape[0])
    x0, x1, fx = axis(out_w, img.shape[1])
    f = img.astype(np.float64)
    rows = f[y0] * (1 - fy)[:, None, None] + f[y1] * fy[:, None, None]
    out = rows[:, x0] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def letterbox(img, size):
    """(h, w, 3) uint8 -> ((size, size, 3) uint8, ratio, (pad_x, pad_y)): the picture scaled to fit, centred,
    the rest 114."""
    h, w = img.shape[:2]
    ratio = min(size / h, size / w)
    nh, nw = round(h * ratio), round(w * ratio)
    out = np.full((size, size, 3), 114, np.uint8)
    py, px = (size - nh) // 2, (size - nw) // 2
    out[py:py + nh, px:px + nw] = resize_bilinear(img, nh, nw)
    return out, ratio, (px, py)


def quantize_input(rgb, tensor):
    """(H, W, 3) uint8 RGB -> the model's (1, 3, H, W) input: q = round(pixel / 255 * scale) in the tensor's
    dtype (int8 with scale ~127 on CV181X, uint8 with scale ~255 on CV184X)."""
    x = rgb.transpose(2, 0, 1)[None].astype(np.float64) / 255 * tensor.scale
    info = np.iinfo(tensor.dtype)
    return np.clip(np.round(x), info.min, info.max).astype(tensor.dtype)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def decode(outputs, tensors, input_size, threshold=0.25):
    """Model outputs {name: array} and their tensors (.name .shape .scale) -> (boxes (n, 4) x1 y1 x2 y2 in input
    pixels, scores (n,), classes (n,)) of every anchor whose best class scores >= threshold."""
    box_by_stride, cls_by_stride = {}, {}
    for t in tensors:
        _, c, fh, fw = t.shape
        stride = input_size // fh
        real = np.asarray(outputs[t.name], np.float64).reshape(c, fh, fw) * t.scale
        (box_by_stride if c == 4 * REG_MAX else cls_by_stride)[stride] = real
    boxes, scores, classes = [], [], []
    for stride, logits in sorted(cls_by_stride.items()):
        ncls, fh, fw = logits.shape
        flat = logits.reshape(ncls, -1)
        best = flat.argmax(0)
        score = _sigmoid(flat.max(0))
        keep = np.nonzero(score >= threshold)[0]
        bins = box_by_stride[stride].reshape(4, REG_MAX, -1)[:, :, keep]
        e = np.exp(bins - bins.max(1, keepdims=True))
        dist = (e * np.arange(REG_MAX)[None, :, None]).sum(1) / e.sum(1)  # (4, n): left, top, right, bottom
        gy, gx = np.divmod(keep, fw)
        gx, gy = gx + 0.5, gy + 0.5
        box = np.stack([gx - dist[0], gy - dist[1], gx + dist[2], gy + dist[3]], 1) * stride
        boxes.append(np.clip(box, 0, input_size))
        scores.append(score[keep])
        classes.append(best[keep])
    return np.concatenate(boxes), np.concatenate(scores), np.concatenate(classes)


def iou(a, b):
    """IoU of each box of a (n, 4) with each of b (m, 4) -> (n, m)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), 2)
    area = lambda x: np.prod(x[:, 2:] - x[:, :2], 1)  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def nms(boxes, scores, classes, iou_threshold=0.5):
    """Greedy per-class non-maximum suppression -> indices kept, best score first."""
    order = np.argsort(-scores, kind="stable")
    kept = []
    for i in order:
        if all(classes[j] != classes[i] or iou(boxes[i:i + 1], boxes[j:j + 1])[0, 0] <= iou_threshold
               for j in kept):
            kept.append(i)
    return np.array(kept, int)


def detect(model, rgb, threshold=0.25, iou_threshold=0.5):
    """Run a yolov8 model on an (h, w, 3) uint8 RGB picture -> (boxes in the letterboxed input, scores,
    classes) after NMS, best first."""
    stage = model.nets[0].stages[0]
    (inp,) = stage.inputs
    size = inp.shape[2]
    boxed, _, _ = letterbox(rgb, size)
    outputs = model.run({inp.name: quantize_input(boxed, inp)})
    boxes, scores, classes = decode(outputs, stage.outputs, size, threshold)
    keep = nms(boxes, scores, classes, iou_threshold)
    return boxes[keep], scores[keep], classes[keep]
