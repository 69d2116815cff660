"""Calls rebuilt from the vendor's real BM1684X stream (tests/golden/bm1684x, yolov5s int8)
fill the fields as the vendor does, ids aside: every plain `dma.tensor` as a gdma_cpy_*, and
the sAR commands whose operand pattern an API function shares."""
import pytest

import bmk
from bmk import bm1684x as x
from tests.vectors import vendor

SYNC = {"cmd_id", "cmd_id_dep", "cmd_id_en"}
LOCAL = 0x8000000
RECS = bmk.decode("bm1684x", vendor.streams("bm1684x"))


def mine(call, *args):
    ctx = x.Context()
    getattr(ctx, call)(*args)
    (rec,) = [r for r in bmk.decode("bm1684x", ctx.acquire_streams()) if r.kind not in ("sys.end", "dma.sys")]
    return rec


def differing(a, b, ignore=()):
    return {k: (a.fields[k], b.fields[k]) for k in a.fields
            if k not in SYNC and k not in ignore and a.fields[k] != b.fields[k]}


def _addr(f, side):
    addr = (f[f"{side}_start_addr_h8"] << 32) | f[f"{side}_start_addr_l32"]
    return (addr - LOCAL, True) if addr < 0x100000000 else (addr, False)


def test_every_vendor_dma_tensor_is_a_gdma_cpy():
    tensors = [r for r in RECS if r.kind == "dma.tensor"]
    assert len(tensors) > 100
    seen = set()
    for r in tensors:
        f = r.fields
        (dst, dst_local), (src, src_local) = _addr(f, "dst"), _addr(f, "src")
        call = "gdma_cpy_" + ("L" if src_local else "S") + "2" + ("L" if dst_local else "S")
        seen.add(call)
        shape = tuple(f[f"src_{d}size"] for d in "nchw")
        strides = [tuple(f[f"{side}_{d}stride"] for d in "nchw") for side in ("dst", "src")]
        dtype = {0: x.DT_INT8}[f["src_data_format"]]
        rebuilt = mine(call, dst, src, shape, strides[0], strides[1], dtype)
        assert rebuilt.cls == r.cls and rebuilt.kind == r.kind
        assert differing(rebuilt, r) == {}, (r.offset, call)
    assert seen == {"gdma_cpy_S2L", "gdma_cpy_L2S"}


def _stride(f, prefix):
    if f[f"{prefix}_str"] == 0:
        return None
    return tuple(f[f"{prefix}_{d}_str"] for d in "nchw")


@pytest.mark.parametrize("call", ["bdc_max", "bdc_min", "bdc_and", "bdc_or", "bdc_xor"])
def test_two_tensor_sar_commands_match_the_vendors_adds(call):
    """The vendor's int32 sAR adds (two tensor operands, one in a free layout) rebuilt as a
    binary function with the same operands: every field but the operation code matches."""
    adds = [r for r in RECS if r.kind == "arith.adds" and r.fields["res0_prec"] == 4]
    assert len(adds) > 50
    for r in adds:
        f = r.fields
        rebuilt = mine(call, f["res0_addr"], f["opd0_addr"], f["opd1_addr"],
                       tuple(f[f"res0_{d}"] for d in "nchw"), _stride(f, "res0"), _stride(f, "opd0"),
                       _stride(f, "opd1"), x.DT_INT32)
        assert rebuilt.cls == "sAR"
        assert differing(rebuilt, r, ignore={"tsk_eu_typ"}) == {}, r.offset


def test_constant_operands_sit_where_the_vendors_muls_puts_them():
    """The vendor's sAR muls (tensor * const >> const, tsk_opd_num 3) rebuilt as greater_C
    (tensor > const ? const : 0): the constants' flags, bits and the operands' layout match.
    Ignored: the operation code, the rounding field (muls rounds, a select does not), and the
    constants' own prec/sign (muls multiplies by an unsigned 8-bit constant and shifts by an
    int8, while greater_C takes C in src_dtype and true_val in dst_dtype)."""
    # int8 results (src_dtype must be at least as wide as dst_dtype), C in int8 range
    muls = [r for r in RECS if r.kind == "arith.muls" and r.fields["res0_prec"] == 0 and r.fields["opd1_addr"] < 128]
    assert len(muls) >= 5
    for r in muls:
        f = r.fields
        dst_dtype = x.DT_UINT8           # the shift's bits (0xF8 for -8) as an unsigned true_val
        rebuilt = mine("bdc_greater_C", f["res0_addr"], f["opd0_addr"], f["opd1_addr"], f["opd2_addr"],
                       tuple(f[f"res0_{d}"] for d in "nchw"), _stride(f, "res0"), _stride(f, "opd0"), dst_dtype,
                       x.DT_INT8)
        ignore = {"tsk_eu_typ", "opd2_n_str", "opd1_sign", "opd2_sign", "opd2_prec"}
        assert differing(rebuilt, r, ignore) == {}, r.offset
