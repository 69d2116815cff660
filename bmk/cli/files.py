"""What every command shares: failing with one stderr line, reading and writing files (stdin
and stdout as "-"), and loading a command's input (a buffer, a text, raw streams)."""
import sys

import click

EXIT_BAD_INPUT = 2


def _prog():
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().info_name or "bmk" if ctx else "bmk"


def fail(message, code=EXIT_BAD_INPUT):
    """Print one line '<prog>: <message>' on stderr and exit."""
    message = " ".join(str(message).split("\n"))
    click.echo(f"{_prog()}: {message}", err=True)
    sys.exit(code)


def _read(path):
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    binary = isinstance(data, (bytes, bytearray))
    if path == "-":
        out = sys.stdout.buffer if binary else sys.stdout
        out.write(data)
        out.flush()
        return
    mode = "wb" if binary else "w"
    with open(path, mode) as f:
        f.write(data)


def _write_lines(path, lines, batch=4096):
    """Write text lines (no newlines) as they come, in batches: a long listing never sits in memory whole."""
    out = sys.stdout if path == "-" else open(path, "w")
    try:
        chunk = []
        for line in lines:
            chunk.append(line)
            if len(chunk) >= batch:
                chunk.append("")
                out.write("\n".join(chunk))
                chunk = []
        if chunk:
            chunk.append("")
            out.write("\n".join(chunk))
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()


def _load_input(file, chip, raw):
    from bmk.text import loading
    if raw:
        if file:
            fail("give either FILE or --raw ENGINE FILE, not both")
        return loading.load_raw(raw, chip)
    if not file:
        fail("missing FILE (or --raw ENGINE FILE)")
    if file == "-":
        return loading.load(_read(file), chip, "<stdin>")
    return loading.load_path(file, chip)
