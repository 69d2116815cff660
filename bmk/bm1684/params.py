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
