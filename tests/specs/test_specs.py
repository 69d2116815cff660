"""Table invariants of every shipped spec, and the loader's refusals of bad tables."""
import attrs
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


def test_every_chip_reads_its_magic_and_detecting_ones_are_picked_by_it():
    from bmk.isa import magic_owners
    owners = magic_owners()
    for c in spec_chips():
        spec = load_chip(c)
        assert spec.reads_magic(spec.magic)
        assert (owners[spec.magic] == c) == spec.detect


def test_the_magic_table_is_what_the_specs_say():
    """The command line picks a chip by a buffer's first byte from magic_table() (chip.toml
    [cmd_hdr] alone, no spec built): the same magics as every loaded ChipSpec (issue 24 item 4)."""
    from bmk.isa import magic_table
    assert [(r.name, r.magic, r.legacy_magics, r.detect) for r in magic_table()] == \
        [(c, load_chip(c).magic, load_chip(c).legacy_magics, load_chip(c).detect) for c in spec_chips()]


def test_sync_id_width_per_engine():
    """Explicit ids wrap at their own-id field's width; implicit ones (positions) have no field."""
    explicit = {c: {e.name: e.id_max for e in load_chip(c).encoded_engines} for c in spec_chips()
                if not any(e.implicit_ids for e in load_chip(c).engines)}
    assert {c: v for c, v in explicit.items() if c in ("bm1880", "bm1684", "bm1684x")} == {
        "bm1880": {"tiu": 0xFFFF, "tdma": 0xFFFF}, "bm1684": {"tiu": 0xFFFF, "gdma": 0xFFFF},
        "bm1684x": {"tiu": 0xFFFFF, "gdma": 0xFFFFF}}
    for c in ("bm1688", "bm1690", "cv184x"):
        assert all(e.implicit_ids and e.own_id is None and e.id_max == 0 for e in load_chip(c).encoded_engines)


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
    classes, head, selector, index, alternates = build_engine_classes("m.toml", MULTI)
    assert alternates == ()
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


def _header(**changes):
    return {**BM1880_CHIP["cmd_hdr"], **changes}


@pytest.mark.parametrize("hdr, message", [
    (_header(legacy_magics=0xA7), "legacy_magics must be a list of magic bytes, not 167"),
    (_header(legacy_magics=[0x100]), r"legacy_magics\[0\] must be an integer in \[0, 255\], not 256"),
    (_header(legacy_magics=[0xA5]), r"legacy_magics\[0\] 0xA5 repeats a magic of the chip"),
    (_header(legacy_magics=[0xA7, 0xA7]), r"legacy_magics\[1\] 0xA7 repeats a magic of the chip"),
    (_header(detect=1), "detect must be true or false, not 1"),
    (_header(magik=1), r"unknown keys \['magik'\]"),
])
def test_cmd_hdr_magic_keys_are_checked(hdr, message):
    from bmk.isa.spec import build_chip
    with pytest.raises(SpecError, match=r"specs/bm1880/chip.toml \[cmd_hdr\]: " + message):
        build_chip("bm1880", chip_with(cmd_hdr=hdr), lambda filename: ENGINE_FILE)


def test_a_magic_picks_one_chip():
    """Issue 18 item 6: a magic byte names at most one chip when the chip is not given; a chip
    that shares another's magic (cv183x, bm1880's encoder) sets detect = false."""
    from bmk.isa.spec import build_chip, owners_of_magics
    a = build_chip("bm1880", BM1880_CHIP, lambda filename: ENGINE_FILE)
    b = attrs.evolve(a, name="other")
    with pytest.raises(SpecError, match=r"specs/other/chip.toml \[cmd_hdr\]: magic 0xA5 already picks chip 'bm1880' "
                                        r"\(set detect = false on one of them\)"):
        owners_of_magics([a, b])
    assert owners_of_magics([a, attrs.evolve(b, detect=False)]) == {0xA5: "bm1880"}
    assert owners_of_magics([a, attrs.evolve(b, magic=0x84)]) == {0xA5: "bm1880", 0x84: "other"}


def test_bmk_magics_are_not_the_vendors():
    """bm1684/bm1684x cmd_hdr_t buffers are bmk's own format: their magics must not be a vendor
    cmd_hdr_t magic (cvikernel bm_kernel.h: 0xA5 1880v2/CV183X, 0xA6 1822, 0xA7 181X, 0xA8 180X),
    nor a byte that can start UTF-8 text; the old ones stay readable with the chip named."""
    from bmk.isa import magic_owners
    vendor = {0xA5, 0xA6, 0xA7, 0xA8}
    for chip, old in (("bm1684", 0xA6), ("bm1684x", 0xA7)):
        spec = load_chip(chip)
        assert spec.magic not in vendor and 0x80 <= spec.magic <= 0xBF
        assert spec.legacy_magics == (old,) and spec.reads_magic(old) and spec.detect
        assert magic_owners()[spec.magic] == chip
    assert magic_owners()[0xA5] == "bm1880"


