"""Issue 22.1: bmk.testing and the cmdbuf_golden fixture take raw streams (ctx.acquire_streams())
wherever they take a buffer, compared engine by engine; golden files keep their form."""
import pytest

import bmk
from bmk.encoders import Streams, decode_cmdbuf
from bmk.isa import load_chip
from bmk.testing import assert_cmdbuf_equal, cmdbuf_diff
from bmk.text import asm
from tests.loop.kernels import double_buffered

pytest_plugins = ["pytester"]


def test_acquire_streams_names_its_chip():
    streams = double_buffered().acquire_streams()
    assert isinstance(streams, Streams) and streams.chip == "bm1684"
    assert set(streams) == {"tiu", "gdma"} and streams == dict(streams)       # still a plain dict


def test_streams_against_streams_and_buffers():
    ctx = double_buffered()
    streams, buf = ctx.acquire_streams(), ctx.acquire_cmdbuf()
    assert_cmdbuf_equal(streams, streams)
    assert_cmdbuf_equal(streams, buf)             # merged by sync ids the order differs: per engine it does not
    assert_cmdbuf_equal(buf, streams)
    assert_cmdbuf_equal(streams, asm.disassemble(load_chip("bm1684"), decode_cmdbuf("bm1684", buf)))
    assert cmdbuf_diff(streams, buf).order == "engine" and cmdbuf_diff(buf, buf).order == "program"
    assert not cmdbuf_diff(streams, buf, order="program").equal          # the old comparison


def test_a_changed_kernel_fails_with_its_field_diff():
    with pytest.raises(AssertionError) as e:
        assert_cmdbuf_equal(double_buffered(relu_at={1: 0x100}).acquire_streams(), double_buffered().acquire_cmdbuf())
    msg = str(e.value)
    assert "~ A#5 B#4 tiu.arith.max" in msg      # A in program order, B merged by sync ids
    assert "    opd0_addr: lmem:0x8000(npu0+0x8000) -> lmem:0x100(npu0+0x100)" in msg
    assert msg.splitlines()[-1].endswith("differ in each engine's order: 1 changed, 0 inserted, 0 deleted; 8 equal")


def test_plain_dicts_need_the_chip_and_other_values_are_refused():
    streams = dict(double_buffered().acquire_streams())
    with pytest.raises(bmk.BmkError, match=r"actual: raw streams carry no magic byte: pass chip="):
        assert_cmdbuf_equal(streams, streams)
    assert_cmdbuf_equal(streams, streams, chip="bm1684")
    assert_cmdbuf_equal(streams, double_buffered().acquire_cmdbuf())       # the buffer's magic names the chip
    with pytest.raises(bmk.BmkError, match="expected must be a command buffer .*, not int"):
        assert_cmdbuf_equal(streams, 3, chip="bm1684")
    with pytest.raises(bmk.BmkError, match=r"raw streams must be \{engine name: bytes\}, not \{str: list\}"):
        assert_cmdbuf_equal({"tiu": [1]}, streams, chip="bm1684")


STREAMS = double_buffered().acquire_streams()
CHANGED = double_buffered(relu_at={1: 0x100}).acquire_streams()
PLUGIN_TEST = f'''
from bmk.encoders import Streams

def streams(d):
    return Streams({{e: bytes.fromhex(h) for e, h in d.items()}}, chip="bm1684")

def test_kernel(cmdbuf_golden):
    cmdbuf_golden(streams({ {e: d.hex() for e, d in STREAMS.items()} !r}))

def test_changed(cmdbuf_golden):
    cmdbuf_golden(streams({ {e: d.hex() for e, d in CHANGED.items()} !r}), "test_kernel")
'''


def test_fixture_takes_streams_and_goldens_keep_their_form(pytester):
    pytester.makepyfile(test_k=PLUGIN_TEST)
    res = pytester.runpytest("--bmk-update-golden", "-k", "test_kernel")
    res.assert_outcomes(passed=1)
    golden = pytester.path / "test_kernel.cmdbuf"
    written = golden.read_bytes()
    assert written[0] == load_chip("bm1684").magic                    # a cmd_hdr_t buffer naming its chip
    assert_cmdbuf_equal(STREAMS, written)
    res = pytester.runpytest("-k", "test_kernel")
    res.assert_outcomes(passed=1)
    res = pytester.runpytest("-k", "test_changed")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*AssertionError: command buffers differ (expected -> actual)*",
                              "*opd0_addr: lmem:0x8000(npu0+0x8000) -> lmem:0x100(npu0+0x100)*"])
    # a golden written from acquire_cmdbuf() is equal engine by engine: updating leaves it alone
    golden.write_bytes(double_buffered().acquire_cmdbuf())
    pytester.runpytest("--bmk-update-golden", "-k", "test_kernel").assert_outcomes(passed=1)
    assert golden.read_bytes() == double_buffered().acquire_cmdbuf()
    # a text golden stays text when the kernel changes
    golden.write_text(asm.disassemble(load_chip("bm1684"), decode_cmdbuf("bm1684", written)))
    pytester.runpytest("--bmk-update-golden", "-k", "test_changed").assert_outcomes(passed=1)
    text = golden.read_text()
    assert text.startswith(".chip bm1684\n") and "opd0_addr=lmem:0x100(npu0+0x100)" in text
    assert_cmdbuf_equal(CHANGED, text)
