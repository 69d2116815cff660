"""Compiled models (issue 19): `bmk info` wall time per model, and what each command does on it.

For every .bmodel/.cvimodel under tests/models (or the folders given): its size, chip, groups,
instructions (the file's counts, or counted by walking a cvimodel's buffer when bmk has the
chip's specs), the wall time of `bmk info MODEL` in a fresh process (interpreter start and
imports included) and of load_model + the info dict in this one, and whether disasm, diff with
itself and run work (run: "yes", or the first words of why not). Run by hand:

    python bench/models.py [FOLDER ...] [--no-run]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).parent.parent


def _bmk(*args):
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", "from bmk.cli.main import bmk; bmk()", *args], capture_output=True,
                         text=True, cwd=HERE)
    return time.perf_counter() - t, res


def row(path, run):
    import bmk
    from bmk.models.run import prepare
    from bmk.text.model_info import info_dict
    t = time.perf_counter()
    m = bmk.load_model(path)
    d = info_dict(m)
    inproc = time.perf_counter() - t
    wall, res = _bmk("info", str(path))
    assert res.returncode == 0, res.stderr
    groups = [g for n in d["nets"] for s in n["stages"] for g in s["groups"]]
    known = [n for g in groups for n in g["counts"].values() if n is not None]
    unknown = [e for g in groups for e, n in g["counts"].items() if n is None]
    works = []
    if m.decodable:
        from bmk.text.model_listing import group_listing
        for g in m.groups():
            group_listing(m, g)             # what bmk-disasm and bmk-diff decode
        works += ["disasm", "diff"]
    if run:
        try:
            prepare(m)
            works.append("run")
        except bmk.BmkError as e:
            why = str(e).removeprefix(f"{path}: ").removeprefix("run: ")
            works.append(f"run: no ({why[:90]}...)")
    return (path.relative_to(HERE) if path.is_relative_to(HERE) else path, os.path.getsize(path), m.chip,
            len(groups), sum(known), sorted(set(unknown)), wall, inproc, works)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*", default=[str(HERE / "tests" / "models")])
    ap.add_argument("--no-run", action="store_true")
    args = ap.parse_args()
    paths = sorted(p for f in args.folders for p in pathlib.Path(f).resolve().rglob("*")
                   if p.suffix in (".bmodel", ".cvimodel"))
    print("| file | bytes | chip | groups | instructions | bmk info (process) | load+info (in process) | works |")
    print("|---|---|---|---|---|---|---|---|")
    for p in paths:
        name, size, chip, ngroups, n, unknown, wall, inproc, works = row(p, not args.no_run)
        count = f"{n}" + (f" + {', '.join(unknown)} not counted" if unknown else "")
        print(f"| {name} | {size:,} | {chip} | {ngroups} | {count} | {wall * 1000:.0f} ms | {inproc * 1000:.1f} ms | "
              f"info{', ' + ', '.join(works) if works else ''} |")


if __name__ == "__main__":
    main()
