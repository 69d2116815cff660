"""bm1880's encode_mix throughput on today's code (bench/encode.py's run_speed, in this process),
and the table comparing another chip's figures with it (issues 10 and 11: within 1.5x)."""
import json

import encode

PATTERNS = {"distinct": True, "repeated": False}


def bm1880_ops(ops, distinct, repeat=3):
    """Best ops/s (wall clock, register + calls + acquire_cmdbuf) of `repeat` runs of encode_mix."""
    mix = json.loads(encode.MIX.read_text())
    return ops / min(encode.run_speed(mix, ops, distinct)["wall"]["total"] for _ in range(repeat))


def compare(chip, measure, ops, repeat=3):
    """Print `chip`'s ops/s (measure(distinct) -> ops/s) and bm1880's for both address patterns,
    with the ratio bm1880 / chip (issue target: at most 1.5)."""
    rows = []
    for pattern, distinct in PATTERNS.items():
        print(f"{chip}, {pattern} addresses:")
        mine = measure(distinct)
        ref = bm1880_ops(ops, distinct, repeat)
        rows.append((pattern, mine, ref))
    print(f"\n{ops} ops, best of {repeat}{'':8}{chip + ' ops/s':>16}{'bm1880 ops/s':>16}{'bm1880/' + chip:>16}")
    for pattern, mine, ref in rows:
        print(f"  {pattern + ' addresses':34}{mine:>16,.0f}{ref:>16,.0f}{ref / mine:>15.2f}x")
