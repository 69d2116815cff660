"""Op records: one frozen class per computation function of the BMKernel 1880 Guide (seed 002, ch. 4).

Classes named ...Param mirror the C parameter structs field for field (bmk1880_mul_param_t ->
MulParam); the gdma_* functions take plain arguments in C, so their records are named after
the function (gdma_load -> GdmaLoad). A field left out means NULL / 0 / false.
Tensors compare by identity, so records hash cheaply and lowering can be memoized.
"""
import attrs

from bmk.bm1880.tensor import Stride, TensorGmem, TensorLmem, as_stride

T = "TensorLmem | None"


def _record(cls):
    return attrs.frozen(cls, kw_only=False)


# -- data movement (seed 4.12-4.18) --------------------------------------------------------------
@_record
class GdmaCopyGmem:
    """bmk1880_gdma_copy_gmem (seed 4.12)."""
    dst: "TensorGmem | None" = None
    src: "TensorGmem | None" = None
    ctrls: int = 0


@_record
class GdmaCopyLmem:
    """bmk1880_gdma_copy_lmem (seed 4.13)."""
    dst: T = None
    src: T = None


@_record
class GdmaLoad:
    """bmk1880_gdma_load (seed 4.14)."""
    t: T = None
    gaddr: int = 0
    ctrls: int = 0


@_record
class GdmaStore:
    """bmk1880_gdma_store (seed 4.15)."""
    t: T = None
    gaddr: int = 0
    ctrls: int = 0


@_record
class GdmaLoadStride:
    """bmk1880_gdma_load_stride (seed 4.16)."""
    t: T = None
    gaddr: int = 0
    stride: "Stride | None" = attrs.field(default=None, converter=as_stride)
    ctrls: int = 0


@_record
class GdmaStoreStride:
    """bmk1880_gdma_store_stride (seed 4.17)."""
    t: T = None
    gaddr: int = 0
    stride: "Stride | None" = attrs.field(default=None, converter=as_stride)
    ctrls: int = 0


@_record
class GdmaLrnShift:
    """bmk1880_gdma_lrn_shift (seed 4.18)."""
    dst: T = None
    src: T = None
    right_shift: bool = False
    lrn_step: int = 0


# -- element-wise (seed 4.19-4.40) -----------------------------------------------------------------
@_record
class MulParam:
    """bmk1880_mul_param_t (seed 4.19)."""
    res_high: T = None
    res_low: T = None
    a: T = None
    b: T = None
    rshift_width: int = 0


@_record
class MulConstParam:
    """bmk1880_mul_const_param_t (seed 4.20)."""
    res_high: T = None
    res_low: T = None
    a: T = None
    b: int = 0
    b_is_signed: bool = False
    rshift_width: int = 0


@_record
class MacParam:
    """bmk1880_mac_param_t (seed 4.21)."""
    res_high: T = None
    res_low: T = None
    res_is_int8: bool = False
    a: T = None
    b: T = None
    lshift_width: int = 0
    rshift_width: int = 0


@_record
class MacConstParam:
    """bmk1880_mac_const_param_t (seed 4.22)."""
    res_high: T = None
    res_low: T = None
    res_is_int8: bool = False
    a: T = None
    b: int = 0
    b_is_signed: bool = False
    lshift_width: int = 0
    rshift_width: int = 0


@_record
class AddParam:
    """bmk1880_add_param_t (seed 4.23)."""
    res_high: T = None
    res_low: T = None
    a_high: T = None
    a_low: T = None
    b_high: T = None
    b_low: T = None


@_record
class AddConstParam:
    """bmk1880_add_const_param_t (seed 4.24)."""
    res_high: T = None
    res_low: T = None
    a_high: T = None
    a_low: T = None
    b: int = 0
    b_is_signed: bool = False


@_record
class SubParam:
    """bmk1880_sub_param_t (seed 4.25)."""
    res_high: T = None
    res_low: T = None
    a_high: T = None
    a_low: T = None
    b_high: T = None
    b_low: T = None


@_record
class MaxParam:
    """bmk1880_max_param_t (seed 4.26)."""
    max: T = None
    a: T = None
    b: T = None


@_record
class MinParam:
    """bmk1880_min_param_t (seed 4.27)."""
    min: T = None
    a: T = None
    b: T = None


@_record
class MinConstParam:
    """bmk1880_min_const_param_t (seed 4.28)."""
    min: T = None
    a: T = None
    b: int = 0
    b_is_signed: bool = False