# ---- newer chips: alternate heads, implicit ids, wait masks, lent waits, messages, opaque engines

ALT = {"name": "m", "selector": ["s", "op", "eu"],
       "head": [{"name": "s", "bit": 0, "width": 1}, {"name": "op", "bit": 1, "width": 2},
                {"name": "eu", "bit": 3, "width": 3}],
       "alternates": [{"name": "narrow", "selector": ["op", "eu"],
                       "head": [{"name": "op", "bit": 1, "width": 2}, {"name": "eu", "bit": 3, "width": 2}]}],
       "classes": [
           {"name": "A", "bytes": 1, "keys": [{"s": 0, "op": 0}], "fields": [
               {"name": "s", "bit": 0, "width": 1}, {"name": "op", "bit": 1, "width": 2},
               {"name": "eu", "bit": 3, "width": 3}, {"name": "x", "bit": 6, "width": 2}]},
           {"name": "N", "bytes": 2, "head": "narrow", "keys": [{"op": 2}], "fields": [
               {"name": "imm", "bit": 0, "width": 1}, {"name": "op", "bit": 1, "width": 2},
               {"name": "eu", "bit": 3, "width": 2}, {"name": "y", "bit": 5, "width": 11}]}]}


def test_alternate_head_is_tried_when_the_head_picks_no_class():
    """BM1688 SYS_TR_ACC's shape: its bit 0 is data and its eu is narrower than the head's."""
    from bmk.isa.spec import Engine, build_engine_classes
    classes, head, selector, index, alternates = build_engine_classes("m.toml", ALT)
    eng = Engine("m", 0, classes, head, selector, index=index, alternates=alternates)
    assert eng.head_nbytes == 1
    assert eng.classify(bytes([0b00000000])).name == "A"
    assert eng.classify(bytes([0b00000101])).name == "N"        # s=1 (imm data), op=2: no head class
    assert eng.classify(bytes([0b11100101])).name == "N"        # bits 5..7 are not the narrow head's
    assert eng.classify(bytes([0b00000011])) is None            # op=1: nothing
    assert eng.class_for({"op": 2, "eu": 0}).name == "N" and eng.class_for({"op": 0}).name == "A"


@pytest.mark.parametrize("change, message", [
    (lambda t: t["classes"][1].update(head="wide"), r"classes\[1\] \(N\): head must name one of the alternates "
                                                    r"\['narrow'\], not 'wide'"),
    (lambda t: t["classes"][1].update(keys=[{"op": 0}]), r"class 'N' \(alternate head 'narrow'\) keys\[0\] is "
                                                         r"shadowed by class 'A'"),
    (lambda t: t["classes"][1].update(keys=[{"s": 1}]), r"classes\[1\] \(N\): keys\[0\] must map selector fields "
                                                        r"\['op', 'eu'\]"),
    (lambda t: t["classes"][1]["fields"][2].update(width=3, bit=3) or t["classes"][1]["fields"][3].update(
        bit=6, width=10), r"classes\[1\] \(N\): narrow head field 'eu' must be at bits \[3, 5\)"),
    (lambda t: t["alternates"][0].update(name="not an id"), r"alternates\[0\] \(not an id\): name must be a new "
                                                            r"identifier"),
    (lambda t: t["alternates"][0].update(selector=["nope"]), r"alternates\[0\] \(narrow\): selector must list head "
                                                             r"fields"),
])
def test_alternate_heads_are_checked(change, message):
    import copy

    from bmk.isa.spec import build_engine_classes
    table = copy.deepcopy(ALT)
    change(table)
    with pytest.raises(SpecError, match="m.toml: " + message):
        build_engine_classes("m.toml", table)


SYNC_ENGINE = {"name": "e", "bytes": 4, "fields": [
    {"name": "dep", "bit": 0, "width": 8}, {"name": "op", "bit": 8, "width": 4},
    {"name": "imm", "bit": 12, "width": 20}],
    "instructions": [{"name": "send", "match": {"op": 1}}, {"name": "wait", "match": {"op": 2}}]}


def _engines(**e):
    return {"e": {"id": 0, "format": "e", **e}, "f": {"id": 1, "format": "e"}}


