"""Family names (issue 28 item 1): every chip of the bm1684x family names the same register alike.

tools/facts/families.json renames bm1688's (bm1690's, cv184x's) fields and kinds to bm1684x's
(opt_opd0_prec -> opd0_prec, arith.select_great -> arith.selectGreat); the spec keeps the vendor's
spelling as `vendor`: listings print it, the assembler reads both, records carry the family name."""
import json

import pytest

import bmk
from bmk.encoders.framing import Record
from bmk.errors import SpecError
from bmk.isa import load_chip
from bmk.isa.spec import build_format
from bmk.text import asm
from tests.models import files as F
from tests.tool_loader import ROOT, load_tool

SPECGEN = load_tool("specgen")
FAMILY = load_tool("family_names")


def _ar_select_great(chip):
    fmt = chip.engine("tiu").cls("AR")
    ins = fmt.instruction("arith.selectGreat")
    f = dict(fmt.defaults, **dict(fmt.keys[0]), **dict(ins.match))
    f.update(opd0_prec=chip.code("tiu", "opd0_prec", "fp16"), res0_str=3)
    return Record("tiu", "AR", ins.name, f)


def test_bm1688_record_has_family_names_and_the_listing_the_vendors():
    chip = load_chip("bm1688")
    ins = chip.engine("tiu").cls("AR").instruction("arith.select_great")       # found by either spelling
    assert (ins.name, ins.vendor) == ("arith.selectGreat", "arith.select_great")
    fld = chip.field("tiu", "opd0_prec", "AR")
    assert (fld.name, fld.vendor, fld.spelling) == ("opd0_prec", "opt_opd0_prec", "opt_opd0_prec")
    line = asm.format_record(chip, _ar_select_great(chip))
    assert line.startswith("tiu.arith.select_great ")
    assert " opt_opd0_prec=fp16" in line and " short_res0_str=free" in line   # a layout code by its name, as prec
    assert " opd0_prec=" not in line and " res0_str=" not in line


@pytest.mark.parametrize("text", [
    "tiu.arith.select_great opt_opd0_prec=fp16 short_res0_str=3",       # the vendor's spelling
    "tiu.arith.selectGreat opd0_prec=fp16 res0_str=3",                  # the family's
    "tiu.arith.select_great opd0_prec=fp16 short_res0_str=3",           # mixed
])
def test_the_assembler_reads_both_spellings(text):
    chip = load_chip("bm1688")
    (rec,) = asm.parse(f".chip bm1688\n{text}\n").records
    want = _ar_select_great(chip)
    assert rec.kind == "arith.selectGreat"
    assert rec.fields == want.fields
    assert bmk.encode("bm1688", [rec], raw=True) == bmk.encode("bm1688", [want], raw=True)


def test_both_spellings_of_one_field_on_a_line_are_refused():
    with pytest.raises(bmk.BmkError, match="opt_opd0_prec and opd0_prec name the same field"):
        asm.parse(".chip bm1688\ntiu.arith.select_great opt_opd0_prec=fp16 opd0_prec=fp16\n")


def test_decoding_a_bm1688_model_gives_family_names():
    m = bmk.load_model(F.YOLO_1688)
    (g,) = [g for g in m.groups()][:1]
    recs = bmk.decode("bm1688", g.streams)
    names = {k for r in recs for k in r.fields}
    kinds = {r.kind for r in recs}
    # the vendor's opt_/short_ names left are registers bm1684x has no counterpart for
    assert {n for n in names if n.startswith(("opt_", "short_"))} == {"opt_opd4_const", "opt_opd5_const",
                                                                      "opt_res0_sign", "opt_rq"}
    assert {"res0_prec", "opd0_prec", "opd0_str", "kernel_rotate"} <= names
    assert {"sys.end", "dma.sys"} <= kinds and not any(k.startswith("system.") and k != "system.send_msg"
                                                       and k != "system.wait_msg" for k in kinds)
    text = asm.disassemble(load_chip("bm1688"), recs)
    assert "tiu.system.end" in text and "gdma.dma.sys.chain_end" in text and " opt_res0_prec=" in text
    assert bmk.encode("bm1688", asm.parse(text).records, raw=True) == bmk.encode("bm1688", recs, raw=True)


def _common(ref, member, spelled=False):
    """(kinds of `member` that bm1684x's class of the same name also has, by name; the
    non-reserved field names each shares with that class) over tiu and gdma; spelled: the
    member under the vendor's spellings (as if families.json were empty)."""
    kinds = common = 0
    for en in ("tiu", "gdma"):
        rcls = {c.name: c for c in ref.engine(en).classes}
        for c in member.engine(en).classes:
            rc = rcls.get(c.name)
            if rc is None:
                continue
            rkinds = {i.name for i in rc.instructions}
            mine = {f.spelling if spelled else f.name for f in c.fields if not f.reserved}
            for ins in c.instructions:
                if (ins.spelling if spelled else ins.name) in rkinds:
                    kinds += 1
                    common += len(mine & {f.name for f in rc.fields if not f.reserved})
    return kinds, common


@pytest.mark.parametrize("chip", ["bm1688", "bm1690", "cv184x"])
def test_family_names_cover_the_common_registers(chip):
    """Kinds shared with bm1684x (same class) and the field names they share, against the same
    count under the vendor's spellings (families.json emptied): the figures fail if rows go missing."""
    ref, member = load_chip("bm1684x"), load_chip(chip)
    got, vendor = _common(ref, member), _common(ref, member, spelled=True)
    assert (got, vendor) == FIGURES[chip]


