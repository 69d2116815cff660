"""tools/overlap_survey.py (issue 32.14): the evidence behind the simulators' partial-overlap
rule. The bm1684 face_detection network writes no local bytes it reads in another layout (the
simulator refuses such an element-wise command: tests/chips/bm1684/sim/test_dst_overlap_sim.py,
and every shared bm1684 model still runs: test_real_networks.py); the bm1684x Yuv2rgb network
casts fp32 to int8 in place, its int8 result over the first bytes of its fp32 source, which its
simulator therefore runs (and gets the vendor's bytes: tests/models)."""
from tests.models import files as F
from tests.tool_loader import load_tool

TOOL = load_tool("overlap_survey")


def test_face_detection_overlaps_only_in_place():
    s = TOOL.survey(F.FACE_DETECTION)
    assert not s["partial"]
    assert s["in_place"]["tiu.arith.add"] == 50 and s["in_place"]["tiu.md_sfu.taylor"] == 3


def test_yuv2rgb_casts_in_place_over_a_wider_source():
    s = TOOL.survey(F.YUV2RGB)
    assert dict(s["partial"]) == {"tiu.arith.cast": 9}
    i, w, r = s["first"]["tiu.arith.cast"]
    assert (w[2], w[3], r[2], r[3]) == (0, 0x78, 0, 0x1e0)        # 120 int8 over 480 bytes of 120 fp32
    assert w[5] == (0, (1, 1, 2, 60), (120, 120, 60, 1)) and r[5][2] == (480, 480, 240, 4, 1)
