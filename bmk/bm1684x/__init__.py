"""bm1684x: the TPU-Kernel API (seed 001) in Python (API.md section bm1684x).

    from bmk import bm1684x
    ctx = bm1684x.Context()
    ctx.gdma_cpy_S2L(0, 0x100000000, bm1684x.dim4(1, 64, 4, 4), None, None, bm1684x.DT_INT8)
    ctx.bdc_max_C(0x400, 0, 0, (1, 64, 4, 4), None, None, bm1684x.DT_INT8)
    streams = ctx.acquire_streams()      # {"tiu": bytes, "gdma": bytes}, each closed by its end command
"""
from bmk.bm1684x.constants import (DataType, RoundingMode, DT_BFP16, DT_FP16, DT_FP32, DT_INT4, DT_INT8, DT_INT16, DT_INT32, DT_UINT4,
                                   DT_UINT8, DT_UINT16, DT_UINT32, RM_DOWN, RM_HALF_AWAY_FROM_ZERO, RM_HALF_DOWN,
                                   RM_HALF_TO_EVEN, RM_HALF_UP, RM_TOWARDS_ZERO, RM_UP)
from bmk.bm1684x.context import Context, LongContext
from bmk.bm1684x.images import matrix_from_image, matrix_image, vector_from_image, vector_image
from bmk.bm1684x.layout import (aligned_stride, compact_stride, continuous_stride, dim4, local_mem_size_per_npu,
                                npu_num, start_npu_index)

__all__ = ["Context", "LongContext", "DataType", "RoundingMode", "vector_image", "vector_from_image", "matrix_image",
           "matrix_from_image", "dim4", "npu_num", "local_mem_size_per_npu", "start_npu_index",
           "aligned_stride", "compact_stride", "continuous_stride",
           "DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16", "DT_INT32", "DT_UINT32", "DT_FP16", "DT_BFP16", "DT_FP32",
           "DT_INT4", "DT_UINT4", "RM_HALF_TO_EVEN", "RM_HALF_AWAY_FROM_ZERO", "RM_TOWARDS_ZERO", "RM_DOWN", "RM_UP",
           "RM_HALF_UP", "RM_HALF_DOWN"]
