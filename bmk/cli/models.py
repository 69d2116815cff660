"""The model side of the CLI: `bmk info`, `bmk extract`, and bmk-run / bmk-disasm / bmk-diff on a model.

A file is a model when it starts with a bmodel's or a cvimodel's magic (`sniff`); the commands
that take a command buffer take a model in its place. Library work lives in bmk.models and
bmk.text.model_*; this module parses options and writes files.
"""
import json
import os
import re

import click

from bmk.errors import BmkError, quoted

_INPUT_RE = re.compile(r"^(?P<name>[^=]+)=(?P<path>.+)$")


def sniff(path):
    """True when the file at `path` (not stdin) starts like a bmodel or a cvimodel."""
    from bmk.models.magic import is_model
    if path in (None, "-") or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return is_model(f.read(8))


def load(path):
    from bmk.models import load_model
    return load_model(path)


def file_stem(label):
    """A group label as a file name stem: net0/stage0/... -> net0.stage0...."""
    return label.replace("/", ".")


# ----------------------------------------------------------------------------- extract

def extract(model, out_dir, verify=True):
    """Write every group's streams, each stage's coefficients, the kernel module and model.json
    (bmk info --json plus the files written) into out_dir; return the file names. verify:
    coefficients that do not hash to the sha256 the file records are a ModelError before
    anything is written."""
    from bmk.text.model_info import info_dict
    from bmk.util import file_name
    for net in model.nets if verify else ():
        for st in net.stages:
            model.coefficients(st, verify=True)
    os.makedirs(out_dir, exist_ok=True)
    written = {}

    def put(name, data):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        written[name] = len(data)
        return name

    files = {"groups": {}, "coefficients": {}, "kernel_module": None}
    for g in model.groups():
        stem = file_stem(g.label)
        if g.cmdbuf_blob is not None:
            files["groups"][g.label] = {"cmdbuf": put(f"{stem}.cmdbuf.bin", g.cmdbuf)}
        else:
            files["groups"][g.label] = {e: put(f"{stem}.{e}.bin", data) for e, data in g.streams.items()}
    for net in model.nets:
        for st in net.stages:
            if st.coeff is not None and st.coeff.blob is not None:
                files["coefficients"][f"net{net.index}/stage{st.index}"] = put(
                    f"net{net.index}.stage{st.index}.coeff.bin", model.coefficients(st))
    if model.kernel_module:
        files["kernel_module"] = put("kernel_module." + file_name(os.path.basename(model.kernel_module[0] or "bin")),
                                     model.kernel_module[1].read(model.data))
    info = info_dict(model)
    info["files"] = files
    text = json.dumps(info, indent=2) + "\n"
    put("model.json", text.encode())
    return written


# ----------------------------------------------------------------------------- run

def read_inputs(specs):
    """--input NAME=FILE.npy (one array) or --input FILE.npz (every array, by its name) -> {name: array}."""
    import numpy as np
    out = {}
    for spec in specs:
        m = _INPUT_RE.match(spec)
        name, path = (m["name"], m["path"]) if m and not os.path.exists(spec) else (None, spec)
        if name is None and not os.path.exists(path):
            raise BmkError(f"--input must be NAME=FILE.npy or FILE.npz, not {quoted(spec)}")
        try:
            loaded = np.load(path, allow_pickle=False)
        except (ValueError, EOFError) as e:
            raise BmkError(f"--input {path}: not a valid .npy/.npz file ({e})") from None
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                arrays = {k: loaded[k] for k in loaded.files}
            if name is not None:
                if len(arrays) != 1:
                    raise BmkError(f"--input {spec}: NAME=FILE takes a .npy (or a .npz of one array), "
                                   f"{path} has {len(arrays)}")
                arrays = {name: next(iter(arrays.values()))}
        else:
            if name is None:
                raise BmkError(f"--input must be NAME=FILE.npy or FILE.npz, not {quoted(spec)}")
            arrays = {name: loaded}
        for k, v in arrays.items():
            if k in out:
                raise BmkError(f"--input: input {quoted(k)} given twice")
            out[k] = v
    return out


def run_model(model, inputs, output, dumps, as_json, trace, progress, strict=False):
    """bmk-run on a model: simulate, print the per-group reports and the outputs, save them.
    strict: the local-memory checks too (off for models otherwise, bmk.models.run.simulate);
    after the reports, exit 1 on a race, else a warning is a failure (exit 2, one line)."""
    import numpy as np

    from bmk.cli.simrun import format_table, write_dump
    from bmk.models.run import prepare, simulate, write_trace
    prepared = prepare(model)               # what cannot run is said before any input file is read
    values = read_inputs(inputs)
    outputs, reports, sim = simulate(model, values, progress=_progress(progress), prepared=prepared,
                                     checks=bool(strict))
    for addr, nbytes, path in dumps:
        write_dump(path, sim, addr, nbytes)
    if trace:
        write_trace(reports, trace)
    if output:
        np.savez(output, **outputs)
    if as_json:
        click.echo(json.dumps({"groups": [{"label": label, "report": r.to_dict()} for label, r in reports],
                               "outputs": {k: {"dtype": str(v.dtype), "shape": list(v.shape)}
                                           for k, v in outputs.items()}}, indent=2))
        return _strict(reports) if strict else 0
    for label, report in reports:
        click.echo(f"{label}: " + format_table(report))
    for k, v in outputs.items():
        lo, hi = (float(v.min()), float(v.max())) if v.size else (0, 0)
        click.echo(f"output {k}: {v.dtype} {tuple(v.shape)}, min {lo:g}, max {hi:g}"
                   + (f" -> {output}" if output else ""))
    return _strict(reports) if strict else 0


def _strict(reports):
    """--strict on a model's reports: 1 on a race (one stderr line), a BmkError naming the
    group and the first local-memory warning, else 0."""
    from bmk.errors import BmkError
    races = sum(len(r.races) for _, r in reports)
    if races:
        click.echo(f"{click.get_current_context().find_root().info_name}: --strict: {races} race(s)", err=True)
        return 1
    for label, r in reports:
        if r.warnings:
            n = sum(len(x.warnings) for _, x in reports)
            raise BmkError(f"--strict: {n} local-memory warning{'s' if n > 1 else ''}, the first: {label}: "
                           f"{r.warnings[0]}")
    return 0


def _progress(flag):
    if not flag:
        return None
    import sys

    def show(done, total):
        click.echo(f"\rsimulating {done}/{total}", err=True, nl=done == total)
        sys.stderr.flush()
    return show
