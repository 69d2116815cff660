"""bmk lint's address and lane rules (bmk/models/lint_addresses.py): a mutated copy of a real
BM1684X model (tests/models/bm1684x/cls_attribute_face_112_112_INT8_bm1684x.bmodel, real weights:
its coefficient memory is recorded) with one DMA operand moved gives exactly one finding each.

- address: a global load's source moved 64 bytes past the end of the neuron memory (the region
  that ends highest), where no region of the stage lies; or to the neuron memory's last byte, so
  that the load runs past its end;
- lanes: a local destination moved to the last byte of NPU 0's lane, so its channels run past it;
  a TIU result (res0_addr) moved there likewise.
"""
import bmk
from bmk.isa import load_chip
from bmk.models.lint import lint
from tests.models import files as F

SOURCE = F.FACE_ATTR_1684X


def _mutated(pick, move, engine="gdma"):
    """(the mutated file's bytes, the group, the command's index in its gdma stream, the new address):
    the first gdma command `pick(spec, fmt, record)` accepts gets `move(...)`'s address on the side pick names."""
    data = bytearray(SOURCE.read_bytes())
    m = bmk.models.read_model(bytes(data), "mutant.bmodel")
    spec = load_chip(m.chip)
    st = m.nets[0].stages[0]
    g = next(iter(m.groups()))
    recs = [r for r in m.records(g) if r.engine == engine]
    blob = g.parts[engine]
    assert bmk.encode(m.chip, recs, raw=True)[engine] == blob.read(bytes(data))     # re-encoding is exact
    i, side = next((i, s) for i, r in enumerate(recs) for s in (pick(spec, spec.fmt(engine, r.cls), r),) if s)
    r = recs[i]
    fmt = spec.fmt(engine, r.cls)
    to = move(spec, st, r)
    moved = fmt.split(side, to) if side in dict(fmt.composed) else {side: to}
    recs[i] = type(r)(r.engine, r.cls, r.kind, {**r.fields, **moved})
    stream = bmk.encode(m.chip, recs, raw=True)[engine]
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
        return spec.space("local").base + spec.space("local").lane_bytes - 1    # NPU 0's last lane byte
    data, g, i, to = _mutated(local_dst, last_byte)
    found = lint(bmk.models.read_model(data, "mutant.bmodel"))
    assert [(f.rule, f.group, f.engine, f.index) for f in found] == [("lanes", g.label, "gdma", i)]
    assert found[0].why.startswith(f"dma.tensor dst_addr 0x{to:x} ends at lane byte ")
    assert found[0].why.endswith("past the 262144-byte lane of local memory (64 NPUs)")


def test_a_tiu_result_moved_past_its_lane():
    def res0(spec, fmt, r):
        # a result of more than one byte per lane: at the lane's last byte it cannot fit
        return "res0_addr" if "res0_prec" in r.fields and all(r.fields.get(f"res0_{d}") for d in "nchw") \
            and r.fields["res0_h"] * r.fields["res0_w"] > 1 \
            and "res0_str" in r.fields and spec.member("tiu", "res0_str", r.fields["res0_str"], r.cls) == "aligned" \
            else None

    data, g, i, to = _mutated(res0, lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tiu")
    found = lint(bmk.models.read_model(data, "mutant.bmodel"))
    assert [(f.rule, f.group, f.engine, f.index) for f in found] == [("lanes", g.label, "tiu", i)]
    assert to == 262143
    head, tail = found[0].why.split(" ends at lane byte ")
    assert head.endswith(" res0_addr 0x3ffff") and int(tail.split(",")[0]) > 262144
    assert tail.endswith(", past the 262144-byte lane of local memory (64 NPUs)")


def test_a_tiu_result_that_just_fits_its_lane_is_clean():
    def one_byte(spec, fmt, r):          # one int8 element per channel: a byte per lane, the lane's last one
        return "res0_addr" if "res0_str" in r.fields and r.fields["res0_prec"] == spec.code("tiu", "res0_prec", "int8",
                                                                                               r.cls) \
            and (r.fields["res0_n"], r.fields["res0_h"], r.fields["res0_w"]) == (1, 1, 1) and r.fields["res0_c"] \
            and spec.member("tiu", "res0_str", r.fields["res0_str"], r.cls) == "aligned" else None

    data, g, i, to = _mutated(one_byte, lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tiu")
    assert to == 262143
    assert lint(bmk.models.read_model(data, "mutant.bmodel")) == []
