"""Encoding throughput and memory: the encode_mix program (issue 13), today's code beside a base commit.

The program is bench/encode_mix.json (a copy of the shared mix): register, the lmem tensors,
then cycles of 10 calls (gdma_load, tpu_add x4, tpu_mul x2, tpu_conv, gdma_store,
tpu_max_pooling), then acquire_cmdbuf. Two address patterns:
- distinct (the default, what a tiled kernel does): every load/store has its own gmem address
  (the mix's `cycle % 64` taken as `cycle`), so those calls miss the lowering memo;
- repeated: the mix as written (64 addresses reused).
ops/s = ops / seconds for register + setup + every call + acquire_cmdbuf, best of --repeat
runs (base and now interleaved), by the wall clock and by CPU time (the process's own, steadier
on a shared machine); the split shows the calls and acquire_cmdbuf alone. Both sides must
produce the same bytes (sha256). Memory: tracemalloc on --memory-ops
ops: bytes per recorded op held by the context once built (and the peak while building), the
peak during acquire_cmdbuf (context + the returned buffer), and the buffer itself.

Each side runs in its own subprocess on its own tree: this checkout, and the files of --base
(default: the commit before the fast encode path) extracted under /tmp, so both are measured
in the same run on the same machine. Run: python bench/encode.py [--ops N] [--base REV]
"""
import argparse
import ast
import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MIX = HERE / "encode_mix.json"
BASE = "1117dfb"        # main before the fast encode path was merged into it (issue 13)


# -- the program -----------------------------------------------------------------------------------
# Contexts record each call's origin (bmk/origins.py) unless told not to; the throughput figures
# are taken without (--origins or BMK_BENCH_ORIGINS=1: with). Setting the attribute on a base
# tree that predates origins changes nothing there.
ORIGINS = os.environ.get("BMK_BENCH_ORIGINS") == "1"


def _no_modulo(expr):
    """`... (cycle % m) ...` -> `... cycle ...`: every cycle gets its own address."""
    class Strip(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Name) and node.left.id == "cycle":
                return node.left
            return node
    return ast.fix_missing_locations(Strip().visit(ast.parse(expr, mode="eval")))


def _address(expr, distinct):
    tree = _no_modulo(expr) if distinct else ast.parse(expr, mode="eval")
    code = compile(tree, "<gaddr>", "eval")
    return lambda cycle: eval(code, {"__builtins__": {}}, {"cycle": cycle})


def program(mix, ops, distinct):
    """(setup(), calls(ctx) -> [thunk]): the calls are bound before timing, as a kernel would
    compute its addresses; every thunk is one API call."""
    import inspect

    from bmk import bm1880
    constants = {name: getattr(bm1880, name) for name in dir(bm1880) if name.isupper()}
    cycles = ops // mix["cycle_length"]
    register = dict(mix["setup"][0]["args"], cmdbuf_size=max(mix["setup"][0]["args"]["cmdbuf_size"], ops * 256))

    def setup():
        ctx = bm1880.register(**register)
        ctx.record_origins = ORIGINS
        names = {}
        for step in mix["setup"][1:]:
            a = step["args"]
            names[step["as"]] = getattr(ctx, step["api"])(a["la"], bm1880.shape_t4(*a["shape"]), constants[a["fmt"]])
        return ctx, names

    def value(v, names):
        if isinstance(v, str):
            return names[v] if v in names else constants[v]
        return v

    def calls(ctx, names):
        out = []
        slots = []
        for slot in mix["cycle"]:
            method = getattr(ctx, slot["api"])
            params = inspect.signature(method).parameters
            # keyword names interned, as in a program's source (json.loads' strings are not: CPython
            # would then match each one against the parameters by string comparison)
            fixed = {sys.intern(k): value(v, names) for k, v in slot["args"].items() if k != "gaddr"}
            if "gaddr" in slot["args"]:
                where = _address(slot["args"]["gaddr"], distinct)
                order = [k for k in params if k in slot["args"]]      # positional, as in C
                slots.append(("gaddr", method, order, fixed, where))
            else:
                slots.append(("fields", method, None, fixed, None))
        for cycle in range(cycles):
            for style, method, order, fixed, where in slots:
                if style == "gaddr":
                    args = tuple(where(cycle) if k == "gaddr" else fixed[k] for k in order)
                    out.append((method, args, None))
                else:
                    out.append((method, (), fixed))
        return out
    return setup, calls


def run_speed(mix, ops, distinct):
    setup, calls = program(mix, ops, distinct)
    clocks = (time.perf_counter, time.process_time)
    start = [c() for c in clocks]
    ctx, names = setup()
    registered = [c() for c in clocks]
    plan = calls(ctx, names)       # the arguments, computed outside the timed part
    bound = [c() for c in clocks]
    for method, args, kwargs in plan:
        if kwargs is None:
            method(*args)
        else:
            method(**kwargs)
    emitted = [c() for c in clocks]
    buf = ctx.acquire_cmdbuf()
    done = [c() for c in clocks]
    out = {"bytes": len(buf), "sha256": hashlib.sha256(buf).hexdigest()}
    for i, clock in enumerate(("wall", "cpu")):
        out[clock] = {"calls": emitted[i] - bound[i], "acquire": done[i] - emitted[i],
                      "total": (registered[i] - start[i]) + (done[i] - bound[i])}
    return out


