"""A decoded Record's fields: {field: value}, read by name from the command's own bytes.

`bmk.decode` makes a Record per command, and a dict of its 13-88 fields cost more than the
rest of decoding together (issue 34 item 3): building the dict costs 2-3x unpacking the same
values, and a tuple of values, unlike a dict of ints, is left for the cyclic collector to scan.
A `Fields` keeps the command's bytes (which every field covers: no bit of a class is outside
its fields) and its class's `Layout`, and reads fields from them when asked:

- a mapping of every field of the class, in the codec's order (the order the dicts had),
  equal to the dict of the same items, printing as it;
- a field by name is one compiled bitstruct read of its bits; `values()` (a tuple), `items()`
  and `copy()` unpack every field at once (bitstruct, in C); `copy()` and `as_dict` give a
  plain dict, which code reading many fields of a command takes first (the simulator's checks
  and plans, the disassembler, JSON);
- a value can be set in place (a decoded Record's fields could always be edited before it is
  encoded), checked against the field's width at once; none can be removed, since a decoded
  command has every field of its class;
- encoding a Fields of its own class is its bytes.
"""
from collections.abc import Mapping, MutableMapping
from operator import index

import bitstruct.c as bitstruct_c

from bmk.encoders.records import made_by_columns, slot_setters
from bmk.errors import DecodeError, EncodeError


class Layout:
    """How a Fields of one instruction class reads its bytes: the field names in the codec's
    order, each one's (shift, mask) in the command's integer (`spans`, in that order too), the
    class's size, its codec's tuple and dict unpackers (which take the bytes reversed) and,
    made when first asked for, one field's own unpacker (`readers`)."""

    __slots__ = ("name", "names", "spans", "nbytes", "unpack", "unpack_dict", "readers")

    def __init__(self, name, fields, nbytes, unpack, unpack_dict):
        self.name, self.nbytes = name, nbytes
        self.names = tuple(f.name for f in fields)
        self.spans = {f.name: (f.bit, f.max) for f in fields}
        self.unpack, self.unpack_dict = unpack, unpack_dict
        self.readers = {}

    def reader(self, name):
        """The unpacker of field `name` alone (bitstruct, compiled once; KeyError if no such field)."""
        shift, mask = self.spans[name]
        width = mask.bit_length()
        skip = 8 * self.nbytes - shift - width      # the bits before it, most significant first
        read = self.readers[name] = bitstruct_c.compile(f"p{skip}u{width}" if skip else f"u{width}").unpack
        return read

    def __repr__(self):
        return f"Layout({self.name!r}, {len(self.names)} fields)"


class Fields(MutableMapping):
    """{field: int value} of one decoded command, every field of its class (API.md `r.fields`)."""

    # _raw: the command's bytes reversed (the big-endian bytes of its little-endian integer:
    # what the bitstruct unpackers read). Two slots only: a decoded command fills each once.
    __slots__ = ("_layout", "_raw")

    def __init__(self, layout, data):
        """The Fields of `data`, a command's `layout.nbytes` bytes (as they sit in a stream)."""
        if len(data) != layout.nbytes:
            raise DecodeError(f"{layout.name} descriptor must be {layout.nbytes} bytes, not {len(data)}")
        self._layout, self._raw = layout, bytes(data)[::-1]

    # -- reading, as a dict reads ------------------------------------------------------------
    def __getitem__(self, name):
        try:
            read = self._layout.readers[name]
        except KeyError:
            read = self._layout.reader(name)
        return read(self._raw)[0]

    def get(self, name, default=None):
        try:
            read = self._layout.readers[name]
        except KeyError:
            if name not in self._layout.spans:
                return default
            read = self._layout.reader(name)
        return read(self._raw)[0]

    def __contains__(self, name):
        return name in self._layout.spans

    def __iter__(self):
        return iter(self._layout.names)

    def __len__(self):
        return len(self._layout.names)

    def keys(self):
        return self._layout.spans.keys()

    def values(self):
        return self._layout.unpack(self._raw)

    def items(self):
        return tuple(zip(self._layout.names, self._layout.unpack(self._raw)))

    def copy(self):
        """A plain dict of the same items, in the same order."""
        return self._layout.unpack_dict(self._raw)

    def __eq__(self, other):
        if type(other) is Fields and other._layout is self._layout:
            return self._raw == other._raw
        if isinstance(other, Mapping):
            return self.copy() == as_dict(other)
        return NotImplemented

    __hash__ = None     # as a dict's

    def __or__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        return self.copy() | as_dict(other)

    def __ror__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        return as_dict(other) | self.copy()

    def __ior__(self, other):
        self.update(other)
        return self

    def __reversed__(self):
        return reversed(self._layout.names)

    def __repr__(self):
        return repr(self.copy())

    def __copy__(self):
        return one(self._layout, self._raw)

    def __deepcopy__(self, memo):
        return self.__copy__()      # bytes and a shared Layout: nothing else to copy

    def __reduce__(self):
        return dict, (self.copy(),)     # pickled as the dict it equals

    # -- writing: a value in place ------------------------------------------------------------
    def __setitem__(self, name, value):
        layout = self._layout
        span = layout.spans.get(name)
        if span is None:
            raise KeyError(f"{layout.name} has no field {name!r} (a decoded command has its class's fields; "
                           f"attrs.evolve(r, fields={{...}}) makes a Record with a dict of others)")
        shift, mask = span
        try:
            v = index(value)
        except TypeError:
            v = -1
        if type(value) is bool or not 0 <= v <= mask:
            raise EncodeError(f"{layout.name}.{name} must be in [0, {mask}], not {value!r}")
        word = int.from_bytes(self._raw, "big") & ~(mask << shift) | v << shift
        self._raw = word.to_bytes(layout.nbytes, "big")

    def __delitem__(self, name):
        raise TypeError(f"a decoded {self._layout.name} command has every field of its class: set "
                        f"{name!r} to a value instead (or attrs.evolve(r, fields={{...}}) with a dict)")

    def clear(self):
        raise TypeError(f"a decoded {self._layout.name} command has every field of its class: "
                        f"its fields cannot be cleared")

    def packed(self):
        """The command's bytes, as a stream holds them (the codec's pack of these fields)."""
        return self._raw[::-1]


_SETTERS = slot_setters(Fields, Fields.__slots__)


def one(layout, raw):
    """The Fields of one command: `raw`, its bytes reversed (trusted), read by `layout`."""
    f = object.__new__(Fields)
    _SETTERS[0](f, layout)
    _SETTERS[1](f, raw)
    return f


def made(layouts, raws):
    """The Fields of several commands: layouts[k] and raws[k] (the command's bytes reversed, as
    the layout's unpackers take them; trusted) of each, made a block at a time, as
    records.records makes Records."""
    return made_by_columns(Fields, _SETTERS, len(raws), (layouts, raws))


def not_a_mapping(records):
    """(index, fields) of the first Record whose fields are not a mapping (a hand-made Record:
    attrs.evolve(r, fields=None)), else None: what encode, check and the simulator refuse by
    name before they read any field."""
    for i, r in enumerate(records):
        f = r.fields
        if type(f) is not Fields and type(f) is not dict and not isinstance(f, Mapping):
            return i, f
    return None


def as_dict(fields):
    """A plain dict of a Record's fields (a new one: the caller may change it)."""
    if type(fields) is Fields or type(fields) is dict:
        return fields.copy()
    return dict(fields)
