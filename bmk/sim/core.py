"""The simulator: memories, the N-engine run loop with sync ids, timing and race detection.

`Simulator(chip, semantics=None)` is generic; what each instruction kind does, and what it
costs, comes from a `Semantics` object (bmk/sim/semantics.py): the chip's registered one
(`bmk.sim.<chip>.SEMANTICS`) or one given by the caller. The simulator only ever sees decoded
field dicts (the same specs as the encoder), never op records.

Memories: one per space of the chip's memory map (`ChipSpec.memory`): the local space as lanes,
the others sparse. `space_of(address)` resolves a device address to (space, offset).

Run loop: every engine executes its instructions in program order. An instruction whose sync
field names id k of another engine (e.g. TIU `cmd_id_gdma`, TDMA `wait_id_tpu`; 0 = no wait)
starts only after the instruction with own id k on that engine has ended. After a descriptor
whose own id is the largest its field holds, all counters restart, so a wait refers to the id
in the current chunk of the buffer. Where the spec's ids are implicit (BM1688 and later) an
instruction's id is its 1-based position on its engine (per core). Among the engines' next instructions the one that can
start earliest runs next (ties: program order), so functional results follow the timing.
Start = max(engine free, end of what it waits for); end = start + the chip's cost model.
Each instruction carries a vector clock (the last position on every other engine known to
have ended before it starts, through transitive waits) for the race detector.

Cost per instruction: records equal but for their sync ids share one plan (kind, checks,
semantics function, cycles, a private copy of the fields, see semantics.py), made once per
distinct instruction. `compile(records)` does all of that once and returns a `Program`, which
depends on the records, the chip and the semantics only (never on memory): `run(program)` on
this Simulator or another of the same chip and semantics skips it. Each Simulator keeps one
memo per plan for the values its semantics derive from the fields (views of its memories,
closures over them; a runner there is called directly, semantics.py), so a plan's second run
costs only its work; `reset()` zeroes the memories in place, keeping those memos valid (a
model run again reuses its Simulator, bmk/models/run.py). The order the engines' instructions
run in, their start and end cycles and their vector clocks depend only on the program: its
first run works them out as it goes and the Program keeps them, so a later run only walks that
order. The loop itself touches only lists and tuples, and the cyclic garbage collector pauses
while a buffer runs.
"""
import gc
import itertools
import typing
from operator import is_

import attrs
import numpy as np

from bmk.encoders import Record, decode, decode_cmdbuf
from bmk.encoders.framing import chip_of_streams
from bmk.encoders.columns import StreamRecords
from bmk.encoders.codec import codec_for
from bmk.encoders.fields import as_dict, not_a_mapping
from bmk.errors import ArgumentError, BmkError, Shown, SimulationError, SpecError, must
from bmk.isa import load_chip
from bmk.isa.spec import ChipSpec
from bmk.sim.blas import one_thread
from bmk.sim.check import verdict
from bmk.sim.memory import GMEM, LMEM, AccessLog, Gmem, Lmem
from bmk.sim.races import find_races
from bmk.sim.report import Instructions, Report
from bmk.sim.semantics import Semantics, semantics_for
from bmk.timing.schedule import list_schedule, multi_busy
from bmk.util import is_int

MAX_RACES = 1000
MAX_PLANS = 1 << 12      # memoized instruction plans per simulator (emptied when full: a few MiB)


class Plan:
    """What the simulator needs to run one distinct instruction, made once (Simulator._plan)
    and shared by every instruction equal to it but for its sync ids (semantics.py):

    kind      its instruction kind;
    run       the semantics function, run(simulator, fields);
    cycles    its cost (the cost model's answer, filled in on its first run: a function of
              the fields and the chip, semantics.py);
    fields    its own copy of the decoded fields: every instruction of the plan runs on this
              one dict, which stays in the CPU caches (a long buffer's decoded dicts do not).
    The dict its semantics keep field-derived values in (Simulator.memo) belongs to each
    Simulator running the plan (Simulator._memos): those values see that Simulator's memories."""

    __slots__ = ("kind", "run", "cycles", "fields")

    def __init__(self, kind, run, fields):
        self.kind, self.run, self.cycles, self.fields = kind, run, None, fields


class Site(typing.NamedTuple):
    """Where a compiled instruction came from (what errors and reports name): its engine, its
    byte offset and its raw stream (None in a cmd_hdr_t buffer)."""
    engine: str
    offset: int
    stream: object = None


class Program:
    """A buffer made ready to run (Simulator.compile): every instruction's site, kind, own id,
    resolved waits and plan, and each engine's order. It holds nothing of a Simulator's memory,
    so any Simulator of the same chip (ChipSpec) and semantics runs it, as often as asked,
    without decoding, checking or planning again; and not the decoded records either (a model
    keeps its Programs: bmk/models/run.py), only one fields dict per distinct instruction (its
    plan's)."""

    __slots__ = ("chip", "semantics", "sites", "kinds", "owns", "waits", "plans", "names", "seqs", "pos",
                 "eng_of", "targets", "schedule")

    def __len__(self):
        return len(self.sites)


