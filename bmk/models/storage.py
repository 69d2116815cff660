"""Storage modes of tensors in global memory: 1N, and BM1684's 2N / 4N batch interleaving.

Facts: a bmodel Tensor's gmem_stmode (0 1N, 1 2N, 2 4N; isa-facts/bmodel-format.md) and
isa-facts/bm1684-memory.md "4N / 2N": int8/uint8 tensors kept 4N and int16/uint16 2N, i.e.
`pack` = 4 // itemsize consecutive batches share one 32-bit word, byte i*itemsize of the word
of batch group g holding batch pack*g + i. In global memory the words follow the continuous
(C, H, W) order of each batch group (tpu-mlir's debugger: continuous stride times pack, layout
"continuous_XN"), so a (N, C, H, W) tensor is stored as (ceil(N / pack), C, H, W, pack)
elements. The slots of a partial last group (N not a multiple of pack) are written as zeros.
The interleaving itself is bmk/images.py's (the same as bm1684.pack_batches).
"""
import math

import numpy as np

from bmk import images
from bmk.errors import ModelError

WORD_BYTES = 4


def pack_of(storage, dtype, what):
    """Batches per 32-bit word of a tensor stored `storage` ("1N", "2N", "4N")."""
    if storage == "1N":
        return 1
    pack = int(storage[:-1])
    if dtype.itemsize * pack != WORD_BYTES:
        raise ModelError(f"{what}: storage {storage} must pack {WORD_BYTES}-byte words, so it takes "
                         f"{WORD_BYTES // pack}-byte elements, not {dtype}")
    return pack


def device_nbytes(shape, dtype, storage, what):
    """Bytes a tensor of logical `shape` takes in global memory (Python integers: a shape
    from a damaged file whose size passes 2**64 stays a huge number, never wraps)."""
    pack = pack_of(storage, dtype, what)
    n = int(shape[0]) if len(shape) else 1
    return -(-n // pack) * pack * math.prod(int(d) for d in shape[1:]) * dtype.itemsize


def to_device(values, storage, what):
    """Logical array -> its bytes in global memory."""
    arr = np.ascontiguousarray(values)
    pack = pack_of(storage, arr.dtype, what)
    if pack == 1:
        return arr.tobytes()
    return images.interleave(arr, pack).tobytes()


def from_device(data, shape, dtype, storage, what):
    """Bytes of global memory -> the logical array (shape, dtype)."""
    dtype = np.dtype(dtype)
    pack = pack_of(storage, dtype, what)
    flat = np.frombuffer(data, dtype)
    if pack == 1:
        return flat.reshape(shape).copy()
    staged = flat.reshape((-(-shape[0] // pack),) + tuple(shape[1:]) + (pack,))
    return images.deinterleave(staged, shape[0]).copy()
