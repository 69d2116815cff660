"""Table invariants of every shipped spec, and the loader's refusals of bad tables."""
import pytest

import bmk
from bmk.isa import chips as spec_chips
from bmk.errors import SpecError
from bmk.isa import load_chip
from bmk.isa.spec import build_format


@pytest.mark.parametrize("chip", spec_chips())
def test_every_format_covers_every_bit_once(chip):
    spec = load_chip(chip)
    for fmt in spec.formats + (spec.header,):
        pos = 0
        for f in fmt.fields:
            assert f.bit == pos, (fmt.name, f.name)
            pos += f.width
            assert 0 <= f.default <= f.max
        assert pos == fmt.nbytes * 8


@pytest.mark.parametrize("chip", spec_chips())
def test_instruction_kinds_name_real_fields_and_are_distinct(chip):
    for fmt in load_chip(chip).formats:
        names = [i.name for i in fmt.instructions]
        assert len(names) == len(set(names))
        for ins in fmt.instructions:
            assert all(k in fmt.by_name for k, _ in ins.match)


def test_bm1880_facts():
    spec = load_chip("bm1880")
    assert spec.magic == 0xA5
    assert {e.name: e.id for e in spec.engines} == {"tiu": 0, "cpu": 1, "tdma": 2}
    assert spec.engine("tiu").format.nbytes == 112
    assert spec.engine("tdma").format.nbytes == 64
    assert spec.param("npu_num") == 32 and spec.param("eu_num") == 16 and spec.param("lmem_size") == 32768


def table(*fields, nbytes=1):
    return {"name": "t", "bytes": nbytes, "fields": list(fields)}


@pytest.mark.parametrize("bad, message", [
    (table({"name": "a", "bit": 0, "width": 4}, {"name": "b", "bit": 3, "width": 5}),
     "t.toml: field 'b' at bit 3 overlaps the previous field (ends at bit 4)"),
    (table({"name": "a", "bit": 0, "width": 4}, {"name": "b", "bit": 5, "width": 3}),
     "t.toml: bits [4, 5) before field 'b' are not covered (declare them reserved)"),
    (table({"name": "a", "bit": 0, "width": 4}),
     "t.toml: bits [4, 8) after the last field are not covered"),
    (table({"name": "a", "bit": 0, "width": 4}, {"name": "a", "bit": 4, "width": 4}),
     "t.toml: fields[1] (a): duplicate field name 'a'"),
    (table({"name": "a", "bit": 0, "width": 4, "default": 16}, {"name": "b", "bit": 4, "width": 4}),
     "t.toml: fields[0] (a): default must be an integer in [0, 15], not 16"),
    (table({"name": "a", "bit": 0, "width": 9}),
     "t.toml: fields[0] (a): bits [0, 9) run past the 1-byte format"),
    (table({"name": "a", "bit": 0, "width": 8, "enum": "nope"}),
     "t.toml: fields[0] (a): enum 'nope' is not defined in [enums]"),
    (table({"name": "a", "bit": 0, "width": 8, "colour": 1}),
     "t.toml: fields[0] (a): unknown keys ['colour']"),
])
def test_loader_refuses_bad_tables(bad, message):
    with pytest.raises(SpecError) as e:
        build_format("t.toml", bad)
    assert str(e.value) == message


def test_enum_value_too_wide():
    with pytest.raises(SpecError, match=r"enum e.big: value must be an integer in \[0, 3\], not 4"):
        build_format("t.toml", table({"name": "a", "bit": 0, "width": 2, "enum": "e"},
                                     {"name": "r", "bit": 2, "width": 6, "reserved": True}),
                     {"e": {"big": 4}})


def test_unknown_chip():
    with pytest.raises(SpecError, match="chip must be one of"):
        load_chip("bm9999")


def test_magic_bytes_are_unique_across_chips():
    magics = {c: load_chip(c).magic for c in spec_chips()}
    assert len(set(magics.values())) == len(magics), magics


def test_sync_id_width_per_engine():
    assert {c: {e.name: e.id_max for e in load_chip(c).encoded_engines} for c in spec_chips()} == {
        "bm1880": {"tiu": 0xFFFF, "tdma": 0xFFFF}, "bm1684": {"tiu": 0xFFFF, "gdma": 0xFFFF},
        "bm1684x": {"tiu": 0xFFFFF, "gdma": 0xFFFFF}}


def test_bm1684x_classes_and_lengths():
    spec = load_chip("bm1684x")
    tiu, gdma = spec.engine("tiu"), spec.engine("dma")
    assert len(tiu.classes) == 30 and len(gdma.classes) == 13
    lengths = {c.name: c.nbytes for c in tiu.classes + gdma.classes}
    assert lengths["sAR"] == 64 and lengths["AR"] == 128 and lengths["SYSID"] == 16 and lengths["LAR"] == 16
    assert lengths["DMA_tensor"] == 96 and lengths["sDMA_sys"] == 16
    assert tiu.selector == ("cmd_short", "tsk_typ", "tsk_eu_typ")
    assert gdma.selector == ("cmd_short", "cmd_type", "cmd_special_function")
    # the head picks the class: cmd_short=1, tsk_typ=3 (bits 41..44) is the short AR
    head = (1 | 3 << 41 | 2 << 45).to_bytes(tiu.head_nbytes, "little")
    assert tiu.classify(head).name == "sAR"
    assert [c.name for c, _ in tiu.kinds("arith.cast")] == ["AR", "sAR"]


