"""Sparse memory views that cross pages (issue 21 item 5): exact, memoized, and costing the
pieces and elements they touch, never the bytes they span (bmk/sim/memory.py)."""
import numpy as np
import pytest

from bmk.errors import SimulationError
from bmk.sim import memory
from bmk.sim.memory import Gmem, PiecewiseView, TensorView


class SmallPages(Gmem):
    PAGE = 256          # pages small enough that random views cross many of them


def _model_view(flat, addr, shape, strides, dtype):
    e = np.dtype(dtype).itemsize
    return np.lib.stride_tricks.as_strided(flat[addr:].view(np.uint8), shape, tuple(s * e for s in strides))


@pytest.mark.parametrize("seed", range(40))
def test_views_across_pages_read_and_write_what_a_flat_memory_does(seed):
    rng = np.random.default_rng(seed)
    size = 1 << 14
    mem, flat = SmallPages(size), np.zeros(size, np.uint8)
    init = rng.integers(0, 256, size, dtype=np.uint8)
    mem.store(0, init)
    flat[:] = init
    for _ in range(6):
        dtype = np.dtype(rng.choice(["u1", "<u2", "<u4"]))
        e = dtype.itemsize
        shape = tuple(int(v) for v in rng.integers(1, 5, 4))
        strides = tuple(int(v) for v in rng.integers(0, 40, 4))
        span = sum((d - 1) * s for d, s in zip(shape, strides)) * e + e
        addr = int(rng.integers(0, size - span)) // e * e          # element-aligned
        want = np.array(_model_view(flat, addr, shape, strides, np.uint8).view(dtype)
                        if e == 1 else _read_model(flat, addr, shape, strides, dtype))
        view = mem.tensor("t", addr, shape, strides, None, False, dtype)
        np.testing.assert_array_equal(np.asarray(view.read()), want)
        strides = _disjoint(rng, shape)                            # writes: one byte, one element
        span = sum((d - 1) * s for d, s in zip(shape, strides)) * e + e
        addr = int(rng.integers(0, size - span)) // e * e
        vals = rng.integers(0, 1 << (8 * e), shape, dtype=np.uint64).astype(dtype)
        mem.tensor("t", addr, shape, strides, None, True, dtype).write(vals)
        _write_model(flat, addr, shape, strides, vals)
        np.testing.assert_array_equal(mem.load(0, size), flat)


def _disjoint(rng, shape):
    """Strides (elements) of a padded layout: distinct indices, distinct elements."""
    st = [int(rng.integers(1, 4))]
    for d in reversed(shape[1:]):
        st.insert(0, d * st[0] + int(rng.integers(0, 9)))
    return tuple(st)


def _offsets(addr, shape, strides, e):
    idx = np.indices(shape).reshape(4, -1).T
    return addr + (idx * np.array(strides)).sum(1) * e


def _read_model(flat, addr, shape, strides, dtype):
    e = dtype.itemsize
    offs = _offsets(addr, shape, strides, e)
    return np.stack([flat[o:o + e].view(dtype)[0] for o in offs]).reshape(shape)


def _write_model(flat, addr, shape, strides, vals):
    e = vals.dtype.itemsize
    for o, v in zip(_offsets(addr, shape, strides, e), vals.reshape(-1)):
        flat[o:o + e] = np.frombuffer(v.tobytes(), np.uint8)


def test_a_view_across_pages_is_memoized_pieces_of_them():
    """A (1, 64, 4, 8) tile whose channels are 1 MiB apart spans 63 MiB of global memory: its
    view is 64 page-sized pieces (no copy of the span), made once and reused."""
    mem = Gmem(1 << 30)
    shape, strides = (1, 64, 4, 8), (0, 1 << 20, 8, 1)
    v = mem.tensor("t", (1 << 24) - 100, shape, strides)
    assert isinstance(v, PiecewiseView) and len(v._parts) <= 8
    assert mem.tensor("t", (1 << 24) - 100, shape, strides) is v
    assert len(mem.pages) == 5


def test_a_view_inside_one_page_is_one_strided_view():
    mem = Gmem(1 << 30)
    assert isinstance(mem.tensor("t", 100, (2, 3, 4, 5), (60, 20, 5, 1)), TensorView)


