"""Encoding beside C (issue 34 item 1): the encode_mix program (bench/encode_mix.json) by bmk with
its defaults (origins recorded, Op handles returned), by a base commit's bmk, and by a small C
program compiled with gcc -O2, CPU time in one run.

The C peer is a minimal re-implementation of the vendor's encode path (cvikernel's BM1880v2
kernel: per call a register struct is reset and filled from the call's parameters, packed word by
word into the descriptor after its cmd_hdr_t, and appended to the command buffer; acquisition
walks the descriptors once, writes each one's sync ids and hands over a copy). It is generated
here, not written by hand: the structs and the shift/OR packing come from bmk's spec of bm1880
(bmk/specs, so no bit position is written twice), and each call's field values from bmk's own
encoding of the first cycles: the values that stay are the call's parameters (read by the C
program from a table file at run time, as cvikernel reads them from the tensor descriptors, so
the compiler cannot fold them), the addresses are computed per call from the mix's own gaddr
expression. Both sides must produce the same bytes (sha256) or the bench stops.

Sync ids (C): serial mode, as bmk.scheduler numbers a program without links: each descriptor
takes ++its engine's counter and waits for the other engine's last id when that changed since its
engine last waited (else 0; a TDMA descriptor, inherit_wait, repeats the id it waited for); a
descriptor taking its engine's largest id ends a chunk, and the counters and waits restart.

Figures: the best, over --repeat interleaved rounds, of each side's CPU time for setup + every
call + acquire_cmdbuf (bmk: bench/encode.py's run_speed, in its own process; C: its own
clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around the same), for distinct and repeated addresses.
Run: python bench/encode_vs_c.py [--ops N] [--repeat N] [--base REV]

Last figures (issue 34 item 1, goal <= 10x C): `--repeat 7 --base 47cbbfd`, HEAD d274b29 (the
generated methods' identity test): distinct addresses 9.3x C's CPU time (base 10.0x), repeated
9.3x (base 9.9x); C 7.7-7.9 M ops/s. Before: `python bench/encode_vs_c.py --repeat 7 --base
f8b4a4b`, HEAD 2a5bc0e, two runs on the shared 2-core machine (load 2.3-2.7): distinct addresses
10.6x and 11.0x C's CPU time (base f8b4a4b 15.1x, 15.6x), repeated addresses 11.0x and 10.0x (base
15.5x, 14.0x); C 4.0-4.3 M ops/s. Runs vary by 15%; bench/encode_instructions.py's counts do not
(13.05k instructions per call, base 18.8k). README "Speed" says what was cut and what is left.
"""
import argparse
import ast
import atexit
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import encode  # noqa: E402  (bench/encode.py: the program and the two trees)

ROOT = HERE.parent
BASE = "fb3a07c"        # main before issue 34 (origins recorded per call as a site table)


def _c_expr(expr, distinct):
    """The mix's gaddr expression (Python) as C over `uint64_t cycle`."""
    tree = encode._no_modulo(expr) if distinct else ast.parse(expr, mode="eval")
    return ast.unparse(tree)


def probe(mix, distinct, cycles=3):
    """bmk's encoding of the first `cycles` cycles: (chip, per-cycle descriptor lists of
    (engine, {field: value})) with sync ids as acquired."""
    sys.path.insert(0, str(ROOT))
    import bmk
    encode.ORIGINS = False
    setup, calls = encode.program(mix, cycles * mix["cycle_length"], distinct)
    ctx, names = setup()
    for method, args, kwargs in calls(ctx, names):
        method(*args) if kwargs is None else method(**kwargs)
    records = bmk.decode("bm1880", ctx.acquire_cmdbuf())
    per = len(records) // cycles
    assert per * cycles == len(records), "every cycle emits the same descriptors"
    return ctx, [[(r.engine, dict(r.fields)) for r in records[c * per:(c + 1) * per]] for c in range(cycles)]


