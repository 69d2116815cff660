"""Host images of the chips' data layouts: the numpy array a layout stores for a logical array,
and back (issue 22 item 6). Chip-neutral: the chips' modules (bmk/bm1684/images.py,
bmk/bm1684x/images.py) call these with their own facts, and bmk/models/storage.py reads and
writes a bmodel's 4N / 2N tensors with `interleave` / `deinterleave`. The public functions
check their input and raise ArgumentError naming the call.

- Batches (4N / 2N, isa-facts bm1684-memory.md "4N / 2N"): `pack` = word bytes // itemsize
  consecutive batches share one storage word, byte (half-word) slot i of the word of batch
  group g holding batch pack * g + i; a (N, ...) array is stored as (ceil(N / pack), ..., pack)
  elements, the slots of a partial last group zero.
- Channels (the matrix and vector layouts, bm1684-memory.md "Matrix Layout", bm1684x-memory.md
  "vector layout"): row r of a rows x cols matrix with `per_channel` = w columns a channel is
  n = r of the (rows, ceil(cols / w), 1, w) tensor, column y at channel y // w, position y % w;
  the last channel's positions past cols are zero. A vector of length L is the matrix of one row.
"""
import numpy as np

from bmk.errors import ArgumentError, must


def numeric_array(call, name, value, ndim=None):
    """`value` as a numeric numpy array (of `ndim` dimensions when given)."""
    try:
        arr = np.asarray(value)
    except Exception:
        raise ArgumentError(must(call, name, "a numeric array", type(value).__name__)) from None
    if arr.dtype.kind not in "biuf" or (ndim is not None and arr.ndim != ndim):
        what = f"a {ndim}-D numeric array" if ndim else "a numeric array"
        raise ArgumentError(must(call, name, what, arr.shape if arr.dtype.kind in "biuf" else arr.dtype))
    return arr


def count(call, name, value, lo=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ArgumentError(must(call, name, f"an integer >= {lo}", value))
    return int(value)


# -- batches: 4N / 2N ----------------------------------------------------------------------------
def batch_pack(itemsize, word_bytes):
    """Batches per storage word for elements of `itemsize` bytes (4: 4N, 2: 2N, 1: 1N)."""
    return max(1, word_bytes // itemsize)


def interleave(arr, pack):
    """(N, ...) -> (ceil(N / pack), ..., pack): batch pack * g + i in slot i of group g's words,
    a partial last group's other slots zero. No checks (callers check)."""
    n = arr.shape[0]
    groups = -(-n // pack)
    padded = np.zeros((groups * pack,) + arr.shape[1:], arr.dtype)
    padded[:n] = arr
    return np.ascontiguousarray(np.moveaxis(padded.reshape((groups, pack) + arr.shape[1:]), 1, -1))


def deinterleave(image, n):
    """(ceil(N / pack), ..., pack) -> (N, ...): the inverse of interleave. No checks."""
    pack = image.shape[-1]
    return np.ascontiguousarray(np.moveaxis(image, -1, 1)).reshape((image.shape[0] * pack,) + image.shape[1:-1])[:n]


def pack_batches(values, word_bytes, call="pack_batches"):
    """(N, C, H, W) -> (ceil(N / pack), C, H, W, pack) of the same dtype (module docstring)."""
    arr = numeric_array(call, "values", values, 4)
    return interleave(arr, batch_pack(arr.dtype.itemsize, word_bytes))


def unpack_batches(image, n, word_bytes, call="unpack_batches"):
    """(ceil(N / pack), C, H, W, pack) -> (N, C, H, W); `n`: the batches N."""
    arr = numeric_array(call, "image", image)
    n = count(call, "n", n)
    pack = batch_pack(arr.dtype.itemsize, word_bytes)
    groups = -(-n // pack)
    if arr.ndim != 5 or arr.shape[0] != groups or arr.shape[-1] != pack:
        raise ArgumentError(must(call, "image", f"a ({groups}, C, H, W, {pack}) array of {arr.dtype} "
                                 f"(N = {n} in groups of {pack})", arr.shape))
    return deinterleave(arr, n).copy()


# -- channels: the matrix and vector layouts -----------------------------------------------------
def channels_image(matrix, per_channel, call="channels_image"):
    """A rows x cols matrix (a 1-D vector: one row) -> the (rows, ceil(cols / w), 1, w) tensor of
    the matrix / vector layout, w = per_channel (module docstring)."""
    arr = numeric_array(call, "matrix", matrix)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ArgumentError(must(call, "matrix", "a 2-D matrix or a 1-D vector, not empty", arr.shape))
    w = count(call, "per_channel", per_channel)
    rows, cols = arr.shape
    c = -(-cols // w)
    out = np.zeros((rows, c * w), arr.dtype)
    out[:, :cols] = arr
    return out.reshape(rows, c, 1, w)


def from_channels_image(tensor, cols, call="from_channels_image"):
    """The (rows, ceil(cols / w), 1, w) tensor of the matrix / vector layout -> the rows x cols
    matrix."""
    arr = numeric_array(call, "tensor", tensor, 4)
    cols = count(call, "cols", cols)
    rows, c, h, w = arr.shape
    if h != 1 or w == 0 or c != -(-cols // w):
        raise ArgumentError(must(call, "tensor", f"a (rows, ceil({cols} / w), 1, w) tensor", arr.shape))
    return arr.reshape(rows, c * w)[:, :cols].copy()
