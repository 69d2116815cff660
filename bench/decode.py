"""bmk.decode of raw streams (issue 24 item 1): today's code, the base commit's (a git worktree,
same run) and the vendor debugger's two decoders (re-implemented from their public description
in bench/decode_peers.py), on the vendor's yolov5s streams repeated to ~100k instructions.

Figures, per instruction, the minimum of --repeat runs in one process each (after a warm-up run):
- decode: the call that returns every command with its fields available (bmk: `bmk.decode`;
  today's returns a sequence whose Records are made when read, the base commit's a list of
  them; the ctypes peer: one `from_buffer` object per command, fields read on access);
- +fields: decode, then every field of every command read (bmk: every Record's `fields.values()`;
  the ctypes peer: every bit-field; the unpackbits peer reads them all when it decodes).
Every side's records (engine, offset, fields) are hashed: the digests must be equal.
Targets: BM1684X decode at least 5x faster than the ctypes decoder; BM1684 at least 50x faster
than the unpackbits method.
Run: python bench/decode.py [--base REV] [--repeat N]

Figures (issue 34 item 3; shared 2-core machine, another worker busy, +fields per instruction):
- HEAD 1b9258f (before item 3), `--base f8b4a4b --repeat 5`: BM1684X now 11.06 us, base 13.89,
  ctypes 23.49 (2.1x now); BM1684 now 19.25 us, base 13.84, unpackbits 432.50 (22.5x now).
- after item 3 (records.records: a block of Records made a slot at a time; fields unpacked from
  one reversed copy of the block's span; kinds from the match fields' words only),
  `--base f8b4a4b --repeat 5`: BM1684X now 9.69 us, base 12.01, ctypes 34.39 (3.5x now);
  BM1684 now 16.32, base 10.79, unpackbits 411.16 (25.2x now). `--base 1b9258f`: BM1684X 9.56
  vs 11.41 (ctypes 3.5x), BM1684 15.07 vs 16.47 (unpackbits 37.2x). The same code run twice
  differs by up to 40% here (BM1684X: 2.1x-3.5x of ctypes before the change).
- Steadier, `python bench/decode_instructions.py --base 1b9258f --copies 10` (callgrind,
  instructions per command): BM1684X now 35,035, base 40,647 (0.862), ctypes 113,030 (3.2x);
  BM1684 now 57,176, base 64,022 (0.893), unpackbits 1,477,816 (25.8x); f8b4a4b's BM1684 63.8k.
Targets NOT met then (5x ctypes, 50x unpackbits): what was left was the fields dicts themselves. On
BM1684 (75 fields a command) ~26k of the 57k instructions a command are the dicts' inserts and
resizes inside bitstruct's C unpacker, ~8k reading the bits into ints; numpy columns + tolist +
dict(zip), or a template dict copied and updated, cost more (measured).
- after 3551487 (a decoded Record's fields are a Fields, bmk/encoders/fields.py: the command's
  bytes read by its class's layout, no dict per Record; the simulator, the disassembler and
  bmk-diff take a plain dict once where they read every field), `--base 1bd89c1 --repeat 5`,
  +fields now reading every value (`len(r.fields.values())`: a dict holds them, a Fields unpacks
  them there): BM1684X now 1.76 us, base 2.61, ctypes 10.17 (5.8x: target met); BM1684 now 2.16,
  base 4.05, unpackbits 115.62 (53.4x: target met). `python bench/decode_instructions.py --base
  1bd89c1 --copies 10`: BM1684X 35,373 -> 26,699 instructions a command (ctypes 111,630: 4.2x),
  BM1684 57,382 -> 30,576 (unpackbits 1,477,477: 48.3x): counted in instructions rather than
  CPU time (what the targets name), both are just short.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

from worktree import DEFAULT_BASE, ROOT, base_tree, run

COPIES = {"bm1684x": 175, "bm1684": 80}

BMK = r"""
import json, sys, time
chip, repeat = sys.argv[1], int(sys.argv[2])
streams = {e: open(p, "rb").read() for e, p in json.loads(sys.argv[3]).items()}
sys.path.append(sys.argv[4])
from decode_peers import digest
import bmk
bmk.decode(chip, streams)               # warm-up: codecs, tables
best = [1e9, 1e9]
for _ in range(repeat):
    t0 = time.process_time()
    recs = bmk.decode(chip, streams)
    t1 = time.process_time()
    n = 0
    for r in recs:
        n += len(r.fields.values())     # every value: a dict holds them; a Fields unpacks them here
    t2 = time.process_time()
    best = [min(best[0], t1 - t0), min(best[1], t2 - t0)]
