"""Text tools on long BM1684X raw streams: bmk-disasm, bmk-asm, bmk-diff peak memory and time (issue 24.2).

Inputs: the vendor's yolov5s BM1684X streams (tests/golden/bm1684x, 572 instructions: a TIU and
a GDMA stream, each closed by its end command and padded) repeated back to back until a size is
reached: a stream of several closed streams, whose ids restart at 1 at each one (what the
scheduler does at a new chunk: bmk/scheduler.py), merged by their sync ids as one program.
B (for diff) is A with one field changed in one TIU and one GDMA command of the middle copy
(their own bytes re-packed by the codec), so the expected answer is "2 changed".

Tools, each in its own process (python -c, the tree's bmk first on the path):
- disasm: `bmk-disasm --chip bm1684x --raw tiu A.tiu --raw gdma A.gdma -o A.s`;
- asm:    `bmk-asm A.s --raw tiu OUT.tiu --raw gdma OUT.gdma` (A.s: the same tree's listing of A);
- diff:   `bmk-diff --chip bm1684x tiu=A.tiu,gdma=A.gdma tiu=B.tiu,gdma=B.gdma` (engine order).
Peak RSS and CPU from os.wait4 of the tool's process, wall time around it. Today's outputs are
checked: bmk-asm gives back the input streams byte for byte, the diff finds the 2 changes (the
listing's sha256 is printed; the base's text differs where later issues changed the listing).

Base: bench/worktree.py's DEFAULT_BASE (main when issue 24 started), checked out as a git
worktree and run in the same session; it holds every instruction as a Record (~3.5 KB each), so
it runs at --base-sizes only (default: the smallest size).
Run: python bench/raw_text.py [--sizes 1000000,2000000] [--base-sizes 1000000] [--base REV] [--tools disasm,asm,diff]
"""
import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from worktree import DEFAULT_BASE, ROOT, base_tree, env, measure  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "bm1684x" / "yolov5s_bm1684x_int8_sym"
CHANGES = 2              # the fields B changes (one TIU, one GDMA command)

BOOT = """
import sys
from bmk.cli.main import {entry} as c
sys.argv = ["bmk-{entry}"] + sys.argv[1:]
c()
"""


def tool_args(tool, d, label="now"):
    if tool == "disasm":
        return ["--chip", "bm1684x", "--raw", "tiu", d["a.tiu"], "--raw", "gdma", d["a.gdma"], "-o", d["out.s"]]
    if tool == "asm":
        return [d[f"a.{label}.s"], "--raw", "tiu", d["out.tiu"], "--raw", "gdma", d["out.gdma"]]
    return ["--chip", "bm1684x", f"tiu={d['a.tiu']},gdma={d['a.gdma']}", f"tiu={d['b.tiu']},gdma={d['b.gdma']}"]


