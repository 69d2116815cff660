"""Raw streams decoded by columns (issue 24 items 1 and 2): a per-offset class table, fields by
class with numpy, ids merged from columns, Records built when asked for.

`decode_streams(chip, cores)` returns a `StreamRecords`: the Records of every stream in program
order, the same Records (and the same DecodeErrors) that framing.decode_stream and
merge.merge_cores give, at a cost per command of a few numpy passes instead of Python work:

1. classes: for every candidate offset of a stream (multiples of the gcd of its classes'
   lengths), the selector fields of the head are read for all offsets at once and looked up in a
   table of the engine's selector index (then the alternate heads' where the head picks none):
   one class id per offset, computed a block of bytes at a time;
2. the walk: from offset 0, each command's class gives its length and the next offset (a loop
   over small ints), with the stream rule's end commands, padding and zero tail as
   decode_stream applies them; anything unusual (no class, a truncated command, a slot with
   bytes after its command) hands the stream to decode_stream, which raises its DecodeError;
3. kinds: the fields the class's kinds match on, read by numpy for the commands of one class
   (rows of 64-bit words, each field `(word >> shift) & mask`, two words where it straddles
   them), a block of commands at a time, when the first Record is asked for;
4. order: the streams' own ids and waits (columns, not Records) are merged by merge.merge_runs,
   the rule merge_cores applies to Records; program order is two small arrays (stream, index in it).

A Record is made when indexed or iterated, those of a block together: its class, kind and
offset come from the columns, its fields dict from the class's codec (bitstruct's compiled
unpacker builds the dict in C, faster than numpy columns turned into Python ints and zipped into
a dict, or a copy of a template dict updated: measured, issue 34 item 3), and the block's
Records get their attributes a column at a time (records.records). `Stream.columns(c)`
gives every field of a class's commands as numpy columns. Memory per command: its bytes (the
stream, held as given) plus ~15 bytes of columns, whatever the number of fields.
"""
import gc
import math
from array import array
from collections.abc import MutableSequence
from itertools import chain, repeat
from operator import itemgetter

import numpy as np

from bmk.encoders.codec import codec_for
from bmk.encoders.fields import made as fields_made, one as one_fields
from bmk.encoders.merge import MessageLog, Queue, merge_runs
from bmk.encoders.records import MAX_PAD, opaque_record, padding, records, rule_pad

BLOCK = 4096                # commands whose fields are extracted together
SPAN = 1024                 # bytes of stream per command up to which a block's span is copied at once
CHUNK = 1 << 22             # bytes of a stream classified at once
MAX_SELECTOR_BITS = 20      # the widest selector looked up in a table (the specs' widest: 10 bits)


class Fallback(Exception):
    """Raised when a stream needs decode_stream's exact path (an error to report, an opaque engine)."""


# ---------------------------------------------------------------------------------------- classes

def _field_values(view, bit, width):
    """The values of a field at bits [bit, bit + width) of each row of `view` (uint8 rows), as uint64."""
    lo, hi = bit // 8, (bit + width - 1) // 8
    shift = bit - 8 * lo
    value = np.zeros(len(view), np.uint64)
    for k, b in enumerate(range(lo, min(hi, lo + 7) + 1)):
        value |= view[:, b].astype(np.uint64) << np.uint64(8 * k)
    value >>= np.uint64(shift)
    if hi - lo == 8:                    # a 9th byte (a wide field off a byte boundary)
        value |= view[:, hi].astype(np.uint64) << np.uint64(64 - shift)
    return value & np.uint64((1 << width) - 1) if width < 64 else value


