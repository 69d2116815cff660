"""Instructions per call of the encode mix (bench/encode_mix.json), counted by valgrind's callgrind:
steadier than CPU time on a shared machine (the same code gives the same count, within a few per call).

Each side (this checkout, and --base) runs the mix in its own process under callgrind, which counts only
inside one call of functools.reduce that runs the calls (set up, the first two cycles and the interpreter
start are not counted): --ops calls after 20 warm-up calls, with bmk's defaults (origins recorded, Op
handles returned) unless --no-origins / --no-handles. --only NAME keeps the calls of one API function.
Run: python bench/encode_instructions.py [--ops N] [--base REV] [--pattern distinct|repeated]
"""
import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import encode  # noqa: E402  (bench/encode.py: the program and the two trees)
from worktree import callgrind  # noqa: E402

BASE = "f8b4a4b"        # main before the call-path cuts of issue 34 item 1 (types, origin lists, Op, templates)


def child(args):
    import functools
    mix = json.loads(encode.MIX.read_text())
    setup, calls = encode.program(mix, args.ops + 20, args.pattern == "distinct")
    ctx, names = setup()
    ctx.record_origins = not args.no_origins
    ctx.op_handles = not args.no_handles
    plan = calls(ctx, names)
    for method, a, kw in plan[:20]:
        method(*a) if kw is None else method(**kw)
    plan = plan[20:]
    if args.only:
        plan = ([p for p in plan if p[0].__name__ == args.only] * len(mix["cycle"]))[:args.ops]

    def run(*_):
        for method, a, kw in plan:
            method(*a) if kw is None else method(**kw)
    functools.reduce(run, [0, 1])       # callgrind counts inside functools_reduce only


def count(where, args):
    child = ["--ops", str(args.ops), "--pattern", args.pattern] + (["--only", args.only] if args.only else []) + \
        (["--no-origins"] if args.no_origins else []) + (["--no-handles"] if args.no_handles else [])
    return callgrind(__file__, child, where)[0] / args.ops


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=5000)
    p.add_argument("--base", default=BASE, help="the commit measured as 'before' (default %(default)s)")
    p.add_argument("--pattern", choices=["distinct", "repeated"], default="distinct")
    p.add_argument("--only", help="only the calls of this API function (e.g. tpu_add)")
    p.add_argument("--no-origins", action="store_true")
    p.add_argument("--no-handles", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    sha, base = encode.base_tree(args.base)
    scratch = Path(tempfile.mkdtemp(prefix="bmk-bench-"))
    try:
        sides = {"base": encode.layout(base, scratch / "base"), "now": encode.layout(encode.ROOT, scratch / "now")}
        counts = {side: count(where, args) for side, where in sides.items()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"encode_mix, {args.pattern} addresses, {args.ops} calls{' of ' + args.only if args.only else ''}, "
          f"origins {'off' if args.no_origins else 'on'}, handles {'off' if args.no_handles else 'on'}: "
          f"instructions per call (callgrind)")
    for side in ("base", "now"):
        print(f"  {side:5} {counts[side]:>9,.0f}" + (f"   ({sha})" if side == "base" else ""))
    print(f"  now/base {counts['now'] / counts['base']:.3f}")


if __name__ == "__main__":
    main()
