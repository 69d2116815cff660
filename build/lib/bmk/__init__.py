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
           "ScheduleError", "SimulationError", "SpecError", "Simulator", "chips"]


def chips():
    """The chips this build supports (those with an API module and specs)."""
    from bmk.isa import chips as spec_chips
    return spec_chips()


def __getattr__(name):
    # Imported lazily so that `import bmk` stays cheap and free of import cycles.
    if name == "Simulator":
        from bmk.sim import Simulator
        return Simulator
    raise AttributeError(f"module 'bmk' has no attribute {name!r}")
