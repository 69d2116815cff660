"""Run one hostile case with a time and a memory bound (issue 24 item 3): `bounded(fn, *args)`.

The case runs in a forked child, so that its memory is what the operating system gives it
(resident pages: gmem's zeroed pages cost nothing until written, which tracemalloc cannot
tell) and so that a runaway case is killed instead of hanging the suite."""
import json
import os
import resource
import select
import signal
import time

import bmk

SECONDS, BYTES = 3.0, 600 << 20


def bounded(fn, *args, seconds=SECONDS, nbytes=BYTES, show=lambda out: type(out).__name__):
    """show(fn(*args)) (or the BmkError it raised, shown as 'ClassName: message'), run in a forked
    child: its CPU time and its growth of resident memory (peak RSS minus RSS at the fork)
    must stay within the bounds (CPU time: what the case costs, whatever else the machine runs);
    past 2 * seconds + 5 of wall time the child is killed and the case fails."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child: run, report, exit
        try:
            os.close(r)
            start = _rss()
            t0 = time.process_time()
            try:
                what = show(fn(*args))
            except bmk.BmkError as e:
                what = f"{type(e).__name__}: {e}"
            except BaseException as e:              # noqa: reported, then the parent fails the case
                what = f"crash: {e!r}"
            elapsed = time.process_time() - t0
            grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - start
            with os.fdopen(w, "wb") as out:
                out.write(json.dumps([elapsed, grown, what]).encode())
        finally:
            os._exit(0)
    os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], 2 * seconds + 5)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.close(r)
            raise AssertionError(f"case {args!r:.200} still running after {2 * seconds + 5} s")
        with os.fdopen(r, "rb") as f:
            elapsed, grown, what = json.loads(f.read() or b'[0, 0, "crash: no report"]')
    finally:
        os.waitpid(pid, 0)
    assert not str(what).startswith("crash"), what
    assert elapsed < seconds and grown < nbytes, (f"{args!r:.300}", elapsed, grown, what)
    return what


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
