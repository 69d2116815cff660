"""The bm1684x TPU-Kernel API through bytes: every function decodes (bmk.decode) to the kinds
its op-table row declares and to the fields its lowering documents; short and long forms;
module helpers; numpy integers and keywords; end commands; parallel sections and poll."""
import numpy as np
import pytest

import bmk
from bmk import bm1684x as x
from bmk.bm1684x import api
from bmk.isa import load_chip
from tests.chips.bm1684x.calls import CALLS, D, G, A, B, S

CHIP = load_chip("bm1684x")
TIU = CHIP.engine("tiu")
ENDS = ("sys.end", "dma.sys")
SYNC = ("cmd_id", "cmd_id_dep", "cmd_id_en")


def run(name, *args, long_form=False, **kwargs):
    ctx = x.Context(long_form=long_form)
    getattr(ctx, name)(*args, **kwargs)
    return [r for r in bmk.decode("bm1684x", ctx.acquire_streams()) if r.kind not in ENDS]


def one(name, *args, **kwargs):
    recs = run(name, *args, **kwargs)
    assert len(recs) == 1
    return recs[0].fields


def test_constants_have_the_chips_values():
    assert (x.DT_UINT8, x.DT_INT8, x.DT_FP16, x.DT_FP32, x.DT_UINT16, x.DT_INT16, x.DT_UINT32, x.DT_INT32,
            x.DT_BFP16) == (0, 1, 3, 5, 6, 7, 8, 9, 11)
    assert (x.RM_HALF_TO_EVEN, x.RM_HALF_AWAY_FROM_ZERO, x.RM_TOWARDS_ZERO, x.RM_DOWN, x.RM_UP, x.RM_HALF_UP,
            x.RM_HALF_DOWN) == tuple(range(7))


def test_the_table_has_the_37_seed_functions_and_the_copies():
    bdc = [n for n in api.NAMES if n.startswith("bdc_")]
    assert len(bdc) == 37 and len(set(bdc)) == 37
    assert {n for n in api.NAMES if n.startswith("gdma_")} == {f"gdma_cpy_{d}" for d in ("S2L", "L2S", "L2L", "S2S")}
    assert set(CALLS) == set(api.NAMES)
    assert "bm1684x" in bmk.chips()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_function_emits_the_kinds_its_row_declares(name):
    args, kinds = CALLS[name]
    recs = run(name, *args)
    assert [r.kind for r in recs] == kinds
    row = next(r for r in api.OPS if r.name == name)
    assert set(row.kinds) == {f"{r.engine}.{r.kind}" for r in recs}     # kinds named with their engine


def test_binary_tensor_fields():
    f = one("bdc_and", D, A, B, S, None, None, None, x.DT_INT16)
    assert (f["cmd_short"], f["tsk_typ"], f["tsk_eu_typ"], f["tsk_opd_num"]) == (1, 3, 7, 2)
    assert (f["res0_n"], f["res0_c"], f["res0_h"], f["res0_w"]) == tuple(S)
    assert (f["res0_addr"], f["opd0_addr"], f["opd1_addr"]) == (D, A, B)
    assert (f["res0_prec"], f["opd0_prec"], f["opd1_prec"], f["opd0_sign"], f["opd1_sign"]) == (3, 3, 3, 1, 1)
    assert (f["res0_str"], f["opd0_str"], f["opd1_str"]) == (0, 0, 0)
    assert (f["opd0_const"], f["opd1_const"], f["opd2_const"]) == (0, 0, 0)
    f = one("bdc_max", D, A, B, S, None, None, None, x.DT_UINT32)
    assert (f["tsk_eu_typ"], f["res0_prec"], f["opd0_sign"], f["opd1_sign"]) == (4, 4, 0, 0)
    assert one("bdc_min", D, A, B, S, None, None, None, x.DT_FP32)["tsk_eu_typ"] == 5
    assert one("bdc_or", D, A, B, S, None, None, None, x.DT_INT8)["tsk_eu_typ"] == 8
    assert one("bdc_xor", D, A, B, S, None, None, None, x.DT_INT8)["tsk_eu_typ"] == 9


