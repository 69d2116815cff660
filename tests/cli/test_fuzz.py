"""Fuzz: random and mutated buffers never make the decoder or bmk-disasm fail other than cleanly.

Library: decode_cmdbuf returns records or raises bmk.BmkError (DecodeError). CLI: exit 0, or exit 2
with exactly one stderr line naming a byte offset. The example count is kept modest so CI stays fast;
raise it with HYPOTHESIS_PROFILE=fuzz-long.
"""
import os
import tempfile

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bmk
from bmk.text import asm as asmtext, loading
from bmk.cli.main import diff, disasm
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip
from tests.goldens import GOLDEN_BUFFERS

CHIP = load_chip("bm1880")
SEEDS = [buf for _, buf, _ in GOLDEN_BUFFERS if buf]
LONG = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz-long"
FAST = settings(max_examples=20000 if LONG else 2500, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def mutated(draw):
    buf = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "set", "cut", "insert", "splice", "header"]))
        pos = draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "flip" and buf:
            buf[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and buf:
            buf[pos] = draw(st.integers(0, 255))
        elif op == "cut":
            del buf[pos:pos + draw(st.integers(1, 80))]
        elif op == "insert":
            buf[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif op == "splice":
            other = draw(st.sampled_from(SEEDS))
            buf[pos:] = other[draw(st.integers(0, len(other))):]
        elif op == "header" and len(buf) > 8:    # a header byte of the first record: len, engine id, flags, mask
            buf[draw(st.integers(1, 7))] = draw(st.sampled_from([0, 1, 2, 3, 15, 64, 112, 255]))
    return bytes(buf)


buffers = st.one_of(st.binary(max_size=300), st.binary(max_size=200).map(lambda b: b"\xa5" + b), mutated())


def _check_decoder(data):
    try:
        records = decode_cmdbuf(CHIP, data)
    except bmk.BmkError as e:
        assert isinstance(e, bmk.DecodeError) and e.offset is not None and 0 <= e.offset <= len(data)
        return None
    # whatever decodes must disassemble and reassemble to the same bytes
    assert asmtext.assemble(asmtext.disassemble(CHIP, records)) == data
    return records


@FAST
@given(buffers)
def test_decoder_only_raises_bmk_errors(data):
    _check_decoder(data)


@settings(FAST, max_examples=1000 if not LONG else 10000)
@given(buffers)
def test_loader_only_raises_bmk_errors(data):
    """The CLI's input reader (text or binary sniffing) over the same inputs."""
    try:
        loading.load(data)
    except bmk.BmkError:
        pass


@settings(max_examples=300 if not LONG else 3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(buffers)
def test_disasm_exit_0_or_2_with_one_line(data):
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x.cmdbuf")
        with open(path, "wb") as f:
            f.write(data)
        res = runner.invoke(disasm, ["--chip", "bm1880", path])
        assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
        if res.exit_code == 0:
            assert res.stdout.startswith(".chip bm1880\n") and res.stderr == ""
        else:
            assert res.exit_code == 2
            assert res.stdout == ""
            assert len(res.stderr.splitlines()) == 1 and res.stderr.endswith("\n")
        res = runner.invoke(diff, [path, path])
        assert res.exit_code in (0, 2) and (res.exception is None or isinstance(res.exception, SystemExit))


@FAST
@given(st.text(max_size=200))
def test_parser_only_raises_asm_errors(text):
    try:
        asmtext.parse(".chip bm1880\n" + text)
    except asmtext.AsmError:
        pass


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["tiu.add", "tdma.load", "res0_c=3", "id=1", "wait.tdma=2", "hdr.flags=1",
                                 "=", "x=y", "tsk_typ=fc", "0x", "#", ";", "\n", " ", "res0_addr=0xffffff",
                                 "hdr.len=0", "hdr.mask=112", ".fields", "nonzero", ".chip", "bm1880"]),
                max_size=30))
def test_parser_on_token_soup(tokens):
    try:
        asmtext.parse(".chip bm1880\n" + " ".join(tokens))
    except asmtext.AsmError:
        pass


@FAST
@given(st.text(alphabet="0123456789xXbBoO_+-abcdefABCDEF .=#", min_size=1, max_size=10),
       st.sampled_from(["res0_c", "res0_addr", "tsk_typ", "hdr.flags", "id", "wait.tdma", "quan_m"]))
def test_parser_values_only_raise_asm_errors(value, name):
    try:
        prog = asmtext.parse(f".chip bm1880\ntiu.conv {name}={value}\n")
    except asmtext.AsmError:
        return
    # an accepted value is an in-range integer that survives the round trip
    buf = prog.to_bytes()
    assert asmtext.assemble(asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, buf))) == buf
