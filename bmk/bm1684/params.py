"""Op records of the OKKernel API (seeds 003, 004): one frozen class per C signature.

OKKernel functions take plain arguments (no parameter structs), and many share a signature
(every FP32 binary function is `(dst_addr, src0_addr, src1_addr, shape, dst_stride,
src0_stride, src1_stride)`), so a record class is named after its signature and serves
every function that has it; the op table (api.py) says which. Field names are the C
parameter names, in C order: they are the keyword names of the Context methods. Stride
arguments default to None (NULL: the layout the remark names). Records hold the arguments
as given; the checks validate them and the lowering normalizes them.
"""
import attrs

from bmk.argtypes import typed
from bmk.optable import REQUIRED


def _record(cls):
    return attrs.frozen(typed(cls), kw_only=False)


# -- Memory functions (seed 003 "Memory Functions") ------------------------------------------
@_record
class Copy:
    """(dst_addr, src_addr, shape, dst_stride, src_stride): okk_bdc_32bit_cpy, the GDMA copies."""
    dst_addr: object
    src_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None


@_record
class SetC:
    """(dst_addr, C, shape, dst_stride): okk_bdc_32bit_set_C, okk_gdma_*_set_C_*."""
    dst_addr: object
    C: object
    shape: object
    dst_stride: object = None


# -- GDMA Functions (seed 003 "GDMA Functions"; the copies and set_C use Copy and SetC) ------
@_record
class Matrix:
    """(dst_addr, src_addr, rows, cols, cols_per_channel, row_stride): okk_gdma_32bit_matrix_*."""
    dst_addr: object
    src_addr: object
    rows: object
    cols: object
    cols_per_channel: object
    row_stride: object


# -- FP32 Binary, 32-Bit Binary, Fixed Point Binary and Unary functions (seed 003) ------------
# Stride arguments default to None (NULL) even when required ones (op_type, ...) follow them:
# those default to REQUIRED, so a call may leave the strides out by naming what follows
# (`ctx.bdc_fixed_point_add(dst, src0, src1, shape, op_type=..., rshift=0)`), and one that
# leaves a REQUIRED argument out is refused naming it (bmk.program).
@_record
class Binary:
    """(dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride): okk_bdc_add,
    sub, mul, div, mac, max, min, okk_bdc_32bit_and/or/xor/*_shift, the 16-bit shifts."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None


@_record
class BinaryC:
    """(dst_addr, src_addr, C, shape, dst_stride, src_stride): the _C and C_ forms (C: float,
    x32, int, unsigned int, short or unsigned short by function)."""
    dst_addr: object
    src_addr: object
    C: object
    shape: object
    dst_stride: object = None
    src_stride: object = None


@_record
class SelectValue:
    """(dst_addr, src0_addr, src1_addr, select_val, shape, dst_stride, src0_stride, src1_stride):
    okk_bdc_greater_select_value, okk_bdc_equal_select_value."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    select_val: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None


@_record
class SelectCValue:
    """(dst_addr, src_addr, C, select_val, shape, dst_stride, src_stride): okk_bdc_greater_C_select_value,
    okk_bdc_C_greater_select_value, okk_bdc_equal_C_select_value."""
    dst_addr: object
    src_addr: object
    C: object
    select_val: object
    shape: object
    dst_stride: object = None
    src_stride: object = None


@_record
class FixedBinary:
    """(dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type, rshift):
    okk_bdc_fixed_point_packed_add, _sub, _mul."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None
    op_type: object = REQUIRED
    rshift: object = REQUIRED


@_record
class FixedBinaryC:
    """(dst_addr, src_addr, C, shape, dst_stride, src_stride, op_type, rshift):
    okk_bdc_fixed_point_packed_add_C, _sub_C, _C_sub, _mul_C."""
    dst_addr: object
    src_addr: object
    C: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    op_type: object = REQUIRED
    rshift: object = REQUIRED


@_record
class FixedMac:
    """(dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride,
    is_origin_dst_signed, op_type, lshift, rshift): okk_bdc_fixed_point_packed_mac."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None
    is_origin_dst_signed: object = REQUIRED
    op_type: object = REQUIRED
    lshift: object = REQUIRED
    rshift: object = REQUIRED


@_record
class FixedMacC:
    """(dst_addr, src_addr, C, shape, dst_stride, src_stride, is_origin_dst_signed, op_type, lshift,
    rshift): okk_bdc_fixed_point_packed_mac_C."""
    dst_addr: object
    src_addr: object
    C: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    is_origin_dst_signed: object = REQUIRED
    op_type: object = REQUIRED
    lshift: object = REQUIRED
    rshift: object = REQUIRED


