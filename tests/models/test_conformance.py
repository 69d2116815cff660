"""The conformance table of docs/models.md (issue 27 item 6) is tools/conformance.py's: it
lists every model under tests/models, and the rows of the small ones are what the script
computes now (decodes and round-trips, static check, runs, agrees with its reference)."""
import re
from pathlib import Path

import pytest

from tests.models import files as F
from tests.tool_loader import load_tool

ROOT = Path(__file__).resolve().parents[2]


TOOL = load_tool("conformance")


def doc_rows():
    doc = TOOL.DOC.read_text()
    assert TOOL.BEGIN in doc and TOOL.END in doc
    table = doc[doc.index(TOOL.BEGIN):doc.index(TOOL.END)]
    rows = {}
    for line in table.splitlines():
        if line.startswith("| ") and not line.startswith("| model |"):
            cells = tuple(c.strip() for c in line.strip().strip("|").split(" | "))
            rows[cells[0]] = cells
    return rows


def test_the_table_lists_every_model_of_the_tests():
    rows = doc_rows()
    names = {str(p.relative_to(ROOT)) for p in F.ALL}
    assert names <= set(rows)
    assert all(len(r) == len(TOOL.COLUMNS) for r in rows.values())


@pytest.mark.parametrize("path", [F.YUV2RGB, F.HAND_181X, F.HAND_184X, F.FACE_DETECTION],
                         ids=lambda p: p.name)
def test_a_small_models_row_is_what_the_script_computes(path):
    row = tuple(TOOL._timeless(c) for c in TOOL.row(path))
    assert doc_rows()[row[0]] == row


def test_the_columns_say_what_was_found():
    """Yuv2rgb decodes, checks clean, runs and gives the vendor's bytes; the newer chips' models
    check clean and run (CV184X, BM1690's 8-core yolov5s, a cvimodel)."""
    yuv = TOOL.row(F.YUV2RGB)
    assert yuv[1] == "bm1684x" and yuv[2] == "yes (101 instructions)" and yuv[3] == "clean"
    assert re.fullmatch(r"yes \(\d+\.\d s\)", yuv[4]) and yuv[5].startswith("yes (the vendor's output")
    hand = TOOL.row(F.HAND_184X)
    assert hand[2].startswith("yes (") and hand[3] == "clean" and re.fullmatch(r"yes \(\d+\.\d s\)", hand[4])
    yolo = TOOL.row(F.YOLO_1690)
    assert yolo[2].startswith("yes (") and yolo[3] == "clean" and re.fullmatch(r"yes \(\d+\.\d s\)", yolo[4])
    assert yolo[5] == "n/a"
    hand = TOOL.row(F.HAND_181X)            # a cvimodel: checks clean, runs, gives the vendor's cmodel bytes
    assert hand[3] == "clean" and hand[4].startswith("yes") and hand[5].startswith("yes (the vendor's cmodel")
    mm = TOOL.row(F.MM_1690)
    assert mm[3] == "clean" and mm[5] == "yes (the vendor's model_runner output, byte for byte)"


def test_the_check_column_is_bmk_check(monkeypatch):
    """The check column is bmk.check's answer: the refused instructions counted, the first
    refusal named."""
    import bmk
    from bmk.errors import SimulationError
    from bmk.sim import semantics
    m = bmk.load_model(str(F.YUV2RGB))
    sem = semantics.semantics_for(m.chip)

    def check(chip, engine, fields):
        if fields.get("tsk_eu_typ") == 14 and engine == "tiu":
            raise SimulationError("arith.cast: refused for the test")
    monkeypatch.setattr(semantics, "semantics_for", lambda chip: type(sem)(sem.kinds, check, sem.cycles, sem.init))
    findings = bmk.check(m)
    assert len(findings) == 1 and findings[0].kind == "tiu.arith.cast"
    assert TOOL.check(m).startswith(f"{findings[0].count} refused (1 refusal), first: tiu.arith.cast: arith.cast: "
                                    "refused for the test")
