"""Every golden command buffer under tests/golden/ as (id, bytes) (cases without hex are skipped)."""
import json
import pathlib

GOLDEN_ROOT = pathlib.Path(__file__).parent.parent / "golden"


def golden_buffers():
    out = []
    for path in sorted(GOLDEN_ROOT.glob("*/*.json")):
        case = json.loads(path.read_text())
        if "cmdbuf_hex" in case:
            out.append((path.stem, bytes.fromhex(case["cmdbuf_hex"]), case["instructions"]))
        for i, acq in enumerate(case.get("acquisitions", [])):
            out.append((f"{path.stem}[{i}]", bytes.fromhex(acq["cmdbuf_hex"]), acq["instructions"]))
    return out


GOLDEN_BUFFERS = golden_buffers()
GOLDEN_IDS = [name for name, _, _ in GOLDEN_BUFFERS]


def golden(name):
    return next(buf for n, buf, _ in GOLDEN_BUFFERS if n == name)
