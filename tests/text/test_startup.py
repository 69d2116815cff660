"""Start-up of the command-line tools (issue 24 item 4): bmk-disasm of a small file picks its
chip from the magic table (chip.toml [cmd_hdr] alone: no other chip's spec is built), imports
neither numpy nor the model readers, and parses every record's header once."""
import json
import subprocess
import sys

from bmk.encoders import framing
from bmk.text import asm, loading
from tests.vectors import vendor

PROBE = """
import sys, json
from bmk.cli.main import disasm
from bmk.isa import spec
sys.argv = ["bmk-disasm", sys.argv[1], "-o", sys.argv[2]]
try:
    disasm()
except SystemExit:
    pass
print(json.dumps({"built": sorted({c for c in spec._BUILT}), "modules": sorted(m for m in sys.modules
                  if m.split(".")[0] == "numpy" or m in ("bmk.models.bmodel", "bmk.models.cvimodel"))}))
"""


def test_bmk_disasm_of_a_small_file_builds_one_chip_and_imports_no_numpy(tmp_path):
    import bmk
    buf = bmk.encode("bm1684x", bmk.decode("bm1684x", vendor.streams("bm1684x"))[:4])
    path = tmp_path / "small.bin"
    path.write_bytes(buf)
    probe = PROBE.replace("from bmk.isa import spec\n", "from bmk.isa import spec\n_build = spec.build_chip\n"
                          "spec._BUILT = []\n"
                          "def build(name, *a):\n    spec._BUILT.append(name)\n    return _build(name, *a)\n"
                          "spec.build_chip = build\n")
    out = subprocess.run([sys.executable, "-c", probe, str(path), str(tmp_path / "out.s")], capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout) == {"built": ["bm1684x"], "modules": []}
    assert (tmp_path / "out.s").read_text().startswith(".chip bm1684x\n")


def test_each_record_header_is_parsed_once(monkeypatch):
    import bmk
    buf = bmk.encode("bm1684x", bmk.decode("bm1684x", vendor.streams("bm1684x")))
    calls = []
    real = framing.frame_at

    def counted(*args, **kwargs):
        calls.append(args[2])
        return real(*args, **kwargs)
    monkeypatch.setattr(framing, "frame_at", counted)
    monkeypatch.setattr(loading, "record_at", None)          # the second parse it used to make
    listing = loading.load(buf, "bm1684x")
    text = asm.disassemble(listing.chip, listing.records)
    n = len(listing.records)
    assert n == 572 and sorted(calls) == list(listing.records.offsets)
    assert text.count("\n") == n + 1
