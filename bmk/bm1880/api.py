"""The bm1880 op table: one row per API function of the BMKernel 1880 Guide (seed 002, ch. 4).

A row names the function (C name without `bmk1880_`), its op record (params.py), its checks
(checks/<family>.py) and lowering (lowering/<family>.py), both named after it, the seed
section, one docstring line, and the instruction kinds (specs/bm1880/*.toml) its lowering
emits. `Context` (context.py) gets one generated method per row; tests/api/test_op_table.py
checks the rows against the spec. Groups follow the seed.
"""
from bmk.bm1880 import checks as ck
from bmk.bm1880 import lowering as lo
from bmk.bm1880 import params as r
from bmk.program import FIELDS, POSITIONAL, OpRow


def op(name, record, check, lower, seed, doc="", *, call=FIELDS, kinds=(), aliases=(), handle=True):
    return OpRow(name, record, check, lower, f"bmk1880_{name}", seed, doc, call, tuple(kinds), tuple(aliases),
                 handle)


OPS = (
    # -- data movement (seed 4.12-4.18): positional arguments, as in C --------------------------------
    op("gdma_copy_gmem", r.GdmaCopyGmem, ck.dma.gdma_copy_gmem, lo.dma.gdma_copy_gmem, "4.12",
       "Like the v2 encoder, it returns no handle for add_dependency.",
       call=POSITIONAL, kinds=["tdma.copy_gmem", "tdma.copy_gmem_tp"], handle=False),
    op("gdma_copy_lmem", r.GdmaCopyLmem, ck.dma.gdma_copy_lmem, lo.dma.gdma_copy_lmem, "4.13",
       call=POSITIONAL, kinds=["tdma.copy_lmem"]),
    op("gdma_load", r.GdmaLoad, ck.dma.gdma_load, lo.dma.gdma_load, "4.14",
       call=POSITIONAL, kinds=["tdma.load", "tdma.load_tp"], aliases=["tl_load"]),
    op("gdma_store", r.GdmaStore, ck.dma.gdma_store, lo.dma.gdma_store, "4.15",
       call=POSITIONAL, kinds=["tdma.store", "tdma.store_tp"], aliases=["tl_store"]),
    op("gdma_load_stride", r.GdmaLoadStride, ck.dma.gdma_load_stride, lo.dma.gdma_load_stride, "4.16",
       call=POSITIONAL, kinds=["tdma.load", "tdma.load_tp"]),
    op("gdma_store_stride", r.GdmaStoreStride, ck.dma.gdma_store_stride, lo.dma.gdma_store_stride, "4.17",
       call=POSITIONAL, kinds=["tdma.store", "tdma.store_tp"]),
    op("gdma_lrn_shift", r.GdmaLrnShift, ck.dma.gdma_lrn_shift, lo.dma.gdma_lrn_shift, "4.18",
       "The handle names the second (zero-fill) descriptor.",
       call=POSITIONAL, kinds=["tdma.copy_lmem", "tdma.fill"]),

    # -- element-wise (seed 4.19-4.40): keyword fields of the C struct, or one record ------------------
    op("tpu_mul", r.MulParam, ck.eltwise.tpu_mul, lo.eltwise.tpu_mul, "4.19",
       "res = (a * b) >> rshift_width.", kinds=["tiu.mul"]),
    op("tpu_mul_const", r.MulConstParam, ck.eltwise.tpu_mul_const, lo.eltwise.tpu_mul_const, "4.20",
       kinds=["tiu.mul"]),
    op("tpu_mac", r.MacParam, ck.eltwise.tpu_mac, lo.eltwise.tpu_mac, "4.21",
       "res = (a * b + (res << lshift_width)) >> rshift_width.", kinds=["tiu.mac"]),
    op("tpu_mac_const", r.MacConstParam, ck.eltwise.tpu_mac_const, lo.eltwise.tpu_mac_const, "4.22",
       kinds=["tiu.mac"]),
    op("tpu_add", r.AddParam, ck.eltwise.tpu_add, lo.eltwise.tpu_add, "4.23",
       "res = a + b (a, b 16-bit).", kinds=["tiu.add"]),
    op("tpu_add_const", r.AddConstParam, ck.eltwise.tpu_add_const, lo.eltwise.tpu_add_const, "4.24",
       kinds=["tiu.add"]),
    op("tpu_sub", r.SubParam, ck.eltwise.tpu_sub, lo.eltwise.tpu_sub, "4.25",
       "res = a - b, signed result.", kinds=["tiu.sub"]),
    op("tpu_max", r.MaxParam, ck.eltwise.tpu_max, lo.eltwise.tpu_max, "4.26", kinds=["tiu.max"]),
    op("tpu_min", r.MinParam, ck.eltwise.tpu_min, lo.eltwise.tpu_min, "4.27", kinds=["tiu.min"]),
    op("tpu_min_const", r.MinConstParam, ck.eltwise.tpu_min_const, lo.eltwise.tpu_min_const, "4.28",
       kinds=["tiu.min"]),
    op("tpu_arith_shift", r.ArithShiftParam, ck.eltwise.tpu_arith_shift, lo.eltwise.tpu_arith_shift, "4.29",
       "res = a >> bits.", kinds=["tiu.arith_shift"]),
    op("tpu_and_int8", r.AndInt8Param, ck.eltwise.tpu_and_int8, lo.eltwise.tpu_and_int8, "4.30",
       kinds=["tiu.and"], aliases=["tl_and_int8"]),     # the seed's heading spells it tl_and_int8
    op("tpu_and_int16", r.AndInt16Param, ck.eltwise.tpu_and_int16, lo.eltwise.tpu_and_int16, "4.31",
       kinds=["tiu.and"]),
    op("tpu_or_int8", r.OrInt8Param, ck.eltwise.tpu_or_int8, lo.eltwise.tpu_or_int8, "4.32", kinds=["tiu.or"]),
    op("tpu_or_int16", r.OrInt16Param, ck.eltwise.tpu_or_int16, lo.eltwise.tpu_or_int16, "4.33",
       kinds=["tiu.or"]),
    op("tpu_xor_int8", r.XorInt8Param, ck.eltwise.tpu_xor_int8, lo.eltwise.tpu_xor_int8, "4.34",
       kinds=["tiu.xor"]),
    op("tpu_xor_int16", r.XorInt16Param, ck.eltwise.tpu_xor_int16, lo.eltwise.tpu_xor_int16, "4.35",
       kinds=["tiu.xor"]),
    op("tpu_copy", r.CopyParam, ck.eltwise.tpu_copy, lo.eltwise.tpu_copy, "4.36", kinds=["tiu.copy"]),
    op("tpu_copy_with_stride", r.CopyWithStrideParam, ck.eltwise.tpu_copy_with_stride,
       lo.eltwise.tpu_copy_with_stride, "4.37", kinds=["tiu.copy"]),
    op("tpu_mdsum", r.MdsumParam, ck.conv.tpu_mdsum, lo.conv.tpu_mdsum, "4.38",
       "per-channel sum over N, H, W.", kinds=["tiu.mdsum"]),
    op("tpu_lut", r.LutParam, ck.conv.tpu_lut, lo.conv.tpu_lut, "4.39",
       "table lookup per lmem slice.", kinds=["tiu.lut"]),
    op("tpu_relu", r.ReluParam, ck.eltwise.tpu_relu, lo.eltwise.tpu_relu, "4.40",
       "res = max(0, a).", kinds=["tiu.max"]),

    # -- convolution and pooling (seed 4.41-4.45) ---------------------------------------------------------
    op("tpu_conv", r.ConvParam, ck.conv.tpu_conv, lo.conv.tpu_conv, "4.41", kinds=["tiu.conv"]),
    op("tpu_winograd", r.WinogradParam, ck.conv.tpu_winograd, lo.conv.tpu_winograd, "4.42",
       "a 3x3 convolution (see lowering.conv.tpu_winograd).", kinds=["tiu.conv"]),
    op("tpu_depthwise", r.DepthwiseParam, ck.conv.tpu_depthwise, lo.conv.tpu_depthwise, "4.43",
       kinds=["tiu.depthwise"]),
    op("tpu_max_pooling", r.MaxPoolingParam, ck.conv.tpu_max_pooling, lo.conv.tpu_max_pooling, "4.44",
       kinds=["tiu.max_pool"]),
    op("tpu_avg_pooling", r.AvgPoolingParam, ck.conv.tpu_avg_pooling, lo.conv.tpu_avg_pooling, "4.45",
       kinds=["tiu.avg_pool"]),

    # -- matrix (seed 4.46-4.47) -------------------------------------------------------------------------
    op("tpu_matrix_mac", r.MatrixMacParam, ck.matrix.tpu_matrix_mac, lo.matrix.tpu_matrix_mac, "4.46",
       kinds=["tiu.matrix_mac"]),
    op("tpu_matrix_mac_2", r.MatrixMac2Param, ck.matrix.tpu_matrix_mac_2, lo.matrix.tpu_matrix_mac_2, "4.47",
       "(1,256,1,256) x (256,16,1,16) (see lowering.matrix.tpu_matrix_mac_2).", kinds=["tiu.matrix_mac"]),
)

# Every method name the table generates, aliases included, in table order.
NAMES = tuple(name for row in OPS for name in row.names)
