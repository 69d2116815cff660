"""Every remark of seed 001 is a checked rule: a bad call raises ArgumentError naming the
call, the argument, the rule and the value, and leaves the context's bytes unchanged."""
import math

import attrs
import numpy as np
import pytest

import bmk
from bmk import bm1684x as x
from bmk.bm1684x import api
from tests.chips.bm1684x.calls import CALLS, G

ROWS = {row.name: row for row in api.OPS}
LANE = 262144
BDC = sorted(n for n in CALLS if n.startswith("bdc_") and "_vc_" not in n)
VC = sorted(n for n in CALLS if "_vc_" in n)
GDMA = sorted(n for n in CALLS if n.startswith("gdma_"))


def kwargs_of(name):
    names = [a.name for a in attrs.fields(ROWS[name].record)]
    return dict(zip(names, CALLS[name][0]))


@pytest.fixture
def ctx():
    c = x.Context()
    c.gdma_cpy_S2L(0, G, (1, 64, 2, 2), None, None, x.DT_INT8)
    c.bdc_max_C(0x400, 0, 3, (1, 64, 2, 2), None, None, x.DT_INT8)
    return c


def rejects(ctx, name, argument, **changes):
    """The call with `changes` raises naming call and argument; the bytes do not change."""
    before = ctx.acquire_cmdbuf(), ctx.acquire_streams()
    kw = {**kwargs_of(name), **changes}
    with pytest.raises(bmk.ArgumentError) as e:
        getattr(ctx, name)(**kw)
    msg = str(e.value)
    assert msg.startswith(f"{name}: {argument}") and " must be " in msg, msg
    assert (ctx.acquire_cmdbuf(), ctx.acquire_streams()) == before
    return msg


def accepts(ctx, name, **changes):
    getattr(ctx, name)(**{**kwargs_of(name), **changes})


@pytest.mark.parametrize("name", BDC + GDMA)
@pytest.mark.parametrize("shape, dim", [((0, 1, 1, 1), "n"), ((1, 65536, 1, 1), "c"), ((1, 1, -1, 1), "h"),
                                        ((1, 1, 1, 65536), "w"), ((1, 1, 1, 1.0), "w"), ((True, 1, 1, 1), "n")])
def test_shape_fields_are_in_1_to_65535(ctx, name, shape, dim):
    msg = rejects(ctx, name, f"shape.{dim}", shape=shape)
    assert "[1, 65535]" in msg


@pytest.mark.parametrize("name", BDC + GDMA)
def test_shape_must_be_a_dim4(ctx, name):
    rejects(ctx, name, "shape", shape=(1, 2, 3))


def test_shape_extremes_are_accepted(ctx):
    accepts(ctx, "bdc_and", shape=(65535, 1, 1, 1), dst_addr=0, src0_addr=0x10000, src1_addr=0x10000,
            dst_stride=(1, 0, 0, 1), src0_stride=(0, 0, 0, 1), src1_stride=(0, 0, 0, 1), dtype=x.DT_INT8)
    accepts(ctx, "bdc_and", shape=(1, 1, 1, 65535), dst_addr=0, src0_addr=0x10000, src1_addr=0x20000,
            dtype=x.DT_INT8)        # 64 KiB tensors apart (issue 32.14)


def _operands(name):
    kw = kwargs_of(name)
    return [k for k in kw if k.endswith("_addr") and k != "dst_addr"]


@pytest.mark.parametrize("name", BDC)
def test_operands_start_on_the_dst_npu(ctx, name):
    for operand in _operands(name):
        msg = rejects(ctx, name, operand, **{operand: kwargs_of(name)[operand] + LANE})
        assert "same start NPU" in msg and "NPU 0" in msg
    accepts(ctx, name, **{k: v + 3 * LANE for k, v in kwargs_of(name).items() if k.endswith("_addr")})


@pytest.mark.parametrize("name", VC)
def test_vc_dst_and_src1_start_on_the_same_npu(ctx, name):
    rejects(ctx, name, "src1_addr", src1_addr=kwargs_of(name)["src1_addr"] + LANE)
    accepts(ctx, name, src0_addr=kwargs_of(name)["src0_addr"] + 5 * LANE)     # src0 is free to start elsewhere


