"""load_chip keeps each engine file's checked classes in __pycache__ beside it (bmk/isa/spec.py
_cached_engine_classes): what it remakes from them equals what the checks build, a damaged copy
is built again, and a file that fails its checks is never kept."""
import functools
import shutil
from pathlib import Path

import pytest

from bmk.errors import SpecError
from bmk.isa import chips
from bmk.isa import spec

SPECS = Path(spec.__file__).parent.parent / "specs"


@pytest.fixture
def specs_copy(tmp_path, monkeypatch):
    """A copy of the shipped spec files (no caches), read in place of the package's."""
    for chip in chips():
        shutil.copytree(SPECS / chip, tmp_path / chip, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(spec, "_specs_root", lambda: tmp_path)
    return tmp_path


def loaded(chip):
    """What load_chip builds (its cache not kept across calls: load_chip's own memo is skipped)."""
    return spec.build_chip(chip, spec._read_toml(chip, "chip.toml"), functools.partial(spec._read_toml, chip),
                           functools.partial(spec._cached_engine_classes, chip))


def checked(chip):
    """The same chip built by the checks alone, no cache."""
    return spec.build_chip(chip, spec._read_toml(chip, "chip.toml"), functools.partial(spec._read_toml, chip))


def same(a, b):
    assert a == b
    for x, y in zip(a.engines, b.engines, strict=True):
        assert x.classes == y.classes and x.head == y.head and x.selector == y.selector
        assert x.index == y.index                           # index and alternates' indexes are eq=False
        assert [(t.name, t.head, t.selector, t.index) for t in x.alternates] == \
               [(t.name, t.head, t.selector, t.index) for t in y.alternates]
        for engine in (x, y):                                 # each index points at its own classes
            by_name = {c.name: c for c in engine.classes}
            for table in [engine.index] + [t.index for t in engine.alternates]:
                assert all(by_name[c.name] is c for c in table.values())


def built_files(root, chip):
    return sorted(p.name for p in (root / chip / "__pycache__").glob("*.built.*.marshal"))


@pytest.mark.parametrize("chip", chips())
def test_the_classes_remade_from_the_kept_copy_equal_the_checked_build(specs_copy, chip, monkeypatch):
    loaded(chip)
    files = {e["format"] for e in spec._read_toml(chip, "chip.toml")["engines"].values() if "format" in e}
    assert [n.split(".")[0] for n in built_files(specs_copy, chip)] == sorted(files)
    monkeypatch.setattr(spec, "build_engine_classes", None)      # the second load must not check again
    again = loaded(chip)
    monkeypatch.undo()
    same(again, checked(chip))


def test_a_damaged_copy_is_built_again(specs_copy):
    loaded("bm1684x")
    for name in built_files(specs_copy, "bm1684x"):
        (specs_copy / "bm1684x" / "__pycache__" / name).write_bytes(b"\xe9\x02\x00\x00\x00i\x01\x00\x00\x00")
    same(loaded("bm1684x"), checked("bm1684x"))


def test_an_edited_spec_file_is_checked_again_and_a_bad_one_never_kept(specs_copy):
    loaded("bm1880")
    kept = built_files(specs_copy, "bm1880")
    tiu = specs_copy / "bm1880" / "tiu.toml"
    text = tiu.read_text()
    bad = text.replace("width = 1 }", "width = 2 }", 1)     # the first field grows over the next one
    assert bad != text
    tiu.write_text(bad)
    for _ in range(2):
        with pytest.raises(SpecError, match="overlaps"):
            loaded("bm1880")
    assert built_files(specs_copy, "bm1880") == kept            # nothing kept for the bad file
    tiu.write_text(text)
    same(loaded("bm1880"), checked("bm1880"))