@_record
class FixedMaxMin:
    """(dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type):
    okk_bdc_fixed_point_packed_max, _min."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None
    op_type: object = REQUIRED


@_record
class FixedMaxMinC:
    """(dst_addr, src_addr, C, shape, dst_stride, src_stride, op_type): okk_bdc_fixed_point_packed_max_C, _min_C."""
    dst_addr: object
    src_addr: object
    C: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    op_type: object = REQUIRED


@_record
class Mul16x8:
    """(dst_addr, src0_high_addr, src0_low_addr, src1_addr, shape, dst_stride, src0_high_stride,
    src0_low_stride, src1_stride, mul_type, rshift): okk_bdc_fixed_point_packed_16bit_mul_8bit."""
    dst_addr: object
    src0_high_addr: object
    src0_low_addr: object
    src1_addr: object
    shape: object
    dst_stride: object = None
    src0_high_stride: object = None
    src0_low_stride: object = None
    src1_stride: object = None
    mul_type: object = REQUIRED
    rshift: object = REQUIRED


@_record
class SplitWork:
    """(dst_addr, src_addr, work_addr, shape, dst_stride, src_stride, work_stride):
    okk_bdc_fixed_point_packed_16bit_split_low_8bit (split_high has the Copy signature)."""
    dst_addr: object
    src_addr: object
    work_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    work_stride: object = None


# -- FP32 Neural Network functions (seed 003 "FP32 Neural Network Functions") ------------------
# okk_bdc_relu has the signature of okk_bdc_32bit_cpy: its row uses `Copy`.
@_record
class Bias:
    """(dst_addr, src_addr, bias_addr, shape, dst_stride, src_stride): okk_bdc_bias."""
    dst_addr: object
    src_addr: object
    bias_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None


@_record
class Scale:
    """(dst_addr, src_addr, scale_addr, shape, dst_stride, src_stride): okk_bdc_scale."""
    dst_addr: object
    src_addr: object
    scale_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None


@_record
class ScaleBias:
    """(dst_addr, src_addr, scale_addr, bias_addr, shape, dst_stride, src_stride): okk_bdc_scale_bias."""
    dst_addr: object
    src_addr: object
    scale_addr: object
    bias_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None


@_record
class Conv2d:
    """(output_addr, input_addr, weight_addr, bias_addr, input_shape, output_c, kernel_h, kernel_w,
    input_stride, kernel_stride, using_bias, result_add, padding, stride, dilation): okk_bdc_conv2d.
    padding / stride / dilation: a Padding / dim2, or None (no padding, one)."""
    output_addr: object
    input_addr: object
    weight_addr: object
    bias_addr: object
    input_shape: object
    output_c: object
    kernel_h: object
    kernel_w: object
    input_stride: object = None
    kernel_stride: object = None
    using_bias: object = False
    result_add: object = False
    padding: object = None
    stride: object = None
    dilation: object = None


@_record
class Depthwise2d:
    """(output_addr, input_addr, weight_addr, bias_addr, input_shape, kernel_h, kernel_w, using_bias,
    padding, stride, dilation): okk_bdc_depthwise2d."""
    output_addr: object
    input_addr: object
    weight_addr: object
    bias_addr: object
    input_shape: object
    kernel_h: object
    kernel_w: object
    using_bias: object
    padding: object = None
    stride: object = None
    dilation: object = None


@_record
class Pool2d:
    """(output_addr, input_addr, input_shape, kernel_h, kernel_w, padding, stride):
    okk_bdc_avg_pool2d, okk_bdc_max_pool2d."""
    output_addr: object
    input_addr: object
    input_shape: object
    kernel_h: object
    kernel_w: object
    padding: object = None
    stride: object = None


@_record
class Pool2dScale:
    """(output_addr, input_addr, input_shape, scale, kernel_h, kernel_w, padding, stride):
    okk_bdc_avg_pool2d_v2."""
    output_addr: object
    input_addr: object
    input_shape: object
    scale: object
    kernel_h: object
    kernel_w: object
    padding: object = None
    stride: object = None


@_record
class Matmul:
    """(output_addr, left_addr, right_addr, bias_addr, left_rows, left_cols, right_cols,
    left_cols_per_channel, right_cols_per_channel, using_bias, result_add): okk_bdc_matmul."""
    output_addr: object
    left_addr: object
    right_addr: object
    bias_addr: object
    left_rows: object
    left_cols: object
    right_cols: object
    left_cols_per_channel: object
    right_cols_per_channel: object
    using_bias: object
    result_add: object


# -- Data type converting and FP32 unary functions (seed 003 "Data Type Converting Functions",
#    "FP32 Unary Functions"); okk_bdc_reciprocal / okk_bdc_neg take the Copy signature ---------
@_record
class Unary:
    """(dst_addr, src_addr, shape): okk_bdc_fp32_to_int32, okk_bdc_lookup_int32_to_fp32,
    okk_bdc_rsqrt, okk_bdc_sqrt, okk_bdc_lookup_exp."""
    dst_addr: object
    src_addr: object
    shape: object


@_record
class TaylorSeries:
    """(dst_addr, src_addr, shape, num_series): okk_bdc_taylor_exp."""
    dst_addr: object
    src_addr: object
    shape: object
    num_series: object


@_record
class UnaryWork:
    """(dst_addr, src_addr, work_addr, shape): okk_bdc_exp, okk_bdc_sigmoid, okk_bdc_tanh."""
    dst_addr: object
    src_addr: object
    work_addr: object
    shape: object


@_record
class UnaryWorkSeries:
    """(dst_addr, src_addr, work_addr, shape, num_series): okk_bdc_exp_tunable,
    okk_bdc_sigmoid_tunable, okk_bdc_tanh_tunable."""
    dst_addr: object
    src_addr: object
    work_addr: object
    shape: object
    num_series: object


@_record
class Int8ToFp32:
    """(dst_addr, src_addr, work_addr, shape, is_signed, is_aligned_layout):
    okk_bdc_4N_int8_to_fp32, okk_bdc_int8_to_fp32."""
    dst_addr: object
    src_addr: object
    work_addr: object
    shape: object
    is_signed: object
    is_aligned_layout: object