@pytest.mark.parametrize("name", BDC)
def test_a_null_stride_is_the_aligned_layout(ctx, name):
    """NULL stride: the 64-byte aligned layout, so the address must be 64-byte aligned; with
    a stride (free layout) an element-aligned address is fine."""
    for operand in ["dst_addr"] + _operands(name):
        stride = operand.replace("_addr", "_stride")
        msg = rejects(ctx, name, operand, **{operand: kwargs_of(name)[operand] + 4})
        assert "64-byte aligned" in msg and f"NULL {stride}" in msg
        accepts(ctx, name, **{operand: kwargs_of(name)[operand] + 4, stride: x.dim4(2000, 40, 5, 1)})


@pytest.mark.parametrize("name", BDC)
def test_free_strides_fit_their_fields(ctx, name):
    for operand in ["dst_addr"] + _operands(name):
        stride = operand.replace("_addr", "_stride")
        rejects(ctx, name, f"{stride}.n", **{stride: (-1, 0, 0, 1)})
        rejects(ctx, name, f"{stride}.c", **{stride: (0, 65536, 0, 1)})
        rejects(ctx, name, f"{stride}.w", **{stride: (0, 0, 0, 1 << 32)})
        rejects(ctx, name, stride, **{stride: "aligned"})


@pytest.mark.parametrize("name", BDC + GDMA)
def test_a_result_is_not_broadcast(ctx, name):
    """shape (2, 70, 3, 5): a zero dst stride over n, c (two channel slots), h or w is refused."""
    for dim, stride in zip("nchw", [(0, 40, 5, 1), (2000, 0, 5, 1), (2000, 40, 0, 1), (2000, 40, 5, 0)]):
        assert "cannot be broadcast" in rejects(ctx, name, f"dst_stride.{dim}", dst_stride=stride)
    accepts(ctx, name, dst_stride=(2000, 40, 5, 1), shape=(2, 70, 3, 5))
    if kwargs_of(name)["dst_addr"] < G:      # a local dst: c counts channel slots
        accepts(ctx, name, dst_stride=(2000, 0, 0, 1), shape=(2, 64, 1, 5))  # one slot, one row
    else:
        assert " 64 c " in rejects(ctx, name, "dst_stride.c", dst_stride=(2000, 0, 0, 1), shape=(2, 64, 1, 5))


def test_a_free_layout_address_is_element_aligned(ctx):
    msg = rejects(ctx, "bdc_and", "src0_addr", src0_addr=1, src0_stride=(0, 0, 5, 1), dtype=x.DT_INT16)
    assert "2-byte element size of DT_INT16" in msg


@pytest.mark.parametrize("name", BDC + VC)
def test_tensors_fit_local_memory(ctx, name):
    msg = rejects(ctx, name, "dst_addr", dst_addr=LANE - 64)
    assert "262144-byte local memory" in msg
    rejects(ctx, name, "dst_addr", dst_addr=64 * LANE)
    rejects(ctx, name, "dst_addr", dst_addr=-64)


@pytest.mark.parametrize("name", [n for n in BDC if "shift" not in n])
def test_dtypes_are_data_type_t_codes(ctx, name):
    key = "dtype" if "dtype" in kwargs_of(name) else "dst_dtype"
    rejects(ctx, name, key, **{key: 99})
    rejects(ctx, name, key, **{key: x.DT_INT4})
    rejects(ctx, name, key, **{key: None})


@pytest.mark.parametrize("name", ["bdc_and", "bdc_or_C", "bdc_xor", "bdc_vc_and", "bdc_vc_xor"])
def test_bitwise_functions_take_float_dtypes(ctx, name):
    """Seed 001 sets no dtype limit; the vendor encodes floats as integers of their width."""
    accepts(ctx, name, dtype=x.DT_FP32, **({"C": 1.5} if name.endswith("_C") else {}))
    rejects(ctx, name, "dtype", dtype=x.DT_INT4, **({"C": 1} if name.endswith("_C") else {}))