class _Classifier:
    """Class ids of an engine's commands at candidate offsets (selector index -> a lookup array)."""

    def __init__(self, eng):
        self.eng = eng
        self.classes = eng.classes
        self.number = {c.name: k for k, c in enumerate(eng.classes)}
        self.heads = []                 # [(selector fields, lookup array)]: the head, then each alternate
        if eng.selector:
            for fields, index in [(eng.selector_fields, eng.index)] + \
                                 [(a.selector_fields, a.index) for a in eng.alternates]:
                bits = sum(f.width for f in fields)
                if bits > MAX_SELECTOR_BITS:    # a table too big to make: the record-by-record path
                    raise Fallback
                table = np.full(1 << bits, -1, np.int16)
                for values, cls in index.items():
                    table[self._key(fields, values)] = self.number[cls.name]
                self.heads.append((fields, table))
        self.head = eng.head_nbytes if eng.selector else 0
        lengths = {c.nbytes for c in eng.classes} | ({eng.stream.slot} if eng.stream.slot else set())
        self.step = math.gcd(*lengths) if lengths else 1

    @staticmethod
    def _key(fields, values):
        key, shift = 0, 0
        for f, v in zip(reversed(fields), reversed(values)):
            key |= int(v) << shift
            shift += f.width
        return key

    def classify(self, buf, first, count):
        """Class ids (int16, -1: none) of the `count` candidate offsets from byte `first` (whose
        heads all lie inside buf)."""
        if not self.heads:
            return np.zeros(count, np.int16)
        view = np.lib.stride_tricks.as_strided(buf[first:], shape=(count, self.head), strides=(self.step, 1),
                                               writeable=False)
        out = None
        todo = np.arange(count)
        for fields, table in self.heads:
            rows = view if out is None else view[todo]
            key = np.zeros(len(rows), np.int64)
            for f in fields:
                key = (key << f.width) | _field_values(rows, f.bit, f.width).astype(np.int64)
            found = table[key]
            if out is None:
                out = found
            else:
                out[todo] = found
            todo = np.flatnonzero(out < 0)
            if not len(todo):
                break
        return out


# ------------------------------------------------------------------------------------------- fields

def _extractor(cls):
    """The _Extractor of a class, made once and kept on the Format (its memo)."""
    ex = cls.memo.get("columns")
    if ex is None:
        ex = cls.memo["columns"] = _Extractor(cls)
    return ex


def _classifier(eng):
    """The _Classifier of an engine, made once and kept on its first class's Format."""
    memo = eng.classes[0].memo
    cl = memo.get(("classifier", eng.name))
    if cl is None:
        cl = memo[("classifier", eng.name)] = _Classifier(eng)
    return cl


