"""The BM1688 cost model against the chip's measured cycles (issue 31 goals), and the profile
reader against the file's own layout (tests/perf/bm1688_resnet50: a BM1688 resnet50 int8 on two
cores, the vendor's iter0.profile and net_stat.sim, copied from /work/shared/perf)."""
import pytest

import bmk
from bmk.isa import load_chip
from bmk.timing.compare import compare
from bmk.timing.profile import read_net_stat, read_profile
from tests.perf import DATA, cores


@pytest.fixture(scope="module")
def cmp():
    return compare("bm1688", cores(), (DATA / "iter0.profile").read_bytes(), (DATA / "net_stat.sim").read_text())


def test_profile_records_map_to_every_non_system_command():
    chip = load_chip("bm1688")
    prof = read_profile(chip, (DATA / "iter0.profile").read_bytes())
    assert [{e: len(v) for e, v in c.items()} for c in prof] == [{"tiu": 257, "gdma": 145}, {"tiu": 48, "gdma": 21}]
    tiu0 = prof[0]["tiu"]
    assert tiu0[1][1] - tiu0[1][0] == 312030           # the first conv (README: measured 312,030)
    assert max(e for _, e in tiu0.values()) - min(s for s, _ in tiu0.values()) == 1958442
    for c, streams in enumerate(cores()):
        recs = list(bmk.decode("bm1688", streams))
        gdma = [r for r in recs if r.engine == "gdma"]
        unmeasured = {r.kind for j, r in enumerate(gdma) if j not in prof[c]["gdma"]}
        # dma.sys: the family name of dma.sys.chain_end (tools/facts/families.json)
        assert unmeasured <= {"dma.sys.sys_send", "dma.sys.sys_wait", "dma.sys"}


def test_net_stat_is_core_0():
    est = read_net_stat((DATA / "net_stat.sim").read_text())
    assert len(est["tiu"]) == 256 and len(est["gdma"]) == 157
    assert est["tiu"][1] == ("Conv2D_18", "CONV", 307328)


def test_tiu_commands_above_1000_cycles_within_10_percent(cmp):
    within, n = cmp.tiu_within()
    assert n == 140
    assert within / n >= 0.90, within


def test_core0_tiu_span_within_3_percent(cmp):
    assert cmp.span_measured == 1958442
    assert abs(cmp.span_error) <= 0.03, cmp.span_estimated


def test_gdma_median_error_at_most_15_percent(cmp):
    assert cmp.gdma_median_error() <= 0.15


def test_conv_formula_from_parameters():
    from bmk.timing.bm1688 import Model
    recs = list(bmk.decode("bm1688", cores()[0]))
    conv = [r for r in recs if r.kind == "conv.normal"][0]
    # 64 out channels on 32 lanes: 2 passes * 112 * 112 * 7 * 7 * 32 (3 inputs in a 32-wide group) / 128 MACs
    ideal = 2 * 112 * 112 * 49 * 32 // 128
    assert ideal == 307328                  # the vendor compiler's own estimate of this conv
    got = Model(load_chip("bm1688")).cycles("tiu", conv.kind, conv.fields)
    assert abs(got - 312030) / 312030 < 0.01


def test_monitor_marks_are_not_commands():
    prof = read_profile(load_chip("bm1688"), (DATA / "iter0.profile").read_bytes())
    # core 0's GDMA block opens with a start mark (id 0, 7,955 cycles) and closes with an end mark
    # (id 0 again, 221 cycles); the first load (150,528 bytes, README: Load_16) took 5,808 cycles
    s, e = prof[0]["gdma"][0]
    assert e - s == 5808
    assert max(prof[0]["gdma"]) == 156


def test_layer_log_agrees_with_the_compilers_estimate():
    from bmk.timing.profile import read_layers
    layers = read_layers((DATA / "global.profile").read_text())
    est = read_net_stat((DATA / "net_stat.sim").read_text())
    both = [(layers[(0, e, i)], layer) for e in ("tiu", "gdma") for i, (layer, _, _) in est[e].items()
            if (0, e, i) in layers]
    assert len(both) == 383 and all(a == b for a, b in both)
    assert not any(layer for e in ("tiu", "gdma") for i, (layer, _, _) in est[e].items() if (0, e, i) not in layers)
    assert {c for c, _, _ in layers} == {0, 1}


@pytest.mark.parametrize("cut, where", [(100, "byte 96: a block header needs 8 bytes"),
                                        (200, "byte 148: block of type 3 is 8224 bytes long, 44 left"),
                                        (0, "byte 0: no TIU or GDMA monitor block")])
def test_a_cut_profile_is_a_decode_error_naming_the_byte(cut, where):
    data = (DATA / "iter0.profile").read_bytes()[:cut]
    with pytest.raises(bmk.DecodeError, match=where):
        read_profile(load_chip("bm1688"), data, "p")
