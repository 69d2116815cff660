"""bmk-asm / bmk-disasm through click's CliRunner."""
import pytest
from click.testing import CliRunner

from bmk.cli.main import asm, bmk, disasm
from bmk.encoders import decode_cmdbuf, decode_stream, merge_streams
from bmk.isa import load_chip, magic_table
from tests.goldens import GOLDEN_BUFFERS, GOLDEN_IDS, golden

CHIP = load_chip("bm1880")


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


@pytest.mark.parametrize("name,buf,instructions", GOLDEN_BUFFERS, ids=GOLDEN_IDS)
def test_disasm_then_asm_gives_the_same_bytes(runner, name, buf, instructions):
    open("in.cmdbuf", "wb").write(buf)
    res = runner.invoke(disasm, ["in.cmdbuf"] + ([] if buf else ["--chip", "bm1880"]))
    assert res.exit_code == 0, res.stderr
    open("in.s", "w").write(res.stdout)
    res = runner.invoke(asm, ["in.s", "-o", "out.cmdbuf"])
    assert res.exit_code == 0, res.stderr
    assert open("out.cmdbuf", "rb").read() == buf


@pytest.mark.parametrize("fields", ["changed", "nonzero", "all"])
def test_fields_option_round_trips(runner, fields):
    buf = golden("conv_pad_stride_bias_relu")
    open("in.cmdbuf", "wb").write(buf)
    res = runner.invoke(bmk, ["disasm", "--fields", fields, "in.cmdbuf", "-o", "x.s"])
    assert res.exit_code == 0, res.stderr
    text = open("x.s").read()
    assert text.startswith(".chip bm1880\n")
    assert (".fields " + fields in text) == (fields != "changed")
    assert runner.invoke(bmk, ["asm", "x.s", "-o", "-"]).stdout_bytes == buf


def test_disasm_shows_ids_and_waits(runner):
    open("in.cmdbuf", "wb").write(golden("add_i8_res16"))
    out = runner.invoke(disasm, ["in.cmdbuf"]).stdout.splitlines()
    assert out[0] == ".chip bm1880"
    assert all(" id=" in line and " wait." in line for line in out[1:])


def test_fields_all_prints_every_field(runner):
    open("in.cmdbuf", "wb").write(golden("dma_load_store_tensor"))
    lines = runner.invoke(disasm, ["--fields", "all", "in.cmdbuf"]).stdout.splitlines()
    nfields = len(CHIP.engine("tdma").format.fields)
    assert lines[2].count("=") == nfields     # id= and wait.tiu= stand for cmd_id and wait_id_tpu


