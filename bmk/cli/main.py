"""The click commands: `bmk` (group) and bmk-asm, bmk-disasm, bmk-diff, bmk-run.

Commands are thin: parsing and printing live in bmk.text.asm, diffing in bmk.text.diff,
reading in bmk.text.loading. Only here do exceptions become one stderr line and an exit code:
0 success (diff: equal), 1 different / race under --strict, 2 bad input.
"""
import functools
import json
import pathlib
import sys

import click

from bmk.errors import BmkError

EXIT_BAD_INPUT = 2
FIELDS_HELP = ("which fields to print: changed = those that differ from the reset default "
               "(default), nonzero = every non-zero field, all = every field")


def _prog():
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().info_name or "bmk" if ctx else "bmk"


def fail(message, code=EXIT_BAD_INPUT):
    """Print one line '<prog>: <message>' on stderr and exit."""
    message = " ".join(str(message).split("\n"))
    click.echo(f"{_prog()}: {message}", err=True)
    sys.exit(code)


def guarded(fn):
    """Turn bmk errors and unreadable files into one stderr line and exit 2."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BmkError as e:
            fail(e)
        except OSError as e:
            fail(f"{e.filename or ''}: {e.strerror or e}" if getattr(e, "filename", None) else e)
    return wrapper


def _read(path):
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    if path == "-":
        out = sys.stdout.buffer if isinstance(data, bytes) else sys.stdout
        out.write(data)
        out.flush()
        return
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


chip_option = click.option("--chip", metavar="CHIP", default=None,
                           help="chip name (default: the text's .chip line, or the buffer's magic byte)")
raw_option = click.option("--raw", "raw", type=(str, click.Path(dir_okay=False)), multiple=True,
                          metavar="ENGINE FILE",
                          help="read a raw per-engine stream (no cmd_hdr_t) instead of FILE; repeatable")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bmk", prog_name="bmk")
def bmk():
    """bmk: BMKernel-style command buffers -- assemble, disassemble, diff, simulate.

    `bmk chips` lists the chips and what works on each.
    """


# ----------------------------------------------------------------------------- asm

@click.command("asm", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", metavar="FILE")
@click.option("-o", "--output", metavar="OUT", help="command buffer to write ('-' for stdout)")
@chip_option
@click.option("--raw", "raw", type=(str, click.Path(dir_okay=False)), multiple=True, metavar="ENGINE OUT",
              help="also write ENGINE's descriptors as a raw stream (no cmd_hdr_t) to OUT; repeatable")
@guarded
def asm(file, output, chip, raw):
    """Assemble text FILE ('-' for stdin) into a command buffer (docs/asm.md has the syntax)."""
    from bmk.text import asm as asmtext, loading
    if not output and not raw:
        fail("missing -o OUT (or --raw ENGINE OUT)")
    data = _read(file)
    name = "<stdin>" if file == "-" else file
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"{name}: byte {e.start}: not UTF-8 assembly text (a binary buffer? bmk-disasm prints it as text)")
    prog = asmtext.parse(text, loading.resolve_chip(chip), name)
    outputs = [(loading.engine_name(prog.chip, engine), path) for engine, path in raw]
    if output:
        _write(output, prog.to_bytes())
    for engine, path in outputs:
        _write(path, prog.raw_stream(engine))


# ----------------------------------------------------------------------------- disasm

@click.command("disasm", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", metavar="FILE", required=False)
@chip_option
@click.option("--fields", type=click.Choice(["changed", "nonzero", "all"]), default="changed",
              show_default=True, help=FIELDS_HELP)
@raw_option
@click.option("-o", "--output", metavar="OUT", default="-", help="text file to write (default stdout)")
@guarded
def disasm(file, chip, fields, raw, output):
    """Print command buffer FILE (or raw streams) as assembly text; bmk-asm turns it back into the same bytes.

    Each line starts with the instruction's index and byte offset (`@0x80` in the buffer,
    `@tiu+0x80` in a raw stream), which bmk-asm skips.
    """
    from bmk.text import asm as asmtext
    listing = _load_input(file, chip, raw)
    _write(output, asmtext.disassemble(listing.chip, listing.records, fields, locations=True))


def _load_input(file, chip, raw):
    from bmk.text import loading
    if raw:
        if file:
            fail("give either FILE or --raw ENGINE FILE, not both")
        return loading.load_raw(raw, chip)
    if not file:
        fail("missing FILE (or --raw ENGINE FILE)")
    return loading.load(_read(file), chip, "<stdin>" if file == "-" else file)


# ----------------------------------------------------------------------------- diff

@click.command("diff", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@chip_option
@click.option("--ignore", multiple=True, metavar="FIELD",
              help="field to leave out of the comparison; repeatable. Aliases: id, wait, sync "
                   "(every sync-id field), hdr.<name> for header fields")
@click.option("--json", "as_json", is_flag=True, help="print the differences as JSON")
@click.option("--raw", "raw_engine", metavar="ENGINE", default=None,
              help="A and B are each one raw stream of ENGINE (no cmd_hdr_t); needs --chip")
@guarded
def diff(a, b, chip, ignore, as_json, raw_engine):
    """Compare two command buffers, instruction by instruction.

    A and B: each a cmd_hdr_t buffer, assembly text, or raw streams named as
    ENGINE=FILE[,ENGINE=FILE...] (e.g. tiu=k.tiu.bin,gdma=k.gdma.bin; needs --chip).
    Exit 0 when equal, 1 when different, 2 on bad input.
    """
    from bmk.text import diff as diffing
    la = _load_side(a, chip, raw_engine)
    lb = _load_side(b, chip or la.chip, raw_engine)
    result = diffing.diff_listings(la, lb, ignore)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif not result.equal:
        click.echo(result.to_text())
    sys.exit(0 if result.equal else 1)


def _load_side(spec, chip, raw_engine):
    import os

    from bmk.text import loading
    if raw_engine:
        return loading.load_raw([(raw_engine, spec)], chip)
    streams = loading.parse_side(spec, chip)
    if streams is not None and not os.path.exists(spec):
        return loading.load_raw(streams, chip)
    return loading.load(_read(spec), chip, spec)


# ----------------------------------------------------------------------------- chips

@click.command("chips", context_settings={"help_option_names": ["-h", "--help"]})
@guarded
def chips_cmd():
    """List the chips and what works on each: encode API, decode/disasm/asm/diff, simulate."""
    from bmk.cli.chipinfo import chip_table
    click.echo(chip_table())


# ----------------------------------------------------------------------------- run

@click.command("run", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", metavar="FILE", required=False)
@chip_option
@raw_option
@click.option("--gmem", "gmem", multiple=True, metavar="ADDR=FILE",
              help="load FILE (.npy: the array's raw bytes; else the file's bytes) into gmem at ADDR; repeatable")
@click.option("--dump", "dump", multiple=True, metavar="ADDR:NBYTES=OUT",
              help="after the run, save NBYTES of gmem at ADDR to OUT (.npy: uint8 array, else raw); repeatable")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@click.option("--trace", metavar="OUT.json", default=None, help="write a Perfetto / chrome://tracing trace")
@click.option("--strict", is_flag=True, help="exit 1 when the run has a race")
@click.option("--progress/--no-progress", default=None,
              help="progress bar on stderr (default: on for more than 10,000 instructions)")
@guarded
def run(file, chip, raw, gmem, dump, as_json, trace, strict, progress):
    """Replay command buffer FILE on the simulator and print its report."""
    from bmk.cli import simrun
    listing = _load_input(file, chip, raw)
    code = simrun.run_listing(listing, gmem, dump, as_json, trace, strict, progress, _read(file) if
                              (file and listing.source == "binary") else None)
    sys.exit(code)


# ----------------------------------------------------------------------------- demo
DEMO_CHIPS = ["bm1880"] + sorted(p.stem[len("demo_"):] for p in pathlib.Path(__file__).parent.glob("demo_*.py"))


@click.command("demo", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--fields", type=click.Choice(["changed", "nonzero", "all"]), default="changed",
              show_default=True, help=FIELDS_HELP)
@click.option("--chip", type=click.Choice(DEMO_CHIPS), default="bm1880", show_default=True,
              help="whose demo: bm1880 (the BMKernel samples) or a chip with a cli/demo_<chip>.py")
@guarded
def demo(fields, chip):
    """Build the seed's samples and a small conv layer, disassemble, simulate, check with numpy."""
    from bmk.cli import demo as demo_mod
    sys.exit(demo_mod.main(fields, chip))


for _cmd in (asm, disasm, diff, run, demo, chips_cmd):
    bmk.add_command(_cmd)


def main():  # pragma: no cover - `python -m bmk`
    bmk(prog_name="bmk")
