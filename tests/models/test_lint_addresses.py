"""bmk lint's address and lane rules (bmk/models/lint_addresses.py): a mutated copy of a real
model (tests/models/bm1684x/cls_attribute_face_112_112_INT8_bm1684x.bmodel, real weights: its
coefficient memory is recorded; a few cases take another small model of tests/models for a kind
this one lacks) with one operand moved gives exactly one finding each.

- address: a global load's source moved 64 bytes past the end of the neuron memory (the region
  that ends highest), where no region of the stage lies; or to the neuron memory's last byte, so
  that the load runs past its end; likewise a dma.matrix source (cls_sound_babay_cry) and a
  dma.gather source (topformer_seg_motion); a load's source moved to static memory's last byte
  (it runs past static memory) or just past it (no memory of the chip's map); a tsbc.s_distribute
  static vector moved to static memory's last byte; a CV18xx TDMA load (cls_keypoint_hand_gesture
  cvimodel) from the weights (base register 1) moved to their last byte;
- lanes: a local destination moved to the last byte of NPU 0's lane, so its channels run past it;
  a TIU result (res0_addr) and an arith source (opd0_addr) moved there likewise; a CV18xx load's
  local destination likewise; a conv kernel placed to end exactly at its lane's end (clean) and one
  byte further (a finding); mm2.nn (BM1684X) and mm.normal (BM1688) matrices moved past the lane;
  a BM1684 int8 arith result (4N words) placed to end exactly at its lane's end (no new finding)
  and one byte further (one), a BM1684 conv result, arith source and conv and pooling inputs
  moved past the lane; CV181X
  results (int8 and bf16, eu-aligned) placed to end exactly at the lane's end (clean) and one
  element further (a finding), and one with explicit strides moved past the lane; a CV181X conv's
  input and kernel and a bf16 subtraction's operand moved past the lane.
"""
import pytest

import bmk
from bmk.isa import load_chip
from bmk.models.lint import lint
from tests.models import files as F

SOURCE = F.FACE_ATTR_1684X


def _mutated(pick, move, engine="gdma", source=SOURCE, also=None, unknown=False):
    """(the mutated file's bytes, the group, the command's index in its `engine` stream, the new address):
    the first command `pick(spec, fmt, record)` accepts gets `move(...)`'s address on the side pick names
    (and the fields `also(record)` gives; `unknown`: encoded from its fields alone, as no kind)."""
    data = bytearray(source.read_bytes())
    m = bmk.models.read_model(bytes(data), "mutant.bmodel")
    spec = load_chip(m.chip)
    st = m.nets[0].stages[0]
    g = next(iter(m.groups()))
    recs = [r for r in m.records(g) if r.engine == engine]
    i, side = next((i, s) for i, r in enumerate(recs) for s in (pick(spec, spec.fmt(engine, r.cls), r),) if s)
    r = recs[i]
    fmt = spec.fmt(engine, r.cls)
    to = move(spec, st, r)
    moved = fmt.split(side, to) if side in dict(fmt.composed) else {side: to}
    new = type(r)(r.engine, r.cls, None if unknown else r.kind, {**r.fields, **moved, **(also(r) if also else {})})
    if g.cmdbuf_blob is not None:       # a cvimodel's one framed buffer: swap the descriptor's bytes in place
        old_bytes, new_bytes = (bmk.encode(m.chip, [x], raw=True)[engine] for x in (r, new))
        at = g.cmdbuf_blob.offset + g.cmdbuf.index(old_bytes)
        assert g.cmdbuf.count(old_bytes) == 1 and len(new_bytes) == len(old_bytes)
        data[at:at + len(old_bytes)] = new_bytes
        return bytes(data), g, i, to
    blob = g.parts[engine]
    assert bmk.encode(m.chip, recs, raw=True)[engine] == blob.read(bytes(data))     # re-encoding is exact
    recs[i] = new
    stream = bmk.encode(m.chip, recs, raw=True)[engine]
    assert len(stream) == blob.size
    data[blob.offset:blob.offset + blob.size] = stream
    return bytes(data), g, i, to