@pytest.mark.parametrize("engine, message", [
    (_engines(ids="positional"), "ids must be 'explicit' or 'implicit', not 'positional'"),
    (_engines(ids="implicit", own_id="dep"), r"own_id names a field, but ids are implicit"),
    (_engines(wait_for={"f": "dep"}, wait_mask=0x1FF), r"wait_mask 0x1FF is wider than the 8-bit field 'dep'"),
    (_engines(missing_wait="previous"), "missing_wait must be 'none' or 'next', not 'previous'"),
    (_engines(messages={"send": "send", "wait": "nope", "id": ["imm", 0, 7], "count": ["imm", 8, 3]}),
     "messages: wait names unknown instruction kind 'nope'"),
    (_engines(messages={"send": "send", "wait": "wait", "id": ["imm2", 0, 7], "count": ["imm", 8, 3]}),
     "messages: id names field 'imm2', which class 'e' lacks"),
    (_engines(messages={"send": "send", "wait": "wait", "id": ["imm", 0, 7], "count": ["imm", 16, 5]}),
     r"messages count: width must be an integer in \[1, 4\], not 5"),
    (_engines(messages={"send": "send", "wait": "wait", "id": "imm"}), r"messages: missing keys \['count'\]"),
    ({"e": {"id": 0, "format": "e", "opaque": True}}, "an opaque engine has no format"),
    ({"e": {"id": 0, "ids": "implicit"}}, "sync fields and stream rules need a format"),
])
def test_sync_keys_are_checked(engine, message):
    from bmk.isa.spec import build_chip
    with pytest.raises(SpecError, match=r"specs/bm1880/chip.toml \[engines.e\]" + r".*" + message):
        build_chip("bm1880", chip_with(engines=engine), lambda filename: SYNC_ENGINE)


def test_sync_keys_load():
    from bmk.isa.spec import build_chip
    spec = build_chip("bm1880", chip_with(engines={
        **_engines(ids="implicit", wait_for={"f": "dep"}, wait_mask=0x7F, missing_wait="next",
                   messages={"send": "send", "wait": "wait", "id": ["imm", 0, 7], "count": ["imm", 16, 3]}),
        "h": {"id": 2, "opaque": True}}), lambda filename: SYNC_ENGINE)
    e = spec.engine("e")
    assert e.implicit_ids and e.own_id is None and e.wait_mask == 0x7F and e.missing_wait == "next"
    assert e.messages.msg_id({"imm": 0x4001E}) == 30 and e.messages.msg_count({"imm": 0x4001E}) == 4
    assert spec.engine("h").opaque and [x.name for x in spec.stream_engines] == ["e", "f", "h"]


def test_newer_chip_facts():
    """Class counts and lengths of the decode-only chips (newer-chips.md 1)."""
    def lengths(chip, engine):
        return sorted({c.nbytes for c in load_chip(chip).engine(engine).classes})
    assert [len(load_chip("bm1688").engine(e).classes) for e in ("tiu", "gdma")] == [29, 12]
    assert lengths("bm1688", "tiu") == [16, 32, 48, 64, 128] and lengths("bm1688", "gdma") == [16, 96]
    bm1690 = load_chip("bm1690")
    assert [len(bm1690.engine(e).classes) for e in ("tiu", "gdma", "sdma", "cdma")] == [33, 16, 16, 10]
    assert bm1690.engine("tiu").cls("sLIN").nbytes == 36 and lengths("bm1690", "cdma") == [16, 32, 64]
    assert bm1690.engine("hau").opaque and bm1690.engine("gdma").wait_mask == 0xFFFFF
    assert load_chip("cv184x").engine("tiu").cls("SYS").nbytes == 8
    for chip in ("bm1688", "bm1690", "cv184x"):
        tiu = load_chip(chip).engine("tiu")
        assert [a.name for a in tiu.alternates] == ["short_sys_tr_acc"]
        assert tiu.cls("SYS_TR_ACC").by_name["tsk_eu_typ"].width == 3 and tiu.missing_wait == "next"
        # bit 0 set (imm0 data) and tsk_typ 12: only the alternate head finds the class
        assert tiu.classify((1 | 12 << 41 | 0b11 << 48).to_bytes(tiu.head_nbytes, "little")).name == "SYS_TR_ACC"
    for chip in ("cv180x", "cv181x", "cv182x"):
        spec = load_chip(chip)
        assert spec.engine("tiu").format.nbytes == 112 and spec.engine("tdma").format.nbytes == 64
    assert {c: load_chip(c).magic for c in ("cv183x", "cv182x", "cv181x", "cv180x")} == {
        "cv183x": 0xA5, "cv182x": 0xA6, "cv181x": 0xA7, "cv180x": 0xA8}
    assert load_chip("cv180x").param("npu_num") == 2 and load_chip("cv181x").param("npu_num") == 8


def test_cv183x_is_bm1880_under_its_own_name():
    """CV183X = BM1880v2, the encoder bm1880 follows: the same layouts and kinds; a 0xA5 buffer
    read without a chip name is bm1880's (detect = false), `--chip cv183x` reads it as CV183X."""
    from bmk.isa import magic_owners
    a, b = load_chip("bm1880"), load_chip("cv183x")
    for e in ("tiu", "tdma"):
        assert a.engine(e).format == b.engine(e).format
    assert b.magic == a.magic == 0xA5 and not b.detect and magic_owners()[0xA5] == "bm1880"