def test_free_strides_go_to_the_stride_fields():
    f = one("bdc_min", D, A + 2, B, S, None, (2000, 40, 6, 2), None, x.DT_INT16)
    assert (f["opd0_str"], f["opd0_n_str"], f["opd0_c_str"], f["opd0_h_str"], f["opd0_w_str"]) == (3, 2000, 40, 6, 2)
    assert f["res0_str"] == f["opd1_str"] == 0 and f["res0_n_str"] == f["opd1_c_str"] == 0


@pytest.mark.parametrize("dtype, C, bits", [(x.DT_INT16, -7, 0xFFF9), (x.DT_INT8, -128, 0x80), (x.DT_UINT8, 255, 0xFF),
                                            (x.DT_INT32, -1, 0xFFFFFFFF), (x.DT_UINT32, 0xFFFFFFFF, 0xFFFFFFFF)])
def test_const_operand_holds_the_scalars_bits(dtype, C, bits):
    f = one("bdc_and_C", D, A, C, S, None, None, dtype)
    assert (f["opd1_const"], f["opd1_addr"], f["opd1_prec"], f["opd1_sign"]) == (1, bits, dtype >> 1, dtype & 1)


def test_float_constants():
    assert one("bdc_max_C", D, A, 1.5, S, None, None, x.DT_FP32)["opd1_addr"] == 0x3FC00000
    assert one("bdc_max_C", D, A, -2.0, S, None, None, x.DT_FP16)["opd1_addr"] == 0xC000
    assert one("bdc_min_C", D, A, 1.0, S, None, None, x.DT_BFP16)["opd1_addr"] == 0x3F80
    assert one("bdc_min_C", D, A, 3, S, None, None, x.DT_FP32)["opd1_addr"] == 0x40400000


def test_shift_fields():
    f = one("bdc_arithmetic_shift", D, A, B, S, None, None, None, x.DT_INT32, x.DT_INT32, x.DT_INT8,
            x.RM_HALF_AWAY_FROM_ZERO)
    assert (f["tsk_eu_typ"], f["tsk_opd_num"], f["opd2_n_str"]) == (21, 2, 1)
    assert (f["res0_prec"], f["opd0_prec"], f["opd0_sign"], f["opd1_prec"], f["opd1_sign"]) == (4, 4, 1, 0, 1)
    assert (f["opd1_const"], f["opd1_addr"]) == (0, B)
    f = one("bdc_arithmetic_shift_C", D, A, -32, S, None, None, x.DT_INT8, x.DT_INT16, x.RM_HALF_DOWN)
    assert (f["opd1_const"], f["opd1_addr"], f["opd1_prec"], f["opd1_sign"], f["opd2_n_str"]) == (1, 0xE0, 0, 1, 6)
    assert (f["res0_prec"], f["opd0_prec"], f["opd0_sign"]) == (0, 3, 1)
    f = one("bdc_logical_shift_C", D, A, 31, S, None, None, x.DT_UINT16, x.DT_UINT32, x.RM_UP)
    assert (f["tsk_eu_typ"], f["opd1_addr"], f["opd0_sign"], f["res0_prec"], f["opd0_prec"], f["opd2_n_str"]) == \
        (6, 31, 0, 3, 4, 4)


def test_compare_fields():
    f = one("bdc_greater", D, A, B, 200, S, None, None, None, x.DT_UINT8, x.DT_INT16)
    assert (f["tsk_eu_typ"], f["tsk_opd_num"], f["opd2_const"], f["opd2_addr"]) == (10, 3, 1, 200)
    assert (f["res0_prec"], f["opd2_prec"], f["opd2_sign"]) == (0, 0, 0)
    assert (f["opd0_prec"], f["opd0_sign"], f["opd1_prec"], f["opd1_sign"], f["opd1_const"]) == (3, 1, 3, 1, 0)
    f = one("bdc_less_C", D, A, -300, -5, S, None, None, x.DT_INT8, x.DT_INT16)
    assert (f["tsk_eu_typ"], f["opd1_const"], f["opd1_addr"], f["opd2_addr"], f["opd2_sign"]) == \
        (13, 1, (-300) & 0xFFFF, 0xFB, 1)
    assert one("bdc_equal_C", D, A, 3, 1.0, S, None, None, x.DT_FP32, x.DT_FP32)["opd2_addr"] == 0x3F800000


