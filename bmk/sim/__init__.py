"""The reference simulator: replays command buffers on a model of the chip.

    sim = bmk.Simulator("bm1880")
    sim.gmem_write(0x1000, data)
    report = sim.run(cmdbuf)          # report.total_cycles, .engine_busy, .overlap_cycles, .races
    out = sim.gmem_read(0x3000, n)

Generic parts: memory.py (memory spaces from the memory map: local lanes, sparse others;
dtype and 4N/2N tensor views), core.py (decode, sync ids, N-engine run loop, timing, vector
clocks), numerics.py (7 rounding modes, saturation, bf16), races.py (race detector, any
number of engines and lanes), report.py (report, Chrome trace), semantics.py (the Semantics
object and the chip registry). Per-chip instruction semantics and cost model: bmk/sim/<chip>/
exports one SEMANTICS (one function per (engine, kind)).
"""
from bmk.sim.core import Simulator
from bmk.sim.report import InstructionRecord, Race, Report
from bmk.sim.semantics import Semantics

__all__ = ["InstructionRecord", "Race", "Report", "Semantics", "Simulator"]
