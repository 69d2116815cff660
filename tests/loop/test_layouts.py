"""Issue 22.6: layout helpers. A conv through the bm1684 API with its weight laid out by
conv_weight_image gives numpy's conv on the simulator; pack_batches images are what the
simulator's 4N / 2N local tensors hold and what its 8/16-bit copies make; matrix_image /
vector_image are the matrix and vector layouts the GDMA matrix copies, okk_bdc_matmul and the
bm1684x vc functions read; each helper has its inverse."""
import numpy as np
import pytest

import bmk
from bmk import bm1684, bm1684x

G = 0x100000000
rng = np.random.default_rng(22)


def _gmem(sim, addr, shape, dtype):
    dtype = np.dtype(dtype)
    return np.frombuffer(sim.gmem_read(addr, int(np.prod(shape)) * dtype.itemsize), dtype).reshape(shape)


def _conv_reference(x, w, b, pad):
    """float64 conv2d, stride 1: x (N, IC, H, W), w (IC, OC, kh, kw), b (OC,)."""
    n, ic, h, wd = x.shape
    _, oc, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, oc, oh, ow)) + b.reshape(1, oc, 1, 1)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,co->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
    return out


# -- 2IC conv weight -----------------------------------------------------------------------------
@pytest.mark.parametrize("ic, oc, k", [(5, 7, 3), (4, 66, 1), (1, 3, 2)])
def test_conv_with_conv_weight_image_is_numpys_conv(ic, oc, k):
    n, h, w, pad = 2, 6, 5, k // 2
    x = rng.standard_normal((n, ic, h, w)).astype(np.float32)
    wt = rng.standard_normal((oc, ic, k, k)).astype(np.float32)          # PyTorch order
    b = rng.standard_normal(oc).astype(np.float32)
    x_l, w_l, b_l, y_l = 0, 0x8000, 0x9000, 0xA000
    w_shape = bm1684.conv_weight_image_shape(ic, oc, k, k)
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(x_l, G, bm1684.dim4(n, ic, h, w))
    ctx.gdma_32bit_cpy_S2L(w_l, G + 0x10000, w_shape, bm1684.compact_stride(0, w_shape), None)
    ctx.gdma_32bit_cpy_S2L(b_l, G + 0x20000, (1, oc, 1, 1), bm1684.compact_stride(0, (1, oc, 1, 1)), None)
    ctx.bdc_conv2d(y_l, x_l, w_l, b_l, (n, ic, h, w), oc, k, k, None, None, True, False,
                   bm1684.Padding(pad, pad, pad, pad), None, None)
    oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
    ctx.gdma_32bit_cpy_L2S(G + 0x30000, y_l, (n, oc, oh, ow))
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, x)
    sim.gmem_write(G + 0x10000, bm1684.conv_weight_image(wt, cout_first=True))
    sim.gmem_write(G + 0x20000, b)
    sim.run(ctx.acquire_streams())
    ref = _conv_reference(x, wt.transpose(1, 0, 2, 3), b, pad)
    got = _gmem(sim, G + 0x30000, (n, oc, oh, ow), np.float32)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    if ic > 1:                                              # the logical order is not what conv reads
        sim.gmem_write(G + 0x10000, np.ascontiguousarray(wt.transpose(1, 0, 2, 3)))
        sim.run(ctx.acquire_streams())
        assert not np.allclose(_gmem(sim, G + 0x30000, (n, oc, oh, ow), np.float32), ref, atol=1e-3)


def test_conv_weight_image_pairs_input_channels():
    w = np.arange(3 * 2 * 1 * 2, dtype=np.float32).reshape(3, 2, 1, 2)      # (IC, OC, kh, kw)
    image = bm1684.conv_weight_image(w)
    assert image.shape == (2, 2, 1, 2, 2) and image.dtype == np.float32
    assert image[0, 1, 0, 1].tolist() == [w[0, 1, 0, 1], w[1, 1, 0, 1]]     # channels 0 and 1 side by side
    assert image[1, 1, 0, 1].tolist() == [w[2, 1, 0, 1], 0]                  # odd IC: the last word 0
    assert bm1684.conv_weight_image_shape(3, 2, 1, 2) == (2, 2, 1, 4)


