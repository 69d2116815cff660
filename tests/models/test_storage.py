"""1N / 2N / 4N global-memory layouts (bm1684-memory.md "4N / 2N"): batch 4g + i of an int8
tensor is byte i of each word of group g; words follow (C, H, W) order within a group."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bmk
from bmk.models import storage


def test_4n_int8_bytes_by_hand():
    x = np.arange(2 * 3 * 1 * 2, dtype=np.int8).reshape(2, 3, 1, 2)      # N = 2: a partial group of 4
    got = storage.to_device(x, "4N", "x")
    assert len(got) == 1 * 3 * 1 * 2 * 4
    want = bytearray(24)
    for n in range(2):
        for c in range(3):
            for w in range(2):
                want[(c * 2 + w) * 4 + n] = x[n, c, 0, w]                 # slots 2, 3 stay zero
    assert got == bytes(want)
    assert np.array_equal(storage.from_device(got, x.shape, np.int8, "4N", "x"), x)


def test_2n_int16_bytes_by_hand():
    x = np.array([[[[1, 2]]], [[[3, 4]]], [[[5, 6]]]], np.int16)          # (3, 1, 1, 2): groups of 2
    words = np.frombuffer(storage.to_device(x, "2N", "x"), np.int16).reshape(2, 2, 2)   # (group, w, slot)
    assert words.tolist() == [[[1, 3], [2, 4]], [[5, 0], [6, 0]]]
    assert storage.device_nbytes((3, 1, 1, 2), np.dtype(np.int16), "2N", "x") == 16


@given(st.integers(1, 9), st.integers(1, 3), st.integers(1, 4), st.sampled_from([("4N", np.int8), ("4N", np.uint8),
                                                                                  ("2N", np.int16), ("1N", np.float32)]))
def test_round_trip(n, c, w, mode):
    name, dtype = mode
    x = (np.arange(n * c * w) % 100).astype(dtype).reshape(n, c, 1, w)
    data = storage.to_device(x, name, "x")
    assert len(data) == storage.device_nbytes(x.shape, x.dtype, name, "x")
    assert np.array_equal(storage.from_device(data, x.shape, dtype, name, "x"), x)


def test_a_mode_that_does_not_make_words_is_refused():
    with pytest.raises(bmk.ModelError, match="x: storage 4N must pack 4-byte words, so it takes 1-byte elements, "
                                             "not float32"):
        storage.to_device(np.zeros((4, 1, 1, 1), np.float32), "4N", "x")
