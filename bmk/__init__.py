"""bmk: BMKernel-style computation calls -> cmd_hdr_t command buffers, and back.

    from bmk import bm1880
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    ...
    buf = ctx.acquire_cmdbuf()
    report = bmk.Simulator("bm1880").run(buf)
"""
from bmk.errors import (AllocError, ArgumentError, BmkError, CmdbufOverflowError, DecodeError, EncodeError,
                        ScheduleError, SimulationError, SpecError)

__all__ = ["AllocError", "ArgumentError", "BmkError", "CmdbufOverflowError", "DecodeError", "EncodeError",
           "ScheduleError", "SimulationError", "SpecError", "Simulator", "chips", "decode", "encode"]


def chips():
    """The chips whose kernel API this build offers (an API module `bmk.<chip>` and specs).

    Every chip with specs (`bmk.isa.chips()`) decodes, encodes raw records and disassembles;
    `bmk chips` tells per chip what works."""
    import importlib.util
    from bmk.isa import chips as spec_chips
    return tuple(c for c in spec_chips() if importlib.util.find_spec(f"bmk.{c}") is not None)


def __getattr__(name):
    # Imported lazily so that `import bmk` stays cheap and free of import cycles.
    if name in ("decode", "encode"):
        from bmk.encoders import framing
        return getattr(framing, name)
    if name == "Simulator":
        from bmk.sim import Simulator
        return Simulator
    raise AttributeError(f"module 'bmk' has no attribute {name!r}")
