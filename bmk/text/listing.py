"""A Context's listing (`ctx.listing()`, docs/loop.md): its command buffer as assembly text,
each instruction's line ending with the API call and the user's line behind it.

Made here, with the asm formatter, rather than in the API machinery: the formatter
(bmk/text/asm.py, views.py) sits on a floor below the op-table machinery (it reads only specs
and Records: tests/packaging/test_floors.py), so `OriginLog.listing` calls down to it.
"""
from bmk.encoders.framing import decode_cmdbuf
from bmk.text.asm import disassemble


def listing(chip, cmdbuf, origins, fields="changed", width=None):
    """cmdbuf's instructions as text bmk-asm reads back; origins: one Origin (or None) per
    instruction, written as the line's comment. width: wrap longer lines to fit it (the origin
    then on a comment line of its own before)."""
    records = decode_cmdbuf(chip, cmdbuf)
    return disassemble(chip, records, fields, locations=True,
                       notes=[None if o is None else str(o) for o in origins], width=width)
