"""The vendor's real BM1684 networks rebuilt through the OKKernel API (issue 18 item 7).

Every command of the vendor compiler's streams (yolov5s in tests/golden/bm1684; retinaface,
face_detection in tests/models/bm1684) that an OKKernel function makes is rebuilt with that
function from the command's own fields; the rebuilt command's fields equal the vendor's but
for the sync ids and the differences the README's BM1684 paragraph names, each allowed here
by name. Commands no OKKernel function makes are listed too, so a new kind in a network is
seen. A difference not named here fails: the README and this file change together.
"""
import collections

import numpy as np
import pytest

import bmk
from bmk import bm1684
from bmk.isa import load_chip
from tests.chips.bm1684.sim.real import records
from tests.models import files
from tests.vectors import vendor

CHIP = load_chip("bm1684")
GDMA = CHIP.engine("gdma").format
BASE = CHIP.space("local").base
IDS = {"cmd_id_tpu", "cmd_id_gdma", "cmd_id", "eng0_sync_id"}
# The README's differences, by name: fields the engine does not read for the command...
STALE = {"opd3_addr", "res1_addr"}                  # values the vendor leaves in unused fields
CONST_LAYOUT = {"short_opd1_str", "opd1_n_str", "opd1_c_str", "opd1_h_str", "opd1_w_str"}   # of a constant opd1
# ... and the other of two forms the vendor itself emits:
MD_SCALAR_OR_AR = {"tsk_typ", "opt_shift_typ"}       # tensor OP tensor / tensor OP C as md_scalar or ar
CHW_COPY = {"chw_copy", "dst_nsize", "dst_csize", "dst_hsize", "dst_wsize"}   # destination sizes or chw_copy


def streams():
    yield "yolov5s", bmk.decode("bm1684", vendor.streams("bm1684"))
    yield "retinaface", records(files.RETINAFACE)
    yield "face_detection", records(files.FACE_DETECTION)


def _local(addr):
    return addr - BASE


def _shape(f, slot="res0"):
    return tuple(f[f"{slot}_{d}"] for d in "nchw")


def _stride(f, slot):
    if CHIP.member("tiu", f"short_{slot}_str", f[f"short_{slot}_str"]) != "free":
        return None
    return tuple(f[f"{slot}_{d}_str"] for d in "nchw")


def _float(bits):
    return float(np.array(bits, np.uint32).view(np.float32))


def _window(f):
    return (bm1684.Padding(f["opd0_up_pad"], f["opd0_dn_pad"], f["opd0_lf_pad"], f["opd0_rt_pad"]),
            bm1684.dim2(f["res_op_y_str"], f["res_op_x_str"]))


def _elementwise(r, f):
    """okk_bdc_<op>, _<op>_C or _C_<op> of an ar / md_scalar command."""
    op = {"divide": "div"}[r.kind.split(".")[1]] if r.kind.endswith("divide") else r.kind.split(".")[1]
    res, a, b = _local(f["res0_addr"]), _local(f["opd0_addr"]), _local(f["opd1_addr"])
    if f["opt_opd1_const"]:
        return f"bdc_{op}_C", (res, a, _float(f["opd1_addr"]), _shape(f), _stride(f, "res0"), _stride(f, "opd0"))
    if f["opt_opd0_const"]:
        return f"bdc_C_{op}", (res, b, _float(f["opd0_addr"]), _shape(f), _stride(f, "res0"), _stride(f, "opd1"))
    return f"bdc_{op}", (res, a, b, _shape(f), _stride(f, "res0"), _stride(f, "opd0"), _stride(f, "opd1"))


def _gdma(r, f):
    direction = CHIP.member("gdma", "direction", f["direction"])
    bits = {"float32": 32, "int16": 16, "int8": 8}[CHIP.member("gdma", "src_data_format", f["src_data_format"])]
    dst = GDMA.compose("dst_addr", f) - (BASE if direction[2] == "L" else 0)
    src = GDMA.compose("src_addr", f) - (BASE if direction[0] == "L" else 0)
    dst_stride = tuple(f[f"dst_{d}stride"] for d in "nchw")
    if r.kind == "dma.constant":
        where = "local" if direction[2] == "L" else "system"
        return f"gdma_{bits}bit_set_C_{where}", (dst, f["constant_value"], tuple(f[f"dst_{d}size"] for d in "nchw"),
                                                 dst_stride)
    return f"gdma_{bits}bit_cpy_{direction}", (dst, src, tuple(f[f"src_{d}size"] for d in "nchw"), dst_stride,
                                               tuple(f[f"src_{d}stride"] for d in "nchw"))


TABLES = {CHIP.param("l2_sram_exp_table"): "bdc_lookup_exp",
          CHIP.param("l2_sram_int2float_table"): "bdc_lookup_int32_to_fp32"}


