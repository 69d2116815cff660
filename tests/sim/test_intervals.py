"""bmk.sim.intervals: the bytes two strided layouts share, on intervals, against the offsets
themselves enumerated (numpy); past MAX_BLOCKS a range that holds every shared byte."""
import numpy as np
from hypothesis import given, settings, strategies as st

from bmk.sim import intervals

dims = st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0, 1, 2, 3, 4, 5, 8, 12, 16, -1, -3])),
                min_size=1, max_size=5)
layouts = st.tuples(st.integers(0, 60), dims)


def _layout(drawn):
    base, ds = drawn
    return base, tuple(d for d, _ in ds), tuple(s for _, s in ds)


def _brute(la, lb, lo, hi):
    def offsets(layout):
        base, dims, strides = layout
        off = np.array([base])
        for d, s in zip(dims, strides):
            off = (off[:, None] + np.arange(d) * s).reshape(-1)
        return off[(off >= lo) & (off < hi)]
    common = np.intersect1d(offsets(la), offsets(lb))
    return (int(common[0]), int(common[-1]) + 1) if len(common) else None


@settings(max_examples=400, deadline=None)
@given(layouts, layouts, st.integers(-20, 40), st.integers(0, 150))
def test_common_range_is_exact(a, b, lo, hi):
    la, lb = _layout(a), _layout(b)
    assert intervals.common_range(la, lb, lo, hi) == _brute(la, lb, lo, hi)


@settings(max_examples=200, deadline=None)
@given(layouts, layouts, st.integers(-20, 40), st.integers(0, 150))
def test_past_the_block_bound_the_range_holds_every_common_byte(a, b, lo, hi):
    la, lb = _layout(a), _layout(b)
    bound = intervals.MAX_BLOCKS
    intervals.MAX_BLOCKS = 2
    try:
        got = intervals.common_range(la, lb, lo, hi)
    finally:
        intervals.MAX_BLOCKS = bound
    want = _brute(la, lb, lo, hi)
    if want is not None:
        assert got is not None and got[0] <= want[0] and want[1] <= got[1]


def test_normal_form():
    # zero strides and single elements dropped, a negative stride flipped, touching copies one run
    assert intervals.normal_form((10, (3, 1, 4, 2), (0, 7, -1, 100))) == (7, 4, ((2, 100),))
    assert intervals.normal_form((0, (2, 0), (1, 1))) is None
    assert intervals.normal_form((0, (4, 8, 2), (16, 64, 1))) == (0, 2, ((32, 16),))    # (4, 16), (8, 64) merged
