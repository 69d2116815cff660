"""The generated specs regenerate: tools/specgen.py, run on the fact files in tools/facts/,
writes every file of bmk/specs/<chip>/ for the chips it generates, byte for byte (issue 17
item 5). A hand edit of a generated .toml, or a fact or script change not regenerated,
fails here."""
from pathlib import Path

import pytest

from tests.tool_loader import load_tool

ROOT = Path(__file__).resolve().parents[2]


SPECGEN = load_tool("specgen")


def test_specgen_reads_facts_from_the_repository():
    assert SPECGEN.FACTS == ROOT / "tools" / "facts"
    for fact_file, _ in SPECGEN.GENERATORS.values():
        assert (SPECGEN.FACTS / fact_file).is_file()


@pytest.mark.parametrize("chip", sorted(SPECGEN.GENERATORS))
def test_generated_spec_equals_the_shipped_one(chip, tmp_path):
    SPECGEN.generate(tmp_path, chips=[chip])
    shipped = ROOT / "bmk" / "specs" / chip
    made = sorted(p.name for p in (tmp_path / chip).iterdir())
    assert made == sorted(p.name for p in shipped.glob("*.toml"))
    for name in made:
        got, want = (tmp_path / chip / name).read_text(), (shipped / name).read_text()
        if got != want:
            import difflib
            diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                     f"bmk/specs/{chip}/{name}", "regenerated"))[:40])
            pytest.fail(f"bmk/specs/{chip}/{name} differs from what tools/specgen.py makes "
                        f"(run `python tools/specgen.py {chip}`):\n{diff}")
