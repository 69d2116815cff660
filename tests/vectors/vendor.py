"""The vendor's real BM1684 / BM1684X streams (tests/golden/<chip>/, from tpu-mlir test/TDB)
and the expectations its disassembler's FileCheck files state about them."""
import json
import pathlib
import re

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / "golden"
# Found, never listed: each chip folder of tests/golden holding raw streams (<name>.tiu.bin,
# <name>.gdma.bin and the disassembler's <name>.reg.test / .mlir.test) -> that name.
VECTORS = {p.parent.name: p.name[:-len(".tiu.bin")] for p in sorted(GOLDEN.glob("*/*.tiu.bin"))}
CHIPS = sorted(VECTORS)
ENGINE = {"tiu": "tiu", "dma": "gdma"}          # reg.test cmd_type -> bmk engine


def streams(chip):
    base = GOLDEN / chip / VECTORS[chip]
    return {"tiu": (base.with_suffix(".tiu.bin")).read_bytes(), "gdma": (base.with_suffix(".gdma.bin")).read_bytes()}


def stream_path(chip, engine):
    return GOLDEN / chip / f"{VECTORS[chip]}.{engine}.bin"


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
