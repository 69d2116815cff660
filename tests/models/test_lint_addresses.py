"""bmk lint's address and lane rules (bmk/models/lint_addresses.py): a mutated copy of a real
BM1684X model (tests/models/bm1684x/cls_attribute_face_112_112_INT8_bm1684x.bmodel, real weights:
its coefficient memory is recorded) with one DMA operand moved gives exactly one finding each.

- address: a global load's source moved 64 bytes past the end of the neuron memory (the region
  that ends highest), where no region of the stage lies; or to the neuron memory's last byte, so
  that the load runs past its end;
- lanes: a local destination moved to the last byte of NPU 0's lane, so its channels run past it.
"""
import bmk
from bmk.isa import load_chip
from bmk.models.lint import lint
from tests.models import files as F

SOURCE = F.FACE_ATTR_1684X


def _mutated(pick, move):
    """(the mutated file's bytes, the group, the command's index in its gdma stream, the new address):
    the first gdma command `pick(spec, fmt, record)` accepts gets `move(...)`'s address on the side pick names."""
    data = bytearray(SOURCE.read_bytes())
    m = bmk.models.read_model(bytes(data), "mutant.bmodel")
    spec = load_chip(m.chip)
    st = m.nets[0].stages[0]
    g = next(iter(m.groups()))
    recs = [r for r in m.records(g) if r.engine == "gdma"]
    blob = g.parts["gdma"]
    assert bmk.encode(m.chip, recs, raw=True)["gdma"] == blob.read(bytes(data))     # re-encoding is exact
    i, side = next((i, s) for i, r in enumerate(recs) for s in (pick(spec, spec.fmt("gdma", r.cls), r),) if s)
    r = recs[i]
    fmt = spec.fmt("gdma", r.cls)
    to = move(spec, st, r)
    recs[i] = type(r)(r.engine, r.cls, r.kind, {**r.fields, **fmt.split(side, to)})
    stream = bmk.encode(m.chip, recs, raw=True)["gdma"]
    assert len(stream) == blob.size
    data[blob.offset:blob.offset + blob.size] = stream
    return bytes(data), g, i, to


def _space(spec, fmt, r, side):
    return spec.space_of(fmt.compose(side, r.fields)).name


def test_the_source_is_clean():
    assert lint(bmk.load_model(SOURCE)) == []


def test_a_command_address_moved_outside_its_region():
    data, g, i, to = _mutated(
        lambda spec, fmt, r: "src_addr" if r.kind == "dma.tensor" and _space(spec, fmt, r, "src_addr") == "global"
        else None,
        lambda spec, st, r: st.neuron.address + st.neuron.size + 64)
    found = lint(bmk.models.read_model(data, "mutant.bmodel"))
    assert [(f.rule, f.group, f.engine, f.index) for f in found] == [("address", g.label, "gdma", i)]
    assert to == 0x100094040
    assert found[0].why == "dma.tensor src_addr 0x100094040 leaves the neuron memory [0x100085000, 0x100094000)"


def test_a_command_address_moved_to_the_end_of_its_region():
    data, g, i, to = _mutated(
        lambda spec, fmt, r: "src_addr" if r.kind == "dma.tensor" and _space(spec, fmt, r, "src_addr") == "global"
        else None,
        lambda spec, st, r: st.neuron.address + st.neuron.size - 1)
    found = lint(bmk.models.read_model(data, "mutant.bmodel"))
    assert [(f.rule, f.group, f.engine, f.index) for f in found] == [("address", g.label, "gdma", i)]
    assert found[0].why.startswith("dma.tensor src_addr 0x100093fff runs to 0x")
    assert found[0].why.endswith(", past the end of the neuron memory [0x100085000, 0x100094000)")


def test_a_local_operand_moved_past_its_lane():
    def local_dst(spec, fmt, r):
        return "dst_addr" if r.kind == "dma.tensor" and _space(spec, fmt, r, "dst_addr") == "local" else None

    def last_byte(spec, st, r):
        local = next(m for m in spec.memory if m.name == "local")
        return local.base + local.lane_bytes - 1            # NPU 0's last lane byte: no room for a second element
    data, g, i, to = _mutated(local_dst, last_byte)
    found = lint(bmk.models.read_model(data, "mutant.bmodel"))
    assert [(f.rule, f.group, f.engine, f.index) for f in found] == [("lanes", g.label, "gdma", i)]
    assert found[0].why.startswith(f"dma.tensor dst_addr 0x{to:x} ends at lane byte ")
    assert found[0].why.endswith("past the 262144-byte lane of local memory (64 NPUs)")