FIGURES = {       # ((shared kinds, common field names), the same under the vendor's spellings)
    "bm1688": ((186, 9660), (149, 5753)),
    "bm1690": ((193, 9657), (158, 5807)),
    "cv184x": ((193, 9657), (158, 5807)),
}


def test_bm1684x_head_fields_come_from_its_spec():
    chip = load_chip("bm1684x")
    assert chip.engine("tiu").head_fields == {"cmd_short", "cmd_id", "cmd_id_dep", "cmd_id_en", "tsk_typ",
                                              "tsk_eu_typ", "pwr_step", "intr_en", "cmd_id_eng1", "cmd_id_eng2",
                                              "cmd_id_eng3"}
    assert chip.engine("gdma").head_fields == {"cmd_short", "cmd_type", "cmd_special_function", "cmd_id",
                                               "cmd_id_dep", "cmd_id_en", "intr_en"}
    assert {"tsk_typ", "tsk_eu_typ", "cmd_id_dep", "pwr_step", "intr_en"} <= load_chip("bm1688").engine(
        "tiu").head_fields


def _rows(chip, fields=None, kinds=None):
    return {"families": {"bm1684x": {"reference": "bm1684x", "chips": {
        chip: {"fields": fields or {}, "kinds": kinds or {}}}}}}


@pytest.mark.parametrize("rows, message", [
    (_rows("bm1688", fields={"tiu": {"opt_no_such_field": "x"}}), "names no field of bm1688's tiu"),
    (_rows("bm1688", kinds={"tiu": {"arith.no_such": "arith.x"}}), "names no kind of bm1688's tiu"),
    (_rows("bm1688", fields={"tiu": {"opt_opd0_prec": "opd0_n"}}), "collides with its field 'opd0_n'"),
    (_rows("bm1688", kinds={"tiu": {"arith.select_great": "arith.add"}}), "collides with the kind 'arith.add'"),
    (_rows("bm1688", fields={"tiu": {"tsk_typ": "typ"}}), "'tsk_typ' is a head field"),
])
def test_specgen_refuses_a_bad_rename_row(tmp_path, rows, message):
    facts = tmp_path / "facts"
    facts.mkdir()
    for p in (ROOT / "tools" / "facts").glob("*.json"):
        (facts / p.name).write_text(p.read_text())
    (facts / "families.json").write_text(json.dumps(rows))
    with pytest.raises(SPECGEN.FamilyError, match=message):
        SPECGEN.generate(tmp_path / "out", facts, chips=["bm1688"])


def test_the_loader_refuses_a_vendor_spelling_that_names_another_field():
    table = {"bytes": 1, "fields": [{"name": "a", "bit": 0, "width": 4, "vendor": "b"},
                                    {"name": "b", "bit": 4, "width": 4}]}
    with pytest.raises(SpecError, match="'b' names field"):
        build_format("t", table)
    table["fields"][1]["name"] = "c"
    assert build_format("t", table).by_vendor == {"b": "a"}


@pytest.mark.parametrize("family", ["bm1684x", "bm1880"])
def test_the_rename_rows_are_what_the_rules_derive(family):
    """families.json's per-chip rows = tools/family_names.py's rules + explicit rows on the specs."""
    table = json.loads((ROOT / "tools" / "facts" / "families.json").read_text())
    fam = table["families"][family]
    ref = load_chip(fam["reference"])
    for chip, rows in fam["chips"].items():
        derived, notes = FAMILY.derive(ref, load_chip(chip), fam["explicit"])
        assert derived == rows and notes == [], chip
    pinned = {"bm1684x": {"bm1688": 20, "bm1690": 20, "cv184x": 20},       # field rows per chip: an emptied
              "bm1880": {"cv181x": 2, "cv180x": 2, "cv182x": 2}}[family]   # table fails here
    assert {chip: sum(len(m) for m in fam["chips"][chip]["fields"].values()) for chip in pinned} == pinned


@pytest.mark.parametrize("chip", ["cv180x", "cv181x", "cv182x"])
def test_cv18xx_take_bm1880s_names_and_list_cvikernels(chip):
    """cvikernel's cv18xx opt_res_shift / opt_relu_typ are bm1880's opt_right_shift / opt_relu
    (both encoders write p->rshift_bits / p->relu_enable there)."""
    spec = load_chip(chip)
    f = spec.field("tiu", "opt_right_shift")
    assert (f.vendor, f.bit, f.width) == ("opt_res_shift", 16, 6)
    assert spec.field("tiu", "opt_relu").vendor == "opt_relu_typ"
    for text in ("tiu.mul opt_res_shift=3 opt_relu_typ=1", "tiu.mul opt_right_shift=3 opt_relu=1"):
        (rec,) = asm.parse(f".chip {chip}\n{text}\n").records
        assert rec.fields["opt_right_shift"] == 3 and rec.fields["opt_relu"] == 1
        line = asm.format_record(spec, rec)
        assert line.startswith("tiu.mul ") and "opt_res_shift=3" in line and "opt_relu_typ=1" in line
        assert "opt_right_shift" not in line and "opt_relu=" not in line
