"""The click commands: `bmk` (group) and bmk-asm, bmk-disasm, bmk-diff, bmk-run.

Commands are thin: parsing and printing live in bmk.text.asm, diffing in bmk.text.diff,
reading in bmk.text.loading. Only here do exceptions become one stderr line and an exit code:
0 success (diff: equal), 1 different / race under --strict, 2 any failure (bad input, usage,
interrupt, an unexpected error; `--debug` adds the traceback), 141 stdout closed early.
Long inputs stream: text is read in chunks and output written as it is made (issue 13.4).
"""
import functools
import json
import os
import sys

import click

from bmk.cli.files import EXIT_BAD_INPUT, _load_input, _prog, _read, _write, _write_lines, fail  # noqa: F401
from bmk.encoders.framing import PAD, frame_stream
from bmk.errors import BmkError
from bmk.isa.registry import chips_with

EXIT_PIPE = 141      # stdout closed early (`| head`): what a shell reports for SIGPIPE
FIELDS_HELP = ("which fields to print: changed = those that differ from the reset default "
               "(default), nonzero = every non-zero field, all = every field")


def _message(e, debug=False):
    """The one line of a failure: a BmkError's message, '<file>: <reason>' for an OSError."""
    if isinstance(e, BmkError):
        return str(e)
    if isinstance(e, OSError):
        return f"{e.filename or ''}: {e.strerror or e}" if getattr(e, "filename", None) else str(e)
    return f"internal error: {type(e).__name__}: {e}" + ("" if debug else " (run with --debug for a traceback)")


def guarded(fn):
    """Turn bmk errors and unreadable files into one stderr line and exit 2 (inside a command,
    where the message names the program as its click context does)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:       # before click's own handling, which would exit 1 ("different")
            _quiet_stdout()
            sys.exit(EXIT_PIPE)
        except (BmkError, OSError) as e:
            if _debugging():
                raise
            fail(_message(e))
    return wrapper


_DEBUG = []     # set while a command runs with --debug


def _debugging():
    return bool(_DEBUG and _DEBUG[-1])


class _Guard:
    """Every failure of a command -> exit 2 and one stderr line '<prog>: <message>' (issue 12.9).

    Exit 1 is a result (bmk-diff: different; bmk-run --strict: a race), so nothing else may
    use it: usage errors, interrupts, a full disk and unexpected exceptions all exit 2.
    `--debug` (anywhere on the command line) adds the traceback. A closed stdout (`| head`)
    ends the command quietly with 141, as SIGPIPE would."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in (argv[:argv.index("--")] if "--" in argv else argv)
        prog = prog_name or _program_name()
        _DEBUG.append(debug)
        try:
            code = super().main(argv, prog, complete_var, standalone_mode=False, **extra)
        except SystemExit:
            raise
        except BrokenPipeError:
            _quiet_stdout()
            sys.exit(EXIT_PIPE)
        except BaseException as e:       # noqa: BLE001 -- the one place every failure is turned into a line
            if debug:
                import traceback
                traceback.print_exc()
            if isinstance(e, click.ClickException):
                message = e.format_message() + (" (see --help)" if isinstance(e, click.UsageError) else "")
            elif isinstance(e, (click.Abort, KeyboardInterrupt, EOFError)):
                message = "interrupted"
            elif isinstance(e, Exception):
                message = _message(e, debug)
            else:
                raise
            message = " ".join(str(message).split())
            try:
                click.echo(f"{prog}: {message}", err=True)
            finally:
                sys.exit(EXIT_BAD_INPUT)
        finally:
            _DEBUG.pop()
        sys.exit(code if isinstance(code, int) else 0)


def _program_name():
    try:
        from click.utils import _detect_program_name
        return _detect_program_name()
    except Exception:      # noqa: BLE001 -- a private helper of click: fall back to argv[0]
        return os.path.basename(sys.argv[0]) or "bmk"


def _quiet_stdout():
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class Command(_Guard, click.Command):
    pass


class Group(_Guard, click.Group):
    pass


debug_option = click.option("--debug", is_flag=True, expose_value=False,
                            help="on failure, print the traceback too")


