"""bmk: BMKernel-style computation calls -> cmd_hdr_t command buffers, and back.

    from bmk import bm1880
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    ...
    buf = ctx.acquire_cmdbuf()
    report = bmk.Simulator("bm1880").run(buf)
"""
from bmk.errors import (AllocError, ArgumentError, BmkError, CmdbufOverflowError, DecodeError, EncodeError,
                        ModelError, ScheduleError, SimulationError, SpecError)

__all__ = ["AllocError", "ArgumentError", "BmkError", "CmdbufOverflowError", "DecodeError", "EncodeError",
           "ModelError", "ScheduleError", "SimulationError", "SpecError", "Simulator", "check", "chips", "decode",
           "encode", "lint", "load_model", "timeline"]


def chips():
    """The chips whose kernel API this build offers (an API module `bmk.<chip>` with a `Context`, and specs).

    Every chip with specs (`bmk.isa.chips()`) decodes, encodes raw records and disassembles;
    `bmk chips` tells per chip what works."""
    import importlib
    from bmk.isa import chips as spec_chips

    def has_api(chip):
        try:
            return hasattr(importlib.import_module(f"bmk.{chip}"), "Context")
        except ImportError:
            return False
    return tuple(c for c in spec_chips() if has_api(c))


def __dir__():
    """The public names, the lazily imported ones included (`dir(bmk)` shows them all)."""
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):
    # Imported lazily so that `import bmk` stays cheap and free of import cycles.
    if name in ("decode", "encode"):
        from bmk.encoders import framing
        return getattr(framing, name)
    if name == "load_model":
        from bmk.models import load_model
        return load_model
    if name == "check":
        from bmk.models.check import check
        return check
    if name == "lint":
        from bmk.models.lint import lint
        return lint
    if name == "timeline":
        from bmk.timing.timeline import timeline
        return timeline
    if name == "Simulator":
        from bmk.sim import Simulator
        return Simulator
    raise AttributeError(f"module 'bmk' has no attribute {name!r}")