@pytest.mark.parametrize("name, first", [("bdc_greater_equal", 13), ("bdc_less_equal", 10), ("bdc_not_equal", 11)])
def test_two_step_comparisons_invert_the_opposite_select(name, first):
    sel, inv = (r.fields for r in run(name, D, A, B, 9, S, (3000, 40, 6, 2), None, None, x.DT_INT16, x.DT_INT32))
    assert (sel["tsk_eu_typ"], sel["opd2_addr"], sel["res0_addr"], sel["opd0_addr"]) == (first, 9, D, A)
    assert (sel["res0_str"], sel["res0_n_str"], sel["res0_c_str"]) == (3, 3000, 40)
    # issue 18: the vendor's dst = dst XOR true_val (AR eu 9, two operands, opd1 the constant
    # true_val), every operand in dst_dtype, dst in place with dst's layout
    assert (inv["tsk_eu_typ"], inv["tsk_opd_num"], inv["res0_addr"], inv["opd0_addr"]) == (9, 2, D, D)
    assert (inv["opd1_const"], inv["opd1_addr"], inv.get("opd2_const", 0)) == (1, 9, 0)
    assert {inv[k] for k in ("res0_prec", "opd0_prec", "opd1_prec")} == {3}
    assert (inv["res0_str"], inv["opd0_str"], inv["opd0_n_str"], inv["opd0_h_str"]) == (3, 3, 3000, 6)
    assert (inv["res0_n"], inv["res0_c"], inv["res0_h"], inv["res0_w"]) == tuple(S)


def test_vc_fields():
    f = one("bdc_vc_max", D, A, B, 100, 130, 16, 64, x.DT_INT8)
    assert (f["cmd_short"], f["tsk_typ"], f["tsk_eu_typ"]) == (1, 14, 4)
    assert (f["res0_c"], f["res0_w"], f["opd0_c"], f["opd0_w"], f["opd1_w"]) == (3, 64, 7, 16, 4)
    assert (f["res0_addr"], f["opd0_addr"], f["opd1_addr"], f["opd2_addr"]) == (D, A, B, 0)
    assert (f["res0_prec"], f["opd0_prec"], f["opd1_prec"], f["opd0_sign"], f["opd1_sign"]) == (0, 0, 0, 1, 1)
    f = one("bdc_vc_less", D, A, B, -1, 64, 64, 64, 64, x.DT_INT8, x.DT_UINT32)
    assert (f["tsk_eu_typ"], f["opd2_addr"], f["res0_prec"], f["opd0_prec"], f["opd0_sign"], f["opd1_w"]) == \
        (13, 0xFF, 0, 4, 0, 64)


def test_vc_two_step_inverts_the_whole_matrix():
    sel, inv = (r.fields for r in run("bdc_vc_not_equal", D, A, B, 7, 100, 130, 16, 64, x.DT_INT16, x.DT_INT16))
    assert (sel["tsk_eu_typ"], sel["opd2_addr"]) == (11, 7)
    assert (inv["res0_n"], inv["res0_c"], inv["res0_h"], inv["res0_w"]) == (100, 3, 1, 64)
    assert (inv["tsk_eu_typ"], inv["res0_addr"], inv["opd0_addr"], inv["res0_str"], inv["opd1_addr"],
            inv["res0_prec"]) == (9, D, D, 0, 7, 3)


@pytest.mark.parametrize("dtype, prec", [(x.DT_FP32, 4), (x.DT_FP16, 3), (x.DT_BFP16, 3)])
def test_bitwise_functions_compute_floats_on_their_bits(dtype, prec):
    """Issue 18 item 3: and/or/xor of a float dtype are encoded as the signed integer of its
    width (prec int32 4 / int16 3, sign 1), as the vendor's TPU-Kernel writes them."""
    f = one("bdc_and", D, A, B, S, None, None, None, dtype)
    assert (f["tsk_eu_typ"], f["res0_prec"], f["opd0_prec"], f["opd1_prec"], f["opd0_sign"], f["opd1_sign"]) == \
        (7, prec, prec, prec, 1, 1)
    f = one("bdc_xor_C", D, A, -2.0, S, None, None, dtype)
    bits = {x.DT_FP32: 0xC0000000, x.DT_FP16: 0xC000, x.DT_BFP16: 0xC000}[dtype]
    assert (f["opd1_const"], f["opd1_addr"], f["opd1_prec"], f["opd1_sign"]) == (1, bits, prec, 1)
    f = one("bdc_vc_or", D, A, B, 100, 130, 16, 64, dtype)
    assert (f["res0_prec"], f["opd0_prec"], f["opd1_prec"]) == (prec, prec, prec)


