"""Bit order, decided once.

A format is one little-endian integer of `nbytes` bytes; field bits [bit, bit + width) are
read LSB first (bm1880: "lowest bit first inside little-endian 32-bit words", which is the
same integer). bitstruct packs most-significant-bit first, so we compile the fields in
descending bit order and reverse the byte string: that turns the big-endian bitstruct
output into the little-endian descriptor. Fields that cross a 32-bit word boundary need
no special case.
"""
import operator

import bitstruct.c as bitstruct_c

from bmk.encoders.fields import Fields, Layout, one
from bmk.errors import DecodeError, EncodeError


class Codec:
    """Pack and unpack one Format. Compiled once per format (see `codec_for`)."""

    def __init__(self, fmt):
        self.format = fmt
        order = sorted(fmt.fields, key=lambda f: f.bit, reverse=True)
        self.names = tuple(f.name for f in order)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.defaults = tuple(f.default for f in order)
        self.nbytes = fmt.nbytes
        self._order = tuple(order)
        widths = "".join(f"u{f.width}" for f in order)
        self._compiled = bitstruct_c.compile(widths)
        self._templates = {}
        self.layout = Layout(fmt.name, order, fmt.nbytes, self._compiled.unpack,
                             bitstruct_c.compile(widths, list(self.names)).unpack)

    def pack_values(self, values):
        """Pack a full tuple of values in `self.names` order (the fast path)."""
        try:
            return self._compiled.pack(*values)[::-1]
        except (OverflowError, TypeError):
            raise EncodeError(self._explain(values)) from None

    def pack(self, fields):
        """Pack a {field: value} dict; fields left out keep their reset default."""
        if type(fields) is Fields and fields._layout is self.layout:     # decoded by this codec: its bytes
            return fields.packed()
        unknown = set(fields) - set(self.index)
        if unknown:
            raise EncodeError(f"{self.format.name}: unknown fields {sorted(unknown)}")
        values = list(self.defaults)
        for name, value in fields.items():
            values[self.index[name]] = value
        return self.pack_values(values)

    def template(self, keys, prefix=b"", clear=0):
        """The Template packing dicts whose keys are exactly `keys`, in that order (cached)."""
        key = (keys, prefix, clear)
        t = self._templates.get(key)
        if t is None:
            t = self._templates[key] = Template(self, keys, prefix, clear)
        return t

    def unpack(self, data):
        """bytes of exactly nbytes -> Fields: {field: value} for every field (bmk/encoders/fields.py)."""
        return one(self.layout, self._reversed(data))

    def unpack_dict(self, data):
        """bytes of exactly nbytes -> a plain {field: value} dict (small formats read whole: a header)."""
        return self.layout.unpack_dict(self._reversed(data))

    def _reversed(self, data):
        """A descriptor's bytes reversed, what the unpackers read; DecodeError if not nbytes long."""
        if len(data) != self.nbytes:
            raise DecodeError(f"{self.format.name} descriptor must be {self.nbytes} bytes, not {len(data)}")
        return bytes(data)[::-1]

    def _explain(self, values):
        for name, value in zip(self.names, values):
            field = self.format.by_name[name]
            if not isinstance(value, int) or not 0 <= value <= field.max:
                return f"{self.format.name}.{name} must be in [0, {field.max}], not {value!r}"
        return f"{self.format.name}: values do not fit the format"


class Template:
    """Packs one kind of {field: value} dict fast: the same keys, in the same order, every time.

    Built once per (format, keys): the fields left out are pre-packed from their reset defaults
    into one integer (`base`, with `prefix` bytes, e.g. a cmd_hdr_t, in front); the given fields
    go through one bitstruct compiled for them alone (zero padding over the others), so packing
    is one C call and one OR, whatever the format's size. Bits set in `clear` (a mask over the
    format's integer) are zeroed after packing: fields written later (sync ids). All positions
    come from the format's Field bit/width. Errors are the Codec's (EncodeError naming the field).
    """

    def __init__(self, codec, keys, prefix=b"", clear=0):
        fmt = codec.format
        unknown = set(keys) - set(codec.index)
        if unknown:
            raise EncodeError(f"{fmt.name}: unknown fields {sorted(unknown)}")
        given = set(keys)
        self.codec, self.keys = codec, tuple(keys)
        names = [f.name for f in codec._order if f.name in given]
        self._compiled = bitstruct_c.compile("".join(("u" if f.name in given else "p") + str(f.width)
                                                     for f in codec._order))
        # one name: itemgetter returns the value itself, so wrap it in a tuple
        get = operator.itemgetter(*names) if names else (lambda fields: ())
        self._get = get if len(names) != 1 else (lambda fields: (get(fields),))
        shift = 8 * len(prefix)
        defaults = codec.pack({f.name: (0 if f.name in given else f.default) for f in fmt.fields})
        self.base = (int.from_bytes(prefix, "little") |
                     ((int.from_bytes(defaults, "little") & ~clear) << shift))
        self.keep = ~(clear << shift)
        self.shift = shift
        self.nbytes = len(prefix) + fmt.nbytes

    def pack(self, fields):
        """prefix + the packed fields (keys as given at construction; not checked here)."""
        try:
            word = int.from_bytes(self._compiled.pack(*self._get(fields)), "big")
        except (OverflowError, TypeError):
            c = self.codec
            raise EncodeError(c._explain([fields.get(n, d) for n, d in zip(c.names, c.defaults)])) from None
        return ((word << self.shift & self.keep) | self.base).to_bytes(self.nbytes, "little")


def codec_for(fmt):
    """The compiled Codec of a Format, made once and kept on the Format."""
    codec = fmt.memo.get("codec")
    if codec is None:
        codec = fmt.memo["codec"] = Codec(fmt)
    return codec
