"""The OKKernel value types (seed 003 "Some Definitions"; API.md "Argument and value types").

`dim4`, `dim2` and `Padding` are named tuples with the seed's field names; a plain tuple in
the same order is accepted wherever one is expected, and helpers return the named tuple
(which compares equal to the plain tuple).
"""
from typing import NamedTuple

from bmk.layout import dim4  # noqa: F401  (re-exported: the seed names it here)


class dim2(NamedTuple):   # noqa: N801
    """dim2 {h, w}: a kernel, stride or dilation."""
    h: int
    w: int


class Padding(NamedTuple):
    """Padding {top, bottom, left, right}."""
    top: int
    bottom: int
    left: int
    right: int