chip_option = click.option("--chip", metavar="CHIP", default=None,
                           help="chip name (default: the text's .chip line, or the buffer's magic byte)")
raw_option = click.option("--raw", "raw", type=(str, click.Path(dir_okay=False)), multiple=True,
                          metavar="ENGINE FILE",
                          help="read a raw per-engine stream (no cmd_hdr_t) instead of FILE; repeatable")


DISTRIBUTION = "bmk-tpu"     # pyproject [project] name; the import package is bmk


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.version_option(package_name=DISTRIBUTION, prog_name="bmk")
def bmk():
    """bmk: BMKernel-style command buffers -- assemble, disassemble, diff, simulate.

    `bmk chips` lists the chips and what works on each.
    """


# ----------------------------------------------------------------------------- asm

@click.command("asm", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("file", metavar="FILE")
@click.option("-o", "--output", metavar="OUT", help="command buffer to write ('-' for stdout)")
@chip_option
@click.option("--raw", "raw", type=(str, click.Path(dir_okay=False)), multiple=True, metavar="ENGINE OUT",
              help="also write ENGINE's descriptors as a raw stream (no cmd_hdr_t) to OUT; repeatable")
@click.option("--dir", "out_dir", metavar="DIR", default=None,
              help="a model's listing (.group lines): write every group into DIR as `bmk extract` names it "
                   "(<label, / as .>.<engine>.bin, or .cmdbuf.bin for a cvimodel group)")
@click.option("--json", "as_json", is_flag=True,
              help="FILE is the JSON listing bmk-disasm --json writes (one group), not assembly text")
@guarded
def asm(file, output, chip, raw, out_dir, as_json):
    """Assemble text FILE ('-' for stdin) into a command buffer (docs/asm.md has the syntax)."""
    from bmk.text import asm as asmtext, loading
    if not output and not raw and not out_dir:
        fail("missing -o OUT (or --raw ENGINE OUT, or --dir DIR)")
    name = "<stdin>" if file == "-" else file
    if as_json:
        if out_dir:
            fail("--dir writes a text listing's groups: give --json with -o or --raw")
        parser, records = _json_listing(file, name, loading.resolve_chip(chip))
    else:
        parser, records = asmtext.iter_parse(asmtext.text_lines(_read_text(file, name)), loading.resolve_chip(chip),
                                             name)
    if out_dir:
        return _asm_groups(parser, records, name, output, raw, out_dir)
    # Encoded as parsed and written as encoded (issue 13.4, 24.2): a long text never becomes a
    # list of Records, nor its bytes a list of bodies; the files appear whole at the end.
    with _Outputs() as outs:
        buf = outs.file(output) if output else None
        streams, frame, bad = {}, None, None      # engine name -> [StreamWriter]
        for lineno, rec in records:
            if frame is None:
                frame = loading.Framer(parser.chip)
                streams, bad = _stream_writers(parser.chip, raw, outs)
            head, body = frame(rec)
            if rec.core and raw:
                fail(f"{name}:{lineno}: a record of core {rec.core} (.core): --raw and --dir write one core's streams "
                     "per group (a model's listing has one group per core)")
            if parser.groups > 1:
                fail(f"{name}: a listing of several command groups (.group lines): write them with --dir DIR")
            if buf is not None:
                buf(head)
                buf(body)
            for w in streams.get(rec.engine, ()):
                w.add(body, rec.header.get(PAD))
        if frame is None and raw:
            streams, bad = _stream_writers(parser.chip, raw, outs)
        if bad is not None:           # an unknown engine: said once the whole text has been read
            raise bad
        for ws in streams.values():
            for w in ws:
                w.close()
        outs.commit()


def _json_listing(file, name, chip):
    """bmk-asm --json: (an object with the parser's chip and groups, [(index, Record)])."""
    import types
    from bmk.text.jsonlist import records_from_json
    spec, records, labels = records_from_json("".join(_read_text(file, name)), chip, name)
    if len(labels) > 1:
        fail(f"{name}: instructions of {len(labels)} command groups; bmk-asm --json writes one "
             "(bmk-disasm --json --group LABEL lists one)")
    return types.SimpleNamespace(chip=spec, groups=len(labels)), records


class _Outputs:
    """Output files written as they are made: each into a temporary file beside it, renamed over
    it by `commit` (so a failure leaves no half-written file); '-' (stdout) is kept in memory
    and written at commit."""

    def __init__(self):
        self.files = []                 # (path, file object or BytesIO)

    def __enter__(self):
        return self

    def file(self, path):
        """A write(bytes) function for `path`."""
        import io
        import tempfile
        import stat
        if path == "-" or (os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode)):
            f = io.BytesIO()          # stdout, a device, a pipe: written at commit
        else:
            folder = os.path.dirname(os.path.abspath(path))
            f = tempfile.NamedTemporaryFile(dir=folder, prefix=f".{os.path.basename(path)}.", delete=False)
        self.files.append((path, f))
        return f.write

    def commit(self):
        for path, f in self.files:
            if not hasattr(f, "name"):
                _write(path, f.getvalue())
                continue
            f.close()
            os.chmod(f.name, _mode(path))
            os.replace(f.name, path)
        self.files = []

    def __exit__(self, *exc):
        for path, f in self.files:            # not committed: a failure
            if hasattr(f, "name"):
                f.close()
                try:
                    os.remove(f.name)
                except OSError:
                    pass
        return False


