"""Instructions per decoded command (decode + every field read), counted by valgrind's callgrind:
bench/decode.py's work, steadier than CPU time on a shared machine (issue 34 item 3).

Sides: this checkout (`now`), --base (a git worktree), and bench/decode_peers.py's two vendor-style
decoders (BM1684X: the ctypes one; BM1684: the unpackbits one), on the vendor's yolov5s streams
repeated --copies times. Each side runs in its own process (PYTHONHASHSEED=0: the same dict probes
every run) under callgrind, which counts only inside one call of functools.reduce that decodes the
streams and reads every field of every command once (imports, tables and a warm-up decode are not
counted). The counts are per command; their ratios say how far each target (BM1684X 5x the ctypes
peer, BM1684 50x unpackbits) is in instructions, which on this machine ran at 3-4 per ns for both.
Run: python bench/decode_instructions.py [--base REV] [--copies N]
"""
import argparse
import shutil
import sys
from pathlib import Path

from worktree import DEFAULT_BASE, ROOT, base_tree, callgrind

HERE = Path(__file__).resolve().parent
PEER = {"bm1684x": "ctypes", "bm1684": "unpackbits"}


def child(side, chip_name, copies):
    import functools
    sys.path += [str(ROOT), str(HERE)]        # after PYTHONPATH: the tree measured gives bmk
    import bmk
    import decode_peers as P
    from bmk.isa import load_chip
    from tests.vectors import vendor
    streams = {e: d * copies for e, d in vendor.streams(chip_name).items()}
    chip = load_chip(chip_name)

    def work(_=None, __=None, data=streams):
        if side == "bmk":
            n = 0
            for r in bmk.decode(chip_name, data):
                n += len(r.fields.values())     # every value (a Fields unpacks them here)
        elif side == "ctypes":
            P.ctypes_fields(P.ctypes_decode(chip, data))
        else:
            P.unpackbits_decode(chip, data)
    work(data={e: d[:1 << 14] for e, d in streams.items()} if side != "bmk" else streams)      # warm-up
    functools.reduce(work, [0, 1])      # callgrind counts inside functools_reduce only
    print(len(bmk.decode(chip_name, streams)))


def count(tree, side, chip, copies):
    n, out = callgrind(__file__, [side, chip, str(copies)], tree, {"PYTHONHASHSEED": "0"})
    return n / int(out.split()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default=DEFAULT_BASE)
    p.add_argument("--copies", type=int, default=10, help="copies of the streams (unpackbits: a fifth, at least 1)")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        side, chip, copies = args.child
        return child(side, chip, int(copies))
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    base = base_tree(args.base)
    print(f"instructions per command, decode + every field read (callgrind); base {args.base}")
    for chip, peer in PEER.items():
        counts = {"now": count(ROOT, "bmk", chip, args.copies), "base": count(base, "bmk", chip, args.copies),
                  peer: count(ROOT, peer, chip, args.copies if peer == "ctypes" else max(1, args.copies // 5))}
        print(f"{chip}, {args.copies} copies of the vendor's yolov5s streams:")
        for side, c in counts.items():
            print(f"  {side:11} {c:>12,.0f}")
        print(f"  now/base {counts['now'] / counts['base']:.3f}; {peer}/now {counts[peer] / counts['now']:.1f}x")


if __name__ == "__main__":
    main()