@pytest.mark.parametrize("name", ["bdc_and_C", "bdc_or_C", "bdc_xor_C", "bdc_min_C", "bdc_max_C"])
@pytest.mark.parametrize("dtype, ok, bad", [(x.DT_INT8, (-128, 127), (-129, 128)), (x.DT_UINT8, (0, 255), (-1, 256)),
                                            (x.DT_INT16, (-32768, 32767), (-32769, 32768)),
                                            (x.DT_UINT16, (0, 65535), (-1, 65536)),
                                            (x.DT_INT32, (-2**31, 2**31 - 1), (-2**31 - 1, 2**31)),
                                            (x.DT_UINT32, (0, 2**32 - 1), (-1, 2**32))])
def test_constants_stay_in_their_dtypes_range(ctx, name, dtype, ok, bad):
    for c in ok:
        accepts(ctx, name, C=c, dtype=dtype)
    for c in bad + (1.5, "1", None):
        msg = rejects(ctx, name, "C", C=c, dtype=dtype)
        assert repr(c) in msg


def test_float_constants_are_in_range_or_inf_or_nan(ctx):
    accepts(ctx, "bdc_max_C", C=65504.0, dtype=x.DT_FP16)
    for c in (math.inf, -math.inf, math.nan):           # IEEE values of the type, as on bm1684 (issue 22.9)
        accepts(ctx, "bdc_max_C", C=c, dtype=x.DT_FP16)
    for c in (70000.0, "1.0"):
        rejects(ctx, "bdc_max_C", "C", C=c, dtype=x.DT_FP16)
    accepts(ctx, "bdc_max_C", C=np.int8(3), dtype=x.DT_FP32)
    accepts(ctx, "bdc_max_C", C=np.float32(-1.5), dtype=x.DT_BFP16)
    rejects(ctx, "bdc_max_C", "C", C=True, dtype=x.DT_FP32)


@pytest.mark.parametrize("name", ["bdc_arithmetic_shift", "bdc_arithmetic_shift_C"])
def test_arithmetic_shift_dtypes_are_integers_of_one_signedness(ctx, name):
    for dst, src in ((x.DT_INT8, x.DT_UINT8), (x.DT_UINT32, x.DT_INT16)):
        msg = rejects(ctx, name, "dst_dtype", dst_dtype=dst, src_dtype=src)
        assert "both signed or both unsigned" in msg
    rejects(ctx, name, "dst_dtype", dst_dtype=x.DT_FP32)
    rejects(ctx, name, "src_dtype", src_dtype=x.DT_BFP16)
    accepts(ctx, name, dst_dtype=x.DT_UINT8, src_dtype=x.DT_UINT32,
            **({"shift_dtype": x.DT_INT8} if name.endswith("shift") else {}))


@pytest.mark.parametrize("name", ["bdc_logical_shift", "bdc_logical_shift_C"])
def test_logical_shift_dtypes_are_unsigned(ctx, name):
    rejects(ctx, name, "dst_dtype", dst_dtype=x.DT_INT16)
    rejects(ctx, name, "src_dtype", src_dtype=x.DT_INT32)


@pytest.mark.parametrize("name", ["bdc_arithmetic_shift", "bdc_logical_shift"])
def test_shift_dtype_is_signed_and_no_wider_than_src(ctx, name):
    for bad in (x.DT_UINT8, x.DT_UINT32, x.DT_FP32):
        rejects(ctx, name, "shift_dtype", shift_dtype=bad)
    msg = rejects(ctx, name, "src_dtype", src_dtype=x.DT_UINT8 if "logical" in name else x.DT_INT8,
                  dst_dtype=x.DT_UINT8 if "logical" in name else x.DT_INT8, shift_dtype=x.DT_INT16)
    assert "at least as wide as shift_dtype" in msg


@pytest.mark.parametrize("name", ["bdc_arithmetic_shift_C", "bdc_logical_shift_C"])
def test_shift_constant_is_in_minus_32_to_31(ctx, name):
    accepts(ctx, name, C=-32)
    accepts(ctx, name, C=31)
    for c in (-33, 32, 1.0):
        assert "[-32, 31]" in rejects(ctx, name, "C", C=c)


@pytest.mark.parametrize("name", [n for n in BDC if "shift" in n])
def test_rounding_mode_is_a_rounding_mode_t(ctx, name):
    for mode in (-1, 7, None):
        rejects(ctx, name, "rounding_mode", rounding_mode=mode)


