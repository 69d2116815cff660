"""Real streams round-trip on any chip (issue 28 item 2): every chip folder of tests/golden/ holding
`<name>.<engine>.bin` decodes, re-encodes raw and as cmd_hdr_t to the same bytes, and reads back
from its listing (bmk-disasm -> bmk-asm) and diffs equal to itself, whatever the chip; the
vendor's .reg.test / .mlir.test are a separate layer (test_vendor_streams.py).

The trial chip: a decode-only chip's spec (bm1688) copied under a new name with streams of its
own under tests/golden/<trial>/ (in a temporary tree) is found by the chip registry, the
golden discovery and tools/asm_fixtures.py, with no file of bmk or tests edited."""
import re
import shutil

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import asm as asm_cli, diff, disasm
from bmk.isa import load_chip, spec
from bmk.isa.registry import Capabilities, capabilities, chips_with
from bmk.text import asm
from tests.models.files import RESNET_1688
from tests.tool_loader import load_tool
from tests.vectors import vendor

MODEL_OF = "bm1688"
# a name and a cmd_hdr_t magic no chip has (so the test also runs in a tree that added a chip
# called "trial"), the magic never the first byte of UTF-8 text (0x80..0xBF)
TRIAL = next(n for n in ("trial", "trial_b", "trial_c") if n not in spec.chips())
TRIAL_MAGIC = next(m for m in range(0x8A, 0xC0)
                   if all(m != c.magic and m not in c.legacy_magics for c in spec.magic_table()))


def roundtrip(chip, streams, tmp_path):
    """Every check a stream chip gets: decode, both encodings, the listing read back, diff."""
    records = bmk.decode(chip, streams)
    assert records and all(r.kind is not None for r in records)
    assert bmk.encode(chip, records, raw=True) == streams
    buf = bmk.encode(chip, records)
    assert bmk.encode(chip, bmk.decode(chip, buf), raw=True) == streams
    for fields in ("changed", "all"):
        program = asm.parse(asm.disassemble(load_chip(chip), records, fields, locations=True))
        assert {e: program.raw_stream(e) for e in streams} == streams
    paths = {}
    for engine, data in streams.items():
        paths[engine] = tmp_path / f"p.{engine}.bin"
        paths[engine].write_bytes(data)
    side = ",".join(f"{e}={p}" for e, p in paths.items())
    runner = CliRunner()
    raw = [a for e, p in paths.items() for a in ("--raw", e, str(p))]
    out = tmp_path / "p.s"
    assert runner.invoke(disasm, ["--chip", chip, *raw, "-o", str(out)]).exit_code == 0
    assert runner.invoke(asm_cli, [str(out), "-o", str(tmp_path / "p.cmdbuf")]).exit_code == 0
    assert (tmp_path / "p.cmdbuf").read_bytes() == buf
    res = runner.invoke(diff, ["--chip", chip, side, str(tmp_path / "p.cmdbuf")])
    assert res.exit_code == 0, res.output
    return records


@pytest.mark.parametrize("chip", vendor.CHIPS)
def test_golden_streams_round_trip(chip, tmp_path):
    assert capabilities(chip).decode
    roundtrip(chip, vendor.streams(chip), tmp_path)


def test_the_golden_chips_are_found_by_folder():
    assert {"bm1684", "bm1684x"} <= set(vendor.CHIPS) and set(vendor.CHECKED) <= set(vendor.CHIPS)
    assert vendor.API_CHIPS == [c for c in vendor.CHIPS if capabilities(c).api]


@pytest.fixture
def trial(tmp_path, monkeypatch):
    """A specs tree with every chip and `trial` (bm1688's spec, renamed, its own magic), and a
    tests tree whose golden/trial/ holds one core's streams of a real bm1688 model."""
    specs = tmp_path / "specs"
    specs.mkdir()
    real = spec._specs_root()
    for chip in spec.chips():
        (specs / chip).symlink_to(real / chip, target_is_directory=True)
    shutil.copytree(real / MODEL_OF, specs / TRIAL, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (specs / TRIAL / "chip.toml").read_text()
    toml = re.sub(r'(?m)^name = "bm1688"$', f'name = "{TRIAL}"', toml, count=1)
    toml, n = re.subn(r"(?m)^magic = 0x88$", f"magic = 0x{TRIAL_MAGIC:02X}", toml)
    assert n == 1
    (specs / TRIAL / "chip.toml").write_text(toml)
    model = bmk.load_model(RESNET_1688)
    streams = model.groups()[0].payload                 # {engine: bytes}: one core's streams
    golden = tmp_path / "tests" / "golden" / TRIAL
    golden.mkdir(parents=True)
    for engine, data in streams.items():
        (golden / f"prog.{engine}.bin").write_bytes(data)
    cached = (spec.chips, spec.magic_table, spec.magic_owners, spec.load_chip)
    for f in cached:
        f.cache_clear()
    monkeypatch.setattr(spec, "_specs_root", lambda: specs)
    yield tmp_path / "tests", streams
    for f in cached:
        f.cache_clear()


def test_a_trial_chip_is_found_and_round_trips_with_no_edit(trial, tmp_path):
    tests, streams = trial
    assert TRIAL in bmk.isa.chips() and TRIAL not in bmk.chips()
    assert capabilities(TRIAL) == Capabilities(TRIAL, True, None, None, None, None)
    assert TRIAL not in chips_with("simulator") and TRIAL not in chips_with("cost_model")
    found = vendor.find_streams(tests / "golden")
    assert list(found) == [TRIAL] and list(found[TRIAL]) == list(streams)
    records = roundtrip(TRIAL, {e: p.read_bytes() for e, p in found[TRIAL].items()}, tmp_path)
    assert [r.fields for r in records] == [r.fields for r in bmk.decode(MODEL_OF, streams)]
    from bmk.cli.chipinfo import chip_rows
    rows = dict(chip_rows())
    assert rows[TRIAL]["encode API"].startswith("no") and rows[TRIAL]["simulate"].startswith("no")
    assert f"magic 0x{TRIAL_MAGIC:02X}" in rows[TRIAL]["decode/disasm/asm/diff"]


def test_asm_fixtures_of_a_trial_chip_come_from_its_streams_and_none_without(trial, monkeypatch):
    tests, _ = trial
    tool = load_tool("asm_fixtures")
    monkeypatch.setattr(tool, "TESTS", tests)
    text = tool.valid(TRIAL)
    assert f"tests/golden/{TRIAL}" in text and text.count(".line ") > 5
    shutil.rmtree(tests / "golden" / TRIAL)
    with pytest.raises(SystemExit, match=f"{TRIAL}: no vendor commands to make fixtures from"):
        tool.valid(TRIAL)
