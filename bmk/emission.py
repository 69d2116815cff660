"""The one path of every API call (Emission._emit): check, lower, pack, then record, memoized
per context and served by call templates; `_Packer` packs a lowered descriptor's fields into
cmd_hdr_t + command bytes with its sync fields zeroed (they are written at acquisition)."""
import operator
from sys import _getframe

from bmk.encoders.codec import codec_for
from bmk.encoders.framing import encode_header
from bmk.errors import ArgumentError, CmdbufOverflowError, EncodeError
from bmk.optable import _NUMPY_SCALARS, Op
from bmk.origin_log import _shown, kept
from bmk.templates import Sym
from bmk.util import is_int, plain

MEMO_SIZE = 1 << 14          # lowered calls a context remembers (see Emission._emit)


def encoded_engines(chip):
    """The engines that have instruction classes, in spec order."""
    return {e.name: e for e in chip.encoded_engines}


def _sync_fields(engine):
    """The engine's sync fields (enable flags, own id, waits), as Fields of a class that has them
    all: they sit at the same bits in every class that has them (the loader checks), and are
    written at those bits in every command of the engine."""
    names = [f for f, _ in engine.enable] + [engine.own_id] + [f for _, f in engine.wait_for]
    holder = next(c for c in engine.classes if all(n in c.by_name for n in names))
    return [holder.by_name[n] for n in names]


class _Packer:
    """{field: value} -> cmd_hdr_t + command bytes of one engine, sync fields zeroed (written at
    acquisition). One codec Template per kind of dict (its class, picked by the selector fields,
    and its keys): the defaults and the header are pre-packed once."""

    def __init__(self, chip, engine):
        self.chip, self.engine = chip.name, engine
        self.single = engine.format
        self.selector = () if self.single else tuple((f.name, f.default) for f in engine.selector_fields)
        self.clear = sum(f.max << f.bit for f in _sync_fields(engine))
        self.headers = {c.nbytes: encode_header(chip, engine, c.nbytes) for c in engine.classes}
        self.templates = {}

    def pack(self, fields):
        keys = tuple(fields)
        if self.selector:
            try:
                key = (tuple([fields.get(n, d) for n, d in self.selector]), keys)
                template = self.templates.get(key)
            except TypeError:
                raise EncodeError(f"{self.engine.name}: selector fields must be integers, not "
                                  f"{[fields.get(n, d) for n, d in self.selector]}") from None
        else:
            key = keys
            template = self.templates.get(key)
        if template is None:
            cls = self.single or self.engine.index.get(key[0])
            if cls is None:
                values = {f.name: v for f, v in zip(self.engine.selector_fields, key[0])}
                raise EncodeError(f"{self.engine.name}: selector values {values} name no instruction class "
                                  f"of {self.chip}")
            template = self.templates[key] = codec_for(cls).template(keys, self.headers[cls.nbytes], self.clear)
        return template.pack(fields)

    def varying(self, fields):
        """For bmk.templates: (base, nbytes, [(source, shift, max)]) of a traced field dict whose
        Sym values vary: base is the record packed with them at 0. None if a selector or sync
        field varies (those must stay constant)."""
        varying = {k: v for k, v in fields.items() if isinstance(v, Sym)}
        if any(name in varying for name, _ in self.selector):
            return None
        fixed = {k: 0 if k in varying else int(v) for k, v in fields.items()}
        cls = self.single or self.engine.index.get(tuple(fixed.get(n, d) for n, d in self.selector))
        record = self.pack(fixed)
        hbits = 8 * (len(record) - cls.nbytes)
        out = []
        for name, v in varying.items():
            f = cls.by_name[name]
            if (f.max << f.bit) & self.clear:
                return None
            out.append((v.source, hbits + f.bit, f.max))
        return int.from_bytes(record, "little"), len(record), out


