"""Layer 0 helpers, shared by every layer (imports nothing from bmk)."""
import numbers
import operator

import numpy


def is_int(value):
    """An integer where the C API takes one: int or a numpy integer scalar, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def plain(value):
    """A numpy integer scalar as the Python int, np.bool_ as the Python bool (what C's integer
    and bool arguments are); any other value unchanged, for the checks to judge."""
    if type(value) is int or type(value) is bool:
        return value
    if is_int(value):
        return operator.index(value)
    if isinstance(value, numpy.bool_):
        return bool(value)
    return value