def _mode(path):
    """The permissions a file written at `path` gets: an existing file's, else what open() gives."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _stream_writers(chip, raw, outs):
    """--raw ENGINE OUT pairs -> ({engine name: [StreamWriter]}, the BmkError of an unknown engine or None)."""
    from bmk.encoders.framing import StreamWriter
    from bmk.text import loading
    writers = {}
    for engine, path in raw:
        try:
            name = loading.engine_name(chip, engine)
        except BmkError as e:
            return {}, e
        writers.setdefault(name, []).append((path, chip.engine(name).stream))
    return {name: [StreamWriter(rule, outs.file(path)) for path, rule in ws] for name, ws in writers.items()}, None


def _asm_groups(parser, records, name, output, raw, out_dir):
    """bmk-asm --dir: a model's listing, every group written into DIR."""
    from bmk.text import loading
    groups = {}             # group number -> (label, form, cmd_hdr_t bytes, {engine: bodies}, {engine: pad})
    frame = None
    for lineno, rec in records:
        frame = frame or loading.Framer(parser.chip)
        head, body = frame(rec)
        if rec.core:
            fail(f"{name}:{lineno}: a record of core {rec.core} (.core): --raw and --dir write one core's streams "
                 "per group (a model's listing has one group per core)")
        if parser.group is None:
            fail(f"{name}:{lineno}: --dir writes a model's listing, whose groups start with '.group LABEL' lines")
        label, form, gbuf, gbodies, gpads = groups.setdefault(
            parser.groups, (parser.group, parser.group_form, bytearray(), {}, {}))
        gbuf += head + body
        _add_body(gbodies, gpads, rec, body)
    _write_groups(parser.chip, out_dir, groups.values())
    if output or raw:
        fail("--dir writes every group: give it without -o or --raw")


def _add_body(bodies, pads, rec, body):
    """One engine's command bytes for its raw stream, and the padding its record carries (`PAD`):
    after its slot when another command follows (a stream of several closed streams), else at
    the end (_stream)."""
    bodies.setdefault(rec.engine, []).append(body)
    pads.setdefault(rec.engine, []).append(rec.header.get(PAD))


def _stream(chip, engine, bodies, pads):
    pads = pads.get(engine) or [None]
    return frame_stream(chip.engine(engine).stream, bodies.get(engine, []), pads[-1], dict(enumerate(pads[:-1])))


def _write_groups(chip, out_dir, groups):
    """bmk-asm --dir: each group's raw streams (or cmd_hdr_t buffer) named as `bmk extract` names them."""
    import os

    from bmk.cli.models import file_stem
    from bmk.text.asm import GROUP_CMDBUF
    os.makedirs(out_dir, exist_ok=True)
    for label, form, gbuf, gbodies, gpads in groups:
        stem = os.path.join(out_dir, file_stem(label))
        if form == GROUP_CMDBUF:
            _write(f"{stem}.cmdbuf.bin", gbuf)
            continue
        for engine in gbodies:
            _write(f"{stem}.{engine}.bin", _stream(chip, engine, gbodies, gpads))


