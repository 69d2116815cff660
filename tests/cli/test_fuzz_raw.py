"""Fuzz on raw streams of both new chips: random bytes and mutated vendor streams (flip, set,
truncate, extend, splice). Library: `bmk.decode` returns records or raises a BmkError, and what
decodes goes through the text and back to the same streams. CLI: bmk-disasm exits 0, or 2 with
one stderr line naming the stream file and a byte offset in that stream. Seeded, bounded."""
import os
import random

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import disasm
from bmk.text import asm as asmtext
from tests.vectors import vendor

CHIPS = vendor.CHIPS
LIB_CASES = 500          # per chip
CLI_CASES = 150           # per chip
SEED_BYTES = 4096        # mutate a prefix of the vendor stream: keeps each case fast


def _mutate(rng, data, other):
    buf = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        op = rng.choice(["flip", "set", "cut", "truncate", "extend", "zeros", "splice"])
        pos = rng.randrange(len(buf)) if buf else 0
        if op == "flip" and buf:
            buf[pos] ^= 1 << rng.randrange(8)
        elif op == "set" and buf:
            buf[pos] = rng.randrange(256)
        elif op == "cut":
            del buf[pos:pos + rng.randint(1, 200)]
        elif op == "truncate":
            del buf[pos:]
        elif op == "extend":
            buf += rng.randbytes(rng.randint(1, 160))
        elif op == "zeros":
            buf += bytes(rng.choice([1, 16, 32, 127, 128, 129, 256]))
        elif op == "splice":
            start = rng.randrange(len(other))
            buf[pos:] = other[start:start + rng.randint(1, 600)]
    return bytes(buf)


def _prefix(chip, engine, data):
    """The vendor stream cut at the first command boundary past SEED_BYTES (a valid stream)."""
    cut = next((r.offset for r in bmk.decode(chip, {engine: data}) if r.offset >= SEED_BYTES), len(data))
    return data[:cut]


def _cases(chip, n, seed):
    rng = random.Random(f"{chip}-{seed}")
    streams = {e: _prefix(chip, e, b) for e, b in vendor.streams(chip).items()}
    out = []
    for i in range(n):
        engine = rng.choice(["tiu", "gdma"])
        kind = i % 4
        if kind == 0:
            data = rng.randbytes(rng.randint(0, 400))
        else:
            data = _mutate(rng, streams[engine], streams["gdma" if engine == "tiu" else "tiu"])
        out.append((engine, data, streams["gdma" if engine == "tiu" else "tiu"]))
    return out


@pytest.mark.parametrize("chip", CHIPS)
def test_decode_raw_only_raises_bmk_errors_and_text_is_lossless(chip):
    decoded = failed = 0
    for engine, data, other in _cases(chip, LIB_CASES, "lib"):
        other_engine = "gdma" if engine == "tiu" else "tiu"
        streams = {engine: data, other_engine: other}
        try:
            recs = bmk.decode(chip, streams)
        except bmk.BmkError as e:
            failed += 1
            assert isinstance(e, bmk.DecodeError)
            continue
        decoded += 1
        text = asmtext.disassemble(asmtext.parse(f".chip {chip}\n").chip, recs, locations=True)
        prog = asmtext.parse(text)
        assert prog.raw_streams() == {e: b for e, b in streams.items() if b and recs_for(recs, e)}, chip
    assert decoded and failed          # the corpus exercises both outcomes


def recs_for(recs, engine):
    return [r for r in recs if r.engine == engine]


@pytest.mark.parametrize("chip", CHIPS)
def test_disasm_raw_exit_0_or_2_with_one_line_naming_the_stream(chip, tmp_path):
    runner = CliRunner()
    codes = set()
    for n, (engine, data, other) in enumerate(_cases(chip, CLI_CASES, "cli")):
        path = os.path.join(tmp_path, f"s{n}.{engine}.bin")
        with open(path, "wb") as f:
            f.write(data)
        res = runner.invoke(disasm, ["--chip", chip, "--raw", engine, path])
        assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
        codes.add(res.exit_code)
        if res.exit_code == 0:
            assert res.stdout.startswith(f".chip {chip}\n") and res.stderr == ""
        else:
            assert res.exit_code == 2 and res.stdout == ""
            assert res.stderr.count("\n") == 1 and res.stderr.endswith("\n")
            assert res.stderr.startswith(f"disasm: {path}: {engine} stream byte "), res.stderr
    assert codes == {0, 2}