class Emission:
    """The emission half of a Program (bmk/program.py holds the state it reads)."""

    def _emit(self, call, vals, tys, record=None, given=None, depth=3):
        """Check, lower, pack, then record (`_emitted`).

        `vals`: the call's argument values (see the generated methods), `tys` their types;
        `record`: the op record when the call passed one; `given`: (args, kwargs) of a positional
        call that used keywords; `depth`: the caller's frame, counted from `_emitted`.
        Lowering is a pure function of the call's arguments, so its packed result is memoized
        per context under (call, values, their types) (1 == 1.0 == True, but only some of them
        pass the checks). An unhashable argument skips the memo. The memo holds at most
        MEMO_SIZE calls (then starts afresh), so programs whose calls all differ (distinct
        addresses) do not grow it without bound; each call's last lowering is tried before it
        (`_last`: a call repeated with equal values and types; the generated methods try it
        first themselves when every value is the very object of the last call, and then call
        `_emitted` directly). Calls that differ only in int arguments share call templates
        (bmk.templates), which serve them without entering the memo; a call whose last call
        took a template tries its templates first (no memo key made).
        """
        if self._cleaned:
            raise ArgumentError(f"{call.name}: the context was cleaned up (cleanup)")
        logged = None       # what the origin log keeps of a call the memo did not serve
        if call in self._templated:
            lowered = self._templates.lowered(call.name, vals, tys)
            if lowered is None:
                lowered = self._lowering(call, vals, tys, record)
            else:
                logged = (call, lowered[1], vals)
        else:
            # The call's last lowering first (a kernel repeats a call with the same tensors): two
            # tuple compares, where the memo's key would hash every value and type.
            last = self._last.get(call)
            try:
                if vals == last[0] and tys == last[1]:
                    lowered = last[2]
                else:
                    lowered = self._lowered[call, vals, tys]
            except Exception:       # no last call, not memoized, an unhashable or uncomparable argument
                lowered = self._lowering(call, vals, tys, record)
        if record is not None or given is not None:
            logged = (call, lowered[1], _shown(call, record, given))
        return self._emitted(call, lowered, logged, depth)

    def _emitted(self, call, lowered, logged=None, depth=2):
        """Record a lowered call: its (records, engine codes, size, ...) appended, its origin
        logged (`logged`, or the memo's entry `lowered` itself), its Op handle returned. `depth`:
        the caller's frame (2: the generated method called this)."""
        records, codes, size = lowered[0], lowered[1], lowered[2]
        nbytes = self._nbytes + size
        if nbytes > self.cmdbuf_size:
            raise CmdbufOverflowError(f"{call.name}: the command buffer would grow to {nbytes} "
                                      f"bytes, past cmdbuf_size {self.cmdbuf_size}")
        self._nbytes = nbytes
        bodies = self._records
        start = len(bodies)
        bodies += records
        self._codes += codes
        if self._recording:
            # The origin, kept raw (OriginLog makes its text when asked): the caller's instruction
            # offset (f_lineno would cost more than the rest) and the call: the memo's entry (shared
            # by equal calls) or (call, engine codes, vals) (one new object a call: the garbage
            # collector runs by the count of objects kept); the caller's code object only when it
            # changes (a run of calls from one function).
            f = _getframe(depth)    # the generated method's caller
            if f.f_code is not self._user_code:     # not the function seen last
                f = self._user_call(f)
            lasti = f.f_lasti
            try:
                lasti = self._lastis[lasti]     # the one int object of this offset (8 bytes a call, not 40)
            except KeyError:
                self._lastis[lasti] = lasti
            self._call_lastis.append(lasti)
            self._call_log.append(lowered if logged is None else logged)
        if self._handles:
            op = Op()
            op._context = self
            op._generation = self._generation
            op._call = call.name
            op._start = start
            op._count = len(codes)
            return op
        return None

    def _lowering(self, call, vals, tys, record):
        """(records, codes, size, (call, vals)) of a call the memo did not have (or the template
        tried first did not serve): the memo, a template, or the ordinary path (checks, lowering,
        packing), which the memo and the templates then learn. (call, vals): what its origin
        shows (numpy integers made plain; the memo's own for a call it had)."""
        key = (call, vals, tys)
        try:
            lowered = self._lowered.get(key)
        except TypeError:
            lowered = key = None
        if lowered is None and not _NUMPY_SCALARS.isdisjoint(tys):
            # numpy integers as Python ints (the memo never holds their types: a hit needs no test)
            vals = tuple(map(plain, vals))
            tys = tuple(map(type, vals))
            key = (call, vals, tys)
            try:
                lowered = self._lowered.get(key)
            except TypeError:
                lowered = key = None
        if lowered is not None:
            self._templated.discard(call)
            self._last[call] = (vals, tys, lowered)
            return lowered
        if key is not None and record is None:
            lowered = self._templates.lowered(call.name, vals, tys)
            if lowered is not None:
                self._templated.add(call)
                return lowered + ((call, vals),)
        row = call.row
        descriptors = tuple(row.lower(self.chip, self._checked(row, call.make(vals) if record is None else record)))
        lowered = self._pack(call.name, descriptors)
        if key is not None:
            if len(self._lowered) >= MEMO_SIZE:
                self._lowered.clear()
            self._lowered[key] = lowered = lowered + ((call, vals),)
            self._last[call] = (vals, tys, lowered)
            if record is None:
                self._templates.learn(call.name, vals, tys, lowered, descriptors,
                                      lambda v: row.lower(self.chip, self._checked(row, call.make(v))),
                                      lambda engine, fields: self._packers[engine].varying(fields))
            return lowered
        return lowered + ((call, kept(vals)),)     # an unhashable argument: a list the caller may change later

    def _checked(self, row, record):
        """The record, once the row's checks have passed."""
        row.check(self.CHECK(self.chip, row.name, self), record)
        return record

    def forget_lowered(self):
        """Forget every memoized call and call template: calls run their checks again (bm1880's
        tl_free: a freed tensor must meet them)."""
        self._lowered.clear()
        self._last.clear()
        self._templates.clear()
        self._templated.clear()

    def _pack(self, call, descriptors):
        """((engine, fields), ...) -> (records: cmd_hdr_t + command bytes each, their engine codes
        (bytes), their size)."""
        packers = self._packers
        try:
            records = tuple([packers[engine].pack(fields) for engine, fields in descriptors])
        except EncodeError as e:
            # numpy integer scalars are integers to the API but not to bitstruct: retry as ints.
            if not any(_is_foreign_int(v) for _, fields in descriptors for v in fields.values()):
                raise ArgumentError(f"{call}: the arguments do not fit the {self.chip.name} encoding: {e}") from None
            return self._pack(call, [(engine, {k: operator.index(v) if _is_foreign_int(v) else v
                                               for k, v in fields.items()}) for engine, fields in descriptors])
        except KeyError as e:
            raise ArgumentError(f"{call}: {self.chip.name} has no encoded engine {e}") from None
        codes = bytes([self._code[engine] for engine, _ in descriptors])
        return records, codes, sum(map(len, records))


def _is_foreign_int(value):
    """An integer that is not a Python int (a numpy integer scalar)."""
    return type(value) is not int and is_int(value)