@pytest.mark.parametrize("ic", [1, 4, 7])
def test_conv_weight_image_round_trips(ic):
    w = rng.standard_normal((ic, 5, 3, 2)).astype(np.float32)
    np.testing.assert_array_equal(bm1684.conv_weight_from_image(bm1684.conv_weight_image(w), ic), w)
    pt = w.transpose(1, 0, 2, 3)
    image = bm1684.conv_weight_image(pt, cout_first=True)
    np.testing.assert_array_equal(image, bm1684.conv_weight_image(w))
    np.testing.assert_array_equal(bm1684.conv_weight_from_image(image, ic, cout_first=True), pt)


@pytest.mark.parametrize("call, args, match", [
    ("conv_weight_image", (np.zeros((2, 3, 3)),), "conv_weight_image: weight must be a 4-D numeric array"),
    ("conv_weight_image", ("abc",), "conv_weight_image: weight must be"),
    ("conv_weight_from_image", (np.zeros((2, 3, 1, 1, 2)), 5), "conv_weight_from_image: ic must be 3 or 4"),
    ("conv_weight_from_image", (np.zeros((2, 3, 1, 1, 3)), 4), "conv_weight_from_image: image must be a"),
    ("conv_weight_image_shape", (0, 1, 1, 1), "conv_weight_image_shape: ic must be an integer >= 1"),
    ("unpack_batches", (np.zeros((1, 2, 1, 1, 4), np.int8), 5), r"unpack_batches: image must be a \(2, C, H, W, 4\)"),
    ("unpack_batches", (np.zeros((1, 2, 1, 1, 4), np.int8), 2.0), "unpack_batches: n must be an integer"),
    ("pack_batches", (np.zeros((2, 3), np.int8),), "pack_batches: values must be a 4-D numeric array"),
    ("matrix_image", (np.zeros((2, 3)), 0), "matrix_image: per_channel must be an integer >= 1"),
    ("matrix_from_image", (np.zeros((2, 3, 1, 4)), 4), r"matrix_from_image: tensor must be a \(rows, ceil\(4 / w\)"),
])
def test_helpers_refuse_bad_input_naming_the_call(call, args, match):
    with pytest.raises(bmk.ArgumentError, match=match):
        getattr(bm1684, call)(*args)


# -- 4N / 2N -------------------------------------------------------------------------------------
def test_pack_batches_interleaves_batches_in_each_word():
    x = np.arange(6 * 1 * 1 * 2, dtype=np.int8).reshape(6, 1, 1, 2)
    image = bm1684.pack_batches(x)
    assert image.shape == (2, 1, 1, 2, 4)
    # word (g=0, w=1) holds batches 0..3 of element w=1, one a byte; group 1 holds batches 4, 5 and zeros
    assert image.tobytes()[4:8] == bytes([x[0, 0, 0, 1], x[1, 0, 0, 1], x[2, 0, 0, 1], x[3, 0, 0, 1]])
    assert image[1, 0, 0, 0].tolist() == [x[4, 0, 0, 0], x[5, 0, 0, 0], 0, 0]
    assert bm1684.pack_batches(x.astype(np.int16)).shape == (3, 1, 1, 2, 2)        # 2N
    assert bm1684.pack_batches(x.astype(np.float32)).shape == (6, 1, 1, 2, 1)      # 32-bit: 1N


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.float32])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_pack_unpack_round_trip(dtype, n):
    x = rng.integers(-100, 100, (n, 3, 2, 5)).astype(dtype)
    np.testing.assert_array_equal(bm1684.unpack_batches(bm1684.pack_batches(x), n), x)


