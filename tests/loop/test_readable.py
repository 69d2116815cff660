"""Issue 22.4: readable values in listings and diffs (bmk/text/views.py, the specs' display
tables): float constants as numbers, rounding modes by name, 40-bit addresses joined, local
addresses as the API takes them (one text in every engine, with NPU and offset), the direction
on every GDMA line, lines that fit a terminal; every listing still assembles to the same bytes."""
import re

import pytest
from click.testing import CliRunner

import bmk
from bmk import bm1684, bm1684x
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip
from bmk.text import asm, diff, loading
from tests.loop.kernels import double_buffered
from tests.vectors import vendor

G = 0x100000000
SX = bm1684x.dim4(1, 64, 8, 8)
S84 = bm1684.dim4(1, 64, 8, 8)


def lines_of(ctx, **kw):
    text = ctx.listing(**kw)
    assert asm.assemble(text) == ctx.acquire_cmdbuf()          # always read back to the same bytes
    return [line for line in text.splitlines() if " @" in line]


def bm1684x_kernel(c=1e-5, dtype=bm1684x.DT_FP32, rm=bm1684x.RM_HALF_UP, local=0x41000):
    x = bm1684x.Context()
    x.gdma_cpy_S2L(local, G, SX, None, None, dtype)
    x.bdc_min_C(local + 0x1000, local, c, SX, None, None, dtype)
    x.bdc_arithmetic_shift_C(0x41000, 0x40000, -3, SX, None, None, bm1684x.DT_INT16, bm1684x.DT_INT16, rm)
    x.gdma_cpy_L2S(G + 0x10000, local + 0x1000, SX, None, None, dtype)
    return x


@pytest.mark.parametrize("dtype, c, text", [(bm1684x.DT_FP32, 1e-5, "1e-05"), (bm1684x.DT_FP16, 0.5, "0.5"),
                                            (bm1684x.DT_FP16, -1e-3, "-0.001"), (bm1684x.DT_BFP16, 3.0, "3"),
                                            (bm1684x.DT_BFP16, 1e-5, "1e-05"), (bm1684x.DT_FP32, -3.4e38, "-3.4e+38")])
def test_float_constants_print_as_numbers(dtype, c, text):
    line = next(x for x in lines_of(bm1684x_kernel(c, dtype)) if "arith.min" in x)
    assert f" opd1={text} " in line + " " and "opd1_addr" not in line
    x = bm1684.Context()
    x.bdc_add_C(0x10000, 0x10000, 1e-5, S84, None, None)
    (line,) = lines_of(x)
    assert " opd1=1e-05 " in line + " " and "opd1_addr" not in line


def test_rounding_modes_print_by_name_on_the_kinds_that_read_them():
    for rm, name in ((bm1684x.RM_HALF_UP, "half_up"), (bm1684x.RM_HALF_TO_EVEN, "half_to_even"),
                     (bm1684x.RM_DOWN, "down")):
        shift = next(x for x in lines_of(bm1684x_kernel(rm=rm)) if "arith.ashift" in x)
        assert f" round={name} " in shift and "opd2_n_str" not in shift
    # not on a kind where opd2_n_str is something else (div: its iterations)
    chip = load_chip("bm1684x")
    rec = [r for r in bmk.decode(chip, bm1684x_kernel().acquire_streams()) if r.kind == "arith.min"][0]
    fields = dict(rec.fields)
    fields.update({k: v for k, v in chip.engine("tiu").cls(rec.cls).instruction("arith.div").match}, opd2_n_str=3)
    line = asm.format_record(chip, bmk.encoders.Record("tiu", rec.cls, "arith.div", fields))
    assert "opd2_n_str=3" in line and "round=" not in line


def test_addresses_are_joined_and_local_ones_read_alike_in_every_engine():
    for ctx, local in ((bm1684x_kernel(), "lmem:0x41000(npu1+0x1000)"), (double_buffered(), "lmem:0x8000(npu0+0x8000)")):
        lines = lines_of(ctx)
        assert not any(re.search(r"_addr_(l32|h8|h32|l8)=", x) for x in lines)
        assert any(f"dst_addr={local}" in x for x in lines if "gdma." in x)          # the GDMA's device address ...
        assert any(f"_addr={local}" in x for x in lines if "tiu." in x)              # ... and the TIU's field
    assert "src_addr=0x100000000" in lines_of(bm1684x_kernel())[0]


