"""Real streams under tests/golden/<chip>/ (the vendor's BM1684 / BM1684X yolov5s streams, from
tpu-mlir test/TDB) and, as a separate optional layer, the expectations the vendor's
disassembler states about them (FileCheck files).

Found, never listed: a chip folder of tests/golden holding `<name>.<engine>.bin` (one program's
raw streams, one file per engine) is a stream chip (CHIPS): decode, encode, disasm, asm and diff
round trips run on it, whatever the chip (tests/vectors/test_golden_roundtrip.py). When the
folder also holds the vendor disassembler's `<name>.reg.test` and `<name>.mlir.test`, the chip
is vendor-checked (CHECKED: tests/vectors/test_vendor_streams.py). API_CHIPS: the stream chips
with a kernel API (bmk/isa/registry.py), for the tests that replay the streams through it.
"""
import json
import pathlib
import re

from bmk.isa import load_chip
from bmk.isa.registry import chips_with

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / "golden"
ENGINE = {"tiu": "tiu", "dma": "gdma"}          # reg.test cmd_type -> bmk engine


def find_streams(golden=GOLDEN):
    """{chip: {engine: path}} of every chip folder of `golden` holding <name>.<engine>.bin files
    (the first name, in sorted order, when a folder holds several programs)."""
    out = {}
    for folder in sorted(p for p in golden.iterdir() if p.is_dir()):
        files = sorted(folder.glob("*.*.bin"))
        if files:
            name = files[0].name.rsplit(".", 2)[0]
            found = {f.name.rsplit(".", 2)[1]: f for f in files if f.name.rsplit(".", 2)[0] == name}
            order = [e.name for e in load_chip(folder.name).engines]      # the spec's engine order
            assert set(found) <= set(order), f"{folder}: {sorted(set(found) - set(order))} are no engines of the chip"
            out[folder.name] = {e: found[e] for e in order if e in found}
    return out


STREAMS = find_streams()
VECTORS = {chip: next(iter(paths.values())).name.rsplit(".", 2)[0] for chip, paths in STREAMS.items()}
CHIPS = sorted(STREAMS)
CHECKED = [c for c in CHIPS if (GOLDEN / c / f"{VECTORS[c]}.reg.test").is_file()
           and (GOLDEN / c / f"{VECTORS[c]}.mlir.test").is_file()]
API_CHIPS = [c for c in CHIPS if c in chips_with("api")]


def streams(chip):
    """{engine: bytes} of the chip's golden program."""
    return {engine: path.read_bytes() for engine, path in STREAMS[chip].items()}


def stream_path(chip, engine):
    return STREAMS[chip][engine]


def reg_blocks(chip):
    """[(engine, own id, vendor name, {field: value})] of the `.reg.test` "cmd" blocks."""
    text = (GOLDEN / chip / f"{VECTORS[chip]}.reg.test").read_text()
    body = "\n".join(line.split("CHECK:", 1)[1] for line in text.splitlines() if "CHECK:" in line)
    doc = json.loads(body)
    out = []
    for group in doc.values():
        for cmd_type, cmds in group.items():
            for c in cmds:
                out.append((ENGINE[c["extra"]["cmd_type"]], c["extra"]["cmd_id"], c["name"], c["cmd"]))
    return out


_OP = re.compile(r"%([BD])(\d+) = (?:\"([^\"]+)\"|([A-Za-z0-9 _]+)\()")


def mlir_ops(chip):
    """[(engine, own id, op name)] in the order the vendor disassembler lists the program."""
    text = (GOLDEN / chip / f"{VECTORS[chip]}.mlir.test").read_text()
    out = []
    for line in text.splitlines():
        m = _OP.search(line)
        if m:
            out.append(("tiu" if m[1] == "B" else "gdma", int(m[2]), m[3] or m[4].strip()))
    return out