@pytest.mark.parametrize("dtype, bits", [(np.int8, 8), (np.int16, 16)])
def test_a_packed_image_is_the_simulators_4n_2n_local_tensor(dtype, bits):
    """The image loaded as a 32-bit tensor (ceil(N/pack), C, H, W) equals, byte for byte, what
    the 8/16-bit S2L copy makes of the 1N tensor; the simulator reads it back as x (its 4N/2N
    view), the 8/16-bit L2S stores x 1N, and unpack_batches of a 32-bit store gives x."""
    n, c, h, w = 7, 66, 3, 5                    # a partial last group; channels wrap past NPU 63
    pack = 4 // np.dtype(dtype).itemsize
    x = rng.integers(-100, 100, (n, c, h, w)).astype(dtype)
    groups = -(-n // pack)
    words = bm1684.dim4(groups, c, h, w)
    img_l, cpy_l = 0, 0x10000
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(img_l, G, words)                                       # the image, as words
    getattr(ctx, f"gdma_{bits}bit_cpy_S2L")(cpy_l, G + 0x100000, (n, c, h, w))    # x itself, 1N
    getattr(ctx, f"gdma_{bits}bit_cpy_L2S")(G + 0x200000, img_l, (n, c, h, w))    # the image, stored 1N
    ctx.gdma_32bit_cpy_L2S(G + 0x300000, cpy_l, words)                            # the 4N/2N copy, as words
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, bm1684.pack_batches(x))
    sim.gmem_write(G + 0x100000, x)
    sim.run(ctx.acquire_streams())
    lane = bm1684.local_mem_size_per_npu()
    slot = bm1684.aligned_stride_for_32bit(0, words).n * 4                         # bytes of a group, per NPU
    for npu in (0, 1, 63):
        assert sim.lmem_read(npu * lane + img_l, groups * slot) == sim.lmem_read(npu * lane + cpy_l, groups * slot)
    stride = getattr(bm1684, f"aligned_stride_for_{bits}bit")(0, (n, c, h, w))
    np.testing.assert_array_equal(sim.lmem_read_array(img_l, (n, c, h, w), stride, dtype, pack=pack), x)
    np.testing.assert_array_equal(_gmem(sim, G + 0x200000, (n, c, h, w), dtype), x)
    image = _gmem(sim, G + 0x300000, (groups, c, h, w, pack), dtype)
    np.testing.assert_array_equal(bm1684.unpack_batches(image, n), x)


def test_4n_int8_to_fp32_reads_a_packed_image():
    n, c, h, w = 5, 8, 2, 16
    x = rng.integers(-128, 128, (n, c, h, w)).astype(np.int8)
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(0, G, (2, c, h, w))
    ctx.bdc_4N_int8_to_fp32(0x4000, 0, 0x8000, (n, c, h, w), True, True)
    ctx.gdma_32bit_cpy_L2S(G + 0x10000, 0x4000, (n, c, h, w))
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, bm1684.pack_batches(x))
    sim.run(ctx.acquire_streams())
    np.testing.assert_array_equal(_gmem(sim, G + 0x10000, (n, c, h, w), np.float32), x.astype(np.float32))


def test_model_storage_uses_the_same_interleaving():
    from bmk.models import storage
    x = rng.integers(-100, 100, (5, 3, 4, 2)).astype(np.int8)
    assert storage.to_device(x, "4N", "t") == bm1684.pack_batches(x).tobytes()
    data = bm1684.pack_batches(x.astype(np.int16)).tobytes()
    np.testing.assert_array_equal(storage.from_device(data, x.shape, np.int16, "2N", "t"), x)


