"""The origins half of a Program: per API call, the call and the user's line behind its
instructions (bmk/origins.py: Origin, the sidecar files), recorded cheaply per call and turned
into text only when asked for (ctx.origin(i), ctx.origins(), ctx.listing(), ctx.save())."""
import bisect
import types

import numpy as np

from bmk.origins import Origin, args_text, write_sidecar
from bmk.util import plain

class _UnknownCode:
    """The code object of a call no frame outside bmk made (origins.caller's "<unknown>", 0)."""

    co_filename = "<unknown>"

    @staticmethod
    def co_lines():
        return ()


_UNKNOWN = types.SimpleNamespace(f_code=_UnknownCode(), f_lasti=0)     # the frame _user_frame finds then
_NO_CODE = object()         # OriginLog._origin_of: the code object is looked up
_NO_RUN = object()          # the code of the run before the first (Program._start): none


def _own(f):
    """Whether frame f is bmk's own code (its module's __name__, as origins.caller tells)."""
    name = f.f_globals.get("__name__")
    return type(name) is str and (name == "bmk" or name.startswith("bmk."))


class _Shown:
    """What the origin of a call that passed a record, or keywords to a positional function,
    shows (Emission._emit keeps (call, vals) of the others)."""

    __slots__ = ("call", "arguments")

    def __init__(self, call, arguments):
        self.call, self.arguments = call, arguments


def kept(value):
    """The value as an origin keeps it: lists, dicts, tuples of them, bytearrays and numpy arrays
    copied (the caller may change them after the call; its origin shows what it passed), every
    other object as it is (a tensor handle is the caller's own, not copied)."""
    t = type(value)
    if t is tuple or t is list:
        return t(map(kept, value))
    if t is dict:
        return {k: kept(v) for k, v in value.items()}
    if t is bytearray or isinstance(value, np.ndarray):
        return value.copy()
    return value


def _shown(call, record, given):
    """_Shown of a call that passed `record` (its op record) or `given` ((args, kwargs))."""
    if record is not None:
        return _Shown(call, record)
    args, kwargs = kept(given)
    if any(plain(v) is not v for v in args + tuple(kwargs.values())):      # numpy integers as ints
        args, kwargs = tuple(map(plain, args)), {k: plain(v) for k, v in kwargs.items()}
    return _Shown(call, [args, kwargs] if kwargs else args)


def _line(code, lasti):
    """The line of the instruction at byte offset lasti of code (what a frame's f_lineno says)."""
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line if line is not None else 0
    return 0


