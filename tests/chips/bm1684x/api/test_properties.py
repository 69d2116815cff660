"""Property tests: random valid calls decode to the operands they were given (addresses,
shape, layouts, strides, precisions, the scalar's bits), in the short and the long form."""
import hypothesis.strategies as st
from hypothesis import given, settings

import bmk
from bmk import bm1684x as x
from bmk.bm1684x.constants import INTEGER_DTYPES, dtype_of

LANE = 262144


@st.composite
def binary_calls(draw):
    dtype = draw(st.sampled_from(INTEGER_DTYPES))
    dt = dtype_of(dtype)
    shape = x.dim4(*(draw(st.integers(1, hi)) for hi in (3, 130, 4, 9)))
    npu = draw(st.integers(0, 63))
    # dst in the lower half of the lane, src in the upper: apart (issue 32.14), whatever the strides
    addrs = [npu * LANE + half + 64 * draw(st.integers(0, 400)) for half in (0, LANE // 2)]
    strides = [draw(st.one_of(st.none(), st.tuples(*(st.integers(1, hi) for hi in (4000, 200, 40, 4)))))
               for _ in range(2)]
    C = draw(st.integers(dt.min, dt.max))
    return addrs, shape, strides, dtype, C


@settings(max_examples=60, deadline=None)
@given(binary_calls(), st.sampled_from(["bdc_and_C", "bdc_or_C", "bdc_xor_C", "bdc_min_C", "bdc_max_C"]),
       st.booleans())
def test_const_calls_decode_to_their_operands(call, name, long_form):
    (dst, src), shape, (dst_stride, src_stride), dtype, C = call
    ctx = x.Context(long_form=long_form)
    # the ranges above keep every tensor inside its NPUs' 256 KiB, so every call is valid
    getattr(ctx, name)(dst, src, C, shape, dst_stride, src_stride, dtype)
    (rec,) = [r for r in bmk.decode("bm1684x", ctx.acquire_streams()) if r.engine == "tiu" and r.kind != "sys.end"]
    f = rec.fields
    assert rec.cls == ("AR" if long_form else "sAR")
    assert (f["res0_addr"], f["opd0_addr"]) == (dst, src)
    assert (f["res0_n"], f["res0_c"], f["res0_h"], f["res0_w"]) == shape
    for prefix, stride in (("res0", dst_stride), ("opd0", src_stride)):
        assert f[f"{prefix}_str"] == (0 if stride is None else 3)
        assert tuple(f[f"{prefix}_{d}_str"] for d in "nchw") == (stride or (0, 0, 0, 0))
    assert (f["res0_prec"], f["opd0_prec"], f["opd1_prec"]) == (dtype >> 1,) * 3
    assert (f["opd0_sign"], f["opd1_sign"], f["opd1_const"]) == (dtype & 1, dtype & 1, 1)
    bits = dtype_of(dtype).bits
    value = f["opd1_addr"]
    assert value < 1 << bits
    assert (value - (1 << bits) if dtype & 1 and value >> (bits - 1) else value) == C
