"""bm1684: the OKKernel API (seeds 003, 004) in Python (API.md "bm1684").

    from bmk import bm1684
    ctx = bm1684.Context()                        # okk_initialize()
    ctx.gdma_32bit_cpy_S2L(dst_addr, src_addr, shape)
    ctx.bdc_add(dst_addr, src0_addr, src1_addr, shape, None, None, None)
    streams = ctx.acquire_streams()               # {"tiu": bytes, "gdma": bytes}

Layout of this package (a function's row, record, checks and lowering in parallel places):
api.py (op table, by the seed's groups: each row carries its family check and lowering
functions with their parameters), params.py (records, one per C signature),
checks/<group>.py (family checks on `checks.common.Check`, the chip's kind of
bmk.checks.Check), lowering/<group>.py (family lowerings: every code from the chip they are
given), geometry.py (shapes and strides from a chip's spec), context.py (Context: the Common
functions that drive the scheduler), layout.py (Common and Utils module functions),
constants.py (op_type_t, mul_type_t), types.py (dim4, dim2, Padding), images.py (host images of
the 2IC, 4N/2N and matrix layouts). Simulator:
bmk/sim/bm1684/.
"""
from bmk.bm1684.constants import *  # noqa: F401,F403  (op_type_t / mul_type_t names, as in C)
from bmk.bm1684.context import Context
from bmk.bm1684.images import (conv_weight_from_image, conv_weight_image, conv_weight_image_shape, matrix_from_image,
                               matrix_image, pack_batches, unpack_batches)
from bmk.bm1684.layout import (aligned_stride_for_8bit, aligned_stride_for_16bit, aligned_stride_for_32bit,
                               channel_num_per_npu, channle_num_per_npu, compact_stride, continuous_stride,
                               dtcm_size, l2_sram_size, local_mem_size_per_npu, npu_num, start_npu_index)
from bmk.bm1684.types import Padding, dim2, dim4

__all__ = ["Context", "dim4", "dim2", "Padding", "npu_num", "local_mem_size_per_npu", "l2_sram_size",
           "dtcm_size", "start_npu_index", "channle_num_per_npu", "channel_num_per_npu",
           "aligned_stride_for_32bit", "aligned_stride_for_16bit", "aligned_stride_for_8bit", "compact_stride",
           "continuous_stride", "conv_weight_image", "conv_weight_from_image", "conv_weight_image_shape",
           "pack_batches", "unpack_batches", "matrix_image", "matrix_from_image"]
