"""The lmem image of a convolution weight (seed 4.41), and back.

tpu_conv's weight has the logical shape (Cin, Cout, kh, kw), but lmem holds it "as if it is of
shape (1, Cout, kh * kw, Cin)": strides Cin 1, Cout Cin * kh * kw, kh Cin * kw, kw Cin.
Loading a logical array as it is gives wrong numbers without any error; these helpers give
the array to load instead:

    image = bm1880.conv_weight_image(w)                     # (1, Cout, kh * kw, Cin)
    io = ctx.tl_prealloc(weight.la, bm1880.conv_weight_image_shape(weight.shape), weight.fmt)
    ctx.gdma_load(io, gaddr, CTRL_NULL)                     # after sim.gmem_write(gaddr, image)
"""
import numpy as np

from bmk.errors import ArgumentError, must
from bmk.bm1880.tensor import Shape, shape_t4


def _weight(call, name, value, ndim):
    arr = np.asarray(value) if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)) else None
    if arr is None or arr.ndim != ndim or arr.dtype.kind not in "iu" or 0 in arr.shape:
        raise ArgumentError(must(call, name, f"a non-empty {ndim}-D integer numpy array", value if arr is None
                                 else f"an array of shape {arr.shape} and dtype {arr.dtype}"))
    return arr


def conv_weight_image(w, cout_first=False):
    """The lmem image (1, Cout, kh * kw, Cin) of a logical conv weight (seed 4.41).

    w: integer array (Cin, Cout, kh, kw), the seed's logical shape, or (Cout, Cin, kh, kw)
    (the PyTorch / ONNX order) with cout_first=True. Returns a C-contiguous array of w's
    dtype whose bytes, loaded into a tensor of shape (1, Cout, kh * kw, Cin) at the weight's
    la (unaligned: tl_prealloc), are what tpu_conv reads.
    """
    w = _weight("conv_weight_image", "w", w, 4)
    if cout_first:
        w = w.transpose(1, 0, 2, 3)
    cin, cout, kh, kw = w.shape
    return np.ascontiguousarray(w.transpose(1, 2, 3, 0)).reshape(1, cout, kh * kw, cin)


def conv_weight_from_image(image, kh, kw, cout_first=False):
    """The inverse of conv_weight_image: the logical weight (Cin, Cout, kh, kw) (or (Cout, Cin,
    kh, kw) with cout_first=True) of an lmem image (1, Cout, kh * kw, Cin) (seed 4.41)."""
    image = _weight("conv_weight_from_image", "image", image, 4)
    for name, value in (("kh", kh), ("kw", kw)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ArgumentError(must("conv_weight_from_image", name, "a positive integer", value))
    one, cout, taps, cin = image.shape
    if one != 1 or taps != kh * kw:
        raise ArgumentError(must("conv_weight_from_image", "image", f"of shape (1, Cout, kh * kw = {kh * kw}, Cin)",
                                 image.shape))
    w = image.reshape(cout, kh, kw, cin).transpose(3, 0, 1, 2)
    return np.ascontiguousarray(w.transpose(1, 0, 2, 3) if cout_first else w)


def conv_weight_image_shape(weight_shape):
    """shape_t4(1, Cout, kh * kw, Cin): the tensor to load a conv_weight_image through, for a
    weight of shape (Cin, Cout, kh, kw) (seed 4.41)."""
    if not isinstance(weight_shape, Shape) or weight_shape.dim != 4:
        raise ArgumentError(must("conv_weight_image_shape", "weight_shape", "a shape_t4 (Cin, Cout, kh, kw)",
                                 weight_shape))
    cin, cout, kh, kw = weight_shape.dims()
    return shape_t4(1, cout, kh * kw, cin)