def _one(data, rule, g, engine, i, name="mutant.bmodel", source=None):
    """The one finding of a mutant, checked to be `rule` at (g, engine, i); with `source`, the one
    finding the source file does not have (a vendor file with known findings)."""
    found = lint(bmk.models.read_model(data, name))
    if source is not None:
        known = lint(bmk.load_model(source))
        assert known and all(f in found for f in known)
        found = [f for f in found if f not in known]
    assert [(f.rule, f.group, f.engine, f.index) for f in found] == [(rule, g.label, engine, i)]
    return found[0].why


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


def _arith_source(spec, fmt, r):
    """opd0 of an arith command of more than one byte per lane, a tensor in the aligned layout."""
    f = r.fields
    return "opd0_addr" if (r.kind or "").startswith("arith.") and r.kind not in ("arith.copyMb", "arith.euIdxGen",
                                                                                "arith.npuIdxGen") \
        and not f.get("opd0_const") and f.get("res0_h", 0) * f.get("res0_w", 0) > 1 and "opd0_str" in f \
        and spec.member("tiu", "opd0_str", f["opd0_str"], r.cls) == "aligned" else None


def test_a_tiu_source_moved_past_its_lane():
    data, g, i, to = _mutated(_arith_source, lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tiu")
    why = _one(data, "lanes", g, "tiu", i)
    head, tail = why.split(" ends at lane byte ")
    assert head.startswith("arith.") and head.endswith(" opd0_addr 0x3ffff") and int(tail.split(",")[0]) > 262144
    assert tail.endswith(", past the 262144-byte lane of local memory (64 NPUs)")


def test_a_static_vector_moved_past_static_memory():
    # tsbc.s_distribute reads res0_c elements at opd0_addr, a BM1684X static-memory address
    data, g, i, to = _mutated(lambda spec, fmt, r: "opd0_addr" if r.kind == "tsbc.s_distribute" else None,
                              lambda spec, st, r: spec.space("static").base + spec.space("static").size - 1,
                              engine="tiu")
    why = _one(data, "address", g, "tiu", i)
    assert to == 0x9003fff
    assert why.startswith("tsbc.s_distribute opd0_addr 0x9003fff: its vector [0x9003fff, 0x")
    assert why.endswith(") leaves the static memory [0x9000000, 0x9004000)")


def _global_src(kind):
    return lambda spec, fmt, r: "src_addr" if r.kind == kind and _space(spec, fmt, r, "src_addr") == "global" \
        else None


def test_a_dma_moved_to_the_end_of_static_memory():
    data, g, i, to = _mutated(_global_src("dma.tensor"),
                              lambda spec, st, r: spec.space("static").base + spec.space("static").size - 1)
    why = _one(data, "address", g, "gdma", i)
    assert why.startswith("dma.tensor src_addr 0x9003fff runs to 0x")
    assert why.endswith(", past the end of the static memory [0x9000000, 0x9004000)")


def test_a_dma_address_in_no_memory():
    # BM1684X: nothing lies between static memory (to 0x9004000) and L2 SRAM (from 0x10000000)
    data, g, i, to = _mutated(_global_src("dma.tensor"), lambda spec, st, r: 0x9004000)
    assert _one(data, "address", g, "gdma", i) == \
        "dma.tensor src_addr 0x9004000 lies in none of the chip's memories (the spec's memory map)"


def test_a_matrix_moved_to_the_end_of_its_region():
    def wide(spec, fmt, r):         # a global (1, 128) fp16 source: at the last byte it cannot fit
        f = r.fields
        return _global_src("dma.matrix")(spec, fmt, r) if f.get("src_hsize", 0) * f.get("src_wsize", 0) > 1 else None
    data, g, i, to = _mutated(wide, lambda spec, st, r: st.neuron.address + st.neuron.size - 1,
                              source=F.BABY_CRY_1684X)
    why = _one(data, "address", g, "gdma", i)
    start = to + 1 - _neuron(F.BABY_CRY_1684X)
    assert why == f"dma.matrix src_addr 0x{to:x} runs to 0x{to + 128 * 2:x}, past the end of the neuron memory " \
        f"[0x{start:x}, 0x{to + 1:x})"


def test_a_gather_source_moved_to_the_end_of_its_region():
    data, g, i, to = _mutated(_global_src("dma.gather"), lambda spec, st, r: st.neuron.address + st.neuron.size - 1,
                              source=F.TOPFORMER_1684X)
    why = _one(data, "address", g, "gdma", i)
    assert why.startswith(f"dma.gather src_addr 0x{to:x} runs to 0x")
    assert why.endswith(", past the end of the neuron memory [0x%x, 0x%x)" % (to + 1 - _neuron(F.TOPFORMER_1684X),
                                                                              to + 1))


def _neuron(path):
    return bmk.load_model(path).nets[0].stages[0].neuron.size


def _tdma(kind, side, direction):
    return lambda spec, fmt, r: f"{side}_addr" if r.kind == kind and r.fields["sys_dtype"] == 0 \
        and spec.member("tdma", "trans_dir", r.fields["trans_dir"], r.cls) == direction \
        and r.fields[f"{side}_base_reg_sel"] == 1 else None


def test_a_cv181x_load_moved_to_the_end_of_the_weights():
    # base register 1 selects the weights: the load's offset moved to their last byte
    data, g, i, to = _mutated(_tdma("load", "src", "g2l"), lambda spec, st, r: st.coeff.size - 1, engine="tdma",
                              source=F.HAND_181X)
    why = _one(data, "address", g, "tdma", i, "mutant.cvimodel")
    coeff = bmk.load_model(F.HAND_181X).nets[0].stages[0].coeff
    assert why.startswith(f"load src_addr 0x{coeff.size - 1:x} runs to 0x1")
    assert why.endswith(f", past the end of the coefficients [0x10000000000, 0x{(1 << 40) + coeff.size:x})")


def test_a_cv181x_load_moved_past_its_lane():
    data, g, i, to = _mutated(lambda spec, fmt, r: "dst_addr" if r.kind == "load" and r.fields["sys_dtype"] == 0
                              and r.fields["dst_h"] * r.fields["dst_w"] > 1 else None,
                              lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tdma",
                              source=F.HAND_181X)
    why = _one(data, "lanes", g, "tdma", i, "mutant.cvimodel")
    assert why.startswith("load dst_addr 0x7fff ends at lane byte ")
    assert why.endswith(", past the 32768-byte lane of local memory (8 NPUs)")


@pytest.mark.parametrize("prefix, source", [("conv.", SOURCE), ("pord.", SOURCE), ("sfu.", F.YOLO_1690)])
def test_a_kinds_input_moved_past_its_lane(prefix, source):
    # a convolution's or pooling's input (n, opd0_c or res0_c, opd0_h, opd0_w), an sfu's (the result's shape)
    def wide(spec, fmt, r):
        f = r.fields
        hw = f.get("opd0_h", 0) * f.get("opd0_w", 0) if prefix != "sfu." else f.get("res0_h", 0) * f.get("res0_w", 0)
        return "opd0_addr" if (r.kind or "").startswith(prefix) and hw > 1 and not f.get("opd0_const") else None
    data, g, i, to = _mutated(wide, lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tiu",
                              source=source)
    why = _one(data, "lanes", g, "tiu", i)
    head, tail = why.split(" ends at lane byte ")
    lane = load_chip(bmk.load_model(source).chip).space("local").lane_bytes
    assert head.startswith(prefix) and head.endswith(f" opd0_addr 0x{lane - 1:x}") and int(tail.split(",")[0]) > lane
    assert tail.endswith(f", past the {lane}-byte lane of local memory (64 NPUs)")


def test_a_broadcast_source_moved_to_the_end_of_the_coefficients():
    # BM1684X's dma.tensor.broadcast of a (1, 1, 1, W) weight row to 64 NPUs, stride_enable 0: its
    # source is contiguous over (N, 1, H, W) whatever src_csize says
    data, g, i, to = _mutated(lambda spec, fmt, r: _global_src("dma.tensor.broadcast")(spec, fmt, r)
                              if r.fields["src_wsize"] > 1 and not r.fields["stride_enable"] else None,
                              lambda spec, st, r: st.coeff.address + st.coeff.size - 1)
    why = _one(data, "address", g, "gdma", i)
    assert why.startswith(f"dma.tensor.broadcast src_addr 0x{to:x} runs to 0x")
    assert why.endswith(f", past the end of the coefficients [0x{to + 1 - _coeff(SOURCE):x}, 0x{to + 1:x})")


def _coeff(path):
    return bmk.load_model(path).nets[0].stages[0].coeff.size


def test_a_bm1684_4n_destination_past_its_lane():
    # face_detection_int8_b4's int8 loads into local memory are plain (chw_copy 1: dst takes src's
    # sizes); one made 4N (chw_copy 0 with those sizes: a batch a byte of each 32-bit word, strides in
    # words) and moved so that a plain reading of its strides would just fit NPU 0's lane: its words
    # run past it
    def int8_load(spec, fmt, r):
        f = r.fields
        return "dst_addr" if r.kind == "dma.tensor" and f["chw_copy"] and f["stride_enable"] \
            and _space(spec, fmt, r, "dst_addr") == "local" and f["src_csize"] <= 64 \
            and spec.member("gdma", "src_data_format", f["src_data_format"]) == "int8" else None

    def plain_fit(spec, st, r):         # from NPU 0: its channels one a lane, in one channel slot
        f = r.fields
        span = sum((f[f"src_{d}size"] - 1) * f[f"dst_{d}stride"] for d in "nhw") + 1
        return spec.space("local").base + spec.space("local").lane_bytes - span

    def four_n(r):
        return {"chw_copy": 0, **{f"dst_{d}size": r.fields[f"src_{d}size"] for d in "nchw"}}

    data, g, i, to = _mutated(int8_load, plain_fit, source=F.FACE_INT8, also=four_n)
    why = _one(data, "lanes", g, "gdma", i, source=F.FACE_INT8)
    assert why.startswith(f"dma.tensor dst_addr 0x{to:x} ends at lane byte ")
    assert why.endswith(", past the 524288-byte lane of local memory (64 NPUs)")
    plain, _, _, _ = _mutated(int8_load, plain_fit, source=F.FACE_INT8)
    assert lint(bmk.models.read_model(plain, "mutant.bmodel")) == lint(bmk.load_model(F.FACE_INT8))    # it fits


def test_a_tdma_descriptor_of_no_known_kind_is_read_by_its_direction():
    # spec_func 2 names no instruction: the (matrix) descriptor decodes with no kind, its sides still read by
    # trans_dir and sys_dtype
    data, g, i, to = _mutated(lambda spec, fmt, r: "dst_addr" if r.kind == "load" and r.fields["sys_dtype"] == 0
                              and r.fields["dst_h"] * r.fields["dst_w"] > 1 else None,
                              lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tdma",
                              source=F.HAND_181X, also=lambda r: {"spec_func": 2, "sys_dtype": 1}, unknown=True)
    m = bmk.models.read_model(data, "mutant.cvimodel")
    assert [r.kind for r in m.records(next(iter(m.groups()))) if r.engine == "tdma"][i] is None
    why = _one(data, "lanes", g, "tdma", i, "mutant.cvimodel")
    assert why.startswith("None dst_addr 0x7fff ends at lane byte ")


def _conv_weights(spec, fmt, r):
    """opd1 (the kernel) of an int8 conv.normal read from local memory."""
    f = r.fields
    return "opd1_addr" if r.kind == "conv.normal" and not f.get("opd1_const") \
        and spec.member("tiu", "opd0_prec", f["opd0_prec"], r.cls) == "int8" else None


def _kernel_lane_bytes(spec, f):
    """The bytes a conv kernel takes in each lane, from seed 001's weight layout written out: IC in
    blocks of q = ic_parallel_int8 side by side per tap (int8), OC spread over the NPUs."""
    q = spec.param("ic_parallel_int8")
    blocks = -(-f["opd0_c"] // q)
    return -(-f["res0_c"] // spec.param("npu_num")) * blocks * f["opd1_h"] * f["opd1_w"] * q


@pytest.mark.parametrize("spare", [0, -1])
def test_a_conv_kernel_at_the_end_of_its_lane(spare):
    """A kernel that ends exactly at the lane's end lints clean; one byte further is a finding."""
    lane = load_chip("bm1684x").space("local").lane_bytes
    data, g, i, to = _mutated(_conv_weights, lambda spec, st, r: lane - _kernel_lane_bytes(spec, r.fields) + (
        -spare), engine="tiu")
    if spare == 0:
        assert lint(bmk.models.read_model(data, "mutant.bmodel")) == []
        return
    why = _one(data, "lanes", g, "tiu", i)
    assert why == f"conv.normal opd1_addr 0x{to:x} ends at lane byte {lane + 1}, past the {lane}-byte lane of " \
        f"local memory (64 NPUs)"


def _matrix(kind, name):
    return lambda spec, fmt, r: f"{name}_addr" if r.kind == kind and not r.fields.get(f"{name}_const") else None


@pytest.mark.parametrize("kind, name, source", [("mm2.nn", "opd1", SOURCE), ("mm2.nn", "opd0", SOURCE),
                                                ("mm.normal", "opd1", F.FACE_ATTR_1688),
                                                ("mm.normal", "opd0", F.FACE_ATTR_1688)])
def test_a_matrix_operand_moved_past_its_lane(kind, name, source):
    data, g, i, to = _mutated(_matrix(kind, name), lambda spec, st, r: spec.space("local").lane_bytes - 1,
                              engine="tiu", source=source)
    head, tail = _one(data, "lanes", g, "tiu", i).split(" ends at lane byte ")
    assert head == f"{kind} {name}_addr 0x{to:x}" and int(tail.split(",")[0]) > to + 1


def _bm1684_result(kind_prefix, prec):
    """res0 of a bm1684 command of kind_prefix with a result of prec in the aligned layout."""
    def pick(spec, fmt, r):
        f = r.fields
        return "res0_addr" if (r.kind or "").startswith(kind_prefix) and not f.get("opt_res0_const") \
            and spec.member("tiu", "opt_res0_prec", f["opt_res0_prec"]) == prec \
            and spec.member("tiu", "short_res0_str", f["short_res0_str"]) == "aligned" \
            and f["res0_h"] * f["res0_w"] > 1 else None
    return pick


def _aligned_4n_lane_bytes(spec, f, start):
    """Seed 003's aligned layout of an int8 tensor from NPU start: 4N words (four batches a word),
    each channel's h * w words from a channel_align_bytes boundary, channels npu_num to a slot."""
    n, c, h, w = (f[f"res0_{d}"] for d in "nchw")
    cs = -(-h * w * 4 // spec.param("channel_align_bytes")) * spec.param("channel_align_bytes") // 4
    slots = -(-(start + c) // spec.param("npu_num"))
    return 4 * ((-(-n // 4) * slots - 1) * cs + h * w)


@pytest.mark.parametrize("spare", [0, 1])
def test_a_bm1684_int8_result_at_the_end_of_its_lane(spare):
    """face_detection_int8_b4's first aligned int8 arith result placed to end exactly at NPU 0's
    lane end lints as the source does; one byte further is one more finding."""
    def place(spec, st, r):
        return spec.space("local").base + spec.space("local").lane_bytes - _aligned_4n_lane_bytes(
            spec, r.fields, 0) + spare
    data, g, i, to = _mutated(_bm1684_result("arith.", "int8"), place, engine="tiu", source=F.FACE_INT8)
    if not spare:
        assert lint(bmk.models.read_model(data, "mutant.bmodel")) == lint(bmk.load_model(F.FACE_INT8))
        return
    why = _one(data, "lanes", g, "tiu", i, source=F.FACE_INT8)
    assert why.startswith("arith.") and f" res0_addr 0x{to:x} ends at lane byte 524289, past the 524288-byte " in why


@pytest.mark.parametrize("prefix, name", [("conv", "res0_addr"), ("arith.", "opd0_addr"), ("conv", "opd0_addr"),
                                          ("pord.", "opd0_addr")])
def test_a_bm1684_operand_moved_past_its_lane(prefix, name):
    def pick(spec, fmt, r):
        f = r.fields
        return name if (r.kind or "").startswith(prefix) and not f.get(f"opt_{name[:4]}_const") \
            and not f.get(f"{name[:4]}_neq1") and f["res0_h"] * f["res0_w"] > 1 else None
    data, g, i, to = _mutated(pick, lambda spec, st, r: spec.space("local").base + spec.space("local").lane_bytes - 1,
                              engine="tiu", source=F.RETINAFACE)
    why = _one(data, "lanes", g, "tiu", i, source=F.RETINAFACE)
    assert why.startswith(prefix) and f" {name} 0x{to:x} ends at lane byte " in why


def _cv18xx_result(kind, bf16):
    def pick(spec, fmt, r):
        f = r.fields
        return "res0_addr" if r.kind == kind and bool(f["opd_typ"]) == bf16 and f["res0_h"] * f["res0_w"] > 1 \
            and spec.member("tiu", "short_res0_str", f["short_res0_str"]) == "aligned" else None
    return pick


def _aligned_lane_bytes(spec, f, e):
    """cvikernel's eu-aligned layout (tl_default_stride) from NPU 0: each channel's h * w elements of
    e bytes from an eu_num-byte boundary, channels npu_num to a slot, batches one after another."""
    n, c, h, w = (f[f"res0_{d}"] for d in "nchw")
    cs = -(-h * w * e // spec.param("eu_num")) * spec.param("eu_num")
    return (n * -(-c // spec.param("npu_num")) - 1) * cs + h * w * e


@pytest.mark.parametrize("kind, bf16, source", [("avg_pool", False, F.BABY_CRY_181X), ("lut", True, F.HAND_181X)])
@pytest.mark.parametrize("further", [False, True])
def test_a_cv18xx_result_at_the_end_of_its_lane(kind, bf16, source, further):
    """A CV181X TIU result placed to end exactly at NPU 0's lane end lints clean; one element further
    is one finding (an int8 average pool, a bf16 lookup: 2-byte elements, at even addresses)."""
    e = 2 if bf16 else 1

    def place(spec, st, r):
        return spec.space("local").lane_bytes - _aligned_lane_bytes(spec, r.fields, e) + e * further
    data, g, i, to = _mutated(_cv18xx_result(kind, bf16), place, engine="tiu", source=source)
    if not further:
        assert lint(bmk.models.read_model(data, "mutant.cvimodel")) == []
        return
    why = _one(data, "lanes", g, "tiu", i, name="mutant.cvimodel")
    assert why == f"{kind} res0_addr 0x{to:x} ends at lane byte {32768 + e}, past the 32768-byte lane of local " \
        f"memory (8 NPUs)"


def test_a_cv18xx_result_with_its_own_strides_moved_past_its_lane():
    # cls_sound_babay_cry's convolutions write their results with explicit byte strides
    def pick(spec, fmt, r):
        return "res0_addr" if r.kind == "conv" and spec.member("tiu", "short_res0_str", r.fields["short_res0_str"]) \
            == "explicit" and r.fields["res0_h"] * r.fields["res0_w"] > 1 else None
    data, g, i, to = _mutated(pick, lambda spec, st, r: spec.space("local").lane_bytes - 1, engine="tiu",
                              source=F.BABY_CRY_181X)
    head, tail = _one(data, "lanes", g, "tiu", i, name="mutant.cvimodel").split(" ends at lane byte ")
    assert head == f"conv res0_addr 0x{to:x}" and int(tail.split(",")[0]) > 32768


@pytest.mark.parametrize("kind, name, bf16, source", [("conv", "opd0", False, F.BABY_CRY_181X),
                                                      ("conv", "opd1", False, F.BABY_CRY_181X),
                                                      ("sub", "opd0", True, F.HAND_181X)])
def test_a_cv18xx_source_moved_past_its_lane(kind, name, bf16, source):
    # a conv's input and kernel (int8) and a bf16 subtraction's first operand, each moved to the
    # last even byte of NPU 0's lane
    def pick(spec, fmt, r):
        f = r.fields
        spread = spec.member("tiu", f"short_{name}_str", f[f"short_{name}_str"]) != "explicit" or all(
            f[f"{name}_{d}_str"] for d in "hw" if f[f"{name}_{d}"] > 1)           # not a broadcast operand
        return f"{name}_addr" if r.kind == kind and bool(f["opd_typ"]) == bf16 and not f["opt_opd1_const"] \
            and f[f"{name}_h"] * f[f"{name}_w"] > 1 and spread else None
    data, g, i, to = _mutated(pick, lambda spec, st, r: spec.space("local").lane_bytes - 2, engine="tiu",
                              source=source)
    head, tail = _one(data, "lanes", g, "tiu", i, name="mutant.cvimodel").split(" ends at lane byte ")
    assert head == f"{kind} {name}_addr 0x{to:x}" and int(tail.split(",")[0]) > 32768
