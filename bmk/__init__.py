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
    """The chips whose kernel API this build offers: specs and an API package `bmk.<chip>` (its op
    table `api.py` and a `Context`), as the chip registry finds them (bmk/isa/registry.py).

    Every chip with specs (`bmk.isa.chips()`) decodes, encodes raw records and disassembles;
    `bmk chips` tells per chip what works."""
    from bmk.isa.registry import chips_with
    return chips_with("api")


def check(source: "Model | bytes | Mapping[str, bytes] | Sequence[Record]", chip: "str | None" = None) -> "Findings":
    """bmk.check (API.md "Checking, timing and linting models"): every instruction bmk's simulator
    would refuse, grouped by kind, field and value, without running anything -> [Finding]
    (bmk/sim/check.py), [] when everything can run. It lives here, above the model
    containers, because loading a model imports models/run.py, which uses models/check.py.

    source: a Model, a model file's path, a cmd_hdr_t command buffer (bytes), raw streams
    ({engine: bytes}) or a list of Records; chip: the chip of a buffer (a model names its own)."""
    import os
    from bmk.errors import must
    from bmk.models import load_model
    from bmk.models.check import check_model
    from bmk.models.model import Model
    if isinstance(source, (str, os.PathLike)):
        source = load_model(source)
    if isinstance(source, Model):
        if chip is not None and chip != source.chip:
            raise ArgumentError(must("check", "chip", f"None or the model's chip {source.chip!r}", chip))
        return check_model(source)[0]
    if chip is None:
        raise ArgumentError(must("check", "chip", "a chip name for a command buffer or streams", chip))
    from bmk.sim.check import check_buffer
    return check_buffer(source, chip)[0]


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