def changed_copy(tiu, gdma):
    """The unit streams with one field changed in a TIU and a GDMA command (re-packed by the codec)."""
    import bmk
    from bmk.encoders.codec import codec_for
    from bmk.isa import load_chip
    chip = load_chip("bm1684x")
    out = {}
    for engine, data, field in (("tiu", tiu, "res0_addr"), ("gdma", gdma, "src_start_addr_l32")):
        recs = [r for r in bmk.decode("bm1684x", {engine: data}) if field in r.fields]
        r = recs[len(recs) // 2]
        codec = codec_for(chip.engine(engine).cls(r.cls))
        fields = dict(r.fields, **{field: r.fields[field] ^ 0x40})
        body = codec.pack(fields)
        out[engine] = data[:r.offset] + body + data[r.offset + len(body):]
    return out["tiu"], out["gdma"]


def make_inputs(n, work):
    """Files of about n instructions: A's and B's streams ({name: path}, "count": instructions)."""
    tiu, gdma = (GOLDEN.with_suffix(f".{e}.bin").read_bytes() for e in ("tiu", "gdma"))
    import bmk
    unit = len(bmk.decode("bm1684x", {"tiu": tiu, "gdma": gdma}))
    reps = max(1, round(n / unit))
    ctiu, cgdma = changed_copy(tiu, gdma)
    d = {k: os.path.join(work, f"{n}.{k}") for k in ("a.tiu", "a.gdma", "b.tiu", "b.gdma", "out.s", "a.now.s",
                                                    "a.base.s", "out.tiu", "out.gdma")}
    for key, plain, changed in (("a.tiu", tiu, tiu), ("a.gdma", gdma, gdma), ("b.tiu", tiu, ctiu),
                                ("b.gdma", gdma, cgdma)):
        with open(d[key], "wb") as f:
            for k in range(reps):
                f.write(changed if k == reps // 2 else plain)
    d["count"] = unit * reps
    return d


def run_tool(tree, tool, d, timeout, label="now"):
    """(wall s, CPU s, peak RSS bytes, exit code, stdout) of one tool run in its own process."""
    res = measure([sys.executable, "-c", BOOT.replace("{entry}", tool), *tool_args(tool, d, label)], env(tree),
                  timeout, poll=0.02)
    if res is None:
        return None, None, None, "timeout", b""
    wall, cpu, rss, rc, out, err = res
    if rc not in (0, 1):
        print(f"  {tool} in {tree}: exit {rc}: {err.decode(errors='replace')[-400:]}", file=sys.stderr)
    return wall, cpu, rss, rc, out


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def same_file(p, q):
    return os.path.getsize(p) == os.path.getsize(q) and sha(p) == sha(q)


def mib(x):
    return "-" if x is None else f"{x / 2**20:,.0f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,2000000")
    ap.add_argument("--base-sizes", default=None, help="sizes the base runs at (default: the smallest)")
    ap.add_argument("--base", default=DEFAULT_BASE)
    ap.add_argument("--tools", default="disasm,asm,diff")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--work", default=None, help="directory for the inputs (default: a temporary one)")
    opts = ap.parse_args()
    sizes = sorted(int(s) for s in opts.sizes.split(","))
    base_sizes = {int(s) for s in opts.base_sizes.split(",") if s} if opts.base_sizes is not None else {sizes[0]}
    tools = opts.tools.split(",")
    trees = {"now": ROOT}
    if base_sizes:
        trees["base"] = base_tree(opts.base)
    print(f"base {opts.base}; tools {', '.join(tools)}; sizes {sizes}, base at {sorted(base_sizes)}", flush=True)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-raw-", dir=opts.work) as work:
        for n in sizes:
            t = time.perf_counter()
            d = make_inputs(n, work)
            count = d["count"]
            print(f"{count:,} instructions ({os.path.getsize(d['a.tiu']) + os.path.getsize(d['a.gdma']):,} bytes "
                  f"of streams) built in {time.perf_counter() - t:.1f} s", flush=True)
            for tool in tools:
                for label, tree in trees.items():
                    if label == "base" and n not in base_sizes:
                        continue
                    if tool == "asm" and not os.path.exists(d[f"a.{label}.s"]):     # the tree's own listing of A
                        run_tool(tree, "disasm", d, opts.timeout)
                        os.replace(d["out.s"], d[f"a.{label}.s"])
                    wall, cpu, rss, rc, out = run_tool(tree, tool, d, opts.timeout, label)
                    check = ""
                    if tool == "disasm" and rc == 0:
                        digest = sha(d["out.s"])
                        same = label == "base" and rows.get((n, "disasm", "now"), {}).get("sha") == digest
                        check = f"listing sha256 {digest[:12]}" + (" (the same text)" if same else "")
                        rows[(n, tool, label)] = {"sha": digest}
                        if "asm" in tools:
                            os.replace(d["out.s"], d[f"a.{label}.s"])
                        else:
                            os.remove(d["out.s"])
                    elif tool == "asm" and rc == 0:
                        ok = same_file(d["out.tiu"], d["a.tiu"]) and same_file(d["out.gdma"], d["a.gdma"])
                        check = "streams given back byte for byte" if ok else "STREAMS DIFFER"
                    elif tool == "diff":
                        last = out.decode(errors="replace").strip().splitlines()[-1:] or [""]
                        ok = rc == 1 and f"{CHANGES} changed, 0 inserted, 0 deleted" in last[0]
                        check = "2 changed found" if ok else f"UNEXPECTED: exit {rc}: {last[0][-160:]}"
                    rows.setdefault((n, tool, label), {}).update(wall=wall, cpu=cpu, rss=rss, rc=rc, count=count)
                    per = f"{rss / count:,.0f} B/instr" if rss else "-"
                    cput = f"{cpu:.1f}" if cpu is not None else "-"
                    walls = f"{wall:.1f}" if wall is not None else "-"
                    print(f"  {tool:<6} {label:<4} {count:>11,} instr  peak {mib(rss):>11} ({per:>13})  "
                          f"{walls:>7} s wall, {cput:>7} s CPU [exit {rc}] {check}", flush=True)
                now, base = rows.get((n, tool, "now")), rows.get((n, tool, "base"))
                if now and base and now.get("rss") and base.get("rss"):
                    print(f"  {tool:<6} ratio base/now: {base['rss'] / now['rss']:.1f}x less memory, "
                          f"{base['cpu'] / now['cpu']:.2f}x CPU", flush=True)
            for key in ("a.now.s", "a.base.s", "out.s", "out.tiu", "out.gdma", "a.tiu", "a.gdma", "b.tiu", "b.gdma"):
                if os.path.exists(d[key]):
                    os.remove(d[key])
    if len(sizes) > 1:
        small, big = sizes[0], sizes[-1]
        for tool in tools:
            a, b = rows.get((small, tool, "now")), rows.get((big, tool, "now"))
            if a and b and a.get("rss") and b.get("rss"):
                print(f"scaling {tool} now: {b['count'] / a['count']:.1f}x instructions -> "
                      f"{b['rss'] / a['rss']:.2f}x peak memory, {b['cpu'] / a['cpu']:.2f}x CPU")


if __name__ == "__main__":
    main()