@_record
class ArithShiftParam:
    """bmk1880_arith_shift_param_t (seed 4.29)."""
    res_high: T = None
    res_low: T = None
    a_high: T = None
    a_low: T = None
    bits: T = None


@_record
class AndInt8Param:
    """bmk1880_and_int8_param_t (seed 4.30)."""
    res: T = None
    a: T = None
    b: T = None


@_record
class AndInt16Param:
    """bmk1880_and_int16_param_t (seed 4.31)."""
    res_high: T = None
    res_low: T = None
    a_high: T = None
    a_low: T = None
    b_high: T = None
    b_low: T = None


@_record
class OrInt8Param(AndInt8Param):
    """bmk1880_or_int8_param_t (seed 4.32)."""


@_record
class OrInt16Param(AndInt16Param):
    """bmk1880_or_int16_param_t (seed 4.33)."""


@_record
class XorInt8Param(AndInt8Param):
    """bmk1880_xor_int8_param_t (seed 4.34)."""


@_record
class XorInt16Param(AndInt16Param):
    """bmk1880_xor_int16_param_t (seed 4.35)."""


@_record
class CopyParam:
    """bmk1880_copy_param_t (seed 4.36)."""
    dst: T = None
    src: T = None


@_record
class CopyWithStrideParam:
    """bmk1880_copy_with_stride_param_t (seed 4.37)."""
    dst: T = None
    dst_stride: "Stride | None" = attrs.field(default=None, converter=as_stride)
    src: T = None
    src_stride: "Stride | None" = attrs.field(default=None, converter=as_stride)


@_record
class MdsumParam:
    """bmk1880_mdsum_param_t (seed 4.38)."""
    res_high: T = None
    res_low: T = None
    a: T = None


@_record
class LutParam:
    """bmk1880_lut_param_t (seed 4.39)."""
    ofmap: T = None
    ifmap: T = None
    table: T = None


@_record
class ReluParam:
    """bmk1880_relu_param_t (seed 4.40)."""
    ofmap: T = None
    ifmap: T = None


# -- convolution, pooling, matrix (seed 4.41-4.47) -----------------------------------------------
@_record
class ConvParam:
    """bmk1880_conv_param_t (seed 4.41)."""
    ofmap: T = None
    ifmap: T = None
    weight: T = None
    bias: T = None
    ins_h: int = 0
    ins_last_h: int = 0
    ins_w: int = 0
    ins_last_w: int = 0
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    stride_h: int = 0
    stride_w: int = 0
    dilation_h: int = 0
    dilation_w: int = 0
    relu_enable: bool = False
    rshift_width: int = 0


@_record
class WinogradParam:
    """bmk1880_winograd_param_t (seed 4.42)."""
    ofmap: T = None
    ifmap: T = None
    weight: T = None
    bias: T = None
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    relu_enable: bool = False
    rshift_width: int = 0


@_record
class DepthwiseParam:
    """bmk1880_depthwise_param_t (seed 4.43)."""
    ofmap: T = None
    ifmap: T = None
    weight: T = None
    bias: T = None
    ins_h: int = 0
    ins_last_h: int = 0
    ins_w: int = 0
    ins_last_w: int = 0
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    stride_h: int = 0
    stride_w: int = 0
    rshift_width: int = 0


@_record
class MaxPoolingParam:
    """bmk1880_max_pooling_param_t (seed 4.44)."""
    ofmap: T = None
    ifmap: T = None
    kh: int = 0
    kw: int = 0
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    stride_h: int = 0
    stride_w: int = 0


@_record
class AvgPoolingParam:
    """bmk1880_avg_pooling_param_t (seed 4.45)."""
    ofmap: T = None
    ifmap: T = None
    kh: int = 0
    kw: int = 0
    ins_h: int = 0
    ins_last_h: int = 0
    ins_w: int = 0
    ins_last_w: int = 0
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    stride_h: int = 0
    stride_w: int = 0
    avg_pooling_const: int = 0
    rshift_width: int = 0


@_record
class MatrixMacParam:
    """bmk1880_matrix_mac_param_t (seed 4.46)."""
    res: T = None
    left: T = None
    right: T = None
    bias: T = None
    lshift_width: int = 0
    rshift_width: int = 0
    res_is_int8: bool = False
    ctrls: int = 0


@_record
class MatrixMac2Param:
    """bmk1880_matrix_mac_2_param_t (seed 4.47)."""
    res: T = None
    left: T = None
    right: T = None
