"""A racy bm1684 stream of real vendor commands (issue 32 item 7), shared by
tests/sim/test_race_scaling.py and bench/races.py.

`racy_stream(n, seed)`: n commands, half TIU and half GDMA, drawn from the yolov5s golden streams
(tests/golden/bm1684/), shuffled; every wait id is zeroed and each engine's own ids renumbered
1, 2, ... (the sync field names from the chip's register facts, bmk.isa), so no command waits for
another engine and the two engines race wherever their tensors meet. 40 commands: 5 KB."""
import pathlib
import random

import attrs

import bmk
from bmk.isa import load_chip

GOLDEN = pathlib.Path(__file__).parent / "golden" / "bm1684" / "yolov5s_bm1684_f32"
_records = None


def vendor_records():
    """The golden yolov5s bm1684 commands, decoded (once)."""
    global _records
    if _records is None:
        streams = {e: GOLDEN.with_suffix(f".{e}.bin").read_bytes() for e in ("tiu", "gdma")}
        _records = bmk.decode("bm1684", streams)
    return _records


def racy_stream(n=40, seed=1):
    """{engine: bytes}: n shuffled vendor commands (n // 2 of each engine) that never wait."""
    recs = vendor_records()
    rng = random.Random(seed)
    pick = rng.sample([r for r in recs if r.engine == "tiu"], n // 2)
    pick += rng.sample([r for r in recs if r.engine == "gdma"], n - n // 2)
    rng.shuffle(pick)
    engines = {e.name: e for e in load_chip("bm1684").engines}
    count = dict.fromkeys(engines, 0)
    out = []
    for r in pick:
        e = engines[r.engine]
        count[r.engine] += 1
        fields = {**r.fields, e.own_id: count[r.engine], **{f: 0 for _, f in e.wait_for}}
        out.append(attrs.evolve(r, fields=fields, offset=0))
    return bmk.encode("bm1684", out, raw=True)
