"""The bm1880 op table: one row per API function of the BMKernel 1880 Guide (seed 002, ch. 4).

A row names the function (C name without `bmk1880_`), its op record (params.py), its check
and lowering functions by family (checks/<family>.py, lowering/<family>.py: dma, eltwise,
conv, matrix) with their family parameters (the instruction kind, a constant operand...),
the seed section, one docstring line, and the instruction kinds (specs/bm1880/*.toml) its
lowering emits. `Context` (context.py) gets one generated method per row; tests/program/
test_op_table.py checks the rows against the spec. Groups follow the seed.
"""
from functools import partial

from bmk.bm1880 import params as r
from bmk.bm1880.checks import conv as ck_conv
from bmk.bm1880.checks import dma as ck_dma
from bmk.bm1880.checks import eltwise as ck_eltwise
from bmk.bm1880.checks import matrix as ck_matrix
from bmk.bm1880.lowering import conv as lo_conv
from bmk.bm1880.lowering import dma as lo_dma
from bmk.bm1880.lowering import eltwise as lo_eltwise
from bmk.bm1880.lowering import matrix as lo_matrix
from bmk.optable import FIELDS, POSITIONAL, OpRow


def op(name, record, check, lower, seed, doc="", *, call=FIELDS, kinds=(), aliases=(), handle=True):
    return OpRow(name, record, check, lower, f"bmk1880_{name}", seed, doc, call, tuple(kinds), tuple(aliases),
                 handle)


def gdma(name, record, check, lower, seed, doc="", **kw):
    return op(name, record, check, lower, seed, doc, call=POSITIONAL, **kw)


def eltwise(name, record, family, seed, doc="", *, kind, aliases=(), **params):
    """An element-wise row: a family's (check, lowering) with its parameters; the lowering also
    gets the instruction kind."""
    check, lower = family
    return op(name, record, partial(check, **params), partial(lower, kind=kind, **params), seed, doc,
              kinds=[f"tiu.{kind}"], aliases=aliases)


# the element-wise families: (check, lowering)
PRODUCT = (ck_eltwise.product, lo_eltwise.product)
WIDE = (ck_eltwise.wide, lo_eltwise.wide)
EXTREME = (ck_eltwise.extreme, lo_eltwise.extreme)
LOGIC = (ck_eltwise.logic, lo_eltwise.logic)


_LOAD = ["tdma.load", "tdma.load_tp"]
_STORE = ["tdma.store", "tdma.store_tp"]

