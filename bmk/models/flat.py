"""A bounded reader of FlatBuffer tables, keyed on field ids, for files nobody vouches for.

The PyPI `flatbuffers` runtime reads tables (`flatbuffers.table.Table`) but checks nothing: a
bad offset becomes an IndexError, a struct.error, a negative index that silently wraps, or a
vector "length" of four billion. Every access here is checked first, against the bytes that
are really there, and a defect raises `ModelError` naming the file, the byte offset in the
file, the table path (e.g. `Model.net[0].parameter[0]`) and the rule broken.

Layout facts (isa-facts/bmodel-format.md section 2, the FlatBuffers binary format): a table
at `pos` starts with an int32 soffset to its vtable (`vtable = pos - soffset`); the vtable is
u16 vtable length, u16 table length, then one u16 field offset per field id (slot 4 + 2*id,
0 = absent). Strings, sub-tables and vectors are u32 offsets relative to where they are
stored; a vector or string starts with its u32 element count.

Bounds: no vector is materialised before its length is checked against the bytes left, and
every table, vector element and string byte read is charged to a budget proportional to the
FlatBuffer's size (`BUDGET_PER_BYTE`), so tables shared by many offsets (legal FlatBuffers,
or a hostile file's way of multiplying work) cannot make a small file cost more than a few
times its own size in time or memory.
"""
import struct

from flatbuffers import number_types as N
from flatbuffers.table import Table

from bmk.errors import ModelError

BUDGET_PER_BYTE = 8          # items read may total 8 bytes of work per FlatBuffer byte ...
BUDGET_FLOOR = 1 << 16       # ... and at least this much (small files with shared strings)
NODE_COST = 16               # what one table visit is charged, beside its vector slot

SCALARS = {                  # name -> (flatbuffers number type, struct code)
    "bool": (N.BoolFlags, "?"), "u8": (N.Uint8Flags, "B"), "i8": (N.Int8Flags, "b"),
    "u16": (N.Uint16Flags, "H"), "i16": (N.Int16Flags, "h"),
    "u32": (N.Uint32Flags, "I"), "i32": (N.Int32Flags, "i"),
    "u64": (N.Uint64Flags, "Q"), "i64": (N.Int64Flags, "q"),
    "f32": (N.Float32Flags, "f"), "f64": (N.Float64Flags, "d"),
}


class FlatBuffer:
    """The FlatBuffer at data[base:base + size] of file `path`; `root(name)` is its root table."""

    def __init__(self, data, base, size, path):
        self.buf = memoryview(data)[base:base + size]
        self.base, self.size, self.path = base, len(self.buf), path
        self.budget = max(BUDGET_FLOOR, BUDGET_PER_BYTE * self.size)

    def fail(self, pos, what, rule):
        return ModelError(f"{what}: {rule}", self.path, self.base + pos if pos is not None else None)

    def charge(self, pos, what, cost):
        self.budget -= cost
        if self.budget < 0:
            raise self.fail(pos, what, f"the FlatBuffer references more data than its {self.size} bytes can "
                                       f"hold (sub-tables shared many times over?); refused")

    def u32(self, pos, what):
        if not 0 <= pos <= self.size - 4:
            raise self.fail(pos, what, f"offset {pos} must leave 4 bytes inside the {self.size}-byte FlatBuffer")
        return struct.unpack_from("<I", self.buf, pos)[0]

    def root(self, name):
        if self.size < 4:
            raise self.fail(0, name, f"truncated FlatBuffer: {self.size} bytes, its root offset alone is 4")
        return Node(self, self.u32(0, name), name)


