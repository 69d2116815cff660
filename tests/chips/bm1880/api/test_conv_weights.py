"""bm1880.conv_weight_image / conv_weight_from_image (issue 12, item 5): the lmem image of a
logical conv weight as seed 4.41 lays it out, its inverse, their errors, and the README
example that uses them (a convolution checked against numpy)."""
import pathlib
import re

import numpy as np
import pytest

import bmk
from bmk import bm1880

README = pathlib.Path(__file__).parents[4] / "README.md"


def test_image_follows_the_seed_strides():
    rng = np.random.default_rng(0)
    cin, cout, kh, kw = 3, 5, 2, 4
    w = rng.integers(-128, 128, (cin, cout, kh, kw), dtype=np.int8)
    flat = bm1880.conv_weight_image(w).reshape(-1)
    # seed 4.41: S_Cin 1, S_Cout Cin*kh*kw, S_kh Cin*kw, S_kw Cin
    for ci, co, y, x in np.ndindex(w.shape):
        assert flat[ci + co * cin * kh * kw + y * cin * kw + x * cin] == w[ci, co, y, x]
    assert bm1880.conv_weight_image(w).shape == (1, cout, kh * kw, cin)
    assert bm1880.conv_weight_image_shape(bm1880.shape_t4(cin, cout, kh, kw)) == bm1880.shape_t4(1, cout, 8, cin)
    np.testing.assert_array_equal(bm1880.conv_weight_from_image(bm1880.conv_weight_image(w), kh, kw), w)
    torch_order = w.transpose(1, 0, 2, 3)
    np.testing.assert_array_equal(bm1880.conv_weight_image(torch_order, cout_first=True), bm1880.conv_weight_image(w))
    np.testing.assert_array_equal(bm1880.conv_weight_from_image(bm1880.conv_weight_image(w), kh, kw, cout_first=True),
                                  torch_order)


@pytest.mark.parametrize("call, args, message", [
    (bm1880.conv_weight_image, (np.zeros((2, 3, 3)),), r"conv_weight_image: w must be a non-empty 4-D integer numpy "
                                                       r"array, not 'an array of shape \(2, 3, 3\) and dtype float64'"),
    (bm1880.conv_weight_image, ("w",), r"conv_weight_image: w must be a non-empty 4-D integer numpy array, not 'w'"),
    (bm1880.conv_weight_from_image, (np.zeros((1, 2, 9, 3), np.int8), 2, 2),
     r"conv_weight_from_image: image must be of shape \(1, Cout, kh \* kw = 4, Cin\), not \(1, 2, 9, 3\)"),
    (bm1880.conv_weight_from_image, (np.zeros((1, 2, 9, 3), np.int8), 3, 0),
     r"conv_weight_from_image: kw must be a positive integer, not 0"),
    (bm1880.conv_weight_image_shape, ((3, 3),), r"conv_weight_image_shape: weight_shape must be a shape_t4"),
])
def test_errors(call, args, message):
    with pytest.raises(bmk.ArgumentError, match=message):
        call(*args)


def test_readme_conv_weight_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (block,) = [b for b in blocks if "bm1880.conv_weight_image(" in b]
    exec(compile(block, "README.md", "exec"), {})


def test_readme_first_example_checks_its_result():
    """Issue 32.16: the README's first example printed zeros (b was never written); it now
    writes both operands and asserts the product against numpy."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert "assert (got == want).all()" in blocks[0] and "0x2000" in blocks[0].split("sim = ")[1]
    exec(compile(blocks[0], "README.md", "exec"), {})
