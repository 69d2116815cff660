"""Layer 0 helpers, shared by every layer (imports nothing from bmk)."""
import numbers


def is_int(value):
    """An integer where the C API takes one: int or a numpy integer scalar, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