class OriginLog:
    """The origins half of a Program: the call and the user's line behind each instruction
    (bmk/program.py holds the state it reads and resets it in _start)."""

    # Recording (in Emission._emit) appends two words per call to two lists: the caller's
    # instruction offset (interned), and the call: the lowering memo's entry (records, engine
    # codes, size, (the call, its values)), shared by equal calls, or (call, engine codes, its
    # values or a _Shown); the engine codes say how many instructions it emitted. The caller's
    # code object is kept per run of calls from one function (_runs: the first call of each run,
    # _run_codes: its code object), appended to only when it changes. Where each call starts is
    # summed up when asked (_call_starts), as is the text. Lists, not arrays: array.append parses
    # its argument as a C call's would, several times a list append's cost. A program of
    # millions of calls that needs no origins may still turn it off with `ctx.record_origins =
    # False` (calls made meanwhile have none, and cost nothing): the instructions emitted
    # meanwhile are logged as one call without origin when it is turned on again, and, until
    # then, follow the logged ones.
    @property
    def record_origins(self):
        """Whether each API call's origin is recorded (default True)."""
        return self._recording

    @record_origins.setter
    def record_origins(self, on):
        on = bool(on)
        if self._recording and not on:       # the calls from here on have no origin
            self._unlogged_from = len(self._records)
        elif on and not self._recording:
            self._new_run(None)
            self._call_lastis.append(0)
            self._call_log.append((None, range(len(self._records) - self._unlogged_from), None))
            self._user_code = None
        self._recording = on

    def _call_starts(self):
        """The first instruction of each logged call, and the end of the last one (as a list one
        longer than the log): the running sum of the counts, extended from where it was left."""
        starts, log = self._starts, self._call_log
        if len(starts) <= len(log):
            total = starts[-1]
            for entry in log[len(starts) - 1:]:
                total += len(entry[1])
                starts.append(total)
        return starts

    @property
    def op_handles(self):
        """Whether an API call returns its Op handle (default True). A program that never uses
        them (add_dependency, Op.first / last) sets it False: each call then returns None and
        costs a little less (issue 24 item 5)."""
        return self._handles

    @op_handles.setter
    def op_handles(self, on):
        self._handles = bool(on)

    def origin(self, i):
        """The Origin of instruction i (program order, as acquire_cmdbuf lays them out); None
        for the chip's end commands."""
        starts = self._call_starts()
        if not 0 <= i < starts[-1]:         # past the log: emitted while recording is off
            return None
        return self._origin_of(bisect.bisect_right(starts, i) - 1)

    def _user_call(self, f):
        """The frame a call is recorded from when its caller f is not the function seen last
        (Emission._emit): f itself, or the user's frame behind bmk's own code. Starts a run of
        calls when its code object changes; _user_code is left at the code of the run only when
        that is f's, so that the next call from f's function skips this."""
        if f.f_globals is self._user_globals:       # another function of the module seen last
            self._user_code = code = f.f_code
        else:
            user = self._user_frame(f)
            code = user.f_code
            if user is not f:           # through bmk's own code: the next call comes here again
                self._user_code = None
            f = user
        if code is not self._run_code:
            self._new_run(code)
        return f

    def _new_run(self, code):
        """From the next logged call on, calls come from `code` (None: they have no origin)."""
        self._runs.append(len(self._call_log))
        self._run_codes.append(code)
        self._run_code = code

    def _codes_of_calls(self):
        """The code object of each logged call (None: no origin), from the runs."""
        runs = self._runs + [len(self._call_log)]
        out = []
        for k, code in enumerate(self._run_codes):
            out += [code] * (runs[k + 1] - runs[k])
        return out

    def _user_frame(self, f):
        """The first frame from f outwards outside the bmk package (a call made through bmk's
        own code names the user's line); _UNKNOWN if none. Remembers the user module's globals:
        Emission._emit skips this while its caller is in the module it saw last, or is the
        function it saw last."""
        if not _own(f):
            self._user_globals, self._user_code = f.f_globals, f.f_code
            return f
        while f is not None and _own(f):
            f = f.f_back
        return _UNKNOWN if f is None else f

    def _origin_of(self, k, code=_NO_CODE):
        if code is _NO_CODE:
            code = self._run_codes[bisect.bisect_right(self._runs, k) - 1]
        if code is None:
            return None
        entry = self._call_log[k]
        shown = entry[3] if len(entry) == 4 else entry[2] if type(entry[2]) is _Shown else (entry[0], entry[2])
        if type(shown) is _Shown:
            call, args = shown.call, shown.arguments
        else:
            call, args = shown
            if call.text is not None:
                args = call.text(args)      # the keywords given, from the values in field order
        if type(args) is tuple:
            args = (args, {})
        elif type(args) is list:
            args = tuple(args)
        lines = self._lines.get(code)
        if lines is None:
            lines = self._lines[code] = {}
        lasti = self._call_lastis[k]
        line = lines.get(lasti)
        if line is None:
            line = lines[lasti] = _line(code, lasti)
        return Origin(call.name, args_text(args), code.co_filename, line)

    def origins(self, streams=False):
        """The Origin of every instruction acquire_cmdbuf returns (end commands: None). With
        streams=True, in the order of acquire_streams()'s instructions as bmk.decode and
        Simulator.run merge them (by sync ids: another valid order), e.g. for
        `sim.run(ctx.acquire_streams()).named(ctx.origins(streams=True))`."""
        starts = self._call_starts()
        out = []
        made = {}       # equal calls from one line share their values (the memo's): one Origin
        codes, lastis, log = self._codes_of_calls(), self._call_lastis, self._call_log
        for k in range(len(codes)):
            key = (id(codes[k]), lastis[k], id(log[k]))      # all alive while this runs
            origin = made.get(key)
            if origin is None:
                origin = made[key] = self._origin_of(k, codes[k])
            out += [origin] * (starts[k + 1] - starts[k])
        out = tuple(out) + (None,) * (len(self._records) - starts[-1] + len(self._end))
        if not streams:
            return out
        from bmk.encoders.framing import decode_raw_streams
        per_engine = {name: iter(origins) for name, origins in self._origins_per_engine(out).items()}
        return tuple(next(per_engine[r.engine]) for r in decode_raw_streams(self.chip, [self.acquire_streams()]))

    def _origins_per_engine(self, origins):
        """{engine: its instructions' origins in stream order} for acquire_streams()."""
        codes = np.concatenate([np.frombuffer(bytes(self._codes), np.uint8), np.frombuffer(self._end_codes, np.uint8)])
        return {name: [origins[i] for i in np.flatnonzero(codes == code).tolist()]
                for code, name in enumerate(self.acquire_streams())}

    def listing(self, fields="changed", width=None):
        """acquire_cmdbuf's instructions as assembly text (bmk-asm reads it back), each line
        ending with a comment that names the API call and the user's line behind it. width:
        wrap longer lines to fit it (the origin then on a comment line of its own before). Made
        by bmk/text/listing.py, on the asm formatter's floor below this one."""
        from bmk.text.listing import listing
        return listing(self.chip, self.acquire_cmdbuf(), self.origins(), fields, width)

    def save(self, path, raw=False):
        """Write the program, with each file's origins beside it (`<file>.origins.json`, which
        bmk-disasm and bmk-run read): the cmd_hdr_t buffer to `path`, or with raw=True each
        engine's raw stream to `<path>.<engine>.bin`. Returns the paths of the program files."""
        origins = self.origins()
        if not raw:
            with open(path, "wb") as f:
                f.write(self.acquire_cmdbuf())
            write_sidecar(path, origins)
            return [str(path)]
        per_engine = self._origins_per_engine(origins)
        written = []
        for name, data in self.acquire_streams().items():
            out = f"{path}.{name}.bin"
            with open(out, "wb") as f:
                f.write(data)
            write_sidecar(out, per_engine[name])
            written.append(out)
        return written
