"""No silent field in real commands (issue 27 item 5).

tools/silent_fields.py changes one field of a real command of Yuv2rgb (bm1684x) or
face_detection (bm1684), re-encodes the streams, runs the model and classifies the case:
changed, refused (naming the field), error (another BmkError), identical, or crash (a bug).
Here a fixed-seed sample of (command, field) pairs of each network must give no crash, and
every identical case must be explained: either the command, run alone on value-rich memories,
writes other bytes or values (UNREAD: a result the outputs do not read), or a rule of
bmk/sim/silent.py says why the field cannot change that command's result. A new silent field
(the simulator not honouring a field it should) fails here.

Each rule is then shown on a real command: the change leaves the command's own result the same
where the rule's condition holds, and changes it where it does not.
"""
import collections

import attrs
import pytest

from bmk.sim import silent
from tests.models import files as F
from tests.tool_loader import load_tool

TOOL = load_tool("silent_fields")
MODELS = {"yuv2rgb": F.YUV2RGB, "face_detection": F.FACE_DETECTION}
SAMPLE = {"yuv2rgb": 16, "face_detection": 10}     # (command, field) pairs: a few seconds each


@pytest.fixture(scope="module")
def experiments():
    return {}


def experiment(cache, name):
    if name not in cache:
        cache[name] = TOOL.Experiment(MODELS[name])
    return cache[name]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_sampled_field_is_executed_refused_or_explained(experiments, name):
    ex = experiment(experiments, name)
    cases = TOOL.run_pairs(ex, TOOL.sampled_pairs(ex, SAMPLE[name], seed=0))
    counts = collections.Counter(c["outcome"] for c in cases)
    assert not counts["crash"], [c["detail"] for c in cases if c["outcome"] == "crash"]
    silent_ones = [(c["name"], c["field"], c["old"], c["new"]) for c in cases
                   if c["outcome"] == "identical" and not c["rule"]]
    assert silent_ones == [], f"fields whose change the simulator ignores: {silent_ones}"
    assert len(cases) == SAMPLE[name] and counts["identical"], counts


def _rec(ex, index, **changes):
    rec = ex.records[next(iter(ex.records))][index]
    return attrs.evolve(rec, fields=dict(rec.fields, **changes)) if changes else rec


def _same_alone(ex, a, b):
    """Whether commands a and b, each run alone on the same value-rich memories (every
    variant), write the same bytes with the same values."""
    return all(ex._alone(b, v, against=ex._alone(a, v)) for v in range(len(TOOL.ROLLS)))


# (network, command index, field, new value, rule, changes that make the rule's condition
# false, or None): the rule explains the change and the command's result stays the same;
# with `counter` applied first, the rule does not explain it and the result changes.
RULES = [
    ("yuv2rgb", 6, "res0_h_str", 0x79, "size-one-stride", {"res0_h": 2}),              # arith.mul, res0_h 1
    ("yuv2rgb", 6, "opd1_str", 2, "constant-has-no-layout",                            # opd1 the constant 1.0
     {"opd1_const": 0, "opd1_addr": 0x1000}),
    ("yuv2rgb", 12, "res0_str", 1, "same-strides", {"res0_h_str": 61}),                # free == compact here
    ("yuv2rgb", 12, "opd2_addr", 1, "past-tsk_opd_num", None),                         # sub, tsk_opd_num 2
    ("yuv2rgb", 12, "opd0_sign", 0, "float-sign", {"opd0_prec": 0, "res0_prec": 0}),   # fp32 vs int8
    ("yuv2rgb", 25, "opd1_prec", 1, "zero-constant", {"opd1_addr": 0x3C003C00}),       # max(x, 0.0)
    ("yuv2rgb", 25, "opd2_n_str", 1, "exact-result", None),                            # max never rounds
    ("yuv2rgb", 6, "intr_en", 1, "head", None),
    ("yuv2rgb", 6, "rsvd0", 1, "reserved", None),
    ("yuv2rgb", 97, "constant_value", 0x41, "gdma-condition", {"fill_constant_en": 1}),
    ("yuv2rgb", 97, "dst_nsize", 1, "gdma-condition", None),                           # nchw_copy 1
    ("yuv2rgb", 66, "localmem_mask_h32", 0xFFFFFFDF, "lane-without-channel", None),     # dst on NPUs 0..29
    ("face_detection", 29, "res0_h_str", 2, "layout-computes-strides", None),          # conv, aligned res0
    ("face_detection", 29, "opd0_dn_pad", 1, "far-pad", None),                        # windows end above it
    ("face_detection", 159, "opd0_rt_pad", 9, "far-pad", None),                        # they reach 1 column
    ("face_detection", 295, "tsk_lane_num", (1 << 64) - 1 - (1 << 22), "lane-without-channel",
     {"res0_c": 32}),                                                                   # res0 on NPU 0
    ("face_detection", 23, "opt_shift_typ", 1, "nothing-shifted", None),              # fp32 mul
    ("face_detection", 20, "opd1_y_ins0", 1, "size-one-insertion", None),   # 1x1 kernel               # fp32 mul
    ("face_detection", 23, "short_res0_str", 0, "same-strides-1684", {"res0_h_str": 161}),
    ("face_detection", 159, "short_opd1_str", 1, "pord-kernel-compact", None),         # aligned read compact
    ("face_detection", 478, "dst_nstride", 1599, "size-one-stride", None),             # dma.trans dst n = 1
    ("face_detection", 384, "opd2_addr", 0x10000, "past-tsk_opd_num", None),           # conv without bias
    ("face_detection", 23, "cmd_intr_en", 1, "contract", None),
    ("face_detection", 29, "opd1_n", 2, "contract", None),         # the weight's input channels are opd0_c
    ("face_detection", 23, "opt_opd3_const", 1, "contract", None),  # mul reads no opd3
    ("face_detection", 567, "dst_hsize", 1, "gdma-condition", None),  # chw_copy 1: the source's sizes
]


