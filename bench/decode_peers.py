"""The vendor debugger's decoders, re-implemented from their public description for the decode
bench (issue 24 item 1); the bit layouts come from bmk's specs, so both sides read the same fields.

- `ctypes_decode` (tpu-mlir python/debugger target_1684x/decoder.py, as described): per engine a
  ctypes Structure of the head's bit-fields read with `from_buffer` at the command's offset, its
  (cmd_short, tsk_typ, tsk_eu_typ) looked up in a dict index -> the class's ctypes Structure
  (one bit-field per field; a field that crosses a 64-bit storage unit is split in two and
  joined on reading), read with `from_buffer` too: one lazy object per command, a field read
  on attribute access. The end command stops the walk (then its stream's zero padding).
- `unpackbits_decode` (its target_1684 decoder, as described): every 128-byte command is
  unpacked to bits with numpy.unpackbits (little bit order), split at the fields' high bits
  (numpy.split) and each part packed back into an integer by a dot product with a table of
  powers of two; a dict of fields per command.
"""
import ctypes
import hashlib
import operator

import numpy as np


def _ctypes_struct(name, fields, nbytes):
    """A ctypes Structure over a little-endian command: (struct, {field: reader})."""
    cfields, readers = [], {}
    pos = 0

    def gap(upto):
        nonlocal pos
        while pos < upto:
            take = min(upto, (pos // 64 + 1) * 64) - pos
            cfields.append((f"_gap{pos}", ctypes.c_uint64, take))
            pos += take
    for f in sorted(fields, key=lambda f: f.bit):
        gap(f.bit)
        lo, hi = f.bit, f.bit + f.width
        parts = []
        while lo < hi:
            take = min(hi, (lo // 64 + 1) * 64) - lo
            pname = f.name if take == f.width else f"{f.name}__{len(parts)}"   # split only across a unit
            cfields.append((pname, ctypes.c_uint64, take))
            parts.append((pname, lo - f.bit))
            lo += take
        pos = hi
        readers[f.name] = parts
    gap(nbytes * 8)
    struct = type(name, (ctypes.LittleEndianStructure,), {"_pack_": 1, "_fields_": cfields})
    return struct, readers


class CtypesEngine:
    def __init__(self, eng):
        self.eng = eng
        self.sel = [f.name for f in eng.selector_fields]
        self.head, self.head_readers = _ctypes_struct(f"{eng.name}_head", eng.head, 16) if eng.selector else (None, {})
        self.key = operator.attrgetter(*self.sel)      # the head's selector bit-fields (none crosses a unit)
        self.index = {tuple(v): c for v, c in eng.index.items()}
        self.classes = {c.name: _ctypes_struct(f"{eng.name}_{c.name}", c.fields, c.nbytes) + (c,) for c in eng.classes}
        self.end = {c.name for c in eng.classes if any(i.name == eng.stream.end for i in c.instructions)}


def read(obj, parts):
    value = 0
    for pname, shift in parts:
        value |= getattr(obj, pname) << shift
    return value


def ctypes_decode(chip, streams):
    """{engine: bytes} -> [(engine, class name, offset, ctypes object, readers)] per stream in
    order (the objects hold their fields lazily)."""
    out = []
    for engine, data in streams.items():
        eng = chip.engine(engine)
        ce = CtypesEngine(eng)
        buf = bytearray(data)
        offset, n = 0, len(buf)
        end = eng.stream.end
        while offset + 16 <= n:
            head = ce.head.from_buffer(buf, offset)
            cls = ce.index.get(ce.key(head))
            if cls is None:
                break
            struct, readers, spec = ce.classes[cls.name]
            if offset + spec.nbytes > n:
                break
            obj = struct.from_buffer(buf, offset)
            out.append((engine, cls.name, offset, obj, readers))
            offset += spec.nbytes
            if cls.name in ce.end and _kind(spec, obj, readers) == end:       # then its zero padding
                step = eng.stream.pad_to or 16
                offset += (-offset) % step
                while offset + step <= n and not any(buf[offset:offset + step]):
                    offset += step
    return out


def _kind(spec, obj, readers):
    for ins in spec.instructions:
        if all(read(obj, readers[k]) == v for k, v in ins.match):
            return ins.name
    return None


def ctypes_fields(decoded):
    """Every field of every decoded command: [(engine, class, offset, {field: value})]."""
    return [(e, c, off, {name: read(obj, parts) for name, parts in readers.items()}) for e, c, off, obj, readers in decoded]


_POWERS = 2 ** np.arange(64, dtype=np.uint64)       # bit k of a field is worth 2**k


def unpackbits_decode(chip, streams):
    """{engine: bytes} of fixed-slot single-class engines (BM1684) -> [(engine, class, offset, {field: value})]:
    per command its bytes unpacked to bits (little bit order), split at every field's end
    (numpy.split), each part packed back by a dot product with the powers of two."""
    out = []
    for engine, data in streams.items():
        eng = chip.engine(engine)
        cls = eng.classes[0]
        slot = eng.stream.slot or cls.nbytes
        order = sorted(cls.fields, key=lambda f: f.bit)
        names = [f.name for f in order]
        ends = [f.bit + f.width for f in order][:-1]
        arr = np.frombuffer(data, np.uint8)
        for offset in range(0, len(data) - slot + 1, slot):
            cmd = arr[offset:offset + cls.nbytes]
            if not cmd.any():                   # the zero tail
                break
            bits = np.unpackbits(cmd, bitorder="little")
            values = [int(part.dot(_POWERS[:part.size])) for part in np.split(bits, ends)]
            out.append((engine, cls.name, offset, dict(zip(names, values))))
    return out


def digest(items):
    """One hash of (engine, offset, {field: value}) items, whatever their order."""
    h = hashlib.sha256()
    for e, off, fields in sorted(items, key=lambda x: (x[0], x[1])):
        h.update(repr((e, off, sorted(fields.items()))).encode())
    return h.hexdigest()
