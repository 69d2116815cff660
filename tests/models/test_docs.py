"""docs/models.md: its `bmk info` output is today's, its Python example runs, its round trip holds."""
import os
import pathlib

from click.testing import CliRunner

import bmk
from bmk.cli.main import asm, bmk as bmk_cmd, disasm

ROOT = pathlib.Path(__file__).parent.parent.parent
DOC = (ROOT / "docs" / "models.md").read_text()


def _blocks(lang):
    """The fenced blocks tagged `lang` ('' for untagged ones), in order."""
    blocks, current, tag = [], None, None
    for line in DOC.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, tag = [], line[3:].strip()
            else:
                if tag == lang:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_the_info_example_is_what_bmk_info_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    command, output = _blocks("sh")[0].strip(), _blocks("")[0]
    assert command.startswith("bmk info ")
    res = CliRunner().invoke(bmk_cmd, command.split()[1:])
    assert res.exit_code == 0 and res.output == output


def test_the_python_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(_blocks("python")[0], "docs/models.md", "exec"), {})


def test_the_round_trip_example(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    lines = [line.split("#")[0].split() for line in _blocks("sh")[2].strip().splitlines()]
    (dis, *dis_args), (_, *asm_args) = lines
    assert dis == "bmk-disasm"
    rebase = {a: str(tmp_path / a) for a in ("g.s", "g.tiu.bin", "g.gdma.bin")}
    runner = CliRunner()
    assert runner.invoke(disasm, [rebase.get(a, a) for a in dis_args]).exit_code == 0
    assert runner.invoke(asm, [rebase.get(a, a) for a in asm_args]).exit_code == 0
    g = bmk.load_model(dis_args[0]).group(dis_args[2])
    assert open(rebase["g.tiu.bin"], "rb").read() == g.streams["tiu"]
    assert open(rebase["g.gdma.bin"], "rb").read() == g.streams["gdma"]
    assert os.path.exists(rebase["g.s"])


def test_the_whole_listing_example(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    lines = [line.split("#")[0].split() for line in _blocks("sh")[3].strip().splitlines()]
    (dis, *dis_args), (_, *asm_args) = lines
    assert dis == "bmk-disasm" and asm_args[-2] == "--dir"
    rebase = {a: str(tmp_path / a) for a in ("m.s", "out")}
    runner = CliRunner()
    assert runner.invoke(disasm, [rebase.get(a, a) for a in dis_args]).exit_code == 0
    assert runner.invoke(asm, [rebase.get(a, a) for a in asm_args]).exit_code == 0
    m = bmk.load_model(dis_args[0])
    for g in m.groups():
        for engine, data in g.streams.items():
            assert (tmp_path / "out" / f"{g.label.replace('/', '.')}.{engine}.bin").read_bytes() == data


def test_the_check_example_is_what_bmk_check_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    command, output = _blocks("sh")[-2].strip(), _blocks("")[-2]
    assert command.startswith("bmk check ")
    res = CliRunner().invoke(bmk_cmd, command.split()[1:])
    assert res.exit_code == (1 if "refusal" in output else 0) and res.output == output


def test_the_lint_example_is_what_bmk_lint_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    command, output = _blocks("sh")[-1].strip(), _blocks("")[-1]
    assert command.startswith("bmk lint ")
    res = CliRunner().invoke(bmk_cmd, command.split()[1:])
    assert res.exit_code == 1 and res.output == output