@pytest.mark.parametrize("name", ["bdc_min", "bdc_max", "bdc_and", "bdc_or", "bdc_xor"])
def test_a_free_layout_operand_goes_first(name):
    """Issue 18 item 3: when only src1 has strides, the vendor puts it in opd0."""
    f = one(name, D, A, B, S, None, None, (3000, 40, 6, 2), x.DT_INT16)
    assert (f["opd0_addr"], f["opd0_str"], f["opd0_n_str"], f["opd1_addr"], f["opd1_str"]) == (B, 3, 3000, A, 0)
    f = one(name, D, A, B, S, None, (3000, 40, 6, 2), None, x.DT_INT16)
    assert (f["opd0_addr"], f["opd0_str"], f["opd1_addr"], f["opd1_str"]) == (A, 3, B, 0)
    sel = one("bdc_equal", D, A, B, 1, S, None, None, (3000, 40, 6, 2), x.DT_INT16, x.DT_INT16)
    assert (sel["opd0_addr"], sel["opd1_addr"]) == (B, A)
    sel = one("bdc_greater", D, A, B, 1, S, None, None, (3000, 40, 6, 2), x.DT_INT16, x.DT_INT16)
    assert (sel["opd0_addr"], sel["opd1_addr"]) == (A, B)       # not commutative: order kept


@pytest.mark.parametrize("name, general", [("gdma_cpy_L2L", True), ("gdma_cpy_S2S", True),
                                           ("gdma_cpy_S2L", False), ("gdma_cpy_L2S", False)])
def test_same_side_copies_use_the_general_move(name, general):
    """Issue 18 item 3: L2L and S2S are the general move (nchw_copy 0, dst sizes filled)."""
    dst, src = {"gdma_cpy_L2L": (A, B), "gdma_cpy_S2S": (G, G + 0x10000), "gdma_cpy_S2L": (A, G),
                "gdma_cpy_L2S": (G, A)}[name]
    f = one(name, dst, src, S, None, None, x.DT_INT16)
    assert f["nchw_copy"] == (0 if general else 1)
    assert (f["dst_nsize"], f["dst_csize"], f["dst_hsize"], f["dst_wsize"]) == (tuple(S) if general else (0, 0, 0, 0))


def test_dma_fields():
    f = one("gdma_cpy_S2L", 5 * 262144 + 0x40, G + 0x1234, S, None, None, x.DT_INT16)
    assert (f["cmd_short"], f["cmd_type"], f["cmd_special_function"], f["nchw_copy"], f["stride_enable"]) == \
        (0, 0, 0, 1, 1)
    assert (f["src_nsize"], f["src_csize"], f["src_hsize"], f["src_wsize"]) == tuple(S)
    assert (f["dst_nsize"], f["dst_csize"]) == (0, 0)
    assert (f["src_start_addr_h8"], f["src_start_addr_l32"]) == (1, 0x1234)
    assert (f["dst_start_addr_h8"], f["dst_start_addr_l32"]) == (0, 0x8000000 + 5 * 262144 + 0x40)
    assert (f["src_nstride"], f["src_cstride"], f["src_hstride"], f["src_wstride"]) == (70 * 15, 15, 5, 1)
    # aligned from NPU 5: cs = ALIGN(15, 32) = 32, ns = ceil((5 + 70) / 64) * 32
    assert (f["dst_nstride"], f["dst_cstride"], f["dst_hstride"], f["dst_wstride"]) == (64, 32, 5, 1)
    assert (f["src_data_format"], f["localmem_mask_l32"], f["localmem_mask_h32"]) == (3, 0xFFFFFFFF, 0xFFFFFFFF)
    f = one("gdma_cpy_L2S", G, A, S, (1, 2, 3, 4), (9, 8, 7, 6), x.DT_FP32)
    assert (f["src_start_addr_l32"], f["dst_start_addr_h8"], f["src_data_format"]) == (0x8000000, 1, 2)
    assert (f["dst_nstride"], f["dst_wstride"], f["src_nstride"], f["src_wstride"]) == (1, 4, 9, 6)