def generate(ctx, cycles, mix, distinct):
    """(C source, the parameter table's bytes)."""
    from bmk.emission import _sync_fields
    chip = ctx.chip
    engines = list(ctx._engines.values())
    code = {e.name: i for i, e in enumerate(engines)}
    sync = {e.name: {f.name for f in _sync_fields(e)} for e in engines}
    out = ["#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
           "#include <time.h>", ""]

    def pack_fn(name, fmt, words):
        lines = [f"typedef struct {{ {' '.join(f'uint64_t {f.name};' for f in fmt.fields)} }} {name}_t;",
                 f"static void pack_{name}(const {name}_t *r, uint32_t *p) {{",
                 f"  memset(p, 0, {words * 4});"]
        for f in fmt.fields:
            mask, w, lo = (1 << f.width) - 1, f.bit // 32, f.bit % 32
            lines.append(f"  p[{w}] |= (uint32_t)((r->{f.name} & {mask:#x}ULL) << {lo});")
            if lo + f.width > 32:
                lines.append(f"  p[{w + 1}] |= (uint32_t)((r->{f.name} & {mask:#x}ULL) >> {32 - lo});")
        lines.append("}")
        return lines

    hwords = chip.header.nbytes // 4
    out += pack_fn("hdr", chip.header, hwords)
    for e in engines:
        out += pack_fn(e.name, e.format, e.format.nbytes // 4)
    out += ["",
            "typedef struct { uint8_t *buf; size_t size, cap; uint8_t *eng; uint32_t *off; size_t n, ncap; } ctx_t;",
            "static uint8_t *alloc_cmd(ctx_t *k, int engine, size_t len) {",
            "  if (k->size + len > k->cap) { k->cap = 2 * k->cap + len; k->buf = realloc(k->buf, k->cap); }",
            "  if (k->n == k->ncap) { k->ncap = 2 * k->ncap + 64; k->eng = realloc(k->eng, k->ncap);",
            "    k->off = realloc(k->off, 4 * k->ncap); }",
            "  k->eng[k->n] = engine; k->off[k->n++] = k->size; uint8_t *at = k->buf + k->size; k->size += len;",
            "  return at; }"]
    for e in engines:
        n = e.format.nbytes
        out += [f"static void emit_{e.name}(ctx_t *k, const {e.name}_t *r) {{",
                f"  uint8_t *at = alloc_cmd(k, {code[e.name]}, {hwords * 4 + n});",
                f"  hdr_t h = {{ 0 }}; h.magic = {chip.magic}; h.len = {n}; h.engine_id = {e.id};",
                "  pack_hdr(&h, (uint32_t *)at);",
                f"  pack_{e.name}(r, (uint32_t *)(at + {hwords * 4})); }}"]
    # per slot: the fields from the parameter table, the address from the mix's expression
    first, second = cycles[0], cycles[1]
    table = []
    addresses = [_c_expr(s["args"]["gaddr"], distinct) for s in mix["cycle"] if "gaddr" in s["args"]]
    gaddr_of = [encode._address(s["args"]["gaddr"], distinct) for s in mix["cycle"] if "gaddr" in s["args"]]
    next_address = 0
    for j, ((engine, fields), (_, later)) in enumerate(zip(first, second)):
        fmt = ctx._engines[engine].format
        body = [f"static void call_{j}(ctx_t *k, const uint64_t *t, uint64_t cycle) {{",
                f"  {engine}_t r; memset(&r, 0, sizeof r);"]
        varying = [f.name for f in fmt.fields if fields[f.name] != later[f.name] and f.name not in sync[engine]]
        for i, f in enumerate(fmt.fields):
            table.append(0 if f.name in sync[engine] or f.name in varying else fields[f.name])
            if f.name not in sync[engine] and f.name not in varying:
                body.append(f"  r.{f.name} = t[{len(table) - 1}];")
        if varying:         # one global address per call: a composed (low, high) pair
            pair = next(parts for _, parts in fmt.composed if set(varying) <= set(parts))
            low, high = (fmt.by_name[p] for p in pair)
            offset = fields[low.name] | fields[high.name] << low.width
            offset -= gaddr_of[next_address](0)
            body += [f"  uint64_t a = (uint64_t)({addresses[next_address]}) + {offset}ULL;",
                     f"  r.{low.name} = a & {(1 << low.width) - 1:#x}ULL; r.{high.name} = a >> {low.width};"]
            next_address += 1
        body += [f"  emit_{engine}(k, &r); }}"]
        out += body
    # acquisition: sync ids in serial mode, written at the spec's bits, then a copy handed over
    out += ["static void or_bits(uint8_t *p, int bit, int width, uint64_t v) {",
            "  uint32_t *w = (uint32_t *)p; w[bit / 32] |= (uint32_t)(v << (bit % 32));",
            "  if (bit % 32 + width > 32) w[bit / 32 + 1] |= (uint32_t)(v >> (32 - bit % 32)); }",
            "static uint8_t *acquire(ctx_t *k, size_t *len) {",
            f"  uint64_t cnt[{len(engines)}] = {{ 0 }}, waited[{len(engines)}][{len(engines)}] = {{ {{ 0 }} }};",
            "  for (size_t i = 0; i < k->n; i++) {",
            f"    uint8_t *p = k->buf + k->off[i] + {hwords * 4}; int e = k->eng[i];",
            "    uint64_t own = ++cnt[e];"]
    for e in engines:
        c = code[e.name]
        sf = {f.name: f for f in _sync_fields(e)}
        lines = [f"    if (e == {c}) {{"]
        for name, value in e.enable:
            lines.append(f"      or_bits(p, {sf[name].bit}, {sf[name].width}, {value});")
        lines.append(f"      or_bits(p, {sf[e.own_id].bit}, {sf[e.own_id].width}, own);")
        for other, name in e.wait_for:
            o = code[other]
            keep = f"waited[{c}][{o}]" if e.inherit_wait else "0"
            lines.append(f"      uint64_t w{o} = cnt[{o}] != waited[{c}][{o}] ? (waited[{c}][{o}] = cnt[{o}])"
                         f" : {keep};")
            lines.append(f"      or_bits(p, {sf[name].bit}, {sf[name].width}, w{o});")
        lines.append(f"      if (own == {e.id_max}) {{ for (int x = 0; x < {len(engines)}; x++) "
                     "{ cnt[x] = 0; for (int y = 0; y < "
                     f"{len(engines)}; y++) waited[x][y] = 0; }} }}")
        lines.append("    }")
        out += lines
    out += ["  }", "  uint8_t *copy = malloc(k->size); memcpy(copy, k->buf, k->size); *len = k->size;",
            "  return copy; }", ""]
    per = len(first)
    out += ["static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);",
            "  return t.tv_sec + 1e-9 * t.tv_nsec; }",
            "int main(int argc, char **argv) {",
            "  long ops = atol(argv[1]); FILE *f = fopen(argv[2], \"rb\");",
            f"  static uint64_t t[{len(table)}]; if (fread(t, 8, {len(table)}, f) != {len(table)}) return 1;",
            "  fclose(f);",
            "  double t0 = cpu();",
            "  ctx_t k = { 0 };",
            f"  for (uint64_t cycle = 0; cycle < (uint64_t)ops / {per}; cycle++) {{"]
    out += [f"    call_{j}(&k, t, cycle);" for j in range(per)]
    out += ["  }", "  size_t len; uint8_t *buf = acquire(&k, &len);", "  double t1 = cpu();",
            "  FILE *o = fopen(argv[3], \"wb\"); fwrite(buf, 1, len, o); fclose(o);",
            "  printf(\"%.6f %zu\\n\", t1 - t0, len); return 0; }"]
    return "\n".join(out) + "\n", struct.pack(f"<{len(table)}Q", *table)


def build(work, mix, distinct):
    ctx, cycles = probe(mix, distinct)
    source, table = generate(ctx, cycles, mix, distinct)
    name = "distinct" if distinct else "repeated"
    (work / f"{name}.c").write_text(source)
    (work / f"{name}.tbl").write_bytes(table)
    subprocess.run(["gcc", "-O2", "-o", str(work / name), str(work / f"{name}.c")], check=True)
    return work / name, work / f"{name}.tbl"


def run_c(binary, table, ops, work):
    out = work / "c.bin"
    got = subprocess.run([str(binary), str(ops), str(table), str(out)], check=True, capture_output=True,
                         text=True).stdout.split()
    return float(got[0]), hashlib.sha256(out.read_bytes()).hexdigest(), int(got[1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--base", default=BASE, help="the bmk commit measured as 'before' (default %(default)s)")
    args = p.parse_args()
    os.environ["BMK_BENCH_ORIGINS"] = "1"       # bmk's defaults: origins recorded (handles: on by default)
    mix = json.loads(encode.MIX.read_text())
    work = Path(tempfile.mkdtemp(prefix="bmk-encode-c-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    sha, base = encode.base_tree(args.base)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    sides = {"base": (base, encode.layout(base, work / "base")), "now": (ROOT, encode.layout(ROOT, work / "now"))}
    print(f"encode_mix, {args.ops} ops, bmk defaults (origins recorded, handles returned), CPU time, best of "
          f"{args.repeat} interleaved rounds; now = {head}{' + changes' if dirty else ''}, base = {sha}; "
          f"C = gcc -O2")
    for distinct in (True, False):
        binary, table = build(work, mix, distinct)
        pattern = "distinct" if distinct else "repeated"
        times = {"C": [], "base": [], "now": []}
        digests = set()
        for _ in range(args.repeat):
            seconds, digest, _ = run_c(binary, table, args.ops, work)
            times["C"].append(seconds)
            digests.add(digest)
            for side, (tree, where) in sides.items():
                r = encode.measure(tree, where, pattern, args.ops)
                times[side].append(r["cpu"]["total"])
                digests.add(r["sha256"])
        if len(digests) != 1:
            raise SystemExit(f"{pattern}: the command buffers differ (C and bmk)")
        best = {k: min(v) for k, v in times.items()}
        c = best["C"]
        print(f"\n{pattern} addresses (identical bytes on the three sides):")
        print(f"  {'':6}{'CPU s':>9}{'M ops/s':>10}{'x C':>8}")
        for side in ("C", "base", "now"):
            print(f"  {side:6}{best[side]:>9.4f}{args.ops / best[side] / 1e6:>10.3f}{best[side] / c:>8.1f}")
        print(f"  now/base: {best['base'] / best['now']:.2f}x faster")


if __name__ == "__main__":
    main()