def test_raw_streams(runner):
    buf = golden("conv_pad_stride_bias_relu") + golden("dma_load_store_tensor")
    open("in.cmdbuf", "wb").write(buf)
    text = runner.invoke(disasm, ["in.cmdbuf"]).stdout
    open("in.s", "w").write(text)
    res = runner.invoke(asm, ["in.s", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin"])
    assert res.exit_code == 0, res.stderr
    recs = decode_cmdbuf(CHIP, buf)
    assert len(open("t.bin", "rb").read()) == 112 * sum(r.engine == "tiu" for r in recs)
    assert len(open("g.bin", "rb").read()) == 64 * sum(r.engine == "tdma" for r in recs)
    res = runner.invoke(disasm, ["--chip", "bm1880", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin"])
    assert res.exit_code == 0, res.stderr
    # the raw text is the two streams merged by sync ids; each engine's instructions are unchanged
    lines = [line.split("  ", 1)[1].strip() for line in res.stdout.splitlines()[1:]]
    assert res.stdout.splitlines()[1].startswith("0 @")
    original = text.splitlines()[1:]
    for engine in ("tiu.", "tdma."):
        assert [x for x in lines if x.startswith(engine)] == \
            [x.split("  ", 1)[1].strip() for x in original if x.split("  ", 1)[1].strip().startswith(engine)]
    merged = merge_streams(CHIP, {e: decode_stream(CHIP, e, open(f, "rb").read())
                                  for e, f in (("tiu", "t.bin"), ("tdma", "g.bin"))})
    assert [x.split()[0] for x in lines] == [r.name for r in merged]
    open("bad.bin", "wb").write(b"\0" * 100)
    res = runner.invoke(disasm, ["--chip", "bm1880", "--raw", "tiu", "bad.bin"])
    assert res.exit_code == 2
    assert res.stderr == "disasm: bad.bin: tiu stream byte 0: truncated tiu command: 100 of 112 bytes\n"
    res = runner.invoke(disasm, ["--raw", "tiu", "t.bin"])
    assert res.exit_code == 2
    assert res.stderr.startswith("disasm: --raw needs --chip") and res.stderr.count("\n") == 1


def test_asm_from_stdin_and_chip_option(runner):
    res = runner.invoke(asm, ["-", "-o", "out.bin", "--chip", "bm1880"], input="tdma.load dst_c=2\n")
    assert res.exit_code == 0, res.stderr
    assert decode_cmdbuf(CHIP, open("out.bin", "rb").read())[0].fields["dst_c"] == 2


def _buf():
    return golden("dma_load_store_tensor")     # four TDMA records of 72 bytes


CORRUPT = [
    ("bad magic", lambda b: b[:72] + b"\x5a" + b[73:], "byte 72: bad magic 0x5a, expected 0xa5 for bm1880"),
    # every chip whose magic picks it (specs/<chip>/chip.toml [cmd_hdr] detect), in chips() order
    ("first byte", lambda b: b"\x00" + b[1:], "byte 0: bad magic 0x00, expected one of "
     + ", ".join(f"0x{m.magic:02x} ({m.name})" for m in magic_table() if m.detect)),
    ("truncated header", lambda b: b[:77], "byte 72: truncated cmd_hdr_t: 5 bytes left, a header is 8"),
    ("truncated descriptor", lambda b: b[:102], "byte 72: truncated tdma command: 22 of 64 bytes"),
    ("unknown engine", lambda b: b[:74] + b"\x07" + b[75:], "byte 72: unknown engine id 7"),
    ("engine without format", lambda b: b[:74] + b"\x01" + b[75:],
     "byte 72: engine 'cpu' (id 1) has no instruction classes in bm1880"),
    ("length mismatch", lambda b: b[:73] + b"\x70" + b[74:],
     "byte 72: length mismatch: header says 112 bytes, a tdma command is 64"),
]


@pytest.mark.parametrize("what,corrupt,message", CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupt_buffer_is_one_line_exit_2(runner, what, corrupt, message):
    open("bad.cmdbuf", "wb").write(corrupt(_buf()))
    res = runner.invoke(disasm, ["bad.cmdbuf"])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr == f"disasm: bad.cmdbuf: {message}\n"


def test_asm_errors_are_one_line_exit_2(runner):
    open("bad.s", "w").write(".chip bm1880\ntiu.add res0_c=5000\n")
    res = runner.invoke(asm, ["bad.s", "-o", "out.bin"])
    assert res.exit_code == 2
    assert res.stderr == "asm: bad.s:2:16: res0_c must be in [0, 4095] (12 bits), not 5000\n"
    open("bin.s", "wb").write(b"\xa5\xff\x00")
    res = runner.invoke(asm, ["bin.s", "-o", "out.bin"])
    assert res.exit_code == 2 and "not UTF-8 assembly text" in res.stderr


def test_missing_file_and_missing_output(runner):
    res = runner.invoke(disasm, ["nope.cmdbuf"])
    assert res.exit_code == 2 and res.stderr == "disasm: nope.cmdbuf: No such file or directory\n"
    open("a.s", "w").write(".chip bm1880\n")
    res = runner.invoke(asm, ["a.s"])
    assert res.exit_code == 2 and res.stderr == "asm: missing -o OUT (or --raw ENGINE OUT, or --dir DIR)\n"


def test_group_lists_subcommands(runner):
    out = runner.invoke(bmk, ["--help"]).stdout
    for name in ("asm", "disasm", "diff", "run", "demo"):
        assert f"  {name} " in out