def test_an_element_across_a_page_boundary_is_gathered():
    mem = Gmem(1 << 30)
    addr = (1 << 24) - 2
    mem.store(addr, np.array([1, 2, 3, 4, 5, 6, 7, 8], np.uint8))
    v = mem.tensor("t", addr, (1, 1, 1, 2), (0, 0, 0, 1), None, False, np.dtype("<u4"))
    assert not isinstance(v, PiecewiseView)
    assert np.asarray(v.read()).reshape(-1).tolist() == [0x04030201, 0x08070605]
    mem.tensor("t", addr, (1, 1, 1, 1), (0, 0, 0, 1), None, True, np.dtype("<u4")).write(np.uint32(0xAABBCCDD))
    assert mem.load(addr, 4).tolist() == [0xDD, 0xCC, 0xBB, 0xAA]
    # a kept view (an instruction plan keeps its views) reads what is there now, not what was
    mem.store(addr, np.array([9, 9, 9, 9], np.uint8))
    assert np.asarray(v.read()).reshape(-1).tolist() == [0x09090909, 0x08070605]


def test_a_view_on_too_many_pages_is_refused_before_work():
    mem = Gmem(1 << 40)
    shape, strides = (1, 1, memory.MAX_PIECES + 1, 1), (0, 0, 1 << 24, 1)      # every row on its own page
    with pytest.raises(SimulationError, match="pages"):
        mem.tensor("t", 0, shape, strides)
    assert len(mem.pages) == 0


def test_a_space_smaller_than_a_page_holds_a_page_of_its_own_size():
    """static memory (16 KiB) and the like: one page of the space's size (a reset zeroes what is
    held: 16 KiB, not 16 MiB), read, written and cleared as a large space's first page."""
    size = 0x4000
    mem = Gmem(size, "static")
    data = np.arange(size, dtype=np.uint32).astype(np.uint8)
    mem.store(0, data)
    assert sum(p.nbytes for p in mem.pages.values()) == size
    np.testing.assert_array_equal(mem.load(0, size), data)
    np.testing.assert_array_equal(mem.gather(np.array([0, size - 1], np.int64)), data[[0, -1]])
    with pytest.raises(SimulationError, match="inside static"):
        mem.check_range("a store", size - 1, 2)
    mem.clear()
    np.testing.assert_array_equal(mem.load(0, size), np.zeros(size, np.uint8))


@pytest.mark.parametrize("seed", range(20))
def test_clear_zeroes_every_byte_any_write_path_changed(seed):
    """clear() zeroes only ranges (issue 34): whatever wrote the bytes (a store, a view made for
    writing, through its array or write(), one crossing pages, a sparse gathered view, a scatter),
    a run after clear() reads zeros, and again after the same views write once more (memoized
    views keep their ranges); a view made for reading cannot write."""
    rng = np.random.default_rng(seed)
    size = 1 << 14
    mem = SmallPages(size)
    views = []
    for _ in range(2):                   # two runs over the same memoized views
        mem.store(int(rng.integers(0, size - 64)), rng.integers(1, 256, 64, dtype=np.uint8))
        offsets = rng.choice(size, 30, replace=False).astype(np.int64)
        mem.scatter(offsets, rng.integers(1, 256, 30, dtype=np.uint8))
        for k in range(6):
            shape = (1, int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4)))
            strides = (0, int(rng.integers(100, 700)), int(rng.integers(9, 30)), 3)   # sparse: may gather
            addr = 1000 * k + int(rng.integers(0, 500))
            view = mem.tensor("t", addr, shape, strides, None, True)
            if k % 2 and getattr(view, "array", None) is not None:
                view.array[...] = 7
            else:
                view.write(np.full(shape, 9, np.uint8))
            views.append((addr, shape, strides))
        assert mem.load(0, size).any()
        mem.clear()
        np.testing.assert_array_equal(mem.load(0, size), 0)
    read = mem.tensor("r", 5, (1, 2, 2, 2), (0, 300, 20, 1), None, False)
    if getattr(read, "array", None) is not None:
        with pytest.raises(ValueError):
            read.array[...] = 1