@pytest.mark.parametrize("name", sorted(n for n in CALLS if n.startswith("bdc_")))
def test_long_form_carries_the_same_fields(name):
    args, _ = CALLS[name]
    short, long_ = run(name, *args), run(name, *args, long_form=True)
    assert len(short) == len(long_)
    for s, lg in zip(short, long_):
        assert s.cls in ("sAR", "sVC") and lg.cls == s.cls[1:] and s.kind == lg.kind
        assert lg.fields["cmd_short"] == 0 and lg.fields["tsk_lane_num"] == (1 << 64) - 1
        for k, v in s.fields.items():
            if k not in SYNC + ("cmd_short",) and not TIU.cls(s.cls).field(k).reserved:
                assert lg.fields[k] == v, k
        extra = {k: v for k, v in lg.fields.items() if k not in s.fields and k != "tsk_lane_num"}
        assert not any(extra.values()), extra


def test_a_stride_too_wide_for_the_short_form_takes_the_long_one():
    wide = (0, 0, 1 << 20, 1)
    f = run("bdc_and", D, A, B, (1, 1, 1, 8), wide, None, None, x.DT_INT8)[0]
    assert f.cls == "AR" and f.fields["res0_h_str"] == 1 << 20
    assert run("bdc_and", D, A, B, (1, 1, 1, 8), (0, 0, (1 << 20) - 1, 1), None, None, x.DT_INT8)[0].cls == "sAR"


def test_module_helpers():
    assert x.npu_num() == 64 and x.local_mem_size_per_npu() == 262144
    assert x.start_npu_index(5 * 262144 + 3) == 5 and x.start_npu_index(np.uint32(262143)) == 0
    # the worked examples of isa-facts/bm1684x-memory.md
    assert x.aligned_stride(0, (1, 67, 1, 3), x.DT_INT8) == (128, 64, 3, 1)
    assert x.aligned_stride(0, (2, 3, 1, 5), x.DT_INT16) == (32, 32, 5, 1)
    assert x.aligned_stride(5, (1, 2, 2, 3), x.DT_INT32) == (16, 16, 3, 1)
    assert x.aligned_stride(62, (2, 3, 1, 1), x.DT_INT8) == (128, 64, 1, 1)
    s = x.aligned_stride(0, x.dim4(1, 1, 1, 1), x.DT_FP32)
    assert isinstance(s, x.dim4) and s.c == 16
    assert x.compact_stride(63, (1, 2, 3, 4)) == (24, 12, 4, 1)
    assert x.continuous_stride((2, 3, 4, 5)) == (60, 20, 5, 1)
    assert x.dim4(1, 2, 3, 4) == (1, 2, 3, 4)
    for call, args in ((x.start_npu_index, (1 << 24,)), (x.aligned_stride, (64, (1, 1, 1, 1), x.DT_INT8)),
                       (x.aligned_stride, (0, (1, 0, 1, 1), x.DT_INT8)), (x.aligned_stride, (0, (1, 1, 1, 1), 99)),
                       (x.compact_stride, (0, (1, 1, 1))), (x.continuous_stride, ((1, 1, 1, 65536),))):
        with pytest.raises(bmk.ArgumentError, match=call.__name__):
            call(*args)


def test_numpy_integers_and_keywords_give_the_same_bytes():
    def streams(call):
        ctx = x.Context()
        call(ctx)
        return ctx.acquire_streams()
    plain = streams(lambda c: c.bdc_greater_C(D, A, -3, 7, S, None, None, x.DT_INT8, x.DT_INT16))
    assert streams(lambda c: c.bdc_greater_C(np.uint32(D), np.int64(A), np.int16(-3), np.int8(7),
                                             tuple(np.int32(v) for v in S), None, None, np.int32(x.DT_INT8),
                                             np.uint8(x.DT_INT16))) == plain
    assert streams(lambda c: c.bdc_greater_C(dst_addr=D, src_addr=A, C=-3, true_val=7, shape=S, dst_stride=None,
                                             src_stride=None, dst_dtype=x.DT_INT8, src_dtype=x.DT_INT16)) == plain


