"""Paired fixtures: valid lines with their encodings, invalid lines with their exact errors."""
import pathlib

import pytest

import bmk
from bmk.text import asm as asmtext
from bmk.encoders import codec_for, encode_record
from bmk.isa import chips as spec_chips
from bmk.isa import load_chip

HERE = pathlib.Path(__file__).parent
FIXTURES = HERE / "fixtures"
CHIP = load_chip("bm1880")
FIXTURE_CHIPS = sorted(p.name for p in FIXTURES.iterdir() if (p / "valid_lines.txt").is_file())


def _valid(chip):
    out, line = [], None
    for raw in (FIXTURES / chip / "valid_lines.txt").read_text().splitlines():
        if raw.startswith(".line "):
            line = raw[len(".line "):]
        elif raw.startswith(".hex "):
            out.append((chip, line, bytes.fromhex(raw[len(".hex "):])))
    return out


def _invalid(chip):
    out, line = [], None
    for raw in (FIXTURES / chip / "invalid_lines.txt").read_text().splitlines():
        if raw.startswith("! "):
            out.append((chip, line, raw[2:]))
        elif raw and not raw.startswith("#"):
            line = raw
    return out


VALID = [case for chip in FIXTURE_CHIPS for case in _valid(chip)]
INVALID = [case for chip in FIXTURE_CHIPS for case in _invalid(chip)]


def test_every_chip_has_paired_fixtures():
    """tests/asm/fixtures/<chip>/ for every chip of the specs (tools/asm_fixtures.py writes all
    but bm1880's, whose lines are hand-curated), each with valid and invalid lines."""
    assert FIXTURE_CHIPS == sorted(spec_chips())
    for chip in FIXTURE_CHIPS:
        assert len(_valid(chip)) >= 10 and len(_invalid(chip)) >= 9, chip


@pytest.mark.parametrize("chip,line,encoding", VALID, ids=[f"{c}:{line.split()[0]}" for c, line, _ in VALID])
def test_valid_line(chip, line, encoding):
    assert asmtext.assemble(f".chip {chip}\n{line}\n") == encoding
    # the printer gives back the same line
    spec = load_chip(chip)
    assert asmtext.disassemble(spec, asmtext.parse(f".chip {chip}\n{line}\n").records) == f".chip {chip}\n{line}\n"


@pytest.mark.parametrize("chip,line,message", INVALID, ids=[f"{c}:{line}"[:60] for c, line, _ in INVALID])
def test_invalid_line(chip, line, message):
    with pytest.raises(asmtext.AsmError) as e:
        asmtext.parse(f".chip {chip}\n{line}\n", filename="t.s")
    assert str(e.value) == message
    assert isinstance(e.value, bmk.BmkError)


# Hand-written lines, checked against field dicts packed by the codec (not by the parser).
HAND = [
    ("tiu.add", "tiu", {"tsk_typ": 3, "tsk_eu_typ": 2}, None),
    ("tiu.conv", "tiu", {}, None),
    ("tdma.load", "tdma", {}, None),
    ("tdma.fill  const_val=7 dst_c=4", "tdma", {"spec_func": 4, "const_val": 7, "dst_c": 4}, None),
    ("tiu.add id=3 wait.tdma=2 cmd_id_en=1", "tiu",
     {"tsk_typ": 3, "tsk_eu_typ": 2, "cmd_id_tpu": 3, "cmd_id_gdma": 2, "cmd_id_en": 1}, None),
    ("tdma.store id=5 wait.tiu=4 bar_en=1", "tdma", {"trans_dir": 1, "cmd_id": 5, "wait_id_tpu": 4, "bar_en": 1}, None),
    ("tdma.store trans_dir=1 spec_func=copy", "tdma", {"trans_dir": 1}, None),
    ("tiu.raw tsk_typ=7 tsk_eu_typ=0xff", "tiu", {"tsk_typ": 7, "tsk_eu_typ": 255}, None),
    ("tdma.raw trans_dir=g2l spec_func=2", "tdma", {"spec_func": 2}, None),
    ("tiu.add res0_addr=0x1_00 res0_c=0b101 res0_h=0o7", "tiu",
     {"tsk_typ": 3, "tsk_eu_typ": 2, "res0_addr": 0x100, "res0_c": 5, "res0_h": 7}, None),
    ("tiu.add hdr.flags=0x3 hdr.mask=0xdeadbeef", "tiu", {"tsk_typ": 3, "tsk_eu_typ": 2},
     {"flags": 3, "mask": 0xDEADBEEF}),
    ("tdma.load hdr.len=0 hdr.mask=0x40", "tdma", {}, {"len": 0, "mask": 64}),
    ("tdma.load hdr.len=64", "tdma", {}, None),
    ("tiu.mul rsvd0=0xf  # reserved bits survive too", "tiu", {"tsk_typ": 3, "rsvd0": 15}, None),
    ("gdma.load  ; the vendor's name for the engine", "tdma", {}, None),
]


@pytest.mark.parametrize("line,engine,fields,header", HAND, ids=[h[0] for h in HAND])
def test_hand_written_line(line, engine, fields, header):
    assert asmtext.assemble(f".chip bm1880\n{line}\n") == encode_record(CHIP, engine, fields, header)


def test_fields_nonzero_means_omitted_fields_are_zero():
    text = ".chip bm1880\n.fields nonzero\ntiu.add tsk_typ=3 tsk_eu_typ=2\n"
    rec = asmtext.parse(text).records[0]
    assert rec.fields["res0_w"] == 0 and rec.fields["opt_relu"] == 0     # reset defaults are 16 and 1
    zeros = dict.fromkeys(CHIP.engine("tiu").format.by_name, 0)
    assert asmtext.assemble(text)[8:] == codec_for(CHIP.engine("tiu").format).pack({**zeros, "tsk_typ": 3,
                                                                                      "tsk_eu_typ": 2})


def test_chip_from_argument_and_mismatch():
    assert asmtext.assemble("tdma.load\n", chip="bm1880") == encode_record(CHIP, "tdma", {})
    assert asmtext.parse("tdma.load\n", chip=CHIP).chip is CHIP
    with pytest.raises(asmtext.AsmError, match="^<text>:1:1: expected a '.chip NAME' line"):
        asmtext.parse("# nothing\n")


def test_empty_program():
    assert asmtext.assemble(".chip bm1880\n# no instructions\n") == b""


def test_printed_sync_ids_always_shown():
    text = asmtext.disassemble(CHIP, asmtext.parse(".chip bm1880\ntiu.add\ntdma.load\n").records)
    assert text == ".chip bm1880\ntiu.add          id=0 wait.tdma=0\ntdma.load        id=0 wait.tiu=0\n"