TRANSPOSE, UPSAMPLING, EX_INT, DECONV = ("a transpose (dma.trans)", "2x nearest upsampling (avg pooling with ins0)",
                                        "a lut of the vendor's EX_INT table",
                                        "a deconvolution (conv with ins0 and a rotated kernel)")


def call_of(r):
    """(OKKernel function, arguments) that makes the vendor command r, or why none does (a str)."""
    f = r.fields
    if r.engine == "gdma":
        return _gdma(r, f) if r.kind in ("dma.tensor", "dma.constant") else TRANSPOSE
    res, a = _local(f["res0_addr"]), _local(f["opd0_addr"])
    if r.kind.startswith(("arith.", "md_scalar.")) and r.kind != "arith.copy":
        return _elementwise(r, f)
    if r.kind == "arith.copy":
        return "bdc_32bit_cpy", (res, a, _shape(f), _stride(f, "res0"), _stride(f, "opd0"))
    if r.kind == "md_sfu.fp32_to_int":
        return "bdc_fp32_to_int32", (res, a, _shape(f))
    if r.kind == "md_sfu.taylor":
        return "bdc_taylor_exp", (res, a, _shape(f), f["opd1_n"])
    if r.kind == "lut":
        return (TABLES[f["opd1_addr"]], (res, a, _shape(f))) if f["opd1_addr"] in TABLES else EX_INT
    window = (f["res0_n"], f["res0_c"], f["opd0_h"], f["opd0_w"])
    if r.kind == "pord.maxpooling":
        return "bdc_max_pool2d", (res, a, window, f["opd1_h"], f["opd1_w"], *_window(f))
    if r.kind == "pord.avgpooling":
        if f["opd0_y_ins0"] or f["opd0_x_ins0"]:
            return UPSAMPLING
        return "bdc_avg_pool2d_v2", (res, a, window, _float(f["opd1_addr"]), f["opd1_h"], f["opd1_w"], *_window(f))
    dilation = bm1684.dim2(f["opd1_y_ins0"] + 1, f["opd1_x_ins0"] + 1)
    if r.kind == "pord.depthwise":
        return "bdc_depthwise2d", (res, a, _local(f["opd1_addr"]), _local(f["opd2_addr"]), window, f["opd1_h"],
                                   f["opd1_w"], f["tsk_opd_num"] == 3, *_window(f), dilation)
    if r.kind == "conv":
        if f["opd0_y_ins0"] or f["opd0_x_ins0"] or f["opt_kernel_rotate"]:
            return DECONV
        return "bdc_conv2d", (res, a, _local(f["opd1_addr"]), _local(f["opd2_addr"]),
                              (f["res0_n"], f["opd0_c"], f["opd0_h"], f["opd0_w"]), f["res0_c"], f["opd1_h"],
                              f["opd1_w"], _stride(f, "opd0"), _stride(f, "opd1"), f["tsk_opd_num"] == 3,
                              bool(f["opt_res_add"]), *_window(f), dilation)
    raise AssertionError(f"a vendor {r.kind} this test does not know")


def allowed(r, mine):
    """The differences the README names for a vendor command r rebuilt as `mine`."""
    out = set(IDS) | STALE
    if r.fields.get("opt_opd1_const"):
        out |= CONST_LAYOUT
    if {r.kind, mine.kind} <= {f"{cls}.{op}" for cls in ("arith", "md_scalar") for op in ("add", "sub", "mul", "mac")}:
        out |= MD_SCALAR_OR_AR
    if r.kind == "dma.tensor" and r.fields["chw_copy"]:
        out |= CHW_COPY
    return out


@pytest.mark.parametrize("name, recs", list(streams()), ids=lambda x: x if isinstance(x, str) else "")
def test_vendor_commands_rebuilt_through_the_api(name, recs):
    rebuilt, not_made = collections.Counter(), collections.Counter()
    for r in recs:
        call = call_of(r)
        if isinstance(call, str):
            not_made[call] += 1
            continue
        ctx = bm1684.Context()
        getattr(ctx, call[0])(*call[1])
        mine = next(x for x in bmk.decode("bm1684", ctx.acquire_streams()) if x.engine == r.engine)   # (taylor_exp: its first)
        differ = {k for k in r.fields if r.fields[k] != mine.fields[k]}
        assert mine.kind.split(".")[-1] == r.kind.split(".")[-1], (r.kind, mine.kind)
        assert differ <= allowed(r, mine), (call[0], {k: (r.fields[k], mine.fields[k]) for k in differ})
        rebuilt[call[0]] += 1
    assert sum(rebuilt.values()) > sum(not_made.values()), (rebuilt, not_made)
