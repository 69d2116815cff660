"""Issue 22.7: errors name the C parameters, print enums and local addresses readably, say
"must be an integer", keep one address convention, refuse wrong types as BmkErrors, and quote
at most ~80 characters of an offending value."""
import numpy as np
import pytest

import bmk
from bmk import bm1684, bm1684x, bm1880
from bmk.text import asm
from tests.loop.kernels import double_buffered

G = 0x100000000
S84 = bm1684.dim4(1, 64, 8, 8)
SX = bm1684x.dim4(1, 64, 8, 8)
ADD = "bdc_add takes 4 to 7 arguments (dst_addr, src0_addr, src1_addr, shape[, dst_stride, src0_stride, src1_stride])"
MIN_C = "bdc_min_C takes 7 arguments (dst_addr, src_addr, C, shape, dst_stride=None, src_stride=None, dtype)"


def error(call, *args, **kwargs):
    with pytest.raises(bmk.BmkError) as e:
        call(*args, **kwargs)
    assert "__init__" not in str(e.value) and len(str(e.value).splitlines()) == 1
    return str(e.value)


def test_arity_and_keyword_errors_name_the_c_parameters():
    c, x = bm1684.Context(), bm1684x.Context()
    assert error(c.bdc_add, 0, 0, 0, S84, None, None, None, 5) == f"{ADD}, not 8"
    assert error(c.bdc_add, 0, 0, 0) == f"bdc_add: shape missing; {ADD}, not 3"
    assert error(c.bdc_add, 0, 0, 0, S84, foo=1) == f"bdc_add: no argument named 'foo'; {ADD}"
    assert error(c.bdc_add, 0, 0, 0, S84, dst_addr=1) == f"bdc_add: dst_addr given twice, as argument 1 and by name; {ADD}"
    assert error(x.bdc_min_C, 0x1000, 0x1000, 100, SX, None, None) == \
        f"bdc_min_C: dtype missing; {MIN_C}, not 6 (dtype by name leaves the strides out)"
    assert error(x.bdc_min_C, 0x1000, 0x1000, 100, SX, None, None, bm1684x.DT_INT16, 0) == f"{MIN_C}, not 8"
    ctx = bm1880.register()
    assert error(ctx.tpu_mul, rshift=1) == "tpu_mul: no argument named 'rshift'; tpu_mul takes res_high, res_low, a, b, " \
                                           "rshift_width"


def test_dtypes_and_rounding_modes_are_int_enums_printed_by_name():
    dt, rm = bm1684x.DT_INT8, bm1684x.RM_HALF_TO_EVEN
    assert isinstance(dt, bm1684x.DataType) and isinstance(rm, bm1684x.RoundingMode)
    assert (repr(dt), str(dt), f"{dt}", repr(rm)) == ("DT_INT8", "DT_INT8", "DT_INT8", "RM_HALF_TO_EVEN")
    assert dt == int(dt) and {int(dt): "x"}[dt] == "x" and f"{dt:d}" == str(int(dt))
    x = bm1684x.Context()
    msg = error(x.bdc_min_C, 0x1000, 0x1000, 100, SX, None, None, 99)
    assert msg.startswith("bdc_min_C: dtype must be one of DT_INT8, DT_UINT8, DT_INT16,") and msg.endswith("not 99")
    x.bdc_min_C(0x1000, 0x1000, 100, SX, None, None, dtype=bm1684x.DT_INT16)
    assert x.origin(0).args.endswith("dtype=DT_INT16")          # kept as given, printed by name
    assert x.acquire_cmdbuf() == _min_c(int(bm1684x.DT_INT16))  # and the same bytes as its int


def _min_c(dtype):
    x = bm1684x.Context()
    x.bdc_min_C(0x1000, 0x1000, 100, SX, None, None, dtype)
    return x.acquire_cmdbuf()