class _Schedule:
    """Iterates a program's instructions in execution order on its first run (Simulator._scheduled);
    result() -> (order, start, end, known) once every instruction has run."""

    def __init__(self, sim, prog, clocks):
        self.sim, self.prog, self.clocks = sim, prog, clocks

    def __iter__(self):
        sim, prog = self.sim, self.prog
        records, plans, waits = prog.sites, prog.plans, prog.waits
        names, seqs, pos, eng_of, targets = prog.names, prog.seqs, prog.pos, prog.eng_of, prog.targets
        n, ne = len(records), len(names)
        last_known = [[-1] * ne for _ in names]
        self.start, self.end = [0] * n, [None] * n
        self.known = known = [None] * n if self.clocks else None
        self.order = []
        others = [tuple(x for x in range(ne) if x != e) for e in range(ne)]

        def clock(i, e):
            kn = last_known[e]
            for t in targets[i]:
                o = eng_of[t]
                if pos[t] > kn[o]:
                    kn[o] = pos[t]
                kt = known[t]
                for x in others[e]:      # transitive: what t knew is known before i
                    if kt[x] > kn[x]:
                        kn[x] = kt[x]
            known[i] = tuple(kn)

        def deadlock(heads):
            return sim._deadlock(records, {names[e]: seqs[e] for e in range(ne)},
                                 {names[e]: heads[e] for e in range(ne)}, waits)

        # the run loop executes each yielded instruction (and sets its plan's cycles) before its cost is asked
        yield from list_schedule(seqs, targets, lambda i: plans[i].cycles, self.start, self.end, self.order,
                                 deadlock, clock if self.clocks else None)

    def result(self):
        return self.order, self.start, self.end, self.known


class Trail:
    """Where the running instruction's AccessLog is (Simulator.log reads and sets it): what a
    semantics closure kept in a plan memo may hold instead of the Simulator, which holds the
    memo (a closure holding the Simulator makes a cycle that only the cyclic garbage collector
    frees, so every dropped Simulator's memories would stay allocated until it runs)."""

    __slots__ = ("log",)

    def __init__(self):
        self.log = None


