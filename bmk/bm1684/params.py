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


def _record(cls):
    return attrs.frozen(cls, kw_only=False)


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