def test_every_gdma_line_names_its_direction():
    for ctx in (bm1684x_kernel(), double_buffered()):
        gdma = [x for x in lines_of(ctx) if "gdma.dma.tensor" in x]
        assert gdma and all(re.search(r" (dir|direction)=(S2L|L2S)\b", x) for x in gdma)
    bad = ".chip bm1684x\n" + lines_of(bm1684x_kernel())[0].replace("dir=S2L", "dir=L2S")
    with pytest.raises(asm.AsmError, match=r"dir=L2S does not match the addresses \(src_addr and dst_addr make it "
                                           r"S2L\)"):
        asm.assemble(bad.split("  #")[0] + "\n")


def test_lines_fit_a_terminal_and_still_read_back():
    for ctx in (bm1684x_kernel(), double_buffered()):
        text = ctx.listing(width=80)
        assert asm.assemble(text) == ctx.acquire_cmdbuf()
        assert max(len(x) for x in text.splitlines() if not x.startswith("#")) <= 80     # origins: own lines
        assert any(x.endswith(" \\") for x in text.splitlines())


def test_views_refuse_what_does_not_read_back():
    head = lines_of(bm1684x_kernel())[1].split("  #")[0]          # the arith.min line
    for edit, message in ((("opd1_const=1 ", ""), "opd1='1e-05': opd1=<number> is a constant operand: it needs "
                                                  "opd1_const=1 and a float opd1_prec"),
                          (("(npu1+0x1000)", "(npu2+0x1000)"), "local address 0x41000 is npu1+0x1000, not npu2+0x1000"),
                          (("round=half_to_even", "round=sideways"), "round must be one of half_to_even"),
                          (("opd1=1e-05", "opd1=1e-05 opd1_addr=1"), "opd1 and opd1_addr name the same field opd1_addr")):
        assert edit[0] in head
        with pytest.raises(asm.AsmError) as e:
            asm.assemble(".chip bm1684x\n" + head.replace(*edit) + "\n")
        assert message in str(e.value), str(e.value)


@pytest.mark.parametrize("chip", vendor.CHIPS)
@pytest.mark.parametrize("fields, width", [("changed", 0), ("changed", 72), ("nonzero", 0), ("all", 120)])
def test_the_vendor_streams_read_back_to_their_bytes(chip, fields, width):
    streams = vendor.streams(chip)
    records = bmk.decode(chip, streams)
    text = asm.disassemble(load_chip(chip), records, fields, locations=True, width=width)
    program = asm.parse(text)
    assert {e: program.raw_stream(e) for e in streams} == streams


@pytest.mark.parametrize("chip", vendor.CHECKED)
def test_the_vendor_listings_show_local_and_global_addresses(chip):
    """The yolov5s streams load from global memory (addresses 0x1...) into local memory."""
    text = asm.disassemble(load_chip(chip), bmk.decode(chip, vendor.streams(chip)), "changed", locations=True)
    assert "lmem:" in text and "src_addr=0x1" in text


def test_diffs_show_the_readable_values():
    a = loading.load(bm1684x_kernel(1e-5, rm=bm1684x.RM_HALF_UP).acquire_cmdbuf(), None, "A")
    b = loading.load(bm1684x_kernel(2.5, rm=bm1684x.RM_DOWN, local=0x20000).acquire_cmdbuf(), None, "B")
    text = diff.diff_listings(a, b).to_text()
    for line in ("    dst_addr: lmem:0x41000(npu1+0x1000) -> lmem:0x20000(npu0+0x20000)", "    opd1: 1e-05 -> 2.5",
                 "    round: half_up -> down"):
        assert line in text.splitlines(), text
    assert "opd1_addr" not in text and "_l32" not in text
    c = loading.load(bm1684x_kernel(2.5, rm=bm1684x.RM_DOWN).acquire_cmdbuf(), None, "C")
    assert diff.diff_listings(a, c, ["opd1", "round"]).equal          # a readable value's name, ignored


def test_bmk_disasm_width_option(tmp_path):
    from bmk.cli.main import asm as asm_cmd, disasm
    path = tmp_path / "k.cmdbuf"
    path.write_bytes(bm1684x_kernel().acquire_cmdbuf())
    res = CliRunner().invoke(disasm, [str(path), "--width", "70", "-o", str(tmp_path / "k.s")])
    assert res.exit_code == 0, res.output
    assert max(len(x) for x in (tmp_path / "k.s").read_text().splitlines()) <= 70
    res = CliRunner().invoke(asm_cmd, [str(tmp_path / "k.s"), "-o", str(tmp_path / "k2.cmdbuf")])
    assert res.exit_code == 0 and (tmp_path / "k2.cmdbuf").read_bytes() == path.read_bytes()
    out = CliRunner().invoke(disasm, [str(path)]).stdout          # not a terminal: one line per instruction
    assert not any(x.endswith("\\") for x in out.splitlines())
