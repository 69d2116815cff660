"""Every group of every shared model whose chip bmk decodes: decoding gives the file's own
bdc_num/gdma_num, re-encoding gives the same bytes, and the streams are the golden ones."""
import pathlib
from collections import Counter

import pytest

import bmk
from bmk.models.chips import decodable
from bmk.models.decoding import model_spec, split_engines
from tests.models import files as F


def _decodable_groups():
    out = []
    for path in F.ALL:
        m = bmk.load_model(path)
        out += [pytest.param(path, g.label, id=f"{path.name}:{g.label}") for g in m.groups() if decodable(m.chip)]
    return out


GROUPS = _decodable_groups()
GOLDEN = pathlib.Path(__file__).parent.parent / "golden"


def test_the_decodable_files_are_those_of_chips_with_specs():
    names = {p.values[0].name for p in GROUPS}
    assert {F.RETINAFACE.name, F.FACE_DETECTION.name, F.YOLO_1684.name, F.YOLO_1684X.name, F.YUV2RGB.name} <= names
    for path in F.ALL:
        m = bmk.load_model(path)
        assert (path.name in names) == (m.chip in bmk.isa.chips())


@pytest.mark.parametrize("path, label", GROUPS)
def test_group_decodes_to_the_files_counts_and_back_to_its_bytes(path, label):
    m = bmk.load_model(path)
    g = m.group(label)
    if g.cmdbuf is not None:
        records = m.records(g)
        assert records == bmk.decode(m.chip, g.cmdbuf)
        assert bmk.encode(m.chip, records) == g.cmdbuf
        return
    spec = bmk.isa.load_chip(m.chip)
    known, unknown = split_engines(spec, g)     # e.g. a HAU stream of a chip whose specs lack that engine
    assert set(known) >= set(g.counts) and not set(unknown) & {"tiu", "gdma"}
    streams = {e: g.streams[e] for e in known}
    own = model_spec(m)                         # the build's wait mask orders the streams (BM1690's older builds)
    records = m.records(g) if not unknown else bmk.decode(own, streams)
    assert records == bmk.decode(own, streams)
    counts = Counter(r.engine for r in records)
    for engine, n in g.counts.items():
        assert counts[spec.engine(engine).name] == n, engine
    back = bmk.encode(m.chip, records, raw=True)
    assert {e: back.get(spec.engine(e).name, b"") for e in known} == streams


@pytest.mark.parametrize("path, name", [(F.YOLO_1684, "bm1684/yolov5s_bm1684_f32"),
                                        (F.YOLO_1684X, "bm1684x/yolov5s_bm1684x_int8_sym")])
def test_the_golden_streams_are_these_models_streams(path, name):
    streams = bmk.load_model(path).groups()[0].streams
    for engine, data in streams.items():
        golden = (GOLDEN / f"{name}.{engine}.bin").read_bytes()
        # the goldens were cut at the end command; the model's stream keeps its zero padding
        assert data[:len(golden)] == golden and not any(data[len(golden):]), engine


@pytest.mark.parametrize("path", [F.RETINAFACE, F.FACE_DETECTION])
def test_every_global_gdma_address_is_in_the_coefficients_or_the_neuron_memory(path):
    """bmodel-format.md: weights at CoeffMem.address, activations from ctx_addr; the commands
    carry these absolute device addresses (what run relies on to place data)."""
    m = bmk.load_model(path)
    st = m.nets[0].stages[0]
    spec = bmk.isa.load_chip(m.chip)
    glob, fmt = spec.space("global"), spec.engine("gdma").format
    regions = [(st.coeff.address, st.coeff.address + st.coeff.size),
               (st.neuron.address, st.neuron.address + st.neuron.size)]
    seen = Counter()
    for r in m.records(m.groups()[0]):
        if r.engine != "gdma":
            continue
        for side in ("src", "dst"):
            a = fmt.compose(f"{side}_addr", r.fields)
            if glob.base <= a < glob.base + glob.size:
                inside = [k for k, (lo, hi) in enumerate(regions) if lo <= a < hi]
                assert inside, hex(a)
                seen[inside[0]] += 1
    assert seen[0] and seen[1]        # both regions used