def run_memory(mix, ops, distinct):
    import gc
    import tracemalloc
    setup, calls = program(mix, ops, distinct)
    ctx, names = setup()
    plan = calls(ctx, names)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for method, args, kwargs in plan:
        if kwargs is None:
            method(*args)
        else:
            method(**kwargs)
    built, build_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    buf = ctx.acquire_cmdbuf()
    acquire_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"ops": ops, "built": (built - base) / ops, "build_peak": (build_peak - base) / ops,
            "acquire_peak": (acquire_peak - base) / ops, "buffer": len(buf) / ops}


def child(args):
    mix = json.loads(MIX.read_text())
    distinct = args.pattern == "distinct"
    if args.memory:
        out = run_memory(mix, args.ops, distinct)
    else:
        out = run_speed(mix, args.ops, distinct)
    print(json.dumps(out))


# -- the two trees -------------------------------------------------------------------------------------
def layout(tree, where):
    """A directory holding `bmk` as the tree's pyproject maps it (bmk.isa = isa/, ...), for PYTHONPATH:
    the tree is imported as it stands, whatever is installed. Symlinks only, made afresh."""
    pkg = where / "bmk"
    pkg.mkdir(parents=True)
    for entry in (tree / "bmk").iterdir():
        (pkg / entry.name).symlink_to(entry)
    dirs = tomllib.loads((tree / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for name, folder in dirs.items():
        sub = name.split(".", 1)[1] if "." in name else None
        if sub and "." not in sub and not (pkg / sub).exists():
            (pkg / sub).symlink_to(tree / folder)
    return where


def base_tree(rev):
    """The files of commit `rev`, checked out once under /tmp (git archive: the repository's
    worktrees and branches are left alone)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"bmk-bench-base-{sha}"
    if not (tree / "pyproject.toml").exists():
        part = Path(tempfile.mkdtemp(prefix=f"bmk-bench-base-{sha}-"))
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", sha], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
        part.rename(tree)
    return sha, tree


def measure(tree, where, pattern, ops, memory=False):
    env = dict(os.environ, PYTHONPATH=str(where))
    cmd = [sys.executable, str(HERE / "encode.py"), "--child", "--pattern", pattern, "--ops", str(ops)] + \
        (["--memory"] if memory else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/tmp")
    if out.returncode:
        raise SystemExit(f"{tree}: {out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=200_000)
    p.add_argument("--origins", action="store_true", help="contexts record origins (ctx.record_origins)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--memory-ops", type=int, default=1_000_000)
    p.add_argument("--base", default=BASE, help="the commit measured as 'before' (default %(default)s)")
    p.add_argument("--pattern", choices=["distinct", "repeated"], default="distinct", help=argparse.SUPPRESS)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    if args.origins:
        os.environ["BMK_BENCH_ORIGINS"] = "1"      # the children inherit it
    sha, base = base_tree(args.base)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="bmk-bench-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    sides = {"base": (base, layout(base, scratch / "base")), "now": (ROOT, layout(ROOT, scratch / "now"))}
    print(f"encode_mix, {args.ops} ops, best of {args.repeat}; now = {ROOT} ({head}{' + changes' if dirty else ''}), "
          f"base = {sha}; origins {'recorded' if args.origins or ORIGINS else 'off (--origins: on)'}")
    for pattern in ("distinct", "repeated"):
        runs = {side: [] for side in sides}
        for _ in range(args.repeat):          # interleaved, so both sides meet the same machine load
            for side, (tree, where) in sides.items():
                runs[side].append(measure(tree, where, pattern, args.ops))
        digests = {r["sha256"] for side in runs for r in runs[side]}
        same = "identical bytes" if len(digests) == 1 else "BYTES DIFFER"
        print(f"\n{pattern} addresses ({runs['now'][0]['bytes']} bytes, {same} on both sides):")
        for clock in ("wall", "cpu"):
            best = {side: {part: min(r[clock][part] for r in rs) for part in ("total", "calls", "acquire")}
                    for side, rs in runs.items()}
            b, n = best["base"], best["now"]
            print(f"  {clock + ' clock':11}{'ops/s':>12}{'calls s':>10}{'acquire s':>11}")
            for side in ("base", "now"):
                x = best[side]
                print(f"  {side:11}{args.ops / x['total']:>12,.0f}{x['calls']:>10.3f}{x['acquire']:>11.3f}")
            print(f"  {'now/base':11}{b['total'] / n['total']:>11.2f}x{b['calls'] / n['calls']:>9.2f}x"
                  f"{b['acquire'] / n['acquire']:>10.2f}x")
        if len(digests) != 1:
            raise SystemExit("the command buffers differ")
    if args.memory_ops:
        print(f"\nmemory, {args.memory_ops} ops, distinct addresses (bytes per op; tracemalloc):")
        print(f"  {'':9}{'built':>10}{'build peak':>12}{'acquire peak':>14}{'buffer':>9}")
        for side, (tree, where) in sides.items():
            m = measure(tree, where, "distinct", args.memory_ops, memory=True)
            print(f"  {side:9}{m['built']:>10.0f}{m['build_peak']:>12.0f}{m['acquire_peak']:>14.0f}{m['buffer']:>9.0f}")


if __name__ == "__main__":
    main()