print(json.dumps({"n": len(recs), "decode": best[0], "fields": best[1],
                  "digest": digest((r.engine, r.offset, r.fields) for r in recs)}))
"""

PEERS = r"""
import json, sys, time
sys.path.insert(0, sys.argv[4])
chip_name, repeat = sys.argv[1], int(sys.argv[2])
streams = {e: open(p, "rb").read() for e, p in json.loads(sys.argv[3]).items()}
from bmk.isa import load_chip
import decode_peers as P
from decode_peers import digest
chip = load_chip(chip_name)
out = {}
if chip_name == "bm1684x":
    P.ctypes_decode(chip, streams)
    best = [1e9, 1e9]
    for _ in range(repeat):
        t0 = time.process_time()
        dec = P.ctypes_decode(chip, streams)
        t1 = time.process_time()
        fl = P.ctypes_fields(dec)
        t2 = time.process_time()
        best = [min(best[0], t1 - t0), min(best[1], t2 - t0)]
    out["ctypes"] = {"n": len(dec), "decode": best[0], "fields": best[1],
                     "digest": digest((e, off, f) for e, c, off, f in fl)}
else:
    best = 1e9
    for _ in range(max(1, repeat // 3)):
        t0 = time.process_time()
        u = P.unpackbits_decode(chip, streams)
        best = min(best, time.process_time() - t0)
    out["unpackbits"] = {"n": len(u), "decode": best, "fields": best,
                         "digest": digest((e, off, f) for e, c, off, f in u)}
print(json.dumps(out))
"""



def inputs(folder):
    sys.path.insert(0, str(ROOT))
    from tests.vectors import vendor
    out = {}
    for chip, k in COPIES.items():
        paths = {}
        for engine, data in vendor.streams(chip).items():
            path = Path(folder) / f"{chip}.{engine}.bin"
            path.write_bytes(data * k)
            paths[engine] = str(path)
        out[chip] = paths
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=DEFAULT_BASE)
    ap.add_argument("--repeat", type=int, default=5)
    opts = ap.parse_args()
    trees = {"now": ROOT, "base": base_tree(opts.base)}
    with tempfile.TemporaryDirectory() as work:
        files = inputs(work)
        print(f"base {opts.base}; CPU time per instruction, min of {opts.repeat} runs")
        for chip, paths in files.items():
            res = {}
            for label, tree in trees.items():
                res[label] = json.loads(run(tree, BMK, (chip, opts.repeat, json.dumps(paths), str(ROOT / "bench")))[3])
            res.update(json.loads(run(ROOT, PEERS, (chip, opts.repeat, json.dumps(paths), str(ROOT / "bench")))[3]))
            n = res["now"]["n"]
            same = len({r["digest"] for r in res.values()}) == 1 and len({r["n"] for r in res.values()}) == 1
            print(f"\n{chip}: {n} instructions ({COPIES[chip]} copies of the vendor's yolov5s streams); "
                  f"{'identical records on every side' if same else 'RECORDS DIFFER'}")
            print(f"  {'':12}{'decode us':>11}{'+fields us':>12}")
            for label, r in res.items():
                print(f"  {label:12}{r['decode'] / n * 1e6:>11.2f}{r['fields'] / n * 1e6:>12.2f}")
            now = res["now"]
            for label, r in res.items():
                if label != "now":
                    print(f"  {label}/now: decode {r['decode'] / now['decode']:.1f}x, +fields "
                          f"{r['fields'] / now['fields']:.1f}x")
            if not same:
                raise SystemExit("the decoders disagree")


if __name__ == "__main__":
    main()
