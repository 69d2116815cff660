"""The reference simulator: replays command buffers on a model of the chip.

    sim = bmk.Simulator("bm1880")
    sim.gmem_write(0x1000, data)
    report = sim.run(cmdbuf)          # report.total_cycles, .engine_busy, .overlap_cycles, .races
    out = sim.gmem_read(0x3000, n)

Generic parts: memory.py (lmem lanes, sparse gmem, strided tensor views), core.py (decode,
sync ids, run loop, timing), races.py (race detector), report.py (report, Chrome trace).
Per-chip instruction semantics and cost model: bmk/sim/<chip>/ (one function per kind).
"""
from bmk.sim.core import Simulator
from bmk.sim.report import InstructionRecord, Race, Report

__all__ = ["InstructionRecord", "Race", "Report", "Simulator"]
