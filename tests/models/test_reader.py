"""The container readers on the real files: chips, nets, stages, subnets, groups, io tensors,
coefficients, neuron memory, kernel module, as the files state them (values read with the
facts' offsets by hand and pinned here)."""
import hashlib

import numpy as np
import pytest

import bmk
from bmk import dtypes
from bmk.models import chips as chipnames
from tests.models import files as F


@pytest.mark.parametrize("path", F.ALL, ids=lambda p: p.name)
def test_every_file_loads_and_names_its_chip(path):
    m = bmk.load_model(path)
    expected = {"bm1684": "BM1684", "bm1684x": "BM1684X", "bm1688": "BM1688", "bm1690": "BM1690",
                "cv184x": "CV184X", "cv181x": "cv181x"}[path.parent.name if path.parent.name != "Yuv2rgb_0_int8"
                                                        else "bm1684x"]
    if path.name.startswith("resnet50_v2_sg2260"):        # torch-tpu's build names the chip SG2260 (= BM1690)
        expected = "SG2260"
    assert m.target == expected and m.chip == {"SG2260": "bm1690"}.get(expected, expected.lower())
    assert m.format == ("cvimodel" if path.suffix == ".cvimodel" else "bmodel")
    assert m.groups() and all(g.sizes for g in m.groups())


def test_retinaface_facts():
    m = bmk.load_model(F.RETINAFACE)
    assert (m.version, m.time, m.neuron_size, m.kernel_module) == ("2.2", "Thu Dec  9 17:27:12 2021", 5550080, None)
    (net,) = m.nets
    assert net.name == "mobilenet0.25_Final.onnx"
    (st,) = net.stages
    (x,) = st.inputs
    assert (x.name, x.type, x.dtype, x.shape, x.address, x.storage, x.scale, x.size) == \
        ("input", dtypes.FP32, np.dtype("<f4"), (1, 3, 384, 640), 0x1052EB000, "1N", 1.0, 2949120)
    assert [(t.name, t.shape, t.address) for t in st.outputs] == [
        ("loc", (1, 10080, 4), 0x1057D7000), ("cls", (1, 10080, 2), 0x1056AB000), ("land", (1, 10080, 10), 0x1055BB000)]
    assert (st.coeff.address, st.coeff.size) == (0x105100000, 2007120)
    assert (st.neuron.address, st.neuron.size) == (0x1052EB000, 0x54B000)
    # the sha256 the file records is the sha256 of the coefficient bytes
    assert st.coeff.check_code == hashlib.sha256(m.coefficients(st)).hexdigest()
    (sn,) = st.subnets
    assert (sn.kind, sn.id, sn.next_ids) == ("tpu", 0, ())
    (g,) = m.groups()
    assert g.label == "net0/stage0/subnet0/core0/group0"
    assert g.counts == {"tiu": 3122, "gdma": 803} and g.sizes == {"tiu": 399616, "gdma": 102784}
    assert g.cmdbuf is None and g.payload == g.streams


def test_int8_facts_scale_and_kernel_module():
    m = bmk.load_model(F.YOLO_1684X)
    st = m.nets[0].stages[0]
    assert (st.inputs[0].type, st.inputs[0].scale) == (dtypes.UINT8, pytest.approx(254.99795532226562))
    assert [t.type for t in st.outputs] == [dtypes.INT8] * 3
    assert st.coeff is None                                 # stripped in this test file
    k = bmk.load_model(F.YUV2RGB)
    name, blob = k.kernel_module
    assert (name, blob.size) == ("libbm1684x_kernel_module.so", 3185136)
    assert blob.read(k.data)[:4] == b"\x7fELF"              # a shared object
    assert k.groups()[0].counts == {"tiu": 85, "gdma": 16}


def test_multi_core_groups_are_labelled_per_core():
    m = bmk.load_model(F.YOLO_1688_CORE2)
    assert m.nets[0].stages[0].core_num == 2
    assert [(g.label, g.core, g.counts) for g in m.groups()] == [
        ("net0/stage0/subnet0/core0/group0", 0, {"tiu": 338, "gdma": 156}),
        ("net0/stage0/subnet0/core1/group0", 1, {"tiu": 64, "gdma": 39})]
    m = bmk.load_model(F.YOLO_1690)
    groups = m.groups()
    assert [g.label for g in groups] == [f"net0/stage0/subnet0/core{c}/group0" for c in range(8)]
    assert groups[0].sizes == {"tiu": 72064, "gdma": 24576, "sdma": 2048, "hau": 9600}
    assert groups[7].counts == {"tiu": 1115, "gdma": 304}
    assert sum(g.counts["tiu"] for g in groups) == 9927 and sum(g.counts["gdma"] for g in groups) == 2684


def test_the_stage_copy_of_the_command_groups_is_not_listed_twice():
    # yolov5s_bm1688 carries its groups both in NetParameter.cmd_group and in the subnet
    m = bmk.load_model(F.YOLO_1688)
    assert len(m.groups()) == 1 and m.groups()[0].counts == {"tiu": 385, "gdma": 161}


