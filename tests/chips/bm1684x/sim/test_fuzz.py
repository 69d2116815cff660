"""The simulator on the real vendor streams and on their corruptions: every modelled vendor
command runs; random bytes and mutated commands raise only BmkError, in bounded time."""
import time

import attrs
import numpy as np

import bmk
from bmk.errors import BmkError
from bmk.sim.bm1684x import EXECUTES, SEMANTICS
from bmk.sim.bm1684x.fields import head
from tests.chips.bm1684x.sim.helpers import CHIP, LOCAL_BASE
from tests.vectors.vendor import streams


MASK = 0xFFFFFFFF


def _unsynced(r):
    return attrs.evolve(r, fields={**r.fields, **({"cmd_id": 0, "cmd_id_dep": 0} if "cmd_id" in r.fields else {})})


def vendor_modelled():
    recs = bmk.decode(CHIP, streams("bm1684x"))
    return [_unsynced(r) for r in recs if (r.engine, r.kind) in SEMANTICS.kinds]


def test_every_modelled_vendor_command_runs():
    """Every command of the golden yolov5s stream (each of its 15 kinds), unsynced, with random
    local memory: all of them run (the reading accepts the vendor's fields, whatever the data)."""
    recs = vendor_modelled()
    kinds = {r.kind for r in recs}
    assert {"dma.tensor", "dma.tensor.broadcast", "arith.adds", "arith.copy", "arith.muls", "arith.cast",
            "conv.normal", "quant.rq1", "tsbc.l_bc", "sg.pe_s_gather_d1coor", "tsbc.l_copy", "tsbc.s_distribute",
            "sg.pe_s_scatter_hzd", "pord.depthwise", "pord.maxpooling", "sys.end", "dma.sys"} <= kinds
    sim = bmk.Simulator("bm1684x")
    sim.lmem.data[:] = np.random.default_rng(0).integers(0, 256, sim.lmem.size, dtype=np.uint8)
    report = sim.run(recs, races=False)
    assert len(report.instructions) == len(recs) == 572


def test_mutated_commands_raise_only_bmk_errors():
    rng = np.random.default_rng(2024)
    recs = vendor_modelled()
    start, outcomes = time.process_time(), {"ran": 0, "refused": 0}     # CPU time: not the machine's load
    for trial in range(400):
        r = recs[int(rng.integers(len(recs)))]
        body = bytearray(bmk.encode(CHIP, [r], raw=True)[r.engine])
        for _ in range(int(rng.integers(1, 6))):
            pos = int(rng.integers(len(body)))
            body[pos] = int(rng.integers(256)) if rng.random() < 0.5 else body[pos] ^ (1 << int(rng.integers(8)))
        sim = bmk.Simulator("bm1684x")
        try:
            sim.run({r.engine: bytes(body)})
            outcomes["ran"] += 1
        except BmkError:
            outcomes["refused"] += 1
    assert outcomes["ran"] > 20 and outcomes["refused"] > 20, outcomes
    assert time.process_time() - start < 20


def test_random_bytes_and_random_fields():
    rng = np.random.default_rng(7)
    for trial in range(200):
        data = {"tiu": rng.integers(0, 256, int(rng.integers(1, 300)), dtype=np.uint8).tobytes(),
                "gdma": rng.integers(0, 256, int(rng.integers(1, 300)), dtype=np.uint8).tobytes()}
        try:
            bmk.Simulator("bm1684x").run(data)
        except BmkError:
            pass
    # every field of a modelled class random (kind kept): refused or run, never another error
    outcomes = {"ran": 0, "refused": 0}
    for trial in range(300):
        eng = CHIP.engine("tiu" if trial % 2 else "gdma")
        cls = [c for c in eng.classes if any((eng.name, i.name) in SEMANTICS.kinds for i in c.instructions)]
        c = cls[int(rng.integers(len(cls)))]
        ins = [i for i in c.instructions if (eng.name, i.name) in SEMANTICS.kinds]
        f = {fld.name: int(rng.integers(0, fld.max + 1, dtype=np.uint64)) if fld.width < 64 else 0
             for fld in c.fields}
        f.update(dict(c.keys[0]))
        f.update(dict(ins[int(rng.integers(len(ins)))].match))
        small = rng.random() < 0.7
        for k in f:
            if small and k.endswith(("_n", "_c", "_h", "_w", "size")):
                f[k] = f[k] % 8 + 1
            elif small and (k.endswith("_str") or k.endswith(("_prec", "_format"))):
                f[k] %= 6 if k.endswith(("_prec", "_format")) else 9
        f.update({k: 0 for k in ("cmd_id", "cmd_id_dep") if k in f})
        if small:       # mostly fields the semantics model, so that the kinds' functions run
            f.update({k: v for k, v in (("decompress_enable", 0), ("stride_enable", 1), ("localmem_mask_l32", MASK),
                                        ("localmem_mask_h32", MASK)) if k in f})
            kind = c.instruction_of(f).name
            f.update({k: 0 for k in f if k not in EXECUTES[(eng.name, kind)] and k not in head(CHIP, eng.name)})
            f.update({k: (1 << 64) - 1 for k in ("tsk_lane_num",) if k in f})
            for name in dict(c.composed):          # DMA addresses inside local memory
                if name.endswith("_addr"):
                    f.update(CHIP.split(eng.name, name, LOCAL_BASE + int(rng.integers(0, 1 << 16)), c.name))
        rec = bmk.encoders.Record(eng.name, c.name, None, f)
        try:
            bmk.Simulator("bm1684x").run(bmk.decode(CHIP, bmk.encode(CHIP, [rec])))
            outcomes["ran"] += 1
        except BmkError:
            outcomes["refused"] += 1
    assert outcomes["ran"] > 15 and outcomes["refused"] > 50, outcomes
