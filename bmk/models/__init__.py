"""Compiled models: bmodel and cvimodel containers read into nets, stages, subnets and command groups.

    m = bmk.load_model("net.bmodel")      # or a .cvimodel: the kind is read from the content
    for g in m.groups():
        records = m.records(g)            # bmk.decode(m.chip, g.payload), errors naming the file offset

Modules, one job each: flat (a bounded FlatBuffer table reader), bmodel and cvimodel (the two
containers, from isa-facts/bmodel-format.md and cvimodel-format.md), model (the records
`load_model` returns), chips (container chip strings -> bmk chip names), decoding (a group's
instructions), storage (1N/2N/4N layouts), run (driving the simulator).
"""
from bmk.errors import ModelError

__all__ = ["Group", "IOTensor", "Model", "Net", "Region", "Stage", "Subnet", "load_model", "read_model"]


def __getattr__(name):
    # The record classes are imported when first asked for: telling a model file from a command
    # buffer (bmk.models.magic, on every command line) needs none of them.
    if name in ("Group", "IOTensor", "Model", "Net", "Region", "Stage", "Subnet"):
        from bmk.models import model
        return getattr(model, name)
    raise AttributeError(f"module 'bmk.models' has no attribute {name!r}")


def read_model(data, path="<model>"):
    """The bytes of a .bmodel or .cvimodel (told apart by their magic) -> Model."""
    from bmk.models import bmodel, cvimodel
    data = bytes(data)
    if data[:4] == bmodel.MAGIC_BYTES or data[:4] == bmodel.OLD_MAGIC.to_bytes(4, "little"):
        return bmodel.read(data, path)
    if data[:8] == cvimodel.MAGIC:
        return cvimodel.read(data, path)
    raise ModelError(f"not a compiled model: a bmodel starts with bytes {bmodel.MAGIC_BYTES.hex(' ')}, a cvimodel "
                     f"with {cvimodel.MAGIC.decode()!r}; this file starts with {data[:8].hex(' ') or 'nothing'}",
                     path, 0)


def load_model(path: "str | os.PathLike[str]") -> "Model":
    """A .bmodel or .cvimodel file -> Model (API.md "Compiled models"). ModelError (a bmk.BmkError)
    for any defect, naming the file, the byte offset and the rule; OSError when unreadable."""
    with open(path, "rb") as f:
        data = f.read()
    return read_model(data, str(path))


def is_model(data):
    """True when bytes start like a bmodel or a cvimodel (bmk.models.magic: no reader imported)."""
    from bmk.models.magic import is_model as starts_like_a_model
    return starts_like_a_model(data)
