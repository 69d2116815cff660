"""Where each instruction came from: the API call (name and arguments) and the line of the
user's Python code that made it (issue 22 item 3).

A Context records one `Origin` per API call (`capture`: the first frame outside the bmk
package, so a call through a helper module of bmk still names the user's line) and knows
which call emitted each instruction. `ctx.save(path)` writes the bytes and, beside them, a
sidecar `<path>.origins.json` that gives the origin of every instruction of that file in
file order; `bmk-disasm` and `bmk-run` read a sidecar beside any input file they are given,
so a listing line, a trace event and a race report name the user's source line.

Sidecar (JSON): {"format": "bmk-origins/1", "calls": [{"call", "args", "file", "line"}, ...],
"instructions": [index into calls, per instruction in file order; -1: none]}.
"""
import json
import os
import sys

import attrs

from bmk.errors import BmkError

FORMAT = "bmk-origins/1"
SUFFIX = ".origins.json"
MAX_ARGS_TEXT = 200             # characters of an argument list kept in an origin


@attrs.frozen
class Origin:
    """One API call: its name, its arguments as text, the user's file and line."""

    call: str
    args: str
    file: str
    line: int

    def __str__(self):
        return f"{os.path.basename(self.file)}:{self.line} {self.call}({self.args})"


def caller(depth=1):
    """(file, line) of the innermost frame outside the bmk package (the user's call site),
    looking from `depth` frames above the caller of this function. A frame is bmk's own when
    its module is (its globals' __name__): a cheap test, since every API call pays it."""
    f = sys._getframe(depth + 1)
    while f is not None:
        name = f.f_globals.get("__name__")
        if not (type(name) is str and (name == "bmk" or name.startswith("bmk."))):
            return f.f_code.co_filename, f.f_lineno
        f = f.f_back
    return "<unknown>", 0


def args_text(arguments):
    """A call's arguments as the user wrote them: positional values, then name=value."""
    if isinstance(arguments, dict):
        args, kwargs = (), arguments
    elif isinstance(arguments, tuple) and len(arguments) == 2 and isinstance(arguments[1], dict):
        args, kwargs = arguments
    else:
        args, kwargs = (arguments,), {}
    parts = [_value(v) for v in args] + [f"{k}={_value(v)}" for k, v in kwargs.items()]
    text = ", ".join(parts)
    return text if len(text) <= MAX_ARGS_TEXT else text[:MAX_ARGS_TEXT - 3] + "..."


def _value(v):
    if type(v) is int and v > 255:
        return hex(v)
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def write_sidecar(path, origins):
    """Write `<path>.origins.json` for the instructions of one file: `origins` one Origin (or
    None) per instruction in file order."""
    calls, index, out = [], {}, []
    for o in origins:
        if o is None:
            out.append(-1)
            continue
        k = index.get(o)
        if k is None:
            k = index[o] = len(calls)
            calls.append({"call": o.call, "args": o.args, "file": o.file, "line": o.line})
        out.append(k)
    with open(f"{path}{SUFFIX}", "w") as f:
        json.dump({"format": FORMAT, "calls": calls, "instructions": out}, f)


def read_sidecar(path):
    """The origins beside a file (one Origin or None per instruction in file order), or None
    when it has no sidecar. A sidecar that is not bmk's is a BmkError naming it."""
    side = f"{path}{SUFFIX}"
    if not isinstance(path, str) or path == "-" or not os.path.isfile(side):
        return None
    try:
        with open(side) as f:
            data = json.load(f)
        if data.get("format") != FORMAT:
            raise ValueError(f"format must be {FORMAT!r}")
        calls = [Origin(str(c["call"]), str(c["args"]), str(c["file"]), int(c["line"])) for c in data["calls"]]
        if any(not -1 <= k < len(calls) for k in data["instructions"]):
            raise ValueError("instructions must index calls")
        return tuple(None if k == -1 else calls[k] for k in data["instructions"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        raise BmkError(f"{side}: not a bmk origins sidecar ({type(e).__name__}: {e})") from None