def test_streams_end_with_their_end_commands():
    ctx = x.Context()
    ctx.gdma_cpy_S2L(A, G, S, None, None, x.DT_INT8)
    ctx.bdc_max_C(D, A, 1, S, None, None, x.DT_INT8)
    ctx.gdma_cpy_L2S(G + 0x10000, D, S, None, None, x.DT_INT8)
    streams = ctx.acquire_streams()
    tiu = bmk.decode("bm1684x", {"tiu": streams["tiu"]})
    gdma = bmk.decode("bm1684x", {"gdma": streams["gdma"]})
    assert [r.kind for r in tiu] == ["arith.max", "sys.end"]
    assert [r.kind for r in gdma] == ["dma.tensor", "dma.tensor", "dma.sys"]
    assert len(streams["tiu"]) % 128 == 0
    # the TIU op waits for the load; the store waits for the TIU op
    assert tiu[0].fields["cmd_id_dep"] == gdma[0].fields["cmd_id"]
    assert gdma[1].fields["cmd_id_dep"] == tiu[0].fields["cmd_id"]
    buf = ctx.acquire_cmdbuf()
    assert [r.kind for r in bmk.decode("bm1684x", buf)] == ["dma.tensor", "arith.max", "dma.tensor", "sys.end",
                                                           "dma.sys"]


def test_parallel_sections_and_poll():
    def tiu_wait(poll):
        ctx = x.Context()
        ctx.parallel_start()
        assert ctx.is_parallel_state()
        ctx.gdma_cpy_S2L(A, G, S, None, None, x.DT_INT8)
        if poll:
            ctx.poll()
        ctx.bdc_max_C(D, A, 1, S, None, None, x.DT_INT8)
        ctx.parallel_end()
        assert not ctx.is_parallel_state()
        return bmk.decode("bm1684x", {"tiu": ctx.acquire_streams()["tiu"]})[0].fields["cmd_id_dep"]
    assert tiu_wait(False) == 0          # in one parallel group: no wait
    assert tiu_wait(True) == 1           # poll: the TIU op waits for the DMA (its id 1)


def test_long_form_flag():
    assert not x.Context().long_form and x.Context(long_form=True).long_form
    assert isinstance(x.Context(long_form=True), x.Context)


def test_the_examples_of_api_md():
    ctx = x.Context()
    shape = x.dim4(1, 64, 4, 4)
    ctx.gdma_cpy_S2L(0, G, shape, None, None, x.DT_INT8)
    ctx.bdc_and(0x400, 0, 0x800, shape, None, None, None, x.DT_INT8)
    ctx.bdc_greater(0x400, 0, 0x800, 1, shape, None, None, None, x.DT_UINT8, x.DT_INT16)
    ctx.bdc_arithmetic_shift(0x400, 0, 0x800, shape, None, None, None, x.DT_INT16, x.DT_INT16, x.DT_INT8,
                             x.RM_HALF_AWAY_FROM_ZERO)
    ctx.bdc_vc_max(0x1000, 0x3000, 0x3400, 100, 64, 16, 16, x.DT_INT32)     # dst: 100 rows of 64 bytes
    ctx.gdma_cpy_L2S(G + 0x1000, 0x400, shape, None, None, x.DT_INT8)
    kinds = [r.kind for r in bmk.decode("bm1684x", ctx.acquire_cmdbuf())]
    assert kinds == ["dma.tensor", "arith.and", "arith.selectGreat", "arith.ashift", "vc.max", "dma.tensor",
                     "sys.end", "dma.sys"]


def test_rows_are_positional_tpu_calls_with_long_forms():
    """(Every chip's rows: tests/chips/test_op_tables.py.) The long table mirrors the short one."""
    for row in api.OPS:
        assert row.c_name == f"tpu_{row.name}" and row.call == "positional"
    for row, long_row in zip(api.OPS, api.LONG_OPS):
        assert long_row.name == row.name and long_row.lower.__doc__ == row.lower.__doc__
