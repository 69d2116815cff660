"""The origins half of a Program: per API call, the call and the user's line behind its
instructions (bmk/origins.py: Origin, the sidecar files), recorded cheaply per call and turned
into text only when asked for (ctx.origin(i), ctx.origins(), ctx.listing(), ctx.save())."""
import bisect
import sys

import numpy as np

from bmk.origins import Origin, args_text, caller, write_sidecar

ARGS_KEPT = 1 << 14             # distinct argument lists a context keeps shared (OriginLog._record_origin)


class OriginLog:
    """The origins half of a Program: the call and the user's line behind each instruction
    (bmk/program.py holds the state it reads and resets it in _start)."""

    # Recording costs about a microsecond and keeps the call's arguments alive (a few hundred
    # bytes) per call: a program of millions of calls that needs no origins turns it off with
    # `ctx.record_origins = False` (calls made meanwhile have none, and cost nothing).
    @property
    def record_origins(self):
        """Whether each API call's origin is recorded (default True)."""
        return self._recording

    @record_origins.setter
    def record_origins(self, on):
        on = bool(on)
        if self._recording and not on:       # the calls from here on have no origin
            self._call_starts.append(len(self._records))
            self._call_sites.append(-1)
            self._call_args.append(None)
        self._recording = on

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
        k = bisect.bisect_right(self._call_starts, i) - 1
        if not 0 <= i < len(self._records) or k < 0:
            return None
        return self._origin_of(k)

    def _record_origin(self, start, name, key, arguments):
        """Keep this call's origin: its site (file, line, name; each kept once) and its
        arguments (equal ones, by their memo key, kept once: a bounded table)."""
        f = sys._getframe(3)          # _record_origin <- _emit <- the generated method <- its caller
        g = f.f_globals.get("__name__")
        if type(g) is str and g != "bmk" and not g.startswith("bmk."):
            site = (f.f_code.co_filename, f.f_lineno, name)
        else:
            site = (*caller(3), name)      # called through bmk's own code: the first frame outside it
        k = self._site_index.get(site)
        if k is None:
            k = self._site_index[site] = len(self._sites)
            self._sites.append(site)
        if key is not None:
            shared = self._shared_args.get(key)
            if shared is None:
                if len(self._shared_args) >= ARGS_KEPT:
                    self._shared_args.clear()
                self._shared_args[key] = arguments
            else:
                arguments = shared
        self._call_starts.append(start)
        self._call_sites.append(k)
        self._call_args.append(arguments)

    def _origin_of(self, k):
        site = self._call_sites[k]
        if site < 0:
            return None
        file, line, name = self._sites[site]
        args = self._call_args[k]
        if type(args) is tuple:
            args = (args, {})
        elif type(args) is list:
            args = tuple(args)
        return Origin(name, args_text(args), file, line)

    def origins(self, streams=False):
        """The Origin of every instruction acquire_cmdbuf returns (end commands: None). With
        streams=True, in the order of acquire_streams()'s instructions as bmk.decode and
        Simulator.run merge them (by sync ids: another valid order), e.g. for
        `sim.run(ctx.acquire_streams()).named(ctx.origins(streams=True))`."""
        starts = list(self._call_starts) + [len(self._records)]
        out = [None] * starts[0]
        for k in range(len(self._call_sites)):
            out += [self._origin_of(k)] * (starts[k + 1] - starts[k])
        out = tuple(out) + (None,) * len(self._end)
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