@pytest.mark.parametrize("value", [0.5, 4096.0, np.array([4096]), "0x1000"])
def test_a_non_integer_address_must_be_an_integer(value):
    assert error(bm1684.Context().bdc_add, value, 0, 0, S84).startswith(
        "bdc_add: dst_addr must be an integer (a local address in [0, 0x2000000)), not ")
    assert error(bm1684x.Context().gdma_cpy_S2L, 0, value, SX, None, None, bm1684x.DT_INT8).startswith(
        "gdma_cpy_S2L: src_addr must be an integer (a global address in [0x100000000, 0x300000000)), not ")


def test_local_addresses_print_as_hex_with_npu_and_offset():
    assert error(bm1684.Context().bdc_add, 0x80006, 0, 0, S84) == \
        "bdc_add: dst_addr must be divisible by 4, not 0x80006 (NPU 1:0x6)"
    assert error(bm1684.Context().bdc_add, 0x4000000, 0, 0, S84) == \
        "bdc_add: dst_addr must be a local address in [0, 0x2000000), not 0x4000000"


@pytest.mark.parametrize("chip, base", [("bm1684", G), ("bm1684x", G), ("bm1880", 0)])
def test_simulator_memory_calls_keep_one_address_convention(chip, base):
    sim = bmk.Simulator(chip)
    size = sim.gmem.size
    what = "a gmem offset" if base == 0 else "a global address"
    for call in (lambda: sim.gmem_write(base + size - 2, b"abcd"), lambda: sim.gmem_read(base + size - 2, 4)):
        msg = error(call)
        assert msg.endswith(f"addr must be {what} whose 4 bytes end inside global memory [0x{base:x}, "
                            f"0x{base + size:x}), not 0x{base + size - 2:x}"), msg
    assert error(sim.gmem_read, base, "4") == "gmem_read: n must be a byte count (an integer >= 0), not '4'"
    assert error(sim.gmem_write, base, 5) == "gmem_write: data must be bytes or a numpy array, not 5"
    assert error(sim.lmem_read, "x", 4).startswith("lmem_read: addr must be an integer local address")
    assert error(sim.lmem_read, 0, -1) == "lmem_read: n must be a byte count (an integer >= 0), not -1"
    with pytest.raises(bmk.ArgumentError):
        sim.gmem_read(base, 4.0)


def test_decode_and_encode_refuse_wrong_types_as_bmk_errors():
    streams = double_buffered().acquire_streams()
    assert error(bmk.decode, "bm1684", {"tiu": streams["tiu"], "bdc": streams["tiu"]}) == \
        "two raw tiu streams for core 0"                                   # bdc is an alias of tiu
    assert error(bmk.decode, 5, b"") == "chip must be a chip name (e.g. 'bm1684') or a ChipSpec, not int"
    assert error(bmk.decode, "bm1684", 5).startswith("data must be bytes")
    assert error(bmk.encode, "bm1684", 5) == "records must be a sequence of bmk Records (bmk.decode gives them), not int"
    assert error(bmk.encode, "bm1684", [5]) == "records[0] must be a bmk Record (bmk.decode gives them), not int"
    assert error(bmk.encode, "bm1684", None).endswith("not NoneType")


def test_an_error_quotes_at_most_about_80_characters_of_a_value(tmp_path):
    msg = error(bm1684.Context().bdc_add, np.arange(1000), 0, 0, S84)
    assert len(msg) < 200 and "characters)" in msg
    long = "x" * 5000
    with pytest.raises(asm.AsmError) as e:
        asm.assemble(f".chip bm1684\ntiu.conv {long}=1\n")
    assert len(str(e.value)) < 200
    with pytest.raises(asm.AsmError) as e:
        asm.assemble(f".chip bm1684\n{long}.conv\n")
    assert len(str(e.value)) < 200
    from click.testing import CliRunner
    from bmk.cli.main import diff
    buf = double_buffered().acquire_cmdbuf()
    path = str(tmp_path / "k.cmdbuf")
    open(path, "wb").write(buf)
    res = CliRunner().invoke(diff, [path, path, "--ignore", long])
    assert res.exit_code == 2 and len(res.stderr) < 300 + len(path)