class Simulator:
    """A fresh chip: zeroed memories. See API.md "Simulator".

    chip: a chip name or a ChipSpec; semantics: a Semantics, default the chip's registered one.
    """

    def __init__(self, chip: str = "bm1880", semantics: "Semantics | None" = None):
        if isinstance(chip, str):
            self.chip = load_chip(chip)
        elif isinstance(chip, ChipSpec):
            self.chip = chip
        else:
            raise ArgumentError(must("Simulator", "chip", "a chip name or a ChipSpec", chip))
        if semantics is None:
            semantics = semantics_for(self.chip.name)
        elif not isinstance(semantics, Semantics):
            raise ArgumentError(must("Simulator", "semantics", "a bmk.sim.semantics.Semantics or None", semantics))
        self.semantics = semantics
        p = self.chip.param
        self.npu_num, self.eu_num = p("npu_num"), p("eu_num")
        self.memories = {}
        for sp in self.chip.memory:
            if sp.lane_bytes:
                if sp.size != self.npu_num * sp.lane_bytes:
                    raise SimulationError(f"memory space {sp.name} size must be npu_num * lane_bytes = "
                                          f"{self.npu_num * sp.lane_bytes}, not {sp.size}")
                self.memories[sp.name] = Lmem(self.npu_num, sp.lane_bytes, LMEM if sp.name == "local" else sp.name)
            else:
                # static memory knows what was put there: a read of bytes no table, host write or
                # command wrote is refused (bm1684x/tsbc.py), never read as zeros
                self.memories[sp.name] = Gmem(sp.size, GMEM if sp.name == "global" else sp.name,
                                              track_writes=sp.name == "static")
        self.lmem = self.memories.get("local")
        self.gmem = self.memories.get("global")
        glob = self.space("global") if self.gmem is not None else None
        self.gmem_offset = glob.base if glob else 0
        self.gmem_mask = self.chip.gmem_addr_mask
        self.engines = list(self.chip.encoded_engines)
        # An engine's only instruction class (bm1880, bm1684); None for multi-class engines
        # (bm1684x), whose records name their class.
        self.formats = {e.name: e.format for e in self.engines}
        self.trail = Trail()
        # While an instruction runs: a dict its semantics may keep values derived from its
        # fields in (not from memory), shared by the instructions equal to it but for sync ids.
        self.memo = None
        self.last_report = None
        self.last_accesses = None               # the last run's access logs when it detected races
        self._sync = None                       # engine -> sync-id fields (_sync_fields)
        self._getters = {}                      # (engine, class) -> _content_getter
        self._plans, self._plans_of = {}, None  # instruction plans memo (_prepare), per semantics
        self._memos = {}                        # Plan -> its memo on this Simulator (Simulator.memo)
        self._last_races = None                 # (seqs, clocks, accesses, found) of the last run's races
        self._lcheck = None                     # LmemCheck once a run checks local memory
        self._lcheck_spare = None               # the one a reset dropped, renewed by the next checked run
        self._lmem_host, self._lmem_unchecked = [], False   # what it must know when made
        # A multi-core chip's other cores: {core: Simulator} sharing this one's global memory and
        # the spaces the chip marks shared (bmk/models/run.py makes them), reset with it.
        self.cores = {}
        self.semantics.init(self)

    def reset(self):
        """Back to a fresh chip: every memory zeroed in place and filled as a new Simulator's
        (Semantics.init), the last report dropped, and so every other core's (`cores`). What does
        not depend on memory contents stays (memoized views, plans and their memos: they see the
        same arrays), so a program run again after a reset costs only its work."""
        self._reset(())
        for other in self.cores.values():       # the spaces they share with this one: zeroed above
            other._reset({name for name, mem in other.memories.items() if mem is self.memories.get(name)})

    def _reset(self, shared):
        for name, mem in self.memories.items():
            if name not in shared:
                mem.clear()
        self.last_report = None
        if self._lcheck is not None:            # its arrays and views are reused (LmemCheck.renew)
            self._lcheck_spare = self._lcheck
        self._lcheck = None
        self._lmem_host, self._lmem_unchecked = [], False
        self.semantics.init(self)       # (another core writing a table into a shared space writes the same bytes)

    @property
    def log(self):
        """The AccessLog of the running instruction (None between instructions)."""
        return self.trail.log

    @log.setter
    def log(self, value):
        self.trail.log = value

    # -- memory spaces ----------------------------------------------------------------------------
    def space(self, name):
        """The MemorySpace called name (local, static, l2sram, dtcm, global)."""
        try:
            return self.chip.space(name)
        except SpecError:
            raise SimulationError(f"memory space must be one of {[s.name for s in self.chip.memory]}, "
                                  f"not {name!r}") from None

    def space_of(self, address):
        """(MemorySpace, offset in it) of a device address; SimulationError when in no space."""
        sp = self.chip.space_of(address)
        if sp is not None:
            return sp, sp.offset(address)
        where = ", ".join(f"{s.name} [0x{s.base:x}, 0x{s.base + s.size:x})" for s in self.chip.memory)
        raise SimulationError(f"address must be inside a memory space of {self.chip.name} ({where}), "
                              f"not 0x{address:x}")

    # -- memory access (API.md) -----------------------------------------------------------------
    @staticmethod
    def _bytes(data, call="gmem_write"):
        if isinstance(data, np.ndarray):
            return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if not isinstance(data, (bytes, bytearray, memoryview)):      # bytes(5) would be five zeros
            raise ArgumentError(must(call, "data", "bytes or a numpy array", data))
        return np.frombuffer(bytes(data), np.uint8)

    @staticmethod
    def _count(call, n):
        if not is_int(n) or n < 0:
            raise ArgumentError(must(call, "n", "a byte count (an integer >= 0)", n))
        return int(n)

    # What the simulator reads of a bm1880 TensorLmem (bmk/bm1880/tensor.py), asked of the value
    # rather than imported: the simulator never loads a chip's API package (tests/packaging).
    _TENSOR_ATTRS = ("la", "shape", "stride", "layout", "is_matrix", "signed")

    @classmethod
    def _check_tensor(cls, call, t):
        if isinstance(t, type) or not all(hasattr(t, a) for a in cls._TENSOR_ATTRS):
            raise ArgumentError(must(call, "t", "a TensorLmem", t))

    def _gmem_offset(self, call, addr):
        """The offset in global memory of an API global address. bm1880's API takes gmem
        offsets (its encoder adds the window base: the space has an address_mask); bm1684 and
        bm1684x take device addresses, global memory starting at the space's base (API.md)."""
        if not is_int(addr):
            raise ArgumentError(must(call, "addr", "an integer global address", addr))
        glob = self.space("global")
        if glob.address_mask:
            if addr < 0:
                raise ArgumentError(must(call, "addr", f"a gmem offset in [0x0, 0x{self.gmem.size:x})",
                                         Shown(hex(int(addr)))))
            return int(addr)
        if not glob.base <= addr < glob.base + glob.size:
            raise ArgumentError(must(call, "addr", f"a global address in [0x{glob.base:x}, "
                                     f"0x{glob.base + glob.size:x})", Shown(hex(int(addr)))))
        return int(addr) - glob.base

    def _gmem_span(self, call, addr, n):
        """The gmem offset of n bytes at API global address addr, checked whole: every message
        in the API's own address convention (bm1880: gmem offsets; bm1684, bm1684x: device
        addresses), as ArgumentErrors."""
        n = self._count(call, n)
        addr = self._gmem_offset(call, addr)
        if addr + n > self.gmem.size:
            glob = self.space("global")
            base = 0 if glob.address_mask else glob.base
            if n > self.gmem.size:      # no address could hold it: the size is at fault
                raise ArgumentError(must(call, "n", f"at most the {self.gmem.size} bytes of global memory", n))
            what = "a gmem offset" if glob.address_mask else "a global address"
            raise ArgumentError(must(call, "addr", f"{what} whose {n} bytes end inside global memory "
                                     f"[0x{base:x}, 0x{base + self.gmem.size:x})", Shown(hex(base + addr))))
        return addr

    def gmem_write(self, addr: int, data: "bytes | np.ndarray") -> None:
        """Write bytes (or a numpy array's raw bytes) at global address addr (bm1880: a gmem
        offset; bm1684, bm1684x: a device address from 0x100000000)."""
        buf = self._bytes(data)
        addr = self._gmem_span("gmem_write", addr, len(buf))
        self.gmem.store(addr, buf)

    def gmem_read(self, addr: int, n: int) -> bytes:
        """n bytes at global address addr (as gmem_write takes it). Bytes this machine cannot
        hold are an ArgumentError pointing at gmem_chunks / gmem_dump, which read any size."""
        chunks = self.gmem_chunks(addr, n, call="gmem_read")
        try:
            return b"".join(chunks)
        except MemoryError:
            raise ArgumentError(must("gmem_read", "n", "a size this machine can hold in memory as one bytes object "
                                     "(gmem_chunks and gmem_dump read any size a chunk at a time)", n)) from None

    def gmem_chunks(self, addr, n, chunk=1 << 24, call="gmem_chunks"):
        """The n bytes at global address addr as consecutive read-only uint8 arrays of at
        most `chunk` bytes: a range of any size read (or written to a file) with no more
        memory than one chunk. The range is checked before the first chunk."""
        addr = self._gmem_span(call, addr, n)
        return self.gmem.chunks(addr, int(n), chunk)

    def gmem_dump(self, addr, n, file):
        """Write the n bytes at global address addr to `file` (a binary file object), one
        chunk at a time."""
        for piece in self.gmem_chunks(addr, n, call="gmem_dump"):
            file.write(piece)

    def _local_span(self, call, addr, n):
        """A local address whose n bytes are inside local memory (ArgumentError otherwise)."""
        end = self.lmem.size
        if not is_int(addr):
            raise ArgumentError(must(call, "addr", "an integer local address (NPU * lane bytes + offset)", addr))
        if addr < 0 or addr + n > end:
            raise ArgumentError(must(call, "addr", f"a local address whose {n} bytes end inside local memory "
                                     f"[0x0, 0x{end:x})", Shown(hex(int(addr)))))
        return int(addr)

    def lmem_write(self, addr, data):
        """Raw bytes at a local address (lane * lane_bytes + offset)."""
        data = self._bytes(data, "lmem_write")
        addr = self._local_span("lmem_write", addr, len(data))
        self.lmem.write_bytes(addr, data.tobytes())
        self._host_wrote((addr, len(data)))

    def _host_wrote(self, what):
        """The host wrote local memory (an (addr, n) span or a view's log entry): bytes the
        local-memory checks count as written (bmk/sim/lmemcheck.py)."""
        if self._lcheck is not None:
            self._lcheck.host(what)
        elif len(self._lmem_host) < 1024:
            self._lmem_host.append(what)
        else:                   # many: when checks start, every byte counts as written
            self._lmem_unchecked = True

    def lmem_read(self, addr, n):
        """n raw bytes at a local address (lane * lane_bytes + offset)."""
        n = self._count("lmem_read", n)
        return self.lmem.read_bytes(self._local_span("lmem_read", addr, n), n)

    def _array_view(self, call, addr, shape, stride, dtype, pack, write):
        from bmk.dtypes import as_dtype
        dt = as_dtype(dtype, call)
        try:
            shape = tuple(int(v) for v in shape)
            stride = tuple(int(v) for v in stride)
        except (TypeError, ValueError):
            raise ArgumentError(must(call, "shape, stride", "4 integers each", (shape, stride))) from None
        if len(shape) != 4 or len(stride) != 4 or min(stride) < 0:
            raise ArgumentError(must(call, "shape, stride", "4 integers each (NCHW), strides >= 0", (shape, stride)))
        log = AccessLog() if write else None
        try:
            view = self.lmem.tensor(call, addr, shape, stride, log, write, dt, pack)
        except SimulationError as e:
            raise ArgumentError(f"{call}: {e}") from None
        if write:
            self._host_wrote(log.entries[0])
        return dt, view

    def lmem_read_array(self, addr, shape, stride, dtype, pack=1):
        """Values (N, C, H, W) of a local tensor: addr a local address (lane = addr // lane_bytes),
        stride in elements (32-bit words when pack > 1: 4 for int8 4N, 2 for int16 2N)."""
        dt, view = self._array_view("lmem_read_array", addr, shape, stride, dtype, pack, False)
        return np.array(view.read())

    def lmem_write_array(self, addr, values, stride, dtype, pack=1):
        """Store values (N, C, H, W) as a local tensor of dtype (wrapped to its storage type)."""
        values = np.asarray(values)
        if values.ndim != 4:
            raise ArgumentError(must("lmem_write_array", "values", "a 4-D (N, C, H, W) array", values.shape))
        dt, view = self._array_view("lmem_write_array", addr, values.shape, stride, dtype, pack, True)
        view.write(values.astype(dt.numpy, copy=False))

    def _tensor_view(self, t, write=False):
        lay, st = t.layout, t.stride
        log = AccessLog() if write else None
        view = self.lmem.tensor("tensor", t.la, (lay.n, lay.c, lay.h, lay.w), (st.n, st.c, st.h, st.w), log, write)
        if write:
            self._host_wrote(log.entries[0])
        return view

    def lmem_read_tensor(self, t):
        """A bm1880 TensorLmem's values in logical order: (N, C, H, W), or (rows, cols) for a matrix."""
        self._check_tensor("lmem_read_tensor", t)
        arr = np.array(self._tensor_view(t).read())
        if t.signed:
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
    def _sync_fields(self):
        """engine -> (own id field, largest own id, {sync-id field: 0}), computed once."""
        if self._sync is None:
            self._sync = {e.name: (e.own_id, e.id_max, dict.fromkeys([e.own_id] * bool(e.own_id)
                                                                    + [f for _, f in e.wait_for], 0))
                          for e in self.engines}
        return self._sync

    @staticmethod
    def _content_getter(eng, cls, ids):
        """(field names in decoding order, positions of the sync ids, of the own id and of each
        wait field among them) of a class."""
        fmt = eng.format
        if fmt is None:
            try:
                fmt = eng.cls(cls)
            except SpecError:
                return None
        names = codec_for(fmt).names
        where = {n: k for k, n in enumerate(names)}
        if any(fname not in where for _, fname in eng.wait_for):
            return None         # a class without the engine's wait fields: read them by name
        return (names, tuple(where[n] for n in ids if n in where), where.get(eng.own_id),
                tuple(where[fname] for _, fname in eng.wait_for))

    def _plan(self, i, rec, eng):
        """The Plan of a record, after the checks (bmk/sim/check.py `verdict`: what `bmk check`
        reports); SimulationError naming the instruction when the record is refused. Every
        record equal to this one but for its sync ids runs it."""
        name, refused = verdict(self.chip, self.semantics, eng, rec)
        if refused is not None:
            err = self._error(i, rec, refused.reason)
            err.field, err.value = refused.field, refused.value
            raise err
        return Plan(name, self.semantics.kinds[(rec.engine, name)], as_dict(rec.fields))

    def _prepare(self, records, done=None):
        """Kinds, own ids, resolved waits and plans of every record; SimulationError if malformed.

        Decoding the kind, checking the fields and (later) the cost model depend only on the
        fields other than the sync ids (semantics.py), so records equal but for their ids share
        one plan: a program's repeated instructions are classified and checked once."""
        n = len(records)
        owns, waits, plans = [0] * n, [()] * n, [None] * n
        chunk_of, id_map, chunk = [0] * n, {}, 0
        spec = {e.name: e for e in self.engines}
        sync = self._sync_fields()
        if self._plans_of is not self.semantics:
            self._plans, self._plans_of = {}, self.semantics
        memo = self._plans
        getters = self._getters
        wait_ids = [None] * n       # the values of the wait fields (eng.wait_for order), when any is set
        # implicit ids: (core, engine) -> the last position given; `done` ({engine: n}): the
        # records continue streams whose first n commands ran before (a round, bmk/sim/cores.py)
        done = done or {}
        position = {(rec.core, e): n for rec in records[:1] for e, n in done.items()}
        for i, rec in enumerate(records):
            engine = rec.engine
            eng = spec.get(engine)
            if eng is None:
                raise self._error(i, rec, f"engine must be one of {sorted(spec)}, not {engine!r}")
            f = rec.fields
            own_field, id_max, ids = sync[engine]
            # the memo key: every field but the sync ids (one C call for a decoded dict)
            at = (engine, rec.cls)
            getter = getters.get(at)
            if getter is None:
                getter = getters[at] = self._content_getter(eng, rec.cls, ids)
            key = None
            if getter is not None and tuple(f) == getter[0]:    # the class's fields in order, as decoded
                values = list(f.values())
                own = values[getter[2]] if getter[2] is not None else 0
                waited = [values[p] for p in getter[3]]
                for p in getter[1]:
                    values[p] = 0
                key = at + (tuple(values),)
            else:
                own = f.get(own_field, 0) if own_field else 0
                waited = [f.get(fname, 0) for _, fname in eng.wait_for]
            if any(waited):
                wait_ids[i] = waited
            try:
                if key is None:     # any other dict: its keys and values
                    key = at + (tuple(f), tuple({**f, **ids}.values()))
                plan = memo.get(key)
            except TypeError:       # unhashable field values (hand-made records): no memo
                key = plan = None
            if plan is None:
                plan = self._plan(i, rec, eng)
                if key is not None:
                    if len(memo) >= MAX_PLANS:
                        memo.clear()
                    memo[key] = plan
            plans[i] = plan
            chunk_of[i] = chunk
            if eng.implicit_ids:
                # ids are positions (BM1688 and later): 1-based per engine and core; a wait
                # names a position on the other engine of its own core
                if eng.wait_mask is not None and wait_ids[i] is not None:
                    wait_ids[i] = [k & eng.wait_mask for k in wait_ids[i]]
                place = (rec.core, engine)
                own = owns[i] = position[place] = position.get(place, 0) + 1
                chunk_of[i] = ("core", rec.core)
                id_map[(chunk_of[i], engine, own)] = i
            elif own_field:
                owns[i] = own                           # a class without ids (bm1684x LAR) has 0
                if own:
                    key = (chunk, engine, own)
                    if key in id_map:
                        raise self._error(i, rec, f"{own_field} must be unique in its id range, not {own} "
                                          f"(already instruction {id_map[key]})")
                    id_map[key] = i
                if own == id_max:
                    chunk += 1
        wait_fields = {e.name: e.wait_for for e in self.engines}
        for i, waited in enumerate(wait_ids):
            if waited is None:
                continue
            rec = records[i]
            resolved = None
            for (other, fname), k in zip(wait_fields[rec.engine], waited):
                if not k or k <= done.get(other, 0):       # 0: none; at most done: ran before
                    continue
                target = id_map.get((chunk_of[i], other, k))
                if target is None:
                    raise self._error(i, rec, f"deadlock: waits ({fname}) for {other} id {k}, which no {other} "
                                      f"instruction of the buffer has (in this id range)")
                if resolved is None:
                    resolved = []
                resolved.append((other, k, target))
            if resolved:
                waits[i] = tuple(resolved)
        return [p.kind for p in plans], owns, waits, plans

    def _error(self, i, rec, msg):
        """A SimulationError naming instruction i; its `instruction` and `reason` attributes
        hold i and msg for callers that name the instruction their own way (bmk.models.run)."""
        stream = getattr(rec, "stream", None)
        where = f"byte {rec.offset}" if stream is None else f"stream {stream} byte {rec.offset}"
        err = SimulationError(f"instruction {i} ({where}, {rec.engine}): {msg}")
        err.instruction, err.reason = i, msg
        return err

    def _records(self, cmdbuf, call="run"):
        if isinstance(cmdbuf, StreamRecords):
            return list(cmdbuf)
        if isinstance(cmdbuf, (list, tuple)) and all(isinstance(r, Record) for r in cmdbuf):
            bad = not_a_mapping(cmdbuf)
            if bad is not None:
                raise ArgumentError(must(call, f"cmdbuf[{bad[0]}].fields", "a mapping {field name: int}", bad[1]))
            return list(cmdbuf)
        if isinstance(cmdbuf, dict):
            chip = chip_of_streams(cmdbuf)
            if chip is not None and chip != self.chip.name:
                raise ArgumentError(must(call, "cmdbuf", f"streams of {self.chip.name}, the Simulator's chip",
                                         Shown(f"{chip}'s streams (acquire_streams of a {chip} Context)")))
            return decode(self.chip, cmdbuf)
        if not isinstance(cmdbuf, (bytes, bytearray, memoryview)):
            raise ArgumentError(must(call, "cmdbuf", "bytes (a command buffer), {engine: bytes} (raw streams), "
                                     "a list of Records or a Program", cmdbuf))
        return decode_cmdbuf(self.chip, cmdbuf)

    def compile(self, cmdbuf, _call="compile", done=None):
        """A Program of `cmdbuf` (what `run` takes, but a Program): decoded, every record's kind
        found and its fields checked, waits resolved, plans made; SimulationError naming the
        instruction when one is malformed or waits for an id no instruction has. Nothing runs."""
        if isinstance(cmdbuf, Program):
            if cmdbuf.chip is self.chip and cmdbuf.semantics is self.semantics:
                return cmdbuf
            raise ArgumentError(f"{_call}: a Program runs on Simulators of the ChipSpec and Semantics it was compiled "
                                f"for; this one was compiled for another ({cmdbuf.chip.name}): compile the buffer on "
                                f"this Simulator")
        records = self.semantics.prepare(self.chip, self._records(cmdbuf, _call))
        kinds, owns, waits, plans = self._prepare(records, done)
        n = len(records)
        # Engines are numbered; per instruction: its engine, its position on it, the
        # instructions it waits for. The run loop touches only lists and tuples.
        names = [e.name for e in self.engines]
        number = {e: k for k, e in enumerate(names)}
        seqs = [[] for _ in names]
        pos, eng_of = [0] * n, [0] * n
        for i, rec in enumerate(records):
            k = eng_of[i] = number[rec.engine]
            pos[i] = len(seqs[k])
            seqs[k].append(i)
        prog = Program()
        prog.chip, prog.semantics = self.chip, self.semantics
        prog.sites = tuple(Site(r.engine, r.offset, getattr(r, "stream", None)) for r in records)
        prog.kinds, prog.owns, prog.waits, prog.plans = kinds, owns, waits, plans
        prog.names, prog.seqs, prog.pos, prog.eng_of = names, seqs, pos, eng_of
        prog.targets = [tuple(t for _, _, t in w) for w in waits]
        prog.schedule = None        # (order, start, end, clocks), kept by the first run (_scheduled)
        return prog

    def run(self, cmdbuf: "bytes | Mapping[str, bytes] | Sequence[Record]", *, races: bool = True,
            progress: "Callable[[int, int], None] | None" = None, checks: "bool | None" = None,
            strict: bool = False) -> "Report":
        """Decode `cmdbuf` and execute it; return a Report. `cmdbuf` is a cmd_hdr_t command
        buffer (bytes), raw per-engine streams ({engine: bytes}, merged in program order by
        their sync ids, API.md "Simulator, all chips"), a list of Records, or a Program
        (`compile`: decoded and checked once, run as often as asked).

        On a malformed instruction or a deadlock, raises SimulationError naming the instruction
        index and its (stream,) byte offset; memory keeps whatever the instructions before it wrote.
        progress: optional callable(done, total), called every 1024 instructions.
        checks: look for local-memory hazards (bmk/sim/lmemcheck.py: reads of bytes never
        written, dead writes onto a live tensor), reported as Report.warnings; None (default):
        when races are detected. strict: a warning is a SimulationError (after the run, which
        `last_report` keeps), naming the first.
        """
        # The run allocates many small objects (fields, logs, records) and frees almost none
        # until it ends: the cyclic collector would rescan the growing heap again and again.
        # numpy's BLAS on one thread meanwhile (bmk/sim/blas.py: shared cores make its threads
        # wait for each other), and its floating-point errors off: an overflow or a NaN is an
        # IEEE result the semantics compute, not an error (semantics.py).
        paused = gc.isenabled()
        gc.disable()
        try:
            with one_thread(), np.errstate(all="ignore"):
                report = self._run(self.compile(cmdbuf, "run"), races, progress,
                                   (races or strict) if checks is None else bool(checks))
        finally:
            if paused:
                gc.enable()
        if strict and report.warnings:
            n = len(report.warnings)
            raise SimulationError(f"run: strict: {n} local-memory warning{'s' if n > 1 else ''}, the first: "
                                  f"{report.warnings[0]}")
        return report

    def _checker(self, n, key=None):
        """The LmemCheck of a checked run of n instructions (made on the first); key: the
        program's, for LmemCheck.start."""
        lc = self._lcheck
        if lc is None:
            from bmk.sim.lmemcheck import LmemCheck
            lc = self._lcheck_spare
            if lc is not None and lc.lmem is self.lmem:
                self._lcheck_spare = None
                lc.renew(self._lmem_host, self._lmem_unchecked)
                self._lcheck = lc
            else:
                lc = self._lcheck = LmemCheck(self.lmem, self._lmem_host, self._lmem_unchecked)
            self._lmem_host = []
        lc.start(n, key)
        return lc

    def _run(self, prog, races, progress, checks=False):
        records, kinds, owns, waits, plans = prog.sites, prog.kinds, prog.owns, prog.waits, prog.plans
        names = prog.names
        n = len(records)
        memos = self._memos
        if len(memos) >= MAX_PLANS:
            memos.clear()
        trail = self.trail
        cycles = self.semantics.cycles
        schedule = prog.schedule
        if schedule is None or (races and schedule[3] is None):
            order = None            # the first run works the order out as it goes (_scheduled)
            steps = self._scheduled(prog, races)
        else:
            order, start, end, known = schedule
            steps = order
        accesses = [()] * n
        lc = None
        if self.lmem is not None:
            if checks:
                lc = self._checker(n, tuple(plans))
            elif self._lcheck is not None:
                self._lcheck.stale = True
            else:
                self._lmem_unchecked = True
        log = AccessLog()           # without races one log serves every instruction, emptied each time
        done = 0
        try:
            for i in steps:
                plan = plans[i]
                memo = memos.get(plan)
                if memo is None:
                    memo = memos[plan] = {}
                if races:
                    log = AccessLog()
                else:
                    log.entries, log.elements, log.copies, log.sized = [], 0, False, False
                trail.log = log
                self.memo = memo
                try:
                    run = memo.get("run")
                    if run is not None:         # the semantics' own per-plan runner (semantics.py)
                        run(self)
                    else:
                        plan.run(self, plan.fields)
                except SimulationError as err:
                    text = str(err)     # a message naming its kind already is not prefixed again
                    raise self._error(i, records[i], text if text.startswith((f"{plan.kind}:", f"{plan.kind} ("))
                                      else f"{plan.kind}: {text}") from None
                except BmkError:
                    raise
                except Exception as err:    # odd field values the semantics missed: still this instruction's error
                    raise self._error(i, records[i],
                                      f"{plan.kind}: cannot be simulated ({type(err).__name__}: {err})") from err
                finally:
                    if races:
                        accesses[i] = tuple(log.entries)
                    trail.log = self.memo = None
                if lc is not None:
                    lc.instruction(i, log.entries, log.copies, log.sized)
                if plan.cycles is None:
                    plan.cycles = cycles(names[prog.eng_of[i]], plan.kind, plan.fields, self)
                done += 1
                if progress is not None and (done % 1024 == 0 or done == n):
                    progress(done, n)
        except BaseException:
            if lc is not None:      # a replayed run's checks caught up to the instruction that stopped it
                lc.abort()
            raise
        if order is None:
            order, start, end, known = prog.schedule = steps.result()
        self.last_accesses = accesses if races else None      # per instruction, for bmk/sim/cores.py
        report = self._report(records, kinds, owns, waits, start, end, names, prog.seqs, known, accesses, races)
        if lc is not None:
            report = attrs.evolve(report, warnings=lc.finish(n))
        self.last_report = report
        return report

    def _scheduled(self, prog, clocks):
        """The instruction order of a program's first run, worked out as it runs: among the
        engines' next instructions the one that can start earliest (ties: program order), its
        start and end from the cost model (each plan's cycles, set by the run loop once the
        instruction ran), and, with `clocks`, each instruction's vector clock for the race
        detector. All of it depends only on the program (the plans' cycles are functions of
        their fields and the chip, semantics.py), so the Program keeps it: later runs take
        the same order without working it out again."""
        return _Schedule(self, prog, clocks)

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

    def _report(self, records, kinds, owns, waits, start, end, names, seq_list, known, accesses, detect):
        seqs = dict(zip(names, seq_list))
        instrs = Instructions(records, kinds, owns, waits, start, end)
        busy = {e: sum(end[i] - start[i] for i in seqs[e]) for e in names}
        total = max(end) if records else 0
        intervals = {e: [(start[i], end[i]) for i in seqs[e]] for e in names}
        pairs = {(a, b): _intersection(intervals[a], intervals[b]) for a, b in itertools.combinations(names, 2)}
        overlap = next(iter(pairs.values())) if len(names) == 2 else multi_busy(intervals.values())
        races, truncated = self._races(names, seqs, known, accesses) if detect else ((), False)
        return Report(self.chip.name, instrs, total, busy, overlap, races, truncated, pairs)

    def _races(self, names, seqs, known, accesses):
        """(races, truncated) of a run: find_races over every pair of engines. A run whose engines'
        orders and clocks are the last run's, and whose instructions logged the same entries (the
        same objects: views are memoized), has its races: they are taken from it."""
        last = self._last_races
        if (last is not None and last[0] == seqs and last[1] == known and len(last[2]) == len(accesses)
                and list(map(len, last[2])) == list(map(len, accesses))
                and all(map(is_, itertools.chain.from_iterable(last[2]), itertools.chain.from_iterable(accesses)))):
            return last[3]
        number = {e: k for k, e in enumerate(names)}
        races, truncated = [], False
        for a, b in itertools.combinations(names, 2):
            k = [None] * len(accesses)
            ka, kb = number[a], number[b]
            for i in seqs[a]:
                k[i] = known[i][kb]
            for i in seqs[b]:
                k[i] = known[i][ka]
            found, trunc = find_races(seqs[a], seqs[b], k, accesses, MAX_RACES - len(races), self.npu_num)
            races += found
            if trunc or len(races) >= MAX_RACES:
                truncated = truncated or trunc
                if len(races) >= MAX_RACES:
                    truncated = True
                    break
        races.sort(key=lambda r: (r.first, r.second))
        found = tuple(races), truncated
        self._last_races = (seqs, known, accesses, found)
        return found


def _intersection(xs, ys):
    """Total length common to two lists of disjoint, sorted intervals."""
    if not xs or not ys:
        return 0
    if len(xs) + len(ys) > 64:
        a, b = np.array(xs, np.int64).reshape(-1, 2), np.array(ys, np.int64).reshape(-1, 2)
        if (a[:, 1] >= a[:, 0]).all() and (b[:, 1] >= b[:, 0]).all() and max(a.max(), b.max()) < 1 << 60:
            return _measure(a) + _measure(b) - _measure(np.concatenate([a, b]))
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


def _measure(iv):
    """Length of the union of intervals (rows lo, hi; hi >= lo), exactly, in int64."""
    if not len(iv):
        return 0
    iv = iv[np.argsort(iv[:, 0], kind="stable")]
    lo, reach = iv[:, 0], np.maximum.accumulate(iv[:, 1])
    first = np.flatnonzero(np.concatenate(([True], lo[1:] > reach[:-1])))   # each run of overlapping ones
    last = np.concatenate((first[1:] - 1, [len(iv) - 1]))
    return int((reach[last] - lo[first]).sum())
