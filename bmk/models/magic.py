"""The first bytes of the two containers (isa-facts bmodel-format.md: a little-endian u32
magic; cvimodel-format.md: the 8 bytes "CviModel"): enough to tell a model file from a command
buffer without importing the readers (and numpy) - the command line asks on every file."""
import struct

BMODEL = 0xFF55AAEE
BMODEL_BYTES = struct.pack("<I", BMODEL)
BMODEL_OLD = 0xFF55AAFF            # bmtap2 files
CVIMODEL = b"CviModel"


def is_model(data):
    """True when bytes start like a bmodel or a cvimodel."""
    return data[:4] == BMODEL_BYTES or data[:8] == CVIMODEL
