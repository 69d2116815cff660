"""The OKKernel function signatures of seed 003 (a copy of the seed text sits beside this file)."""
import functools
import re
from pathlib import Path

SEED = Path(__file__).with_name("okkernel_seed_003.txt")


@functools.cache
def signatures():
    """{C name: [parameter names in C order]} for every okk_* function of the seed."""
    out = {}
    for m in re.finditer(r"^(?:void|int|bool|unsigned int) (okk_\w+)\(([^)]*)\)", SEED.read_text(), re.M):
        params = [p.strip().split()[-1].lstrip("*") for p in m.group(2).split(",") if p.strip()]
        out[m.group(1)] = params
    return out