OPS = (
    # -- data movement (seed 4.12-4.18): positional arguments, as in C --------------------------------
    gdma("gdma_copy_gmem", r.GdmaCopyGmem, ck_dma.copy_gmem, lo_dma.copy_gmem, "4.12",
         "Like the v2 encoder, it returns no handle for add_dependency.",
         kinds=["tdma.copy_gmem", "tdma.copy_gmem_tp"], handle=False),
    gdma("gdma_copy_lmem", r.GdmaCopyLmem, ck_dma.copy_lmem, lo_dma.copy_lmem, "4.13", kinds=["tdma.copy_lmem"]),
    gdma("gdma_load", r.GdmaLoad, partial(ck_dma.load_store, strided=False),
         partial(lo_dma.load_store, load=True, strided=False), "4.14", kinds=_LOAD, aliases=["tl_load"]),
    gdma("gdma_store", r.GdmaStore, partial(ck_dma.load_store, strided=False),
         partial(lo_dma.load_store, load=False, strided=False), "4.15", kinds=_STORE, aliases=["tl_store"]),
    gdma("gdma_load_stride", r.GdmaLoadStride, partial(ck_dma.load_store, strided=True),
         partial(lo_dma.load_store, load=True, strided=True), "4.16", kinds=_LOAD),
    gdma("gdma_store_stride", r.GdmaStoreStride, partial(ck_dma.load_store, strided=True),
         partial(lo_dma.load_store, load=False, strided=True), "4.17", kinds=_STORE),
    gdma("gdma_lrn_shift", r.GdmaLrnShift, ck_dma.lrn_shift, lo_dma.lrn_shift, "4.18",
         "The handle names the second (zero-fill) descriptor.", kinds=["tdma.copy_lmem", "tdma.fill"]),

    # -- element-wise (seed 4.19-4.40): keyword fields of the C struct, or one record ------------------
    eltwise("tpu_mul", r.MulParam, PRODUCT, "4.19", "res = (a * b) >> rshift_width.", kind="mul",
            const_b=False, accumulate=False),
    eltwise("tpu_mul_const", r.MulConstParam, PRODUCT, "4.20", kind="mul", const_b=True, accumulate=False),
    eltwise("tpu_mac", r.MacParam, PRODUCT, "4.21", "res = (a * b + (res << lshift_width)) >> rshift_width.",
            kind="mac", const_b=False, accumulate=True),
    eltwise("tpu_mac_const", r.MacConstParam, PRODUCT, "4.22", kind="mac", const_b=True, accumulate=True),
    eltwise("tpu_add", r.AddParam, WIDE, "4.23", "res = a + b (a, b 16-bit).", kind="add", const_b=False),
    eltwise("tpu_add_const", r.AddConstParam, WIDE, "4.24", kind="add", const_b=True),
    eltwise("tpu_sub", r.SubParam, WIDE, "4.25", "res = a - b, signed result.", kind="sub", const_b=False,
            signed_result=True),
    eltwise("tpu_max", r.MaxParam, EXTREME, "4.26", kind="max", res="max", const_b=False),
    eltwise("tpu_min", r.MinParam, EXTREME, "4.27", kind="min", res="min", const_b=False),
    eltwise("tpu_min_const", r.MinConstParam, EXTREME, "4.28", kind="min", res="min", const_b=True),
    op("tpu_arith_shift", r.ArithShiftParam, ck_eltwise.arith_shift, lo_eltwise.arith_shift, "4.29",
       "res = a >> bits.", kinds=["tiu.arith_shift"]),
    # the seed's heading spells tpu_and_int8 tl_and_int8
    eltwise("tpu_and_int8", r.AndInt8Param, LOGIC, "4.30", kind="and", wide=False, aliases=["tl_and_int8"]),
    eltwise("tpu_and_int16", r.AndInt16Param, LOGIC, "4.31", kind="and", wide=True),
    eltwise("tpu_or_int8", r.OrInt8Param, LOGIC, "4.32", kind="or", wide=False),
    eltwise("tpu_or_int16", r.OrInt16Param, LOGIC, "4.33", kind="or", wide=True),
    eltwise("tpu_xor_int8", r.XorInt8Param, LOGIC, "4.34", kind="xor", wide=False),
    eltwise("tpu_xor_int16", r.XorInt16Param, LOGIC, "4.35", kind="xor", wide=True),
    op("tpu_copy", r.CopyParam, partial(ck_eltwise.copy, strided=False), partial(lo_eltwise.copy, strided=False),
       "4.36", kinds=["tiu.copy"]),
    op("tpu_copy_with_stride", r.CopyWithStrideParam, partial(ck_eltwise.copy, strided=True),
       partial(lo_eltwise.copy, strided=True), "4.37", kinds=["tiu.copy"]),
    op("tpu_mdsum", r.MdsumParam, ck_conv.mdsum, lo_conv.mdsum, "4.38", "per-channel sum over N, H, W.",
       kinds=["tiu.mdsum"]),
    op("tpu_lut", r.LutParam, ck_conv.lut, lo_conv.lut, "4.39", "table lookup per lmem slice.", kinds=["tiu.lut"]),
    op("tpu_relu", r.ReluParam, ck_eltwise.relu, lo_eltwise.relu, "4.40", "res = max(0, a).", kinds=["tiu.max"]),

    # -- convolution and pooling (seed 4.41-4.45) ---------------------------------------------------------
    op("tpu_conv", r.ConvParam, partial(ck_conv.conv, winograd=False), partial(lo_conv.conv, winograd=False),
       "4.41", kinds=["tiu.conv"]),
    op("tpu_winograd", r.WinogradParam, partial(ck_conv.conv, winograd=True), partial(lo_conv.conv, winograd=True),
       "4.42", "a 3x3 convolution (see lowering.conv.conv).", kinds=["tiu.conv"]),
    op("tpu_depthwise", r.DepthwiseParam, ck_conv.depthwise, lo_conv.depthwise, "4.43", kinds=["tiu.depthwise"]),
    op("tpu_max_pooling", r.MaxPoolingParam, partial(ck_conv.pooling, avg=False), lo_conv.max_pool, "4.44",
       kinds=["tiu.max_pool"]),
    op("tpu_avg_pooling", r.AvgPoolingParam, partial(ck_conv.pooling, avg=True), lo_conv.avg_pool, "4.45",
       kinds=["tiu.avg_pool"]),

    # -- matrix (seed 4.46-4.47) -------------------------------------------------------------------------
    op("tpu_matrix_mac", r.MatrixMacParam, ck_matrix.matrix_mac, lo_matrix.matrix_mac, "4.46",
       kinds=["tiu.matrix_mac"]),
    op("tpu_matrix_mac_2", r.MatrixMac2Param, ck_matrix.matrix_mac_2, lo_matrix.matrix_mac_2, "4.47",
       "(1,256,1,256) x (256,16,1,16) (see lowering.matrix.matrix_mac_2).", kinds=["tiu.matrix_mac"]),
)

# Every method name the table generates, aliases included, in table order.
NAMES = tuple(name for row in OPS for name in row.names)