# -- matrix and vector layouts -------------------------------------------------------------------
def test_matrix_image_is_what_the_matrix_copies_and_matmul_read():
    rows, k, cols, wl, wr = 5, 13, 9, 4, 4
    left = rng.standard_normal((rows, k)).astype(np.float32)
    right = rng.standard_normal((k, cols)).astype(np.float32)
    lt = bm1684.matrix_image(left, wl)
    assert lt.shape == (rows, 4, 1, wl) and lt[0, 3, 0].tolist() == [left[0, 12], 0, 0, 0]
    rt = bm1684.matrix_image(right, wr)
    l_l, r_l, o_l, m_l = 0, 0x4000, 0x8000, 0xC000
    ctx = bm1684.Context()
    ctx.gdma_32bit_cpy_S2L(l_l, G, lt.shape)                          # the left image, as a tensor
    ctx.gdma_32bit_matrix_S2L(r_l, G + 0x10000, k, cols, wr, cols)    # the right one by the matrix copy
    ctx.bdc_matmul(o_l, l_l, r_l, 0, rows, k, cols, wl, wr, False, False)
    ctx.gdma_32bit_matrix_L2S(G + 0x20000, o_l, rows, cols, wr, cols)
    ctx.gdma_32bit_matrix_S2L(m_l, G + 0x40000, rows, k, wl, k)       # left again, by the matrix copy ...
    ctx.gdma_32bit_cpy_L2S(G + 0x30000, m_l, lt.shape)                # ... stored as a tensor
    sim = bmk.Simulator("bm1684")
    sim.gmem_write(G, lt)
    sim.gmem_write(G + 0x10000, right)
    sim.gmem_write(G + 0x40000, left)
    sim.run(ctx.acquire_streams())
    got = _gmem(sim, G + 0x20000, (rows, cols), np.float32)
    np.testing.assert_allclose(got, left.astype(np.float64) @ right, rtol=1e-5, atol=1e-5)
    stored = _gmem(sim, G + 0x30000, lt.shape, np.float32)
    np.testing.assert_array_equal(bm1684.matrix_from_image(stored, k), left)
    np.testing.assert_array_equal(stored.reshape(rows, -1)[:, :k], lt.reshape(rows, -1)[:, :k])


@pytest.mark.parametrize("cols, w", [(1, 1), (10, 4), (12, 4), (3, 16)])
def test_matrix_image_round_trips(cols, w):
    m = rng.standard_normal((3, cols)).astype(np.float32)
    np.testing.assert_array_equal(bm1684.matrix_from_image(bm1684.matrix_image(m, w), cols), m)
    np.testing.assert_array_equal(bm1684x.matrix_from_image(bm1684x.matrix_image(m, w), cols), m)
    np.testing.assert_array_equal(bm1684x.vector_from_image(bm1684x.vector_image(m[0], w), cols), m[0])


def test_bm1684x_vc_reads_vector_images_and_writes_a_matrix_image():
    len0, len1, w0, w1 = 20, 70, 8, 32
    x = rng.integers(-1000, 1000, len0).astype(np.int16)
    y = rng.integers(-1000, 1000, len1).astype(np.int16)
    xi, yi = bm1684x.vector_image(x, w0), bm1684x.vector_image(y, w1)
    assert xi.shape == (1, 3, 1, 8) and yi.shape == (1, 3, 1, 32)
    out = (len0, -(-len1 // w1), 1, w1)
    dt = bm1684x.DT_INT16
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0, G, xi.shape, None, None, dt)
    ctx.gdma_cpy_S2L(0x1000, G + 0x1000, yi.shape, None, None, dt)
    ctx.bdc_vc_max(0x2000, 0, 0x1000, len0, len1, w0, w1, dt)
    ctx.gdma_cpy_L2S(G + 0x2000, 0x2000, out, None, None, dt)
    sim = bmk.Simulator("bm1684x")
    sim.gmem_write(G, xi)
    sim.gmem_write(G + 0x1000, yi)
    sim.run(ctx.acquire_streams())
    got = bm1684x.matrix_from_image(_gmem(sim, G + 0x2000, out, np.int16), len1)
    np.testing.assert_array_equal(got, np.maximum.outer(x, y))


def test_the_readme_layout_example_runs():
    import pathlib
    import re
    readme = pathlib.Path(__file__).parents[2] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    (block,) = [b for b in blocks if "bm1684.conv_weight_image(" in b]
    exec(compile(block, "README.md", "exec"), {})