COMPARE = [n for n in BDC + VC if "true_val" in kwargs_of(n)]


@pytest.mark.parametrize("name", COMPARE)
def test_compare_src_dtype_is_at_least_as_wide_as_dst(ctx, name):
    msg = rejects(ctx, name, "src_dtype", dst_dtype=x.DT_INT32, src_dtype=x.DT_INT16, true_val=1,
                  **({"C": 1} if "C" in kwargs_of(name) else {}))
    assert "at least as wide as dst_dtype" in msg
    rejects(ctx, name, "src_dtype", dst_dtype=x.DT_FP32, src_dtype=x.DT_BFP16, true_val=1.0,
            **({"C": 1} if "C" in kwargs_of(name) else {}))
    accepts(ctx, name, dst_dtype=x.DT_FP16, src_dtype=x.DT_INT16, true_val=0.5,
            **({"C": 1} if "C" in kwargs_of(name) else {}))


@pytest.mark.parametrize("name", COMPARE)
def test_true_val_is_in_dst_dtypes_range(ctx, name):
    accepts(ctx, name, true_val=255, dst_dtype=x.DT_UINT8)
    accepts(ctx, name, true_val=0, dst_dtype=x.DT_UINT8)
    for tv in (256, -1, 1.0, None):
        rejects(ctx, name, "true_val", true_val=tv, dst_dtype=x.DT_UINT8)
    rejects(ctx, name, "true_val", true_val=1e39, dst_dtype=x.DT_FP32, src_dtype=x.DT_FP32,
            **({"C": 0.0} if "C" in kwargs_of(name) else {}))


@pytest.mark.parametrize("name", [n for n in COMPARE if n.endswith("_C")])
def test_compare_constant_is_in_src_dtypes_range(ctx, name):
    accepts(ctx, name, C=-32768)
    for c in (-32769, 32768, 0.5):
        rejects(ctx, name, "C", C=c)


@pytest.mark.parametrize("name", VC)
def test_vc_lengths(ctx, name):
    for arg in ("src0_len", "src1_len", "src0_len_per_channel", "src1_len_per_channel"):
        for bad in (0, 65536, 1.0):
            assert "[1, 65535]" in rejects(ctx, name, arg, **{arg: bad})


@pytest.mark.parametrize("name", VC)
def test_vc_layouts_are_aligned(ctx, name):
    for arg in ("dst_addr", "src0_addr", "src1_addr"):
        assert "64-byte aligned" in rejects(ctx, name, arg, **{arg: kwargs_of(name)[arg] + 8})
    # a matrix of 65535 rows does not fit
    assert "local memory" in rejects(ctx, name, "dst_addr", src0_len=65535)


@pytest.mark.parametrize("name", VC)
def test_vc_dtypes(ctx, name):
    key = "dtype" if "dtype" in kwargs_of(name) else "src_dtype"
    rejects(ctx, name, key, **{key: x.DT_INT4})


@pytest.mark.parametrize("name", GDMA)
def test_copies_check_both_sides(ctx, name):
    kw = kwargs_of(name)
    for side in ("dst", "src"):
        addr = kw[f"{side}_addr"]
        if addr >= G:                                 # a system operand
            rejects(ctx, name, f"{side}_addr", **{f"{side}_addr": 0x1000})
            msg = rejects(ctx, name, f"{side}_addr", **{f"{side}_addr": 0x300000000 - 64})
            assert "fits global memory" in msg
            rejects(ctx, name, f"{side}_stride.h", **{f"{side}_stride": (0, 0, -1, 1)})
            accepts(ctx, name, **{f"{side}_stride": (1 << 20, 1 << 12, 5, 1)})
        else:
            rejects(ctx, name, f"{side}_addr", **{f"{side}_addr": addr + 2})
            rejects(ctx, name, f"{side}_addr", **{f"{side}_addr": LANE - 64})
            rejects(ctx, name, f"{side}_addr", **{f"{side}_addr": 1 << 24})
    rejects(ctx, name, "dtype", dtype=x.DT_INT4)
    rejects(ctx, name, "dtype", dtype=2)


