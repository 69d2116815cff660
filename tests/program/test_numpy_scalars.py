"""numpy scalars are C integers (and np.bool_ a C bool) everywhere in the API (issue 12, item 6):
every golden case replayed with each int argument as the narrowest numpy integer type that
holds it (np.uint8(8), np.int8(-3), np.uint32(0x1000), ...) and each bool as np.bool_ gives
the vendor's bytes."""
import numpy as np
import pytest

from tests.goldens import load_cases, run_calls

CASES = {name: case for name, case in load_cases().items() if "cmdbuf_sha256" not in case}   # not the 70000-op ones


def narrowest(value):
    if isinstance(value, bool):
        return np.bool_(value)
    for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64):
        info = np.iinfo(t)
        if info.min <= value <= info.max:
            return t(value)
    raise AssertionError(value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_calls_with_numpy_scalars(name):
    assert run_calls(CASES[name], narrowest) == run_calls(CASES[name])
