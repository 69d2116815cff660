"""Issue 22: the daily-loop guide (docs/loop.md) runs as written. Its fenced blocks, in order,
in an empty folder:
- ```python whose first line is `# NAME.py`: a file the reader writes (NAME.py);
- ```python otherwise: run (in this process, the folder its working directory and on its
  path); a ```text block right after it is its printed output;
- ```console: each `$ COMMAND` run by bash with the installed console scripts (bmk-run,
  bmk-diff, pytest ...), stdout and stderr together, the lines up to the next `$` its output.
Outputs compare line by line (trailing blanks dropped); `...` in a line stands for any text,
and a line that is only `...` for any number of lines."""
import contextlib
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "loop.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.M | re.S)
FILE = re.compile(r"# (\w+\.py)\n")
TOOLS = ("bmk-run", "bmk-diff", "bmk-disasm", "pytest")


def scripts():
    """The folder of this environment's console scripts (where pip put bmk-run)."""
    for folder in (sysconfig.get_path("scripts"), str(pathlib.Path(sys.executable).parent)):
        if all((pathlib.Path(folder) / t).is_file() for t in TOOLS):
            return folder
    found = shutil.which("bmk-run")
    assert found, f"the console scripts {TOOLS} are not installed (pip install -e .)"
    return str(pathlib.Path(found).parent)


def blocks():
    """(kind, body, line) of every fenced block of the guide."""
    text = GUIDE.read_text()
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def _pattern(expected):
    parts = []
    for line in expected.rstrip("\n").split("\n"):
        line = line.rstrip()
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(p) for p in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def _normal(text):
    return "".join(line.rstrip() + "\n" for line in text.rstrip("\n").split("\n"))


def assert_output(actual, expected, where):
    if not _pattern(expected).fullmatch(_normal(actual)):
        pytest.fail(f"{where}: the output differs from the guide's.\n--- guide\n{expected}--- actual\n{actual}",
                    pytrace=False)


def test_the_pattern_rules():
    assert _pattern("a\n...\nc ... e\n").fullmatch(_normal("a\nx\ny\nc d e  \n"))
    assert _pattern("a\n...\n").fullmatch("a\n")
    assert not _pattern("a\nc\n").fullmatch("a\nb\nc\n")
    assert not _pattern("a ... b\n").fullmatch("a x c\n")


def _run_console(body, cwd, where):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PATH=f"{scripts()}{os.pathsep}{env.get('PATH', '')}", COLUMNS="80")
    steps = re.split(r"^\$ ", body, flags=re.M)
    assert steps[0] == "", f"{where}: a console block starts with a `$ ` command"
    for step in steps[1:]:
        command, _, expected = step.partition("\n")
        res = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=300)
        assert_output(res.stdout, expected, f"{where}: $ {command}")


def test_the_guide_runs_as_written(tmp_path, monkeypatch):
    folder = pathlib.Path(scripts())
    assert all((folder / t).is_file() for t in TOOLS), (folder, TOOLS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    found = blocks()
    kinds = [k for k, _, _ in found]
    assert set(kinds) <= {"python", "text", "console"}, kinds
    ran = {"file": 0, "python": 0, "console": 0, "output": 0}
    try:
        last_output = None
        for kind, body, line in found:
            where = f"docs/loop.md:{line}"
            if kind == "python" and FILE.match(body):
                (tmp_path / FILE.match(body).group(1)).write_text(body)
                ran["file"] += 1
                last_output = None
            elif kind == "python":
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(body, where, "exec"), {"__name__": "__guide__"})
                last_output = out.getvalue()
                ran["python"] += 1
            elif kind == "text":
                assert last_output is not None, f"{where}: a text block follows a python block (its output)"
                assert_output(last_output, body, where)
                last_output = None
                ran["output"] += 1
            else:
                _run_console(body, tmp_path, where)
                last_output = None
                ran["console"] += 1
    finally:
        for name in set(sys.modules) - before:
            if not name.startswith("bmk"):
                del sys.modules[name]
    assert ran["file"] == 2 and ran["python"] >= 6 and ran["console"] >= 4 and ran["output"] >= 4, ran
    assert (tmp_path / "test_relu_tiles.cmdbuf").is_file() and (tmp_path / "racy.bin.origins.json").is_file()


def test_the_guide_covers_the_loop_and_the_readme_links_it():
    text = GUIDE.read_text()
    for piece in ("assert_cmdbuf_equal", "cmdbuf_golden", "--bmk-update-golden", "bmk-diff", ".listing(",
                  ".save(", ".origins.json", "bmk-run", "--strict", "--trace"):
        assert piece in text, piece
    assert "(docs/loop.md)" in (ROOT / "README.md").read_text()