class _Extractor:
    """Every field of one class from rows of command bytes, in the codec's (decode's) key order."""

    def __init__(self, cls):
        codec = codec_for(cls)
        self.cls, self.names = cls, codec.names
        self.fields = [cls.by_name[n] for n in codec.names]
        self.words = -(-cls.nbytes // 8)
        matches = [tuple(ins.match) for ins in cls.instructions]
        self.kinds = [ins.name for ins in cls.instructions]
        self.match_fields = sorted({k for m in matches for k, _ in m})
        self.matches = matches
        spans = [(f.bit // 64, (f.bit + f.width - 1) // 64) for f in self.fields if f.name in self.match_fields]
        # the words the match fields lie in: all kinds() reads of a command
        self.match_words = (min(a for a, _ in spans), max(b for _, b in spans) + 1) if spans else (0, 0)

    def rows(self, buf, offsets, words=None):
        """(n, words) uint64 little-endian words of the commands at `offsets`: all of them, or
        those in the range `words` (first, end)."""
        first, end = words or (0, self.words)
        lo, hi = 8 * first, min(self.cls.nbytes, 8 * end)
        raw = np.zeros((len(offsets), 8 * (end - first)), np.uint8)
        if hi > lo:
            raw[:, :hi - lo] = buf[offsets[:, None] + np.arange(lo, hi)]
        return raw.view("<u8")

    def columns(self, words):
        """[column per field] (uint64 arrays) of rows of words."""
        out = []
        for f in self.fields:
            w, s = divmod(f.bit, 64)
            v = words[:, w] >> np.uint64(s)
            if s and s + f.width > 64:
                v = v | (words[:, w + 1] << np.uint64(64 - s))
            if f.width < 64:
                v = v & np.uint64(f.max)
            out.append(v)
        return out

    def match_columns(self, words, first=0):
        """[column per field] of rows of words (starting at word `first` of the command), the
        fields the kinds match on only (others None)."""
        wanted = set(self.match_fields)
        return [_field_of(words, f, first) if f.name in wanted else None for f in self.fields]

    def kind_ids(self, columns, n=None):
        """Per command (n of them: the columns' length when not given): the index of its kind
        (the first instruction that matches), -1: none."""
        by_name = dict(zip(self.names, columns))
        if n is None:
            n = len(columns[0]) if columns else 0
        out = np.full(n, -1, np.int32)
        for k in range(len(self.matches) - 1, -1, -1):       # the first match wins: written last
            hit = np.ones(len(out), bool)
            for name, value in self.matches[k]:
                hit &= by_name[name] == np.uint64(value)
            out[hit] = k
        return out


# -------------------------------------------------------------------------------------------- a stream

class Stream:
    """One decoded raw stream: its bytes, and per command its offset and class id; `pads`:
    {command index: PAD header value} (zero bytes after it that the rule does not add)."""

    __slots__ = ("engine", "core", "data", "buf", "offsets", "classes", "pads", "extractors", "ranks", "positions",
                 "_kinds", "_makers")

    def __init__(self, engine, core, data, offsets, classes, pads):
        if not isinstance(data, bytes):
            data = bytes(data)          # a snapshot, as decode_stream takes: the Records made later read it
        self.engine, self.core, self.data = engine, core, data
        self.buf = np.frombuffer(data, np.uint8)
        self.offsets, self.classes, self.pads = offsets, classes, pads
        self.extractors = [_extractor(c) for c in engine.classes]
        self.ranks = self.positions = self._kinds = None
        self._makers = None

    def __len__(self):
        return len(self.offsets)

    def _index(self):
        """Per command its rank among the commands of its class; per class their command indices."""
        if self.ranks is None:
            ranks = np.zeros(len(self.offsets), np.uint32)
            positions = {}
            for c in np.unique(self.classes).tolist():
                where = np.flatnonzero(self.classes == c).astype(np.uint32)
                ranks[where] = np.arange(len(where), dtype=np.uint32)
                positions[c] = where
            self.ranks, self.positions = ranks, positions
        return self.ranks, self.positions

    def kinds(self):
        """Per command the index of its kind in its class's instructions (-1: none), int16: the
        match fields of each class's commands read by numpy, a block of commands at a time."""
        if self._kinds is None:
            out = np.full(len(self.offsets), -1, np.int16)
            _, positions = self._index()
            for c, where in positions.items():
                ex = self.extractors[c]
                for lo in range(0, len(where), BLOCK):
                    part = where[lo:lo + BLOCK]
                    words = ex.rows(self.buf, self.offsets[part], ex.match_words)
                    out[part] = ex.kind_ids(ex.match_columns(words, ex.match_words[0]), len(part))
            self._kinds = out
        return self._kinds

    def columns(self, c):
        """{field: uint64 array} of every command of class c (all at once: for tools and benches)."""
        _, positions = self._index()
        where = positions.get(c, np.zeros(0, np.int64))
        ex = self.extractors[c]
        return dict(zip(ex.names, ex.columns(ex.rows(self.buf, self.offsets[where]))))

    def makers(self):
        """Per class: (class name, its kinds' names + [None], its fields' Layout, nbytes)."""
        if self._makers is None:
            self._makers = [(ex.cls.name, ex.kinds + [None], codec_for(ex.cls).layout, ex.cls.nbytes)
                            for ex in self.extractors]
        return self._makers

    def record(self, j, make):
        return self.make_record(j, int(self.classes[j]), int(self.kinds()[j]), int(self.offsets[j]), make)

    def make_record(self, j, c, k, offset, make):
        """The Record of command j (class c, kind k, at offset): its fields unpacked now, by the
        class's Layout (a Fields of its bytes: what decode_stream's codec.unpack gives); `make`:
        records.records or what stands for it."""
        cls, kinds, layout, nbytes = self.makers()[c]
        name = self.engine.name
        pads = self.pads
        fields = one_fields(layout, self.data[offset:offset + nbytes][::-1])
        header = {"pad": pads[j]} if pads and j in pads else {}
        return make(1, ((name,), (cls,), (kinds[k],), (fields,), (name,), (offset,), (header,), (self.core,),
                        (None,)))[0]

    def make_records(self, js, make):
        """The Records of commands js (an int array, any order), as make_record makes them, a block
        at a time: each one's Fields a slice of one reversed copy of the block's span of the
        stream (a command's reversed bytes, what its Layout reads: one copy per block, not per
        command), then the Records' attributes set a column at a time (`make`: records.records)."""
        n = len(js)
        if not n:
            return []
        makers = self.makers()
        names = [m[0] for m in makers]
        kinds = [m[1] for m in makers]
        layouts = [m[2] for m in makers]
        nbytes = [m[3] for m in makers]
        name, core, data, pads = self.engine.name, self.core, self.data, self.pads
        cs = self.classes[js].tolist()
        ks = self.kinds()[js].tolist()
        at = self.offsets[js]
        lo, hi = int(at.min()), min(len(data), int(at.max()) + max(nbytes))
        offsets = at.tolist()
        if hi - lo <= SPAN * n:
            window = data[lo:hi][::-1]      # window[hi - o - nb:hi - o]: command o's bytes reversed
            ends = hi - at.astype(np.int64)
            starts = (ends - np.array(nbytes, np.int64)[self.classes[js]]).tolist()
            raws = list(map(window.__getitem__, map(slice, starts, ends.tolist())))
        else:                               # commands scattered over the stream: each copied alone
            raws = [data[o:o + nbytes[c]][::-1] for c, o in zip(cs, offsets)]
        if len(layouts) == 1:               # one class (bm1684)
            fields = fields_made(repeat(layouts[0]), raws)
            kind_names = list(map(kinds[0].__getitem__, ks))
        else:
            fields = fields_made(map(layouts.__getitem__, cs), raws)
            kind_names = [kinds[c][k] for c, k in zip(cs, ks)]
        if pads:                            # padding after a command
            heads = [{"pad": pads[j]} if j in pads else {} for j in js.tolist()]
        else:
            heads = [{} for _ in range(n)]
        return make(n, (repeat(name), map(names.__getitem__, cs), kind_names, fields, repeat(name), offsets, heads,
                        repeat(core), repeat(None)))

    def own_ids(self):
        """Per command its own id (explicit: the field, 0 where its class has none; implicit: its
        1-based position), int64."""
        eng = self.engine
        if eng.implicit_ids:
            return np.arange(1, len(self.offsets) + 1, dtype=np.int64)
        return self._field(eng.own_id)

    def _field(self, name, missing=0):
        """int64 values of field `name` per command (`missing` where the class has none); only
        the bytes the field spans are read."""
        out = np.full(len(self.offsets), missing, np.int64)
        if not name:
            return out
        fields = {c: cls.by_name.get(name) for c, cls in enumerate(self.engine.classes)}
        if len({(f.bit, f.width) if f else None for f in fields.values()}) == 1 and fields[0] is not None:
            groups = [(None, fields[0])]            # at the same bits in every class: one pass
        else:
            _, positions = self._index()
            groups = [(where, fields[c]) for c, where in positions.items() if fields[c] is not None]
        for where, f in groups:
            lo_byte, hi_byte = f.bit // 8, (f.bit + f.width - 1) // 8
            span = np.arange(lo_byte, hi_byte + 1)
            idx = np.arange(len(self.offsets)) if where is None else where
            for a in range(0, len(idx), 1 << 18):
                part = idx[a:a + (1 << 18)]
                view = self.buf[self.offsets[part][:, None] + span]
                out[part] = _field_values(view, f.bit - 8 * lo_byte, f.width).astype(np.int64)
        return out

    def kind_column(self, names):
        """Per command: True where its kind is one of `names`."""
        out = np.zeros(len(self.offsets), bool)
        kinds = self.kinds()
        _, positions = self._index()
        for c, where in positions.items():
            wanted = [k for k, n in enumerate(self.extractors[c].kinds) if n in names]
            if wanted:
                out[where] = np.isin(kinds[where], wanted)
        return out

def _field_of(words, f, first=0):
    w, s = divmod(f.bit, 64)
    w -= first
    v = words[:, w] >> np.uint64(s)
    if s and s + f.width > 64:
        v = v | (words[:, w + 1] << np.uint64(64 - s))
    return v & np.uint64(f.max) if f.width < 64 else v


def scan(chip, eng, data, core=0):
    """One raw stream -> Stream, as decode_stream reads it; Fallback for what only decode_stream
    can say (a DecodeError) or holds (an opaque engine).

    Blocks of CHUNK bytes: the class of every candidate offset (numpy), then a walk over the
    commands' lengths in steps (a list of small ints); an end command has a negative length,
    where the walk stops for decode_stream's own steps (the padding after it), as it does near
    the stream's end (where the zero tail may start)."""
    if eng.opaque or not eng.classes:
        raise Fallback
    rule = eng.stream
    n = len(data)
    buf = np.frombuffer(data, np.uint8)
    cl = _classifier(eng)
    step, head = cl.step, cl.head
    nbytes = np.array([c.nbytes for c in eng.classes], np.int64)
    sizes_of = (np.full(len(nbytes), rule.slot, np.int64) if rule.slot else nbytes) // step
    end = _end_classes(eng)
    fast_end = n - max(rule.zero_tail, rule.pad_to) - max(head, int(nbytes.max()), rule.slot)
    offsets, classes, pads = [], [], {}
    offset, ended, padded = 0, False, False
    lo = hi = 0                         # the candidate offsets [lo, hi) of the current table
    sl = tl = None
    while offset < n:
        if offset < fast_end and not (ended and rule.pad_to) and offset % step == 0:
            if not lo <= offset < hi:
                count = min(CHUNK // step, (fast_end - offset) // step + 1)
                table = cl.classify(buf, offset, count)
                steps = np.where(table >= 0, sizes_of[np.maximum(table, 0)], 0)
                if end:
                    steps = _mark_ends(eng, end, buf, offset, step, table, steps)
                if rule.slot:           # a slot's bytes after its command must be zero (decode_stream)
                    steps = _check_slots(buf, offset, step, table, steps, nbytes, rule.slot)
                sl, tl, lo, hi = steps.tolist(), table.tolist(), offset, offset + count * step
            k, last = (offset - lo) // step, (min(hi, fast_end) - lo + step - 1) // step
            first = k
            walked = []
            add = walked.append
            while k < last:
                s_ = sl[k]
                if s_ <= 0:
                    break
                add(k)
                k += s_
            if walked:
                at = np.array(walked, np.int64)
                offsets.append(lo + at * step)
                classes.append(table[at])
                ended = padded = False
            offset = lo + k * step
            if k < last:
                s_ = sl[k]
                if s_ == 0:
                    raise Fallback       # no class, or a slot with bytes after its command
                offsets.append(np.array([offset], np.int64))   # an end command: its padding follows
                classes.append(np.array([tl[k]], np.int16))
                offset -= s_ * step
                ended, padded = True, False
            elif k == first:
                ended = ended            # nothing walked: decode_stream's steps below
            else:
                continue
            if k < last:
                continue
        rest = n - offset           # decode_stream's steps
        limit = max(rule.zero_tail, rule.pad_to) if ended or padded else rule.zero_tail
        if rest <= limit and not any(data[offset:]):
            break
        if ended and rule.pad_to:
            skip = padding(data, offset, rule.pad_to)
            if skip and offset + skip < n:
                if skip > MAX_PAD:
                    raise Fallback
                pads[count_of(offsets) - 1] = skip
                offset += skip
                ended, padded = False, True     # the padding is read (still after the end command)
                continue
        if offset % step or offset + head > n:
            raise Fallback
        found = eng.classify(bytes(data[offset:offset + eng.head_nbytes])) if eng.selector else eng.classes[0]
        if found is None:
            raise Fallback
        c = cl.number[found.name]
        size = rule.slot or int(nbytes[c])
        if offset + size > n or (rule.slot and any(data[offset + int(nbytes[c]):offset + size])):
            raise Fallback
        offsets.append(np.array([offset], np.int64))
        classes.append(np.array([c], np.int16))
        ended, padded = c in end and _is_end(eng, end[c], data, offset), False
        offset += size
    offsets = np.concatenate(offsets) if offsets else np.zeros(0, np.int64)
    if n < 1 << 32:                     # 4 bytes an offset, 1 a class: the columns stay small
        offsets = offsets.astype(np.uint32)
    classes = (np.concatenate(classes) if classes else np.zeros(0, np.int16)).astype(
        np.uint8 if len(eng.classes) <= 256 else np.int16)
    pad = n - offset
    last = len(offsets) - 1
    if not len(offsets) and pad:
        raise Fallback           # zero bytes and no command: decode_stream's error
    if len(offsets) and (pad != rule_pad(rule, offset) or last in pads):
        total = pads.get(last, 0) + pad
        if total > MAX_PAD:
            raise Fallback
        pads[last] = total
    return Stream(eng, core, data, offsets, classes, pads)


def count_of(parts):
    """The number of commands in a list of offset arrays."""
    return sum(len(p) for p in parts)


def _mark_ends(eng, end, buf, first, step, table, steps):
    """steps with the end commands' lengths negative (the walk then reads their padding)."""
    candidates = np.flatnonzero(np.isin(table, list(end)))
    if not len(candidates):
        return steps
    steps = steps.copy()
    for c, cls in end.items():
        at = candidates[table[candidates] == c]
        if not len(at):
            continue
        ex = _extractor(cls)
        kinds = ex.kind_ids(ex.columns(ex.rows(buf, first + at * step)))
        wanted = ex.kinds.index(eng.stream.end)
        hit = at[kinds == wanted]
        steps[hit] = -steps[hit]
    return steps


def _check_slots(buf, first, step, table, steps, nbytes, slot):
    """steps with 0 where a slot has non-zero bytes after its command (decode_stream's error)."""
    steps = steps.copy()
    for c in np.unique(table[table >= 0]).tolist():
        nb = int(nbytes[c])
        if nb >= slot:
            continue
        at = np.flatnonzero(table == c)
        at = at[first + at * step + slot <= len(buf)]
        tails = buf[(first + at * step)[:, None] + np.arange(nb, slot)]
        steps[at[tails.any(axis=1)]] = 0
    return steps


def _end_classes(eng):
    """{class id: class} of the classes that have the stream's end kind."""
    if eng.stream.end is None:
        return {}
    return {k: c for k, c in enumerate(eng.classes) if any(ins.name == eng.stream.end for ins in c.instructions)}


def _is_end(eng, cls, data, offset):
    """Whether the command at offset (of a class that has the end kind) is the end command."""
    ins = cls.instruction_of(codec_for(cls).unpack(data[offset:offset + cls.nbytes]))
    return ins is not None and ins.name == eng.stream.end




# -------------------------------------------------------------------------------------------- order

def merge(chip, streams):
    """[Stream] in priority order (core 0's engines in the chip's order, then core 1's ...) ->
    (stream number, index) arrays of program order: merge.merge_runs over the streams' id
    columns (as merge_cores orders Records), its runs spelled out by numpy."""
    where = {(s.core, s.engine.name): q for q, s in enumerate(streams)}
    queues = []
    for s in streams:                   # int columns as array('i'/'q'): what merge_order's loop indexes fastest
        eng = s.engine
        own = _ints(s._field(eng.own_id, missing=-1)) if eng.own_id and not eng.implicit_ids else None
        waits = [_ints(s._field(fname, missing=-1)) for _, fname in eng.wait_for]
        queues.append(Queue(s.core, eng, len(s), own, waits, _messages(s)))
    run_q, run_end = merge_runs(queues, where)
    run_q = np.frombuffer(run_q, np.uint16)
    end = np.frombuffer(run_end, np.uint32).astype(np.int64)
    start = np.zeros(len(end), np.int64)         # a run goes on from its queue's previous run
    for q in range(len(streams)):
        runs = np.flatnonzero(run_q == q)
        start[runs[1:]] = end[runs[:-1]]
    lengths = end - start
    first = np.cumsum(lengths) - lengths         # the position of each run's first command
    order_j = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(first - start, lengths)
    return np.repeat(run_q, lengths), order_j.astype(np.uint32)


def _ints(v):
    """An int numpy array as array('i') (or 'q' for values past 31 bits): what a Python loop
    indexes fastest per byte held."""
    if not len(v) or (v.min() >= -(1 << 31) and v.max() < 1 << 31):
        return array("i", np.ascontiguousarray(v, np.int32).tobytes())
    return array("q", np.ascontiguousarray(v, np.int64).tobytes())


def _messages(s):
    """A stream's message sends and waits (merge.MessageLog's result), their kinds and ids read
    by columns."""
    spec = s.engine.messages
    if spec is None:
        return {}, {}, {}
    send = np.flatnonzero(s.kind_column({spec.send}))
    wait = np.flatnonzero(s.kind_column({spec.wait}))
    log = MessageLog(spec)
    if len(send) or len(wait):
        field, bit, width = spec.id
        ids = ((s._field(field) >> bit) & ((1 << width) - 1)).tolist()
        sending = set(send.tolist())
        for i in sorted(send.tolist() + wait.tolist()):
            (log.send if i in sending else log.wait)(i, ids[i])
    return log.result()


# ------------------------------------------------------------------------------------------ the Records

class StreamRecords(MutableSequence):
    """The Records of raw streams in program order, made when asked for (see the module
    docstring), and a list of them to their users: a Record once made is kept, so `recs[i]`
    is the same object every time (its fields dict changed in place stays changed, as in a
    list); changing the sequence itself (append, insert, del, sort ...) first makes every Record
    and from then on works on that list. Equal to a list of the same Records (not to a tuple,
    like a list). `streams` and `order_q`/`order_j` (stream number, index in it) are the
    columns behind them; `transient()` yields the Records without keeping them (one pass in
    the memory of a block)."""

    def __init__(self, chip, streams, order):
        self.chip, self.streams = chip, streams
        self.order_q, self.order_j = order
        self._make = records            # what makes Records from their values (a test counts them)
        self._kept = None               # [Record or None] per position, once one is made
        self._list = None               # every Record, once the sequence was changed

    def __len__(self):
        return len(self._list) if self._list is not None else len(self.order_q)

    def _made(self, i):
        """The Record at position i (an int in range), made now unless it was already."""
        kept = self._kept
        if kept is None:
            kept = self._kept = [None] * len(self.order_q)
        r = kept[i]
        if r is None:
            r = kept[i] = self.streams[int(self.order_q[i])].record(int(self.order_j[i]), self._make)
        return r

    def __getitem__(self, i):
        if self._list is not None:
            return self._list[i]
        if isinstance(i, slice):
            return [self._made(k) for k in range(*i.indices(len(self)))]
        return self._made(range(len(self))[i])

    def _block(self, qs, js):
        """The Records at positions (qs, js) (stream numbers, indices in them), in that order:
        each stream's made by one comprehension (Stream.make_records), then put back in order."""
        streams, make = self.streams, self._make
        uniq = np.unique(qs).tolist()
        if len(uniq) == 1:
            return streams[uniq[0]].make_records(js, make)
        made = []
        for q in uniq:
            made += streams[q].make_records(js[qs == q], make)
        inverse = np.empty(len(qs), np.intp)
        inverse[np.argsort(qs, kind="stable")] = np.arange(len(qs))
        return list(itemgetter(*inverse.tolist())(made))

    def _each(self, keep):
        """The Records in order, a block made at a time (the generator resumes once a block)."""
        return chain.from_iterable(self._blocks(keep))

    def _blocks(self, keep):
        kept = self._kept
        if keep and kept is None:
            kept = self._kept = [None] * len(self.order_q)
        for lo in range(0, len(self.order_q), BLOCK):
            qs = self.order_q[lo:lo + BLOCK]
            js = self.order_j[lo:lo + BLOCK]
            before = kept[lo:lo + len(qs)] if kept is not None else None
            todo = None
            if before is not None and any(before):      # some made before (indexed): those objects, as a list
                todo = np.flatnonzero(np.fromiter((r is None for r in before), bool, len(before)))
            # A block's Records are made together with the cyclic collector paused: they and
            # their dicts hold no cycles, and kept Records would otherwise make it rescan
            # everything kept so far again and again.
            paused = gc.isenabled()
            gc.disable()
            try:
                if todo is None:
                    block = self._block(qs, js)
                else:
                    block = before
                    if len(todo):
                        for i, r in zip(todo.tolist(), self._block(qs[todo], js[todo])):
                            block[i] = r
            finally:
                if paused:
                    gc.enable()
            if keep:
                kept[lo:lo + len(block)] = block
            yield block

    def __iter__(self):
        if self._list is not None:
            return iter(self._list)
        return self._each(True)

    def transient(self):
        """The Records in program order, made for this pass and not kept (those already made are
        given as they are): a tool that reads each Record once holds one block of them."""
        if self._list is not None:
            return iter(self._list)
        return self._each(False)

    # changing the sequence: on the list of every Record
    def _all(self):
        if self._list is None:
            self._list = list(self._each(True))
            self._kept = None
        return self._list

    def __setitem__(self, i, value):
        self._all()[i] = value

    def __delitem__(self, i):
        del self._all()[i]

    def insert(self, i, value):
        self._all().insert(i, value)

    def sort(self, *, key=None, reverse=False):
        self._all().sort(key=key, reverse=reverse)

    def copy(self):
        return list(self)

    def __add__(self, other):
        return list(self) + other

    def __radd__(self, other):
        return other + list(self)

    def __mul__(self, n):
        return list(self) * n

    __rmul__ = __mul__

    def __eq__(self, other):
        if isinstance(other, (list, StreamRecords)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(list(self))

    def __reduce__(self):
        """Pickled and copied (copy.copy, deepcopy) as the list of its Records, what it stands for."""
        return list, (list(self),)


class OpaqueStream:
    """An opaque engine's stream (no public layout: BM1690 HAU): one Record holding its bytes,
    no ids, no waits (merge.merge_cores puts it after every other stream)."""

    def __init__(self, chip, engine, core, data):
        self.chip, self.engine, self.core, self.data = chip, engine, core, data

    def __len__(self):
        return 1

    def own_ids(self):
        return np.zeros(1, np.int64)

    def _field(self, name, missing=0):
        return np.full(1, missing, np.int64)

    def kind_column(self, names):
        return np.zeros(1, bool)

    def record(self, j, make):
        return opaque_record(self.chip, self.engine, bytes(self.data), self.engine.name, 0, None, self.core)

    def make_record(self, j, c, k, offset, make):
        return self.record(j, make)

    def make_records(self, js, make):
        return [self.record(j, make) for j in js.tolist()]

    def kinds(self):
        return np.zeros(1, np.int16)

    classes = ranks = offsets = np.zeros(1, np.int64)

    def _index(self):
        return self.ranks, {}


def decode_streams(chip, cores):
    """[{engine name: bytes}] per core -> StreamRecords; Fallback when a stream needs decode_stream."""
    streams = []
    for core, data in enumerate(cores):
        for eng in chip.encoded_engines:
            raw = data.get(eng.name)
            if raw:
                streams.append(scan(chip, eng, raw, core))
    for core, data in enumerate(cores):
        for eng in chip.engines:
            if eng.opaque and data.get(eng.name):
                streams.append(OpaqueStream(chip, eng, core, data[eng.name]))
    return StreamRecords(chip, streams, merge(chip, streams))
