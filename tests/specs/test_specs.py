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
