"""What every chip's Context shares: the op table (bmk/optable.py), the one emission path
(bmk/emission.py), ordering (bmk/ordering.py), acquisition (bmk/acquisition.py) and origins.

A chip's Context is a `Program` subclass whose class attribute `OPS` is its op table: one
`OpRow` per API function, naming the op record class, the checks function, the lowering
function and the call style. The subclass gets one generated method per row (and per alias),
whose docstring cites the seed. Every call runs one path:

    row.check(c, record) -> row.lower(chip, record) -> pack (encoders) -> schedule (scheduler)

(c: a `bmk.checks.Check` of the chip's kind, `Program.CHECK`, naming the call).

and nothing is recorded until every step has succeeded, so a failed call changes nothing.
Sync ids are assigned at acquisition, after the chip's end commands (`END_COMMANDS`) have
been appended to a copy of the program, so acquiring twice gives the same bytes.
"""
import numpy as np

from bmk.acquisition import Acquisition
from bmk.checks import Check
from bmk.emission import Emission, _Packer, encoded_engines
from bmk.errors import ArgumentError, must
from bmk.optable import last_to_first, make_method
from bmk.ordering import Ordering
from bmk.origin_log import _NO_RUN, OriginLog
from bmk.scheduler import Scheduler
from bmk.templates import CallTemplates
from bmk.util import is_int


class Program(OriginLog, Emission, Ordering, Acquisition):
    """A chip's command buffer under construction: the shared half of every chip's Context.
    Its jobs live in one module each (OriginLog: bmk/origin_log.py, Emission: bmk/emission.py,
    Ordering: bmk/ordering.py, Acquisition: bmk/acquisition.py); here: the state they share.

    Subclasses set `OPS` (the op table), and may set `CHECK` (their chip's bmk.checks.Check
    subclass; the shared vocabulary by default), `END_COMMANDS` (rows `(engine, {field:
    value})` appended at acquisition), `dependency_links` (a policy above) and `REGISTER`
    (the call name that errors of the constructor name)."""

    # The attributes every API call reads or writes (Emission._emit), as slots: a chip's
    # Context has more attributes than CPython keeps in a shared-keys instance dict (30), and
    # a slot is read without a dict lookup.
    __slots__ = ("_cleaned", "_templated", "_templates", "_last", "_lowered", "_nbytes", "cmdbuf_size",
                 "_records", "_codes", "_recording", "_call_lastis", "_call_log", "_lastis", "_user_code",
                 "_handles", "_generation")
    OPS = ()
    CHECK = Check           # the chip's bmk.checks.Check subclass, handed to every row's check
    END_COMMANDS = ()
    REGISTER = "register"
    dependency_links = staticmethod(last_to_first)
    # The system API this class provides (module-level names of the global-context style).
    SYSTEM_CALLS = ("parallel_enable", "parallel_disable", "create_streams", "set_stream", "destroy_streams",
                    "add_dependency", "acquire_cmdbuf", "acquire_streams", "reset", "cleanup")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for row in cls.__dict__.get("OPS", ()):
            method = make_method(cls, row)
            for name in row.names:
                if name in cls.__dict__:
                    raise TypeError(f"{cls.__name__}.{name} is both an op-table row and a method")
                setattr(cls, name, method)

    def __init__(self, chip, cmdbuf_size):
        if not is_int(cmdbuf_size) or cmdbuf_size < 0:
            raise ArgumentError(must(self.REGISTER, "cmdbuf_size", "a non-negative integer", cmdbuf_size))
        self.chip = chip
        self.cmdbuf_size = int(cmdbuf_size)
        self._engines = encoded_engines(chip)
        self._code = {name: i for i, name in enumerate(self._engines)}     # engine -> code in the scheduler
        self._packers = {name: _Packer(chip, e) for name, e in self._engines.items()}
        # engine code -> header + command bytes, when all classes of every engine have one length
        lengths = [{c.nbytes for c in e.classes} for e in self._engines.values()]
        self._lengths = (np.array([chip.header.nbytes + n.pop() for n in lengths], np.int64)
                         if all(len(n) == 1 for n in lengths) else None)
        self._max_id = {name: e.id_max for name, e in self._engines.items()}
        self._inherit = tuple(name for name, e in self._engines.items() if e.inherit_wait)
        ends = self.END_COMMANDS or tuple((name, e.end_command()[1]) for name, e in self._engines.items()
                                          if e.end_command() is not None)
        self._end, self._end_codes, self._end_size = self._pack("end command", ends)
        self._cleaned = False
        self._generation = 0
        self._recording = True
        self._handles = True
        self._start()

    def _start(self):
        self._records = []        # per descriptor: cmd_hdr_t + command, sync fields zero, in order
        self._nbytes = self._end_size
        self._sched = Scheduler(self._engines)
        self._codes = self._sched.codes     # its engine code per descriptor: appended to per call
        self._lowered = {}      # (call, arguments, their types) -> (records, engine codes, size)
        self._last = {}         # call -> (its last lowered values, their types, the memo's entry)
        # per API call (OriginLog): the caller's instruction offset and the call (the memo's entry,
        # or (call, engine codes, its values or a _Shown)); per run of calls from one
        # function: its first call and the caller's code object (None: no origin)
        self._call_lastis, self._call_log = [], []
        self._runs, self._run_codes, self._run_code = [], [], _NO_RUN
        self._starts = [0]          # each logged call's first instruction, as far as summed (OriginLog)
        self._unlogged_from = 0     # the first instruction emitted while record_origins is off
        self._lastis = {}           # instruction offset -> itself: the one int object _call_lastis holds
        self._lines = {}            # code object -> {instruction offset: line} (OriginLog._origin_of)
        self._user_globals = None   # the module of the last caller outside bmk (Emission._emit)
        self._user_code = None      # the function of the last caller outside bmk (Emission._emit)
        self._templates = CallTemplates()
        self._templated = set()     # the calls whose last call took a template (_emit)
        self._generation += 1

    def reset(self):
        """Empty the command buffer, forget links, serial mode; ids restart at 1. Op handles
        from before the reset become stale."""
        self._start()

    def cleanup(self):
        """The context can no longer be used."""
        self._start()
        self._cleaned = True
