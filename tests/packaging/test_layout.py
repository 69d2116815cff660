"""Packaging (issue 12, item 12): a checkout folder named `bmk` must not shadow the installed
package when a script runs from the folder above it.

Python makes any folder named `bmk` on sys.path (a script's own folder comes first) a
namespace package unless a regular `bmk` package is found on sys.path. The editable install
of setuptools puts a regular package on sys.path (a static path entry) only for a simple
layout: one `package-dir` root under which every package sits at its dotted path; otherwise
it installs an import hook that runs after that namespace package has already won. So: the
layout stays simple (every importable folder lives under bmk/), and the scenario itself runs.
"""
import pathlib
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).parents[2]


def test_layout_is_simple_so_editable_installs_use_a_path_entry():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["package-dir"] == {"": "."}
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "bmk").rglob("__init__.py")}
    # every package found (setuptools' discovery, as `pip install` runs it), each at its dotted path
    from setuptools import find_packages
    find = tool["packages"]["find"]
    assert find["include"] == ["bmk", "bmk.*"] and find["namespaces"] is False
    assert sorted(find_packages(str(ROOT / find["where"][0]), include=find["include"])) == sorted(found)
    assert {p.name for p in (ROOT / "bmk").iterdir() if (p / "__init__.py").is_file()} >= {"isa", "encoders", "cli",
                                                                                          "specs", "sim", "bm1880"}


def test_a_checkout_named_bmk_does_not_shadow_the_package(tmp_path):
    checkout = tmp_path / "bmk"                 # e.g. `git clone ... bmk`, then a script next to it
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md"):
        (checkout / name).write_bytes((ROOT / name).read_bytes())
    (checkout / "tests").mkdir()
    script = tmp_path / "use_bmk.py"
    script.write_text("import bmk\nprint(bmk.Simulator.__name__, bmk.chips())\n")
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Simulator (") and "bm1880" in out.stdout


def test_dir_shows_the_lazy_names_and_a_model_prints_one_line():
    """Issue 32.16: dir(bmk) hid Simulator, decode, encode, load_model; print(model) dumped every
    field of every net (bmk info is the long form)."""
    import bmk
    from tests.models import files as F
    assert {"Simulator", "decode", "encode", "load_model", "check", "chips"} <= set(dir(bmk))
    text = repr(bmk.load_model(F.RETINAFACE))
    assert text == f"<Model bmodel bm1684 {str(F.RETINAFACE)!r}: 1 net, 1 group>"
