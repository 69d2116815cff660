"""Layer 0 helpers, shared by every layer (imports nothing from bmk)."""
import enum
import numbers
import operator

import numpy


def is_int(value):
    """An integer where the C API takes one: int or a numpy integer scalar, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def plain(value):
    """A numpy integer scalar as the Python int, np.bool_ as the Python bool (what C's integer
    and bool arguments are); any other value unchanged, for the checks to judge."""
    if isinstance(value, int):       # int, bool, and IntEnums (named ints: bm1684x DT_*, kept as given)
        return value
    if is_int(value):
        return operator.index(value)
    if isinstance(value, numpy.bool_):
        return bool(value)
    return value


class NamedIntEnum(enum.IntEnum):
    """An IntEnum that prints as its name (repr, str and f-strings: error messages, listings),
    and otherwise is its int: equal to it, hashed like it, usable as a dict key or a field value
    (e.g. bm1684x's DT_* and RM_* constants)."""

    def __repr__(self):
        return self.name

    def __str__(self):
        return self.name

    def __format__(self, spec):
        return self.name if not spec else int.__format__(int(self), spec)


def printable(text):
    """Text from a file as one line of output: every character that is not printable (NUL,
    newline, escape sequences, ...) as its Python escape, so a crafted name cannot break a
    line or drive the terminal."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def file_name(text, default="bin"):
    """A name from a file as a safe file name: letters, digits, '.', '-' and '_' kept, any other
    character '_'; never empty, '.' or '..', never a path."""
    name = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in str(text))
    return default if name.strip(".") == "" else name
