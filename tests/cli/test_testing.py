"""bmk.testing.assert_cmdbuf_equal and the pytest plugin's cmdbuf_golden fixture."""
import pytest

import bmk
from bmk.text import asm as asmtext
from bmk.encoders import decode_cmdbuf, encode_record
from bmk.isa import load_chip
from bmk.testing import assert_cmdbuf_equal
from tests.goldens import golden

pytest_plugins = ["pytester"]

CHIP = load_chip("bm1880")
BUF = golden("sched_serial_load_load_add_store")


def _changed():
    recs = decode_cmdbuf(CHIP, BUF)
    f = dict(recs[2].fields, res0_addr=0x200)
    return b"".join(encode_record(CHIP, r.engine, f if i == 2 else r.fields, r.header) for i, r in enumerate(recs))


def test_equal_passes():
    assert_cmdbuf_equal(BUF, BUF)
    assert_cmdbuf_equal(BUF, asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, BUF)))   # expected as text


def test_difference_message_is_the_field_diff():
    with pytest.raises(AssertionError) as e:
        assert_cmdbuf_equal(_changed(), BUF)
    msg = str(e.value)
    assert msg.startswith("command buffers differ (expected -> actual)\n--- expected\n+++ actual\n")
    assert "~ A#2 B#2 tiu.add" in msg and "res0_addr: 0x800 -> 0x200" in msg
    assert_cmdbuf_equal(_changed(), BUF, ignore=["res0_addr"])


def test_expected_from_path(tmp_path):
    (tmp_path / "k.cmdbuf").write_bytes(BUF)
    assert_cmdbuf_equal(BUF, tmp_path / "k.cmdbuf")
    assert_cmdbuf_equal(BUF, str(tmp_path / "k.cmdbuf"))


def test_bad_input_is_a_bmk_error_not_an_assertion():
    with pytest.raises(bmk.DecodeError):
        assert_cmdbuf_equal(BUF[:-1], BUF)


PLUGIN_TEST = f'''
BUF = bytes.fromhex("{BUF.hex()}")
CHANGED = bytes.fromhex("{_changed().hex()}")

def test_kernel(cmdbuf_golden):
    cmdbuf_golden(BUF)

def test_named(cmdbuf_golden):
    cmdbuf_golden(BUF, "shared_name")

def test_changed(cmdbuf_golden):
    cmdbuf_golden(CHANGED, "shared_name")
'''


def test_plugin_fixture(pytester):
    pytester.makepyfile(test_k=PLUGIN_TEST)
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(failed=3)
    res.stdout.fnmatch_lines(["*test_kernel.cmdbuf does not exist; run pytest --bmk-update-golden*"])
    res = pytester.runpytest("--bmk-update-golden", "-k", "kernel or named")
    res.assert_outcomes(passed=2)
    assert (pytester.path / "test_kernel.cmdbuf").read_bytes() == BUF
    assert (pytester.path / "shared_name.cmdbuf").read_bytes() == BUF
    res = pytester.runpytest()
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(["*AssertionError: command buffers differ (expected -> actual)*",
                              "*res0_addr: 0x800 -> 0x200*"])
    # The failure is the diff: the helpers' frames (whose arguments are the raw bytes) are hidden.
    assert "actual = b'" not in res.stdout.str() and "\\xa5" not in res.stdout.str()


def test_assert_failure_shows_the_diff_not_the_bytes(pytester):
    pytester.makepyfile(test_a=f'''
from bmk.testing import assert_cmdbuf_equal
BUF = bytes.fromhex("{BUF.hex()}")
CHANGED = bytes.fromhex("{_changed().hex()}")

def test_differ():
    assert_cmdbuf_equal(CHANGED, BUF)
''')
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*assert_cmdbuf_equal(CHANGED, BUF)*", "*res0_addr: 0x800 -> 0x200*"])
    assert "actual = b'" not in res.stdout.str() and "\\xa5" not in res.stdout.str()
