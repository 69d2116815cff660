"""Older bmodel container layouts the public files show, each read as the newer one.

The Nov 2023 SG2260 core commands (public extra/yolov5s_sg2260_f32_core8.bmodel, built 2023-11-21):
CoreCommands' sdma/hau/cdma lists are vectors of offsets to Binary structs, not vectors of Binary
structs (bmk/models/bmodel.py older_layout). The test writes the same model both ways (tests/models/build.py)
around real BM1690 command bytes and expects the same groups and the same decoded commands.
"""
import pytest

import bmk
from bmk.models import bmodel
from tests.models import build
from tests.models import files as F


def _streams():
    """tiu, gdma and sdma bytes of core 1 of the bm1690 yolov5s test model (real vendor commands)."""
    m = bmk.load_model(F.YOLO_1690)
    g = [g for g in m.groups() if g.core == 1][0]
    return {e: g.parts[e].read(m.data) for e in ("tiu", "gdma", "sdma")}, g.counts


def _original_names():
    m = bmk.load_model(F.YOLO_1690)
    g = [g for g in m.groups() if g.core == 1][0]
    return [r.name for r in m.records(g) if not r.name.startswith("hau.")]     # the test writes no hau bytes


def _model(layout, streams, counts):
    binary = streams["tiu"] + streams["gdma"] + streams["sdma"]
    t, d = len(streams["tiu"]), len(streams["gdma"])
    core = {"layout": layout, "groups": [{"bdc_num": counts["tiu"], "gdma_num": counts["gdma"], "bdc": (0, t),
                                          "gdma": (t, d)}],
            "sdma": [(t + d, len(streams["sdma"]))], "hau": [(t + d, 0)]}
    stage = {"inputs": [], "outputs": [], "subnets": [{"cores": [core, core]}], "core_num": 2}
    return build.bmodel("SG2260", [{"name": "n", "stages": [stage]}], binary)


@pytest.mark.parametrize("layout", ["refs", "structs"])
def test_the_nov_2023_sg2260_core_commands_read_as_the_newer_layout(layout):
    streams, counts = _streams()
    m = bmk.models.read_model(_model(layout, streams, counts), f"{layout}.bmodel")
    assert m.chip == "bm1690" and len(m.groups()) == 2
    for g in m.groups():
        assert {e: g.parts[e].read(m.data) for e in ("tiu", "gdma", "sdma")} == streams
        assert [r.name for r in m.records(g)] == _original_names()


def test_the_layouts_are_told_apart_by_the_vector_alignment():
    streams, counts = _streams()
    old, new = (bmk.models.read_model(_model(k, streams, counts), "x") for k in ("refs", "structs"))
    assert [[r.name for r in old.records(g)] for g in old.groups()] == \
        [[r.name for r in new.records(g)] for g in new.groups()]
    # the rule itself: the older file's sdma vector starts its elements at 4 mod 8, the newer at 0
    for data, want in ((_model("refs", streams, counts), True), (_model("structs", streams, counts), False)):
        from bmk.models.flat import FlatBuffer
        root = FlatBuffer(data, 64, len(data) - 64 - len(b"".join(streams.values())), "x").root("Model")
        sub = root.tables(0 + bmodel.M.net, "net")[0].tables(bmodel.NT.parameter, "p")[0]
        core = sub.tables(bmodel.P.sub_net, "s")[0].tables(bmodel.S.core_commands, "c")[0]
        assert bmodel.older_layout(core, bmodel.C.sdma_commands, "sdma") is want


def test_an_older_layout_offset_past_the_flatbuffer_is_refused():
    streams, counts = _streams()
    data = bytearray(_model("refs", streams, counts))
    fb_end = len(data) - len(b"".join(streams.values()))
    # the first one-element vector of offsets (count 1, offset 4: an sdma/hau list): point it far away
    at = bytes(data).find(b"\x01\x00\x00\x00\x04\x00\x00\x00", 64, fb_end)
    assert at > 0
    data[at + 4:at + 8] = (1 << 30).to_bytes(4, "little")
    with pytest.raises(bmk.ModelError, match="must"):
        bmk.models.read_model(bytes(data), "bad.bmodel")
