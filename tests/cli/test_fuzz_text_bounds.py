"""Hostile text and dumps, each bounded in time and memory (issue 24 item 3): `stream.pad` and
every numeric field of assembly text within what its encoding holds (an AsmError naming the
line, column, field and rule otherwise, never another exception); zero padding bounded the
same way when decoded, so what decodes also assembles; bmk-run dumps of any size written
chunk by chunk. Seeded."""
import os
import random

import numpy as np
import pytest
from click.testing import CliRunner

import bmk
from bmk import bm1684x
from bmk.cli.main import asm, run
from bmk.encoders.framing import MAX_PAD
from bmk.text import asm as asmtext
from tests.bounded import bounded
from tests.goldens import GOLDEN_BUFFERS
from tests.vectors import vendor

HOSTILE = ["-1", "1" * 30, "9" * 5000, "0x" + "f" * 40, "-0x10", "1e9", "1000000000", str(1 << 64),
           str(1 << 63), "0b" + "1" * 70, "_1", "1__0", "+5", "0" * 40 + "1", "\u0663", str(MAX_PAD + 1)]


def _text(chip):
    if chip == "bm1880":
        records = bmk.decode(chip, next(b for _, b, _ in GOLDEN_BUFFERS if b))
    else:
        records = bmk.decode(chip, vendor.streams(chip))[:40]
    return asmtext.disassemble(asmtext.load_chip(chip), records)


def _asm(path, out):
    res = CliRunner().invoke(asm, [path, "--raw", "tiu", out])
    return f"{res.exit_code} {res.stderr}"


@pytest.mark.parametrize("value", ["1000000000", "1" * 30, "9" * 5000, "-1", str(MAX_PAD + 1)])
def test_stream_pad_beyond_its_bound_is_refused_quickly(value, tmp_path):
    path, out = str(tmp_path / "k.s"), str(tmp_path / "k.tiu")
    with open(path, "w") as f:
        f.write(f".chip bm1684x\ntiu.sys.end stream.pad={value}\n")
    got = bounded(_asm, path, out, seconds=2.0, nbytes=64 << 20, show=str)
    assert got.startswith("2 asm: ") and got.count("\n") == 1, got
    assert f"k.s:2:24: stream.pad must be a byte count in [0, {MAX_PAD}], not " in got
    assert not os.path.exists(out)


def test_stream_pad_at_its_bound_round_trips(tmp_path):
    path, out = str(tmp_path / "k.s"), str(tmp_path / "k.tiu")
    with open(path, "w") as f:
        f.write(f".chip bm1684x\ntiu.sys.end stream.pad={MAX_PAD}\n")
    assert bounded(_asm, path, out, seconds=3.0, nbytes=160 << 20, show=str) == "0 "
    data = open(out, "rb").read()
    (rec,) = bmk.decode("bm1684x", {"tiu": data})
    assert rec.header == {"pad": MAX_PAD} and len(data) == 16 + MAX_PAD
    with pytest.raises(bmk.DecodeError, match=f"zero padding in the tiu stream must be at most {MAX_PAD} bytes"):
        bmk.decode("bm1684x", {"tiu": data + bytes(16)})


def test_padding_inside_a_raw_stream_survives_bmk_asm(tmp_path):
    """Two closed streams back to back: the text keeps the first one's padding (stream.pad on
    its end command) and bmk-asm --raw writes it back."""
    data = vendor.streams("bm1684x")["tiu"]
    text = asmtext.disassemble(asmtext.load_chip("bm1684x"), bmk.decode("bm1684x", {"tiu": data + data}))
    path, out = str(tmp_path / "k.s"), str(tmp_path / "k.tiu")
    with open(path, "w") as f:
        f.write(text)
    assert _asm(path, out) == "0 "
    assert open(out, "rb").read() == data + data


@pytest.mark.parametrize("chip", bmk.chips())
def test_hostile_numbers_in_any_field_are_asm_errors(chip):
    """Every token of a real listing, its value replaced by a hostile number (negative, too wide,
    thousands of digits, not ASCII, another base), or such a stream.pad, hdr or sync field
    added: parsed and encoded, or one AsmError / EncodeError, all 300 cases in bounded time."""
    lines = _text(chip).splitlines()
    rng = random.Random(chip)
    extra = ["stream.pad", "hdr.len", "hdr.mask", "id", "wait.tiu", "wait.gdma", "wait.tpu", "wait.tdma"]

    def cases():
        outcomes = set()
        for _ in range(300):
            i = rng.randrange(1, len(lines))
            toks = lines[i].split()
            if rng.random() < 0.2:
                toks.append(f"{rng.choice(extra)}={rng.choice(HOSTILE)}")
            else:
                k = rng.randrange(1, len(toks))
                toks[k] = f"{toks[k].partition('=')[0]}={rng.choice(HOSTILE)}"
            text = "\n".join(lines[:i] + [" ".join(toks)] + lines[i + 1:])
            try:
                prog = asmtext.parse(text)
                prog.to_bytes() if chip == "bm1880" else prog.raw_streams()
                outcomes.add("ok")
            except bmk.BmkError as e:
                outcomes.add(type(e).__name__)
        return sorted(outcomes)
    assert "AsmError" in bounded(cases, seconds=20.0, nbytes=200 << 20, show=lambda x: x)


def test_bmk_run_dumps_8_gib_chunk_by_chunk(tmp_path):
    """--dump of all 8 GiB of bm1684x gmem, and an .npy dump read back."""
    ctx = bm1684x.Context()
    s = bm1684x.dim4(1, 1, 1, 16)
    ctx.gdma_cpy_S2L(0, 0x100000000, s, None, None, bm1684x.DT_INT8)
    ctx.gdma_cpy_L2S(0x100000010, 0, s, None, None, bm1684x.DT_INT8)
    prog = str(tmp_path / "k.s")
    with open(prog, "w") as f:
        f.write(asmtext.disassemble(asmtext.load_chip("bm1684x"), bmk.decode("bm1684x", ctx.acquire_streams())))
    src, npy = str(tmp_path / "in.bin"), str(tmp_path / "out.npy")
    with open(src, "wb") as f:
        f.write(bytes(range(16)))

    def dump():
        res = CliRunner().invoke(run, [prog, "--gmem", f"0x100000000={src}", "--dump",
                                       f"0x100000000:0x200000000={os.devnull}", "--dump", f"0x100000000:32={npy}"])
        return f"{res.exit_code} {res.stderr}"
    assert bounded(dump, seconds=20.0, nbytes=128 << 20, show=str) == "0 "
    assert np.load(npy).tolist() == list(range(16)) * 2
