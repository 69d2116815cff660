"""Text tools on large bm1880 buffers: bmk-disasm, bmk-asm, bmk-diff wall time and peak memory (issue 13.4).

Buffers: a loop kernel through the bm1880 API (per tile: two loads at distinct gmem
addresses, an int16 add, a store), 100k instructions; 1M is that buffer ten times over.
Diff: B is A with one instruction inserted in the middle and one field changed near the
end (the expected answer: 1 inserted, 1 changed); `diff-sync` is the same with `--ignore sync`.

Each tool runs in its own subprocess (wall time, peak RSS from os.wait4), for this checkout
and for a base commit checked out as a git worktree (default: HEAD's parent... pass --base),
run with PYTHONPATH pointing at it (and its folders mapped to the bmk packages). Prints one table with both figures and the ratios.
Run by hand: python bench/text.py [--sizes 100000,1000000] [--base SHA] [--tools disasm,asm,diff,diff-sync]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from worktree import measure

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE_DIR = "/tmp/bench-base"
TILE_OPS = 4
# bmk-diff --ignore sync was quadratic before (84 s at 40k): skip it on the base beyond this size.
BASE_SYNC_LIMIT = 40_000

TOOLS = {
    "disasm": lambda d: ["disasm", d["a"], "-o", d["txt"]],
    "asm": lambda d: ["asm", d["txt_in"], "-o", d["out"]],
    "diff": lambda d: ["diff", d["a"], d["b"]],
    "diff-sync": lambda d: ["diff", "--ignore", "sync", d["a"], d["b"]],
}
ENTRY = {"disasm": "disasm", "asm": "asm", "diff": "diff", "diff-sync": "diff"}


def build_kernel(n):
    """A loop kernel of about n instructions (cmd_hdr_t bytes)."""
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 30)
    s = bm1880.shape_t4(1, 32, 4, 4)
    al, ah, bl, bh, r = (ctx.tl_prealloc(i * 64, s, FMT_I8) for i in range(5))
    tile = 32 * 16
    for k in range(n // TILE_OPS):
        g = 0x100000 + k * tile * 4
        ctx.gdma_load(al, g, CTRL_NULL)
        ctx.gdma_load(bl, g + tile, CTRL_NULL)
        ctx.tpu_add(res_high=None, res_low=r, a_high=ah, a_low=al, b_high=bh, b_low=bl)
        ctx.gdma_store(r, g + 2 * tile, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def record_offsets(data):
    """Byte offset of every record (cmd_hdr_t: len, or mask when len is 0)."""
    from bmk.isa import load_chip
    from bmk.encoders.codec import codec_for
    hdr = codec_for(load_chip("bm1880").header)
    out, off = [], 0
    while off < len(data):
        h = hdr.unpack(data[off:off + hdr.nbytes])
        out.append(off)
        off += hdr.nbytes + (h["len"] or h["mask"])
    return out


def make_inputs(sizes, workdir):
    """{size: {"a", "b", "txt_in"}} files; the 100k kernel is built once and repeated."""
    import bmk
    from bmk.text import asm as asmtext
    unit = min(sizes)
    base = build_kernel(unit)
    offs = record_offsets(base)
    files = {}
    for n in sizes:
        reps = max(1, n // len(offs))
        a = base * reps
        cut = len(base) * (reps // 2) + offs[len(offs) // 2]     # insert in the middle
        nxt = offs[len(offs) // 2 + 1] - offs[len(offs) // 2]
        inserted = a[cut:cut + nxt]
        b = bytearray(a[:cut] + inserted + a[cut:])
        # change one field of a record near the end: re-encode it with another value
        k = len(offs) - 3
        at = len(base) * (reps - 1) + offs[k] + nxt
        end = at + (offs[k + 1] - offs[k])
        rec = bmk.decode("bm1880", bytes(b[at:end]))[0]
        name = next(f for f in ("src_base_addr_low", "opd0_addr", "res0_addr") if f in rec.fields)
        rec.fields[name] ^= 0x40
        b[at:end] = bmk.encode("bm1880", [rec])
        d = {"a": os.path.join(workdir, f"a{n}.bin"), "b": os.path.join(workdir, f"b{n}.bin"),
             "txt": os.path.join(workdir, f"a{n}.out.s"), "txt_in": os.path.join(workdir, f"a{n}.s"),
             "out": os.path.join(workdir, f"a{n}.out.bin"), "count": len(offs) * reps}
        for key, data in (("a", a), ("b", bytes(b))):
            with open(d[key], "wb") as f:
                f.write(data)
        with open(d["txt_in"], "w") as f:
            records = bmk.decode("bm1880", base)
            f.write(asmtext.disassemble(asmtext.load_chip("bm1880"), records))
            body = asmtext.disassemble(asmtext.load_chip("bm1880"), records).split("\n", 1)[1]
            for _ in range(reps - 1):
                f.write(body)
        files[n] = d
    return files


# Each run must use the code of its own tree, ahead of any installed copy: map `bmk` to the
# tree's bmk/ by hand, and in older checkouts (before the folders moved under bmk/) also
# bmk.isa, bmk.encoders, bmk.cli, bmk.specs to their top-level folders.
BOOT = """
import importlib.util, os, sys
tree = sys.argv.pop(1)
dirs = {"bmk": "bmk", "bmk.isa": "isa", "bmk.encoders": "encoders", "bmk.cli": "cli", "bmk.specs": "specs"}
class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        d = os.path.join(tree, dirs.get(name, "-"))
        if os.path.isdir(d):      # older checkouts: isa/, encoders/, cli/, specs/ at the top
            return importlib.util.spec_from_file_location(name, os.path.join(d, "__init__.py"),
                                                          submodule_search_locations=[d])