def test_cvimodel_facts():
    m = bmk.load_model(F.HAND_181X)
    assert (m.version, m.target, m.nets[0].name) == ("1.4", "cv181x", "cls_keypoint_hand_gesture_1_42_INT8")
    st = m.nets[0].stages[0]
    (x,) = st.inputs
    assert (x.name, x.type, x.shape, x.address, x.scale) == ("x", dtypes.INT8, (1, 42, 1, 1), 3 << 40,
                                                              pytest.approx(142.20603942871094))
    assert [(t.name, t.type, t.shape) for t in st.outputs] == [("y_Softmax_f32", dtypes.FP32, (1, 9, 1, 1))]
    assert (st.coeff.address, st.coeff.size) == (1 << 40, 31792)
    assert st.extra == {"batch_num": 0, "shared_gmem": 256, "private_gmem": 0}
    (g,) = m.groups()
    assert g.sizes == {"cmdbuf": 5544} and {e: len(v) for e, v in g.streams.items()} == {"tiu": 2688, "tdma": 2368}
    buf = g.cmdbuf
    assert g.payload == buf and buf[0] == 0xA7           # cvikernel cmd_hdr_t, CV181X magic
    # the cmd_hdr_t records run to the section's last byte (cvimodel-format.md section 4)
    offset, records = 0, 0
    while offset < len(buf):
        length = buf[offset + 1] or int.from_bytes(buf[offset + 4:offset + 8], "little")
        offset += 8 + length
        records += 1
    assert (offset, records) == (len(buf), 61)


def test_container_chip_strings_map_to_bmk_chips():
    assert [chipnames.chip_name(s) for s in ("BM1684", "BM1684X", "CV186X", "BM1686", "SG2260", "MARS3", "cv181x",
                                             "SG2999")] \
        == ["bm1684", "bm1684x", "bm1688", "bm1688", "bm1690", "cv184x", "cv181x", "sg2999"]


def test_a_bm1686_file_reads_as_bm1688():
    # BM1686 is the BM1688's 2023 name (public extra/yolov5s_bm1686_int8_sym.bmodel is this file with
    # that string): the same bytes with the other name read as the same chip and decode alike
    data = F.YOLO_1688.read_bytes()
    assert data.count(b"BM1688") == 1
    old = bmk.models.read_model(data.replace(b"BM1688", b"BM1686"), "bm1686.bmodel")
    new = bmk.models.read_model(data, "bm1688.bmodel")
    assert (old.chip, old.target, new.target) == ("bm1688", "BM1686", "BM1688")
    g_old, g_new = old.groups()[0], new.groups()[0]
    assert [r.name for r in old.records(g_old)] == [r.name for r in new.records(g_new)]
    assert len(old.records(g_old)) > 100


def test_a_chip_without_specs_is_listed_not_refused(monkeypatch):
    # decodable is looked up in bmk.isa.chips(): today bm1688 has no specs; tomorrow it may
    m = bmk.load_model(F.RESNET_1688)
    assert m.decodable == (m.chip in bmk.isa.chips())
    monkeypatch.setattr("bmk.isa.chips", lambda: ("bm1684",))
    assert not m.decodable
    with pytest.raises(bmk.ModelError, match=r"resnet50-v2_bm1688_2_int8_sym.bmodel: model is for chip bm1688, "
                                             r"which bmk cannot decode yet \(chips with a decoder: bm1684\)"):
        m.records(m.groups()[0])
    assert [sum(g.counts.values()) for g in m.groups()] == [876, 861]


def test_group_lookup_by_label():
    m = bmk.load_model(F.YOLO_1688_CORE2)
    assert m.group("net0/stage0/subnet0/core1/group0").core == 1
    with pytest.raises(bmk.ModelError, match=r"no command group 'net0/x' \(groups: net0/stage0/subnet0/core0/group0, "):
        m.group("net0/x")


def test_load_model_is_bmk_load_model():
    from bmk.models import load_model
    assert bmk.load_model is load_model


@pytest.mark.parametrize("path", [p for p in F.ALL if p.suffix == ".cvimodel"], ids=lambda p: p.name)
def test_a_cvimodel_group_has_its_buffer_split_per_engine(path):
    """Issue 32.9: g.streams of a cvimodel group was {}, so `bmk.decode(m.chip, g.streams)` for
    every group decoded nothing on CV18xx models. Each engine's stream holds that engine's
    descriptors of g.cmdbuf, in their order, byte for byte."""
    m = bmk.load_model(path)
    for g in m.groups():
        whole = bmk.decode(m.chip, g.cmdbuf)
        split = bmk.decode(m.chip, g.streams)
        assert len(split) == len(whole) and set(g.streams) == {r.engine for r in whole}
        for engine in g.streams:
            assert [r.fields for r in split if r.engine == engine] == [r.fields for r in whole if r.engine == engine]