def _read_text(path, name, size=1 << 18):
    """The UTF-8 text of a file ('-': stdin) in str chunks; not UTF-8: one line, exit 2."""
    import codecs
    decoder = codecs.getincrementaldecoder("utf-8")()
    f = sys.stdin.buffer if path == "-" else open(path, "rb")
    try:
        done = 0
        while True:
            chunk = f.read(size)
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as e:
                fail(f"{name}: byte {done - pending + e.start}: not UTF-8 assembly text (a binary buffer? "
                     "bmk-disasm prints it as text)")
            done += len(chunk)
            if text:
                yield text
            if not chunk:
                return
    finally:
        if f is not sys.stdin.buffer:
            f.close()


# ----------------------------------------------------------------------------- disasm

@click.command("disasm", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("file", metavar="FILE", required=False)
@chip_option
@click.option("--fields", type=click.Choice(["changed", "nonzero", "all"]), default="changed",
              show_default=True, help=FIELDS_HELP)
@raw_option
@click.option("-o", "--output", metavar="OUT", default="-", help="text file to write (default stdout)")
@click.option("--group", "groups", multiple=True, metavar="LABEL",
              help="FILE is a model: list only this command group (e.g. net0/stage0/subnet0/core0/group0); "
                   "repeatable. Default: every group")
@click.option("--width", type=click.IntRange(min=0), default=None, metavar="N",
              help="wrap instruction lines longer than N characters (continued with a trailing backslash, "
                   "which bmk-asm reads); 0: never. Default: the terminal's width when writing to one, else 0")
@click.option("--json", "as_json", is_flag=True,
              help="write the instructions as JSON, every field by name (bmk-asm --json reads it back)")
@guarded
def disasm(file, chip, fields, raw, output, groups, width, as_json):
    """Print command buffer FILE (or raw streams, or a compiled model) as assembly text; bmk-asm turns it
    back into the same bytes.

    Each line starts with the instruction's index and byte offset (`@0x80` in the buffer,
    `@tiu+0x80` in a raw stream), which bmk-asm skips. A .bmodel or .cvimodel FILE is listed
    group by group, each under a `# FILE LABEL: counts` comment (`bmk info` names the groups).
    When an input file has a sidecar `FILE.origins.json` (ctx.save writes one), each line ends
    with a comment naming the API call and the source line behind it.
    """
    from bmk.cli import models
    from bmk.text import asm as asmtext
    width = _width(width, output)
    if models.sniff(file) and not raw:
        if chip:
            fail("--chip: a model names its own chip")
        from bmk.text.model_listing import iter_model_disassembly
        model = models.load(file)
        chosen = [model.group(label) for label in groups] if groups else model.groups()
        if as_json:
            from bmk.text.jsonlist import iter_json
            from bmk.text.model_listing import group_listing, spec_for
            _write_lines(output, iter_json(spec_for(model.chip, model.path),
                                           ((g.label, group_listing(model, g)[0].records) for g in chosen)))
            return
        _write_lines(output, iter_model_disassembly(model, chosen, fields))
        return
    if groups:
        fail("--group takes a model FILE (.bmodel, .cvimodel)")
    text = None if raw else _text_groups(file, chip)
    if text is not None and _labelled(text):    # a model's listing: printed again group by group
        if as_json:
            from bmk.text.jsonlist import iter_json
            _write_lines(output, iter_json(text.spec, ((g.label, g.listing.records) for g in text.groups)))
            return
        _write_lines(output, _iter_grouped(text, fields))
        return
    listing = _single(text) if text is not None else _load_input(file, chip, raw)
    if as_json:
        from bmk.text.jsonlist import iter_json
        _write_lines(output, iter_json(listing.chip, [(None, listing.records)]))
        return
    _write_lines(output, asmtext.iter_disassembly(listing.chip, listing.records, fields, locations=True,
                                                  notes=listing.notes(), width=width))


def _width(width, output="-"):
    """--width: as given, else the terminal's width when writing to a terminal, else 0 (no wrap)."""
    if width is not None:
        return width
    if output == "-" and sys.stdout.isatty():
        import shutil
        return shutil.get_terminal_size((100, 24)).columns
    return 0


def _iter_grouped(grouped, fields):
    from bmk.text import asm as asmtext
    yield f".chip {grouped.spec.name}"
    if fields != "changed":
        yield f".fields {fields}"
    for g in grouped.groups:
        if g.label is not None:
            yield f".group {g.label}" + (f" {g.form}" if g.form == asmtext.GROUP_CMDBUF else "")
        lines = asmtext.iter_disassembly(grouped.spec, g.listing.records, fields, locations=True)
        next(lines)
        if fields != "changed":
            next(lines)
        yield from lines


# ----------------------------------------------------------------------------- diff

@click.command("diff", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@chip_option
@click.option("--ignore", multiple=True, metavar="FIELD",
              help="field to leave out of the comparison; repeatable. Aliases: id, wait, sync "
                   "(every sync-id field), wait.<engine>, hdr.<name> for header fields")
@click.option("--json", "as_json", is_flag=True, help="print the differences as JSON")
@click.option("--raw", "raw_engine", metavar="ENGINE", default=None,
              help="A and B are each one raw stream of ENGINE (no cmd_hdr_t); needs --chip")
@click.option("--order", type=click.Choice(["program", "engine"]), default=None,
              help="engine: align each engine's instructions on their own and report changes of what they "
                   "wait for apart (the default when either side is raw streams); program: one order")
@guarded
def diff(a, b, chip, ignore, as_json, raw_engine, order):
    """Compare two command buffers, instruction by instruction.

    A and B: each a cmd_hdr_t buffer, assembly text, or raw streams named as
    ENGINE=FILE[,ENGINE=FILE...] (e.g. tiu=k.tiu.bin,gdma=k.gdma.bin; needs --chip); or both
    compiled models (.bmodel/.cvimodel): groups paired by label, a summary line per group,
    then each differing group's instruction diff. When either side is raw streams each
    engine's order is compared on its own (what the hardware sees), and changes of which
    instruction of another engine an instruction waits for are listed apart (--order).
    Prints the differences, or one line saying the two are equal.
    Exit 0 when equal, 1 when different, 2 on bad input.
    """
    from bmk.cli import models
    from bmk.text import diff as diffing
    texts = (None, None) if raw_engine else (_text_groups(a, chip), _text_groups(b, chip))
    labelled = [t is not None and _labelled(t) for t in texts]
    if any(labelled) and all(lab or models.sniff(p) for lab, p in zip(labelled, (a, b))):
        from bmk.text.model_diff import diff_grouped      # a model's listing: its groups by label
        sides = [t if lab else models.load(p) for t, lab, p in zip(texts, labelled, (a, b))]
        result = diff_grouped(*sides, ignore)
        if as_json:
            click.echo(json.dumps(result.to_dict(), indent=2))
        elif not result.equal:
            _write_lines("-", result.iter_text())
        sys.exit(0 if result.equal else 1)
    if not raw_engine and (models.sniff(a) or models.sniff(b)):
        if not (models.sniff(a) and models.sniff(b)):
            fail(f"cannot compare a compiled model with a command buffer ({a if models.sniff(a) else b} is a model; "
                 f"`bmk extract` gives its groups' streams)")
        from bmk.text.model_diff import diff_models
        result = diff_models(models.load(a), models.load(b), ignore)
        if as_json:
            click.echo(json.dumps(result.to_dict(), indent=2))
        else:
            _write_lines("-", result.iter_text())
        sys.exit(0 if result.equal else 1)
    la = _single(texts[0]) if texts[0] is not None else _load_side(a, chip, raw_engine)
    lb = _single(texts[1]) if texts[1] is not None else _load_side(b, chip or la.chip, raw_engine)
    result = diffing.diff_listings(la, lb, ignore, order)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif not result.equal:
        _write_lines("-", result.iter_text(width=_width(None)))
    else:
        click.echo(result.summary())
    sys.exit(0 if result.equal else 1)


def _text_groups(path, chip):
    """A text file read as its `.group` sections (loading.GroupedText), None when it is not text."""
    import os

    from bmk.text import loading
    if path in (None, "-") or not os.path.isfile(path):
        return None
    return loading.load_path_groups(path, chip)


def _labelled(text):
    """Whether a GroupedText is a model's listing (its groups carry labels)."""
    return any(g.label is not None for g in text.groups)


def _single(text):
    """The Listing of an unlabelled text (one group, or none)."""
    from bmk.text.loading import Listing
    if text.groups:
        return text.groups[0].listing
    return Listing(text.spec, (), "text", text.path)


def _load_side(spec, chip, raw_engine):
    from bmk.text import loading
    if raw_engine:
        return loading.load_raw([(raw_engine, spec)], chip)
    streams = loading.parse_side(spec, chip)
    if streams is not None and not os.path.exists(spec):
        return loading.load_raw(streams, chip)
    if spec == "-":
        return loading.load(_read(spec), chip, spec)
    return loading.load_path(spec, chip)


# ----------------------------------------------------------------------------- chips

@click.command("chips", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.option("--json", "as_json", is_flag=True, help="print the table as JSON: {chip: {capability: text}}")
@guarded
def chips_cmd(as_json):
    """List the chips and what works on each: encode API, decode/disasm/asm/diff, simulate."""
    from bmk.cli.chipinfo import chip_rows, chip_table
    click.echo(json.dumps(dict(chip_rows()), indent=2) if as_json else chip_table())


# ----------------------------------------------------------------------------- run

@click.command("run", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("file", metavar="FILE", required=False)
@chip_option
@raw_option
@click.option("--gmem", "gmem", multiple=True, metavar="ADDR=FILE",
              help="load FILE (.npy: the array's raw bytes; else the file's bytes) into gmem at ADDR; repeatable")
@click.option("--dump", "dump", multiple=True, metavar="ADDR:NBYTES=OUT",
              help="after the run, save NBYTES of gmem at ADDR to OUT (.npy: uint8 array, else raw); repeatable")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@click.option("--trace", metavar="OUT.json", default=None, help="write a Perfetto / chrome://tracing trace")
@click.option("--strict", is_flag=True, help="exit 1 when the run has a race; exit 2 when it reads local memory "
                                             "never written or a tensor a dead write overwrote")
@click.option("--progress/--no-progress", default=None,
              help="progress bar on stderr (default: on for more than 10,000 instructions)")
@click.option("--input", "inputs", multiple=True, metavar="NAME=FILE.npy",
              help="FILE is a model: the input tensor NAME's values (an array of its logical shape); "
                   "FILE.npz alone gives every input by its array names; repeatable")
@click.option("-o", "--output", metavar="OUT.npz", default=None,
              help="FILE is a model: save its outputs, by tensor name")
@guarded
def run(file, chip, raw, gmem, dump, as_json, trace, strict, progress, inputs, output):
    """Replay command buffer FILE on the simulator and print its report.

    A compiled model FILE (.bmodel, .cvimodel) runs as `m.run`: coefficients and --input
    values at their device addresses, every group in order, outputs saved with -o.
    """
    from bmk.cli import models, simrun
    if models.sniff(file) and not raw:
        for flag, given in (("--chip", chip), ("--gmem", gmem)):
            if given:
                fail(f"{flag} does not apply to a model (it names its chip and places its own data)")
        model = models.load(file)
        sys.exit(models.run_model(model, inputs, output, [simrun.parse_dump(d) for d in dump], as_json, trace,
                                  progress, strict))
    if inputs or output:
        fail("--input and -o take a model FILE (.bmodel, .cvimodel)")
    listing = _load_input(file, chip, raw)
    code = simrun.run_listing(listing, gmem, dump, as_json, trace, strict, progress, _read(file) if
                              (file and listing.source == "binary") else None)
    sys.exit(code)


# ----------------------------------------------------------------------------- check

@click.command("check", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("files", metavar="MODEL|FILE...", nargs=-1)
@chip_option
@raw_option
@click.option("--json", "as_json", is_flag=True, help="print the findings as JSON")
@guarded
def check(files, chip, raw, as_json):
    """List every instruction the simulator would refuse, without running anything.

    MODEL|FILE: compiled models (.bmodel, .cvimodel), command buffers or assembly text (or --raw
    ENGINE FILE streams). Refusals are grouped by instruction kind, field and value, each with
    a count and the first instruction refused (group, engine, position in that engine's stream,
    byte offset). Exit 0 when everything can run, 1 when something cannot, 2 on bad input (the
    other files are still checked; each unreadable one is a line on stderr).
    """
    from bmk.cli import models
    from bmk.cli.check import check_report
    if not files and not raw:
        fail("missing MODEL|FILE (or --raw ENGINE FILE)")
    if raw and files:
        fail("give either FILE or --raw ENGINE FILE, not both")
    def report(path):
        if models.sniff(path) and not raw:
            if chip:
                fail("--chip does not apply to a model (it names its chip)")
            return check_report(path, model=models.load(path))
        return check_report(path, listing=_load_input(None if raw else path, chip, raw))
    _report_each(files or ["<raw streams>"], report, as_json)


def _report_each(files, report, as_json):
    """bmk check / bmk lint: report(path) of each file, printed as made (or one JSON list at the
    end); an unreadable file among several is a line on stderr and the others are still read.
    Exit 1 when a report has findings, 2 when a file did not read (the last line), else 0."""
    reports, unreadable = [], []
    for path in files:
        try:
            made = report(path)
        except (BmkError, OSError) as e:      # the other files are still read
            if _debugging() or len(files) < 2:
                raise
            unreadable.append(_message(e))
            continue
        reports.append(made)
        if not as_json:
            _write_lines("-", made.lines())
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in reports], indent=2))
    for i, message in enumerate(unreadable):
        if i + 1 < len(unreadable):
            click.echo(f"{_prog()}: {message}", err=True)
        else:
            fail(message)
    sys.exit(1 if any(r.findings for r in reports) else 0)


# ----------------------------------------------------------------------------- lint

@click.command("lint", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("files", metavar="MODEL...", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="print the findings as JSON")
@guarded
def lint(files, as_json):
    """Find what is wrong with compiled models before a chip runs them, without running anything.

    MODEL: .bmodel or .cvimodel files. Each finding has its rule (cores, message, dependency,
    region, tensor, hash, decode), its place (group, engine, index in that engine's stream) and
    one line of why; the report also gives the compiler version and build time the file records.
    Exit 0 when every model is clean, 1 when one has findings, 2 when one does not read (the
    other files are still linted; each unreadable one is a line on stderr).
    """
    from bmk.cli import models
    from bmk.cli.lint import lint_report
    if not files:
        fail("missing MODEL")

    def report(path):
        if not models.sniff(path):
            from bmk.errors import ModelError
            raise ModelError("not a compiled model (.bmodel or .cvimodel): bmk lint reads models; "
                             "bmk check takes command buffers", path, 0)
        return lint_report(path, models.load(path))
    _report_each(files, report, as_json)


# ----------------------------------------------------------------------------- models

@click.command("info", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("model", metavar="MODEL")
@click.option("--json", "as_json", is_flag=True, help="print the description as JSON")
@guarded
def info(model, as_json):
    """Describe compiled MODEL (.bmodel, .cvimodel): chip, nets, stages, subnets, command groups
    (labels, instructions per engine), io tensors, coefficients, neuron memory, kernel module."""
    from bmk.cli import models
    from bmk.text.model_info import info_dict, info_lines
    m = models.load(model)
    if as_json:
        click.echo(json.dumps(info_dict(m), indent=2))
    else:
        _write_lines("-", info_lines(m))


@click.command("extract", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("model", metavar="MODEL")
@click.option("-o", "--output", "out_dir", metavar="DIR", required=True, help="directory to write into")
@click.option("--no-verify", "no_verify", is_flag=True,
              help="write coefficients that do not hash to the sha256 the file records (else exit 2)")
@guarded
def extract(model, out_dir, no_verify):
    """Write compiled MODEL's parts into DIR: each group's raw streams (<label, / as .>.<engine>.bin;
    a cvimodel group: .cmdbuf.bin, a cmd_hdr_t buffer), coefficients (net<n>.stage<s>.coeff.bin), the
    kernel module, and model.json (`bmk info --json` plus the file names)."""
    from bmk.cli import models
    written = models.extract(models.load(model), out_dir, verify=not no_verify)
    for name, size in written.items():
        click.echo(f"{os.path.join(out_dir, name)}  {size} bytes")


# ----------------------------------------------------------------------------- demo
DEMO_CHIPS = chips_with("demo")          # bmk/cli/demo_<chip>.py (bmk/isa/registry.py)


@click.command("demo", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.option("--fields", type=click.Choice(["changed", "nonzero", "all"]), default="changed",
              show_default=True, help=FIELDS_HELP)
@click.option("--chip", type=click.Choice(DEMO_CHIPS), default="bm1880", show_default=True,
              help="whose demo: a chip with a bmk/cli/demo_<chip>.py (bm1880: the BMKernel samples)")
@guarded
def demo(fields, chip):
    """Build the seed's samples and a small conv layer, disassemble, simulate, check with numpy."""
    from bmk.cli import demo as demo_mod
    sys.exit(demo_mod.main(fields, chip))


# ----------------------------------------------------------------------------- timing

streams_option = click.option(
    "--streams", "streams", type=(click.IntRange(min=0), str, click.Path(dir_okay=False)), multiple=True,
    metavar="CORE ENGINE FILE", help="a raw per-engine stream of a core (e.g. --streams 0 tiu cmd_0_0.dat); repeatable")


@click.command("time", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("files", metavar="MODEL|FILE", nargs=-1)
@chip_option
@raw_option
@streams_option
@click.option("--per-layer", "per_layer", is_flag=True,
              help="time per layer where the input maps commands to layers (else per kind)")
@click.option("--per-kind", "per_kind", is_flag=True, help="time per instruction kind")
@click.option("--layers", "layers", metavar="GLOBAL_PROFILE", default=None,
              help="the vendor's layer log (global.profile): which layer each command of the streams is for")
@click.option("--trace", "trace", metavar="OUT.json", default=None, help="write a Perfetto / Chrome trace")
@guarded
def time_cmd(files, chip, raw, streams, per_layer, per_kind, layers, trace):
    """When every command starts and ends, from the chip's cost model (`bmk chips` says what it
    rests on) and the sync ids alone: no data, so decode-only chips are timed too.

    MODEL|FILE: a compiled model (every net, stage and subnet in turn, a subnet's cores at once),
    a command buffer or assembly text; or --raw ENGINE FILE (one core), or --streams CORE ENGINE
    FILE with --chip (several cores, cross-core messages honoured). Prints the span, each core's
    and engine's busy time, their overlap and the longest commands."""
    from bmk.cli.timing import run_time
    run_time(files, chip, raw, streams, per_layer, per_kind, trace, layers)


@click.command("profile", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@debug_option
@click.argument("profile", metavar="PROFILE")
@streams_option
@click.option("--chip", metavar="CHIP", default="bm1688", show_default=True, help="the profiled chip")
@click.option("--net-stat", "net_stat", metavar="FILE", default=None,
              help="the vendor compiler's estimate (net_stat.sim), shown beside bmk's for core 0")
@click.option("--layers", "layers", metavar="GLOBAL_PROFILE", default=None,
              help="the vendor's layer log (global.profile): adds a per-layer table, measured vs bmk")
@click.option("--trace", "trace", metavar="OUT.json", default=None,
              help="write the measured times as a Perfetto / Chrome trace")
@guarded
def profile_cmd(profile, streams, chip, net_stat, layers, trace):
    """Read a chip's measured cycles (the vendor's iter*.profile) for the command streams it ran.

    --streams CORE ENGINE FILE names the streams (every core's TIU and GDMA). Prints the measured
    timeline's summary and, per command kind, measured vs bmk's cost model (and the vendor
    compiler's estimate with --net-stat); --trace writes the measured timeline, every command
    named by bmk's kind."""
    from bmk.cli.timing import run_profile
    run_profile(profile, streams, chip, net_stat, trace, layers)


for _cmd in (asm, disasm, diff, run, check, demo, chips_cmd, info, extract, lint, time_cmd, profile_cmd):
    bmk.add_command(_cmd)


def main():  # pragma: no cover - `python -m bmk`
    bmk(prog_name="bmk")
