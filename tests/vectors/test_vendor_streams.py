"""The vendor's own bytes: both real yolov5s streams of both new chips decode, carry the
vendor's field values and op names, merge in the vendor's program order and re-encode to
the same bytes (raw and re-framed as cmd_hdr_t)."""
import pytest

import bmk
from bmk.isa import load_chip
from tests.vectors import vendor

CHIPS = vendor.CHECKED          # the vendor-checked layer: streams with their .reg.test and .mlir.test
# bm1684: the vendor disassembler prints a description per tsk_typ (mlir.test); bmk's kinds
# are the vendor's per-eu op names, whose prefix says the same.
BM1684_DESCRIPTION = {"convolution neuron": ("conv",), "depthwise or pooling": ("pord",),
                      "md scalar": ("md_scalar.",), "md sfu": ("md_sfu.",), "table lookup": ("lut",),
                      "tensor arithmetic": ("arith.",), "DMA tensor": ("dma.tensor",)}


@pytest.fixture(scope="module", params=CHIPS)
def decoded(request):
    chip = request.param
    return chip, {e: bmk.decode(chip, {e: data}) for e, data in vendor.streams(chip).items()}


def test_every_command_decodes_with_unbroken_ids(decoded):
    chip, per_engine = decoded
    spec = load_chip(chip)
    counts = {e: len(r) for e, r in per_engine.items()}
    assert counts == {"bm1684": {"tiu": 1085, "gdma": 158}, "bm1684x": {"tiu": 430, "gdma": 142}}[chip]
    for engine, recs in per_engine.items():
        own = spec.engine(engine).own_id
        assert [r.fields[own] for r in recs] == list(range(1, len(recs) + 1))
        assert all(r.kind is not None and r.stream == engine for r in recs)
        end = spec.engine(engine).stream.end
        if end:
            assert recs[-1].kind == end and all(r.kind != end for r in recs[:-1])


def test_reg_test_blocks_match_field_by_field(decoded):
    chip, per_engine = decoded
    blocks = vendor.reg_blocks(chip)
    assert len(blocks) == {"bm1684": 7, "bm1684x": 17}[chip]
    for engine, cmd_id, name, fields in blocks:
        rec = per_engine[engine][cmd_id - 1]
        assert {k: rec.fields[k] for k in fields} == fields, (engine, cmd_id)
        if chip == "bm1684x":
            assert rec.kind == name


def test_mnemonics_and_program_order_follow_the_vendor_disassembler(decoded):
    chip, per_engine = decoded
    merged = bmk.decode(chip, vendor.streams(chip))
    spec = load_chip(chip)
    listed = [(spec.engine(r.engine).name, r.fields[spec.engine(r.engine).own_id], r.kind) for r in merged
              if r.kind not in ("sys.end", "dma.sys")]
    ops = vendor.mlir_ops(chip)
    assert [(e, i) for e, i, _ in listed] == [(e, i) for e, i, _ in ops]
    for (e, i, kind), (_, _, vendor_name) in zip(listed, ops):
        if chip == "bm1684x":
            assert kind == vendor_name, (e, i)
        else:
            assert kind.startswith(BM1684_DESCRIPTION[vendor_name]), (e, i, kind, vendor_name)
    assert merged[0].name.startswith("gdma.") and merged[0].stream == "gdma"


def test_raw_round_trip_and_cmd_hdr_reframing(decoded):
    chip, _ = decoded
    streams = vendor.streams(chip)
    recs = bmk.decode(chip, streams)
    assert bmk.encode(chip, recs, raw=True) == streams
    framed = bmk.encode(chip, recs)
    again = bmk.decode(chip, framed)
    assert [(r.engine, r.cls, r.kind, r.fields) for r in again] == [(r.engine, r.cls, r.kind, r.fields) for r in recs]
    assert bmk.encode(chip, again, raw=True) == streams
    assert bmk.encode(chip, again) == framed