class Node:
    """One checked table: field accessors by field id, defaults when a field is absent."""

    __slots__ = ("fb", "pos", "name", "vt", "vtlen", "tlen", "table")

    def __init__(self, fb, pos, name):
        self.fb, self.pos, self.name = fb, pos, name
        fb.charge(pos, name, NODE_COST)
        size = fb.size
        if not 0 <= pos <= size - 4:
            raise fb.fail(pos, name, f"table offset {pos} must leave 4 bytes inside the {size}-byte FlatBuffer")
        vt = pos - struct.unpack_from("<i", fb.buf, pos)[0]
        if not 0 <= vt <= size - 4:
            raise fb.fail(pos, name, f"its vtable offset {vt} must lie inside the {size}-byte FlatBuffer")
        vtlen, tlen = struct.unpack_from("<HH", fb.buf, vt)
        if vtlen < 4 or vtlen % 2 or vt + vtlen > size:
            raise fb.fail(vt, name, f"vtable length must be even, at least 4 and end inside the FlatBuffer, "
                                    f"not {vtlen}")
        if tlen < 4 or pos + tlen > size:
            raise fb.fail(pos, name, f"table length must be at least 4 and end inside the FlatBuffer, not {tlen}")
        self.vt, self.vtlen, self.tlen = vt, vtlen, tlen
        self.table = Table(fb.buf, pos)

    def _field(self, fid, width, what):
        """The offset of field `fid` inside the table (0: absent), checked to hold `width` bytes."""
        slot = 4 + 2 * fid
        if slot + 2 > self.vtlen:
            return 0
        o = struct.unpack_from("<H", self.fb.buf, self.vt + slot)[0]
        if o and (o < 4 or o + width > self.tlen):
            raise self.fb.fail(self.pos, f"{self.name}.{what}", f"field offset {o} (+{width} bytes) must lie "
                                                              f"inside its {self.tlen}-byte table")
        return o

    def has(self, fid):
        return self._field(fid, 0, f"field {fid}") != 0

    def scalar(self, fid, kind, what, default=0):
        flags, _ = SCALARS[kind]
        o = self._field(fid, flags.bytewidth, what)
        return self.table.Get(flags, self.pos + o) if o else default

    def struct(self, fid, fmt, what):
        """An inline struct (e.g. Binary, '<QQ') as a tuple, or None when absent."""
        o = self._field(fid, struct.calcsize(fmt), what)
        return (struct.unpack_from(fmt, self.fb.buf, self.pos + o), self.pos + o) if o else (None, None)

    def _target(self, fid, what):
        """Where the offset stored in field `fid` points (None: absent)."""
        o = self._field(fid, 4, what)
        if not o:
            return None
        at = self.pos + o
        return at + self.fb.u32(at, f"{self.name}.{what}")

    def _vector(self, fid, elem, what):
        """(start of the elements, count) of a vector field, checked to fit; (None, 0) when absent."""
        at = self._target(fid, what)
        if at is None:
            return None, 0
        fb, name = self.fb, f"{self.name}.{what}"
        n = fb.u32(at, name)
        if n * elem > fb.size - at - 4:
            raise fb.fail(at, name, f"a vector of {n} {elem}-byte elements must fit in the "
                                    f"{fb.size - at - 4} bytes left in the FlatBuffer")
        fb.charge(at, name, n * elem)
        return at + 4, n

    def vector(self, fid, elem, what):
        """(start of the elements in the FlatBuffer, count) of a vector field of `elem`-byte
        elements, checked to fit; (None, 0) when absent (e.g. nested FlatBuffer bytes)."""
        return self._vector(fid, elem, what)

    def string(self, fid, what, default=""):
        start, n = self._vector(fid, 1, what)
        if start is None:
            return default
        return bytes(self.fb.buf[start:start + n]).decode("utf-8", "replace")

    def table_at(self, fid, what):
        at = self._target(fid, what)
        return None if at is None else Node(self.fb, at, f"{self.name}.{what}")

    def tables(self, fid, what):
        start, n = self._vector(fid, 4, what)
        out, fb = [], self.fb
        for k in range(n):
            at = start + 4 * k
            out.append(Node(fb, at + fb.u32(at, what), f"{self.name}.{what}[{k}]"))
        return out

    def strings(self, fid, what):
        start, n = self._vector(fid, 4, what)
        out, fb = [], self.fb
        for k in range(n):
            at = start + 4 * k
            s = at + fb.u32(at, what)
            count = fb.u32(s, f"{self.name}.{what}[{k}]")
            if count > fb.size - s - 4:
                raise fb.fail(s, f"{self.name}.{what}[{k}]", f"a string of {count} bytes must fit in the "
                                                            f"{fb.size - s - 4} bytes left in the FlatBuffer")
            fb.charge(s, what, count)
            out.append(bytes(fb.buf[s + 4:s + 4 + count]).decode("utf-8", "replace"))
        return out

    def scalars(self, fid, kind, what):
        _, code = SCALARS[kind]
        width = struct.calcsize(code)
        start, n = self._vector(fid, width, what)
        if not n:
            return ()
        return struct.unpack_from(f"<{n}{code}", self.fb.buf, start)

    def structs(self, fid, fmt, what):
        """A vector of inline structs: [(values, position in the FlatBuffer)]."""
        width = struct.calcsize(fmt)
        start, n = self._vector(fid, width, what)
        return [(struct.unpack_from(fmt, self.fb.buf, start + k * width), start + k * width) for k in range(n)]

    def vector_start(self, fid, what, elem):
        """Where a vector field's elements start in the FlatBuffer (None: absent)."""
        start, _ = self._vector(fid, elem, what)
        return start

    def struct_refs(self, fid, fmt, what):
        """A vector of offsets, each to one inline struct: [(values, position)], every struct checked
        to lie inside the FlatBuffer (the Nov 2023 SG2260 CoreCommands binaries, bmodel.py)."""
        width = struct.calcsize(fmt)
        start, n = self._vector(fid, 4, what)
        out, fb = [], self.fb
        for k in range(n):
            at = start + 4 * k
            to = at + fb.u32(at, f"{self.name}.{what}[{k}]")
            if to + width > fb.size:
                raise fb.fail(at, f"{self.name}.{what}[{k}]", f"its {width}-byte struct at {to} must end inside "
                                                              f"the {fb.size}-byte FlatBuffer")
            fb.charge(to, what, width)
            out.append((struct.unpack_from(fmt, fb.buf, to), to))
        return out

    def where(self, pos=None):
        """The file offset of this table (or of a position in the FlatBuffer)."""
        return self.fb.base + (self.pos if pos is None else pos)