def test_memory_map():
    spec = load_chip("bm1684x")
    assert {m.name for m in spec.memory} == {"local", "static", "l2sram", "global"}
    assert spec.space_of(0x08000040).name == "local" and spec.space_of(0x100001000).name == "global"
    assert spec.space_of(0x7000000) is None
    assert {m.name for m in load_chip("bm1684").memory} >= {"local", "l2sram", "dtcm", "global"}


BM1880_CHIP = {"name": "bm1880", "version": 1, "params": {"npu_num": 2},
               "memory": {"global": {"base": 0, "size": 16}},
               "cmd_hdr": {"name": "h", "bytes": 8, "magic": 0xA5, "fields": [
                   {"name": "magic", "bit": 0, "width": 8}, {"name": "len", "bit": 8, "width": 8},
                   {"name": "engine_id", "bit": 16, "width": 4}, {"name": "r", "bit": 20, "width": 12, "reserved": True},
                   {"name": "mask", "bit": 32, "width": 32}]},
               "engines": {"e": {"id": 0, "format": "e"}}}
ENGINE_FILE = {"name": "e", "bytes": 1, "fields": [{"name": "a", "bit": 0, "width": 8}]}


def chip_with(**changes):
    table = {**BM1880_CHIP, **changes}
    return {k: v for k, v in table.items() if v is not None}


@pytest.mark.parametrize("table, message", [
    (chip_with(colour=1), "specs/bm1880/chip.toml: unknown keys ['colour']"),
    (chip_with(memory=None), "specs/bm1880/chip.toml: missing keys ['memory']"),
    (chip_with(engines={"e": {"id": 0, "format": "e", "inherit_wiat": True}}),
     "specs/bm1880/chip.toml [engines.e]: unknown keys ['inherit_wiat']"),
    (chip_with(params={"npu_num": "32"}), "specs/bm1880/chip.toml [params]: npu_num must be an integer >= 0, not '32'"),
    (chip_with(memory={"global": {"base": 0}}), "specs/bm1880/chip.toml [memory.global]: missing keys ['size']"),
    (chip_with(memory={"local": {"base": 0, "size": 8}}),
     "specs/bm1880/chip.toml: [memory] must define a 'global' space"),
    (chip_with(memory={"global": {"base": 0, "size": 8}, "local": {"base": 4, "size": 8}}),
     "specs/bm1880/chip.toml: memory spaces 'global' and 'local' overlap"),
    (chip_with(engines={"e": {"id": 0, "format": "e", "own_id": "b"}}),
     "specs/bm1880/chip.toml [engines.e]: own_id names field 'b', which no class has"),
    (chip_with(engines={"e": {"id": 0, "format": "e", "stream": {"slot": 128, "ends": "x"}}}),
     "specs/bm1880/chip.toml [engines.e] stream: unknown keys ['ends']"),
    (chip_with(name="bm9"), "specs/bm1880/chip.toml: name must be the folder's name 'bm1880', not 'bm9'"),
])
def test_chip_toml_is_validated_like_formats(table, message):
    from bmk.isa.spec import build_chip
    with pytest.raises(SpecError) as e:
        build_chip("bm1880", table, lambda filename: ENGINE_FILE)
    assert str(e.value) == message


MULTI = {"name": "m", "selector": ["op"], "head": [{"name": "op", "bit": 0, "width": 2}], "classes": [
    {"name": "A", "bytes": 1, "keys": [{"op": 0}], "fields": [{"name": "op", "bit": 0, "width": 2},
                                                             {"name": "x", "bit": 2, "width": 6}]},
    {"name": "B", "bytes": 2, "keys": [{"op": 1}, {"op": 2}], "fields": [{"name": "op", "bit": 0, "width": 2},
                                                                        {"name": "y", "bit": 2, "width": 14}]}]}


def test_engine_classes_selector_index():
    from bmk.isa.spec import build_engine_classes
    classes, head, selector, index = build_engine_classes("m.toml", MULTI)
    assert [c.nbytes for c in classes] == [1, 2]
    assert {k: c.name for k, c in index.items()} == {(0,): "A", (1,): "B", (2,): "B"}


def test_selector_values_that_pick_two_classes_are_refused():
    from bmk.isa.spec import build_engine_classes
    bad = {**MULTI, "classes": [MULTI["classes"][0], {**MULTI["classes"][1], "keys": [{"op": 0}]}]}
    with pytest.raises(SpecError, match=r"m.toml: selector values \{'op': 0\} pick two classes: 'A' and 'B'"):
        build_engine_classes("m.toml", bad)


def test_head_fields_must_sit_at_the_head_bits():
    from bmk.isa.spec import build_engine_classes
    moved = {**MULTI["classes"][0], "fields": [{"name": "x", "bit": 0, "width": 6}, {"name": "op", "bit": 6, "width": 2}]}
    with pytest.raises(SpecError, match=r"head field 'op' must be at bits \[0, 2\)"):
        build_engine_classes("m.toml", {**MULTI, "classes": [moved]})


def test_wide_reserved_rows_are_split():
    fmt = build_format("t.toml", table({"name": "a", "bit": 0, "width": 8},
                                       {"name": "rsvd", "bit": 8, "width": 150, "reserved": True},
                                       {"name": "b", "bit": 158, "width": 2}, nbytes=20))
    assert [(f.name, f.bit, f.width) for f in fmt.fields] == [
        ("a", 0, 8), ("rsvd", 8, 64), ("rsvd_1", 72, 64), ("rsvd_2", 136, 22), ("b", 158, 2)]
    with pytest.raises(SpecError, match="width must be an integer in"):
        build_format("t.toml", table({"name": "a", "bit": 0, "width": 72}, nbytes=9))