sys.meta_path.insert(0, Finder)
from bmk.cli.main import {entry} as c
sys.argv = ["bmk-{entry}"] + sys.argv[1:]
c()
"""


def run_tool(tree, tool, d, timeout):
    """(wall seconds, peak RSS bytes, exit code, CPU seconds) of one tool run in a subprocess."""
    args = TOOLS[tool](d)
    res = measure([sys.executable, "-c", BOOT.replace("{entry}", ENTRY[tool]), tree] + args[1:],
                  dict(os.environ, PYTHONPATH=tree), timeout, stdout=subprocess.DEVNULL, poll=0.05)
    if res is None:
        return None, None, "timeout", None
    wall, cpu, rss, rc, _, err = res
    if rc not in (0, 1):
        print(f"  {tool} in {tree}: exit {rc}: {err.decode(errors='replace').strip()[-300:]}", file=sys.stderr)
    return wall, rss, rc, cpu


def base_tree(sha):
    if os.path.exists(BASE_DIR):
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", BASE_DIR], check=False)
    subprocess.run(["git", "-C", HERE, "worktree", "add", "--detach", BASE_DIR, sha], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return BASE_DIR


def fmt(x, unit):
    if x is None:
        return "-"
    return f"{x:.1f} s" if unit == "s" else f"{x / 2**30:.2f} GiB" if x >= 2**30 else f"{x / 2**20:.0f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--base", default=None, help="base commit (default: the merge base with main, else HEAD~1)")
    ap.add_argument("--tools", default="disasm,asm,diff,diff-sync")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--no-base", action="store_true", help="measure this checkout only")
    ap.add_argument("--make-inputs", metavar="DIR", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.make_inputs:
        print(json.dumps(make_inputs(sorted(int(s) for s in opts.sizes.split(",")), opts.make_inputs)))
        return
    sizes = sorted(int(s) for s in opts.sizes.split(","))
    tools = opts.tools.split(",")
    sha = opts.base
    if sha is None:
        mb = subprocess.run(["git", "-C", HERE, "merge-base", "HEAD", "main"], capture_output=True, text=True)
        sha = mb.stdout.strip() if mb.returncode == 0 and mb.stdout.strip() else "HEAD~1"
    trees = [("now", HERE)]
    if not opts.no_base:
        trees.append(("base", base_tree(sha)))
    with tempfile.TemporaryDirectory(prefix="bench-text-") as work:
        t = time.perf_counter()
        # built in a child process: a forked tool would otherwise count this process's memory as its own
        out = subprocess.run([sys.executable, __file__, "--make-inputs", work, "--sizes", opts.sizes],
                             check=True, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=HERE))
        files = {int(k): v for k, v in json.loads(out.stdout).items()}
        print(f"inputs built in {time.perf_counter() - t:.1f} s; base commit {sha}", flush=True)
        rows = []
        for n in sizes:
            d = files[n]
            for tool in tools:
                res = {}
                for label, tree in trees:
                    if label == "base" and tool == "diff-sync" and n > BASE_SYNC_LIMIT:
                        res[label] = (None, None, "skipped", None)
                        continue
                    res[label] = run_tool(tree, tool, d, opts.timeout)
                rows.append((n, d["count"], tool, res))
                now, base = res["now"], res.get("base", (None, None, None, None))
                ratio = (f"{base[0] / now[0]:.1f}x faster ({base[3] / now[3]:.1f}x CPU), "
                         f"{base[1] / now[1]:.1f}x less memory" if base[0] and now[0] else "")
                print(f"{d['count']:>8} {tool:<9} now {fmt(now[0], 's'):>8} (CPU {fmt(now[3], 's')}) "
                      f"{fmt(now[1], 'b'):>9} [exit {now[2]}]   base {fmt(base[0], 's'):>8} "
                      f"(CPU {fmt(base[3], 's')}) {fmt(base[1], 'b'):>9} [{base[2]}]   {ratio}", flush=True)
        if len(sizes) > 1:
            small, big = sizes[0], sizes[-1]
            for tool in tools:
                for label, _ in trees:
                    ts = {n: r[label] for n, c, tl, r in rows if tl == tool}
                    if ts[small][0] and ts[big][0]:
                        print(f"scaling {tool} {label}: {big // small}x instructions -> "
                              f"{ts[big][0] / ts[small][0]:.1f}x time ({ts[big][3] / ts[small][3]:.1f}x CPU), "
                              f"{ts[big][1] / ts[small][1]:.1f}x memory")
    if not opts.no_base:
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", BASE_DIR], check=False)


if __name__ == "__main__":
    main()
