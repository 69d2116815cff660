"""The simulator: memories, the two-engine run loop with sync ids, timing and race detection.

`Simulator(chip)` is generic; what each instruction kind does, and what it costs, comes from
the chip's semantics module `bmk.sim.<chip>` (`KINDS`, `check`, `cycles`). The simulator
only ever sees decoded field dicts (the same specs as the encoder), never op records.

Run loop: every engine executes its instructions in buffer order. An instruction whose sync
field names id k of another engine (e.g. TIU `cmd_id_gdma`, TDMA `wait_id_tpu`; 0 = no wait)
starts only after the instruction with own id k on that engine has ended. Ids are 16 bits:
after a descriptor whose own id is 0xffff all counters restart, so a wait refers to the id
in the current chunk of the buffer. Among the engines' next instructions the one that can
start earliest runs next (ties: buffer order), so functional results follow the timing.
Start = max(engine free, end of what it waits for); end = start + the chip's cost model.
"""
import importlib

import numpy as np

from bmk.encoders import Record, decode_cmdbuf
from bmk.errors import ArgumentError, BmkError, SimulationError, must
from bmk.isa import load_chip
from bmk.sim.memory import AccessLog, Gmem, Lmem
from bmk.sim.races import find_races
from bmk.sim.report import InstructionRecord, Report
from bmk.tensor import FMT_I8, TensorLmem


