"""cmd_hdr_t magics (issue 18 item 6): bm1684/bm1684x buffers are bmk's own format and carry
magics the vendor never writes; a buffer written by an older bmk with the old magic (0xA6 /
0xA7, the vendor's CV182X / CV181X magics) still reads when the chip is named, keeps its
magic through disasm -> asm, and without the chip is a one-line error saying what to do."""
import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import asm, disasm
from bmk.errors import DecodeError
from bmk.isa import load_chip
from bmk.text import asm as asmtext, loading
from tests.vectors import vendor

OLD = {"bm1684": 0xA6, "bm1684x": 0xA7}


def _old_buffer(chip):
    """The vendor's streams framed as cmd_hdr_t with the chip's old magic, as bmk wrote them before."""
    recs = bmk.decode(chip, vendor.streams(chip))
    buf = bytearray(bmk.encode(chip, recs))
    for offset in loading.load(bytes(buf), chip).records.offsets:
        assert buf[offset] == load_chip(chip).magic
        buf[offset] = OLD[chip]
    return bytes(buf), recs


@pytest.mark.parametrize("chip", sorted(OLD))
def test_old_magic_reads_when_the_chip_is_named(chip):
    buf, recs = _old_buffer(chip)
    again = bmk.decode(chip, buf)
    assert [(r.engine, r.cls, r.fields) for r in again] == [(r.engine, r.cls, r.fields) for r in recs]
    assert {r.header.get("magic") for r in again} == {OLD[chip]}
    assert bmk.encode(chip, again) == buf                         # the old magic is kept
    assert bmk.encode(chip, again, raw=True) == vendor.streams(chip)
    text = asmtext.disassemble(load_chip(chip), again)
    assert f"hdr.magic={OLD[chip]:#x}" in text.splitlines()[1]
    assert asmtext.assemble(text) == buf


@pytest.mark.parametrize("chip", sorted(OLD))
def test_old_magic_without_the_chip_is_a_clear_error(chip):
    buf, _ = _old_buffer(chip)
    with pytest.raises(DecodeError) as e:
        loading.load(buf, None, "old.cmdbuf")
    message = str(e.value)
    assert f"began {chip} buffers written by older bmk versions: for one of those, name the chip " \
           f"(--chip {chip})" in message
    assert message.startswith("old.cmdbuf: ")


def test_cli_old_magic(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    buf, _ = _old_buffer("bm1684x")
    (tmp_path / "old.cmdbuf").write_bytes(buf)
    runner = CliRunner()
    res = runner.invoke(disasm, ["old.cmdbuf"])
    assert res.exit_code == 2 and res.stdout == "" and res.stderr.count("\n") == 1
    assert "--chip bm1684x" in res.stderr
    res = runner.invoke(disasm, ["old.cmdbuf", "--chip", "bm1684x", "-o", "old.s"])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(asm, ["old.s", "-o", "again.cmdbuf"])
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "again.cmdbuf").read_bytes() == buf


def test_hdr_magic_in_text_must_be_a_legacy_one():
    with pytest.raises(asmtext.AsmError, match=r"hdr.magic must be one of 0x86, 0xa7 for bm1684x, not 0xa6"):
        asmtext.parse(".chip bm1684x\ntiu.arith.cast hdr.magic=0xa6\n")
    with pytest.raises(asmtext.AsmError, match=r"unknown header field 'magic'"):
        asmtext.parse(".chip bm1880\ntdma.load hdr.magic=0xa5\n")
    rec = asmtext.parse(".chip bm1684x\ntiu.arith.cast hdr.magic=0x86\n").records[0]
    assert "magic" not in rec.header                 # the chip's own magic is implied


def test_new_magic_picks_the_chip():
    for chip in OLD:
        buf = bmk.encode(chip, bmk.decode(chip, vendor.streams(chip)))
        assert buf[0] == load_chip(chip).magic
        assert loading.load(buf).chip.name == chip