def test_wrong_argument_counts_name_the_call(ctx):
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match="^bdc_and: "):
        ctx.bdc_and(0, 0, 0)
    with pytest.raises(bmk.ArgumentError, match="^gdma_cpy_S2L: "):
        ctx.gdma_cpy_S2L(0, G, (1, 1, 1, 1), None, None, x.DT_INT8, bogus=1)
    assert ctx.acquire_cmdbuf() == before


def test_a_context_keeps_working_after_errors(ctx):
    with pytest.raises(bmk.ArgumentError):
        ctx.bdc_and(0, 0, LANE, (1, 1, 1, 1), None, None, None, x.DT_INT8)
    ctx.bdc_and(0, 0, 0, (1, 1, 1, 1), None, None, None, x.DT_INT8)
    assert [r.kind for r in bmk.decode("bm1684x", ctx.acquire_cmdbuf())][-3:] == ["arith.and", "sys.end", "dma.sys"]


@pytest.mark.parametrize("call, args, message", [
    ("bdc_and", (0, 0, 0, (1, 0, 1, 1), None, None, None, x.DT_INT8),
     "bdc_and: shape.c must be an integer in [1, 65535], not 0"),
    ("bdc_xor", (0, LANE, 0, (1, 1, 1, 1), None, None, None, x.DT_INT8),
     "bdc_xor: src0_addr must be an address on NPU 0, where dst_addr starts (the same start NPU), not 262144"),
    ("bdc_or", (0, 8, 0, (1, 1, 1, 1), None, None, None, x.DT_INT8),
     "bdc_or: src0_addr must be 64-byte aligned in its NPU (offset 8 of NPU 0) for the aligned layout of a NULL "
     "src0_stride, not 8"),
    ("bdc_min_C", (0, 0, 128, (1, 1, 1, 1), None, None, x.DT_INT8),
     "bdc_min_C: C must be an integer in the range of DT_INT8 [-128, 127], not 128"),
    ("bdc_arithmetic_shift_C", (0, 0, 32, (1, 1, 1, 1), None, None, x.DT_INT8, x.DT_INT8, x.RM_UP),
     "bdc_arithmetic_shift_C: C must be an integer in [-32, 31], not 32"),
    ("bdc_arithmetic_shift_C", (0, 0, 1, (1, 1, 1, 1), None, None, x.DT_UINT8, x.DT_INT8, x.RM_UP),
     "bdc_arithmetic_shift_C: dst_dtype must be signed like src_dtype (DT_INT8): both signed or both unsigned, "
     "not 'DT_UINT8'"),
    ("bdc_logical_shift", (0, 0, 0, (1, 1, 1, 1), None, None, None, x.DT_UINT8, x.DT_UINT8, x.DT_INT16, x.RM_UP),
     "bdc_logical_shift: src_dtype must be at least as wide as shift_dtype (DT_INT16, 16 bits), not 'DT_UINT8'"),
    ("bdc_greater", (0, 0, 0, 256, (1, 1, 1, 1), None, None, None, x.DT_UINT8, x.DT_INT16),
     "bdc_greater: true_val must be an integer in the range of DT_UINT8 [0, 255], not 256"),
    ("bdc_vc_max", (0, 0, LANE, 0, 1, 1, 1, x.DT_INT8),
     "bdc_vc_max: src0_len must be an integer in [1, 65535], not 0"),
    ("bdc_logical_shift_C", (0, 0, 1, (1, 1, 1, 1), None, None, x.DT_UINT8, x.DT_UINT8, 7),
     "bdc_logical_shift_C: rounding_mode must be a rounding_mode_t, one of RM_HALF_TO_EVEN (0), "
     "RM_HALF_AWAY_FROM_ZERO (1), RM_TOWARDS_ZERO (2), RM_DOWN (3), RM_UP (4), RM_HALF_UP (5), RM_HALF_DOWN (6), "
     "not 7"),
    ("gdma_cpy_S2L", (0, 0x1000, (1, 1, 1, 1), None, None, x.DT_INT8),
     "gdma_cpy_S2L: src_addr must be a global address in [0x100000000, 0x300000000), not 0x1000"),
])
def test_whole_messages(call, args, message):
    with pytest.raises(bmk.ArgumentError) as e:
        getattr(x.Context(), call)(*args)
    assert str(e.value) == message