class Simulator:
    """A fresh chip: zeroed gmem (sparse) and lmem. See API.md "Simulator"."""

    def __init__(self, chip="bm1880"):
        self.chip = load_chip(chip)
        try:
            self.semantics = importlib.import_module(f"bmk.sim.{self.chip.name}")
        except ModuleNotFoundError:
            raise SimulationError(f"chip must have simulator semantics (bmk.sim.<chip>), not {chip!r}") from None
        p = self.chip.param
        self.npu_num, self.eu_num = p("npu_num"), p("eu_num")
        self.lmem = Lmem(self.npu_num, p("lmem_size"))
        self.gmem = Gmem(p("gmem_size"))
        self.gmem_offset, self.gmem_mask = self.chip.gmem_addr_offset, self.chip.gmem_addr_mask
        self.engines = [e for e in self.chip.engines if e.format is not None]
        self.formats = {e.name: e.format for e in self.engines}
        self.tdma_format = self.formats.get("tdma")
        self.log = None
        self.last_report = None

    # -- memory access (API.md) -----------------------------------------------------------------
    @staticmethod
    def _bytes(data, call="gmem_write"):
        if isinstance(data, np.ndarray):
            return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        try:
            return np.frombuffer(bytes(data), np.uint8)
        except (TypeError, ValueError):
            raise ArgumentError(must(call, "data", "bytes or a numpy array", data)) from None

    @staticmethod
    def _check_tensor(call, t):
        if not isinstance(t, TensorLmem):
            raise ArgumentError(must(call, "t", "a TensorLmem", t))

    def gmem_write(self, addr, data):
        """Write bytes (or a numpy array's raw bytes) at gmem address addr."""
        buf = self._bytes(data)
        self.gmem.check_range("gmem_write range", addr, len(buf))
        self.gmem.store(addr, buf)

    def gmem_read(self, addr, n):
        self.gmem.check_range("gmem_read range", addr, n)
        return self.gmem.load(addr, n).tobytes()

    def lmem_write(self, addr, data):
        """Raw bytes at a local address (lane * lmem_size + offset)."""
        self.lmem.write_bytes(addr, self._bytes(data, "lmem_write").tobytes())

    def lmem_read(self, addr, n):
        return self.lmem.read_bytes(addr, n)

    def _tensor_view(self, t, write=False):
        lay, st = t.layout, t.stride
        return self.lmem.tensor("tensor", t.la, (lay.n, lay.c, lay.h, lay.w), (st.n, st.c, st.h, st.w),
                                None, write)

    def lmem_read_tensor(self, t):
        """A TensorLmem's values in logical order: (N, C, H, W), or (rows, cols) for a matrix."""
        self._check_tensor("lmem_read_tensor", t)
        arr = np.array(self._tensor_view(t).read())
        if t.fmt == FMT_I8:
            arr = arr.view(np.int8)
        if t.is_matrix:
            arr = arr.reshape(t.layout.n, -1)[:, :t.shape.col].copy()
        return arr

    def lmem_write_tensor(self, t, values):
        """Store values (logical order, as lmem_read_tensor returns) into a TensorLmem's bytes."""
        self._check_tensor("lmem_write_tensor", t)
        view = self._tensor_view(t, write=True)
        values = np.asarray(values)
        raw = values.astype(np.int8 if values.dtype.kind == "i" else np.uint8, copy=False).view(np.uint8)
        if t.is_matrix:
            buf = np.array(view.read()).reshape(t.layout.n, -1)
            buf[:, :t.shape.col] = raw.reshape(t.shape.row, t.shape.col)
            raw = buf
        view.write(raw.reshape(view.shape))

    # -- running ----------------------------------------------------------------------------------
    def _prepare(self, records):
        """Kinds, own ids and resolved waits of every record; SimulationError if malformed."""
        n = len(records)
        kinds, owns, waits = [None] * n, [0] * n, [()] * n
        chunk_of, id_map, chunk = [0] * n, {}, 0
        spec = {e.name: e for e in self.engines}
        for i, rec in enumerate(records):
            eng = spec.get(rec.engine)
            if eng is None:
                raise self._error(i, rec, f"engine must be one of {sorted(spec)}, not {rec.engine!r}")
            f = rec.fields
            ins = eng.format.instruction_of(f)
            if ins is None:
                keys = sorted({k for other in eng.format.instructions for k, _ in other.match})
                raise self._error(i, rec, "fields must name a known instruction kind, not "
                                  + ", ".join(f"{k}={f.get(k, 0)}" for k in keys))
            kinds[i] = ins.name
            try:
                self.semantics.check(rec.engine, f)
            except SimulationError as e:
                raise self._error(i, rec, str(e)) from None
            chunk_of[i] = chunk
            if eng.own_id:
                own = owns[i] = f[eng.own_id]
                if own:
                    key = (chunk, rec.engine, own)
                    if key in id_map:
                        raise self._error(i, rec, f"{eng.own_id} must be unique in its id range, not {own} "
                                          f"(already instruction {id_map[key]})")
                    id_map[key] = i
                if own == eng.format.field(eng.own_id).max:
                    chunk += 1
        for i, rec in enumerate(records):
            eng = spec[rec.engine]
            resolved = []
            for other, fname in eng.wait_for:
                k = rec.fields[fname]
                if not k:
                    continue
                target = id_map.get((chunk_of[i], other, k))
                if target is None:
                    raise self._error(i, rec, f"deadlock: waits ({fname}) for {other} id {k}, which no {other} "
                                      f"instruction of the buffer has (in this id range)")
                resolved.append((other, k, target))
            waits[i] = tuple(resolved)
        return kinds, owns, waits

    def _error(self, i, rec, msg):
        return SimulationError(f"instruction {i} (byte {rec.offset}, {rec.engine}): {msg}")

    def run(self, cmdbuf, *, races=True, progress=None):
        """Decode `cmdbuf` (bytes, or a list of Records) and execute it; return a Report.

        On a malformed instruction or a deadlock, raises SimulationError naming the instruction
        index and byte offset; memory keeps whatever the instructions before it wrote.
        progress: optional callable(done, total), called every 1024 instructions.
        """
        if isinstance(cmdbuf, (list, tuple)) and all(isinstance(r, Record) for r in cmdbuf):
            records = list(cmdbuf)
        elif not isinstance(cmdbuf, (bytes, bytearray, memoryview)):
            raise ArgumentError(must("run", "cmdbuf", "bytes (a command buffer) or a list of Records", cmdbuf))
        else:
            records = decode_cmdbuf(self.chip, cmdbuf)
        kinds, owns, waits = self._prepare(records)
        n = len(records)
        names = [e.name for e in self.engines]
        seqs = {e: [] for e in names}
        pos = [0] * n
        for i, rec in enumerate(records):
            pos[i] = len(seqs[rec.engine])
            seqs[rec.engine].append(i)
        heads = dict.fromkeys(names, 0)
        free = dict.fromkeys(names, 0)
        last_known = {e: dict.fromkeys(names, -1) for e in names}
        start, end = [0] * n, [None] * n
        known, accesses = [None] * n, [()] * n
        done = 0
        while done < n:
            best = None
            for order, e in enumerate(names):
                h = heads[e]
                if h >= len(seqs[e]):
                    continue
                i = seqs[e][h]
                ends = [end[t] for _, _, t in waits[i]]
                if any(x is None for x in ends):
                    continue
                s = max([free[e]] + ends)
                if best is None or (s, i) < (best[0], best[1]):
                    best = (s, i, e)
            if best is None:
                raise self._deadlock(records, seqs, heads, waits)
            s, i, e = best
            rec, kind = records[i], kinds[i]
            self.log = AccessLog()
            try:
                self.semantics.KINDS[e][kind](self, rec.fields)
            except SimulationError as err:
                raise self._error(i, rec, f"{kind}: {err}") from None
            except BmkError:
                raise
            finally:
                accesses[i] = tuple(self.log.entries)
                self.log = None
            cyc = self.semantics.cycles(e, kind, rec.fields, self)
            start[i], end[i] = s, s + cyc
            free[e] = end[i]
            kn = last_known[e]
            for other, _, t in waits[i]:
                kn[other] = max(kn[other], pos[t])
            known[i] = dict(kn)
            heads[e] += 1
            done += 1
            if progress is not None and (done % 1024 == 0 or done == n):
                progress(done, n)
        report = self._report(records, kinds, owns, waits, start, end, seqs, known, accesses, races)
        self.last_report = report
        return report

    def _deadlock(self, records, seqs, heads, waits):
        blocked = []
        for e, seq in seqs.items():
            if heads[e] < len(seq):
                i = seq[heads[e]]
                blocked.append((i, e, [(o, k, t) for o, k, t in waits[i]]))
        i, e, w = min(blocked)
        what = "; ".join(f"{o} id {k} (instruction {t})" for o, k, t in w)
        others = ", ".join(f"{e2} at instruction {i2}" for i2, e2, _ in blocked if i2 != i)
        return self._error(i, records[i], f"deadlock: waits for {what}, which never ends ({others} blocked too)")

    def _report(self, records, kinds, owns, waits, start, end, seqs, known, accesses, detect):
        names = list(seqs)
        instrs = tuple(InstructionRecord(i, r.offset, r.engine, kinds[i], owns[i],
                                         tuple((o, k) for o, k, _ in waits[i]), start[i], end[i])
                       for i, r in enumerate(records))
        busy = {e: sum(end[i] - start[i] for i in seqs[e]) for e in names}
        total = max(end) if records else 0
        overlap = 0
        if len(names) == 2:
            overlap = _intersection([(start[i], end[i]) for i in seqs[names[0]]],
                                    [(start[i], end[i]) for i in seqs[names[1]]])
        races, truncated = [], False
        if detect and len(names) == 2:
            a, b = names
            k = [None] * len(records)
            for i in seqs[a]:
                k[i] = known[i][b]
            for i in seqs[b]:
                k[i] = known[i][a]
            races, truncated = find_races(seqs[a], seqs[b], k, accesses)
        return Report(self.chip.name, instrs, total, busy, overlap, tuple(races), truncated)


def _intersection(xs, ys):
    """Total length common to two lists of disjoint, sorted intervals."""
    i = j = total = 0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if lo < hi:
            total += hi - lo
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total
