"""Fuzz the simulator (issue 12, items 7 and 8): valid instructions of the golden buffers with
random values in one to eight of their fields run to completion or raise bmk.BmkError, never
another exception, each within a bounded time and memory. Deterministic (seeded); a few
thousand cases."""
import random
import time
import tracemalloc

import attrs
import pytest

import bmk
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip
from tests.goldens import GOLDEN_BUFFERS

CHIP = load_chip("bm1880")
RECORDS = [r for _, buf, _ in GOLDEN_BUFFERS if buf for r in decode_cmdbuf(CHIP, buf)]
CASES = 2500
SECONDS, BYTES = 5.0, 1 << 30        # per case (generous: CI machines vary)


def mutate(rng, rec):
    eng = CHIP.engine(rec.engine)
    fields = dict(rec.fields)
    for _, wait in eng.wait_for:         # alone in its program: it must not wait for anything
        fields[wait] = 0
    names = [f.name for f in eng.format.fields if not f.reserved and f.name not in dict(eng.wait_for).values()]
    for _ in range(rng.randint(1, 8)):
        field = eng.format.field(rng.choice(names))
        fields[field.name] = rng.choice([0, 1, 2, field.max, rng.randint(0, field.max)])
    return attrs.evolve(rec, fields=fields)


@pytest.mark.parametrize("seed", range(5))
def test_random_fields_only_bmk_errors_bounded(seed):
    rng = random.Random(seed)
    tracemalloc.start()
    try:
        for _ in range(CASES // 5):
            rec = mutate(rng, rng.choice(RECORDS))
            tracemalloc.reset_peak()
            t0 = time.process_time()
            try:
                bmk.Simulator("bm1880").run([rec], races=False)
            except bmk.BmkError:
                pass
            elapsed, peak = time.process_time() - t0, tracemalloc.get_traced_memory()[1]
            assert elapsed < SECONDS and peak < BYTES, (rec.fields, elapsed, peak)
    finally:
        tracemalloc.stop()
