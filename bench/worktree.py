"""Run today's code beside a base commit's, in the same run (issue 24's benches).

`base_tree(rev)`: a git worktree of `rev` under /tmp (removed at exit). `callgrind(script, args,
tree)`: the instructions a bench's child counts under valgrind. `run(tree, code, args)`:
a fresh process running `code` with `tree`'s bmk first on the path; its wall time, CPU time and
peak RSS (os.wait4) and its stdout. `best(...)`: the minimum of several runs, base and today
interleaved so that both see the same machine. Bytecode caches are written (PYTHONDONTWRITEBYTECODE
unset: what a user's installation does) and a warm-up run fills them before any timed run.
"""
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "fb4a2f7"        # main when issue 24 started


def base_tree(rev=DEFAULT_BASE):
    """A worktree of `rev` (removed when the bench exits)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True, capture_output=True,
                         text=True).stdout.strip()
    path = Path(tempfile.mkdtemp(prefix=f"bmk-base-{sha}-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha], check=True,
                   capture_output=True)
    atexit.register(lambda: subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                                           capture_output=True))
    return path


def callgrind(script, args, tree, extra_env=None):
    """(instructions, stdout) of `script --child ARGS` run with `tree`'s bmk first on the path
    under valgrind's callgrind, which counts only inside functools.reduce: the child runs its
    measured work in one call of it (set-up, warm-up and interpreter start are not counted)."""
    out = Path(tempfile.mkdtemp(prefix="bmk-ir-")) / "callgrind.out"
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
           f"--callgrind-out-file={out}", sys.executable, str(Path(script).resolve()), "--child", *args]
    done = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=str(tree), **(extra_env or {})), capture_output=True,
                          text=True, cwd="/tmp")
    shutil.rmtree(out.parent, ignore_errors=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"{tree} {' '.join(args)}: {done.stderr[-2000:]}")
    return int(found.group(1)), done.stdout


def env(tree):
    e = dict(os.environ, PYTHONPATH=str(tree))
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    return e


def measure(argv, env, timeout, stdout=subprocess.PIPE, cwd="/tmp", poll=0.002):
    """Run argv as its own process: (wall s, CPU s, peak RSS bytes, exit code, stdout, stderr)
    from os.wait4, or None when it ran past `timeout` seconds (killed). Its pipes are read while
    it runs, so a large output cannot stall it."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
    got = {}
    readers = [threading.Thread(target=lambda k=k, f=f: got.__setitem__(k, f.read()))
               for k, f in (("out", p.stdout), ("err", p.stderr)) if f is not None]
    for r in readers:
        r.start()
    deadline = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            p.kill()
            os.wait4(p.pid, 0)
            for r in readers:
                r.join()
            return None
        time.sleep(poll)
    wall = time.perf_counter() - t0
    for r in readers:
        r.join()
    return (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, os.waitstatus_to_exitcode(status),
            got.get("out", b""), got.get("err", b""))


def run(tree, code, args=(), timeout=3600):
    """(wall s, CPU s, peak RSS bytes, stdout) of one process running `code` on `tree`'s bmk."""
    res = measure([sys.executable, "-c", code, *map(str, args)], env(tree), timeout)
    if res is None:
        raise RuntimeError(f"{tree}: timed out after {timeout} s")
    wall, cpu, rss, code_, out, err = res
    if code_:
        raise RuntimeError(f"{tree}: exit {code_}: {err.decode(errors='replace')[-800:]}")
    return wall, cpu, rss, out.decode()


def best(trees, code, args=(), repeat=5, warmup=1):
    """{label: (min wall, min CPU, min peak RSS, last stdout)} over `repeat` interleaved runs."""
    for _ in range(warmup):
        for tree in trees.values():
            run(tree, code, args)
    res = {label: [] for label in trees}
    for _ in range(repeat):
        for label, tree in trees.items():
            res[label].append(run(tree, code, args))
    return {label: (min(r[0] for r in rs), min(r[1] for r in rs), min(r[2] for r in rs), rs[-1][3])
            for label, rs in res.items()}
