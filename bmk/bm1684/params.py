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
