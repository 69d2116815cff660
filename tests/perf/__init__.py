"""The BM1688 profile data the timing tests and bench/bm1688_profile.py read."""
import pathlib

DATA = pathlib.Path(__file__).parent / "bm1688_resnet50"
# per core: its TIU and GDMA raw streams (cmd_<addr>_<core>_<engine>.dat)
STREAMS = [("cmd_125ada000_0_0.dat", "cmd_125ade000_0_1.dat"), ("cmd_125ae2000_1_0.dat", "cmd_125ae3000_1_1.dat")]


def cores():
    """[{engine: bytes}] per core, as bmk.timeline and compare take them."""
    return [{"tiu": (DATA / t).read_bytes(), "gdma": (DATA / g).read_bytes()} for t, g in STREAMS]