@pytest.mark.parametrize("name, index, field, new, rule, counter", RULES,
                         ids=[f"{r[0]}#{r[1]}.{r[2]}:{r[4]}" for r in RULES])
def test_each_rule_holds_on_a_real_command(experiments, name, index, field, new, rule, counter):
    ex = experiment(experiments, name)
    rec = _rec(ex, index)
    why = silent.explain(ex.spec, rec, field, rec.fields[field], new)
    assert why is not None and why.split(":")[0] == rule, why
    assert _same_alone(ex, rec, _rec(ex, index, **{field: new}))
    if counter is not None:
        base = _rec(ex, index, **counter)
        why = silent.explain(ex.spec, base, field, base.fields[field], new)
        assert why is None or why.split(":")[0] != rule, why
        assert not _same_alone(ex, base, _rec(ex, index, **{**counter, field: new}))


def test_a_result_nobody_reads_is_told_from_a_silent_field(experiments):
    """face_detection #465 (arith.max, res0 (2, 1, 800, 1), in place with h stride 1): res0_w 2
    writes one more element past the end, which no output reads. Outputs identical, the
    command's own writes differ: UNREAD, not a silent field."""
    ex = experiment(experiments, "face_detection")
    case = ex.case(next(iter(ex.records)), 465, "res0_w", 2)
    assert (case["outcome"], case["effect"], case["rule"]) == ("identical", "unread", silent.UNREAD)


@pytest.mark.parametrize("name, index, field, new, words", [
    ("yuv2rgb", 25, "tsk_opd_num", 3, ("arith.max", "tsk_opd_num", "2", "3")),
    ("yuv2rgb", 60, "tsk_opd_num", 2, ("arith.cast", "tsk_opd_num", "1", "2")),
    ("face_detection", 304, "opt_opd0_const", 1, ("lut", "opt_opd0_const")),
])
def test_fields_the_simulators_ignored_are_refused_by_name(experiments, name, index, field, new, words):
    """Found by the experiment: bm1684x max/min/cast ran whatever tsk_opd_num said, bm1684's
    lut read its index as a tensor whatever opt_opd0_const said; now they are refused."""
    ex = experiment(experiments, name)
    case = ex.case(next(iter(ex.records)), index, field, new)
    assert case["outcome"] == "refused", case
    assert all(w in case["detail"] for w in words), case["detail"]


def test_fp32_to_int_honours_its_result_sign(experiments):
    """Found by the experiment: bm1684's md_sfu.fp32_to_int wrote a signed result whatever
    opt_opd2_sign said (the sign of every integer result of the element-wise kinds, elementwise.py);
    unsigned now saturates the negative values to 0 and the network's outputs change."""
    ex = experiment(experiments, "face_detection")
    case = ex.case(next(iter(ex.records)), 470, "opt_opd2_sign", 0)
    assert case["outcome"] == "changed", case
    rec = _rec(ex, 470)
    assert not _same_alone(ex, rec, _rec(ex, 470, opt_opd2_sign=0))
