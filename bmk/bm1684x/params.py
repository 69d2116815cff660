"""Op records of the TPU-Kernel functions (seed 001): one per C signature, fields named and
ordered as the C parameters, so `ctx.bdc_and(dst_addr, src0_addr, ...)` takes them
positionally or by name. The records carry the arguments as given; the checks validate them.

Strides are optional as in bm1684 (None = the seed's NULL: the default layout): the arguments
after them default to REQUIRED, so `ctx.bdc_min_C(dst, src, C, shape, dtype=DT_INT16)` leaves
the strides out, and a call that leaves out a REQUIRED argument is refused naming it.
"""
import attrs

from bmk.argtypes import typed
from bmk.optable import REQUIRED


@attrs.frozen
@typed
class Binary:
    """tpu_bdc_and / or / xor / min / max."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None
    dtype: object = REQUIRED


@attrs.frozen
@typed
class BinaryC:
    """tpu_bdc_and_C / or_C / xor_C / min_C / max_C."""
    dst_addr: object
    src_addr: object
    C: object  # noqa: N815  (the C parameter's name)
    shape: object
    dst_stride: object = None
    src_stride: object = None
    dtype: object = REQUIRED


@attrs.frozen
@typed
class Shift:
    """tpu_bdc_arithmetic_shift / logical_shift."""
    dst_addr: object
    src_addr: object
    shift_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    shift_stride: object = None
    dst_dtype: object = REQUIRED
    src_dtype: object = REQUIRED
    shift_dtype: object = REQUIRED
    rounding_mode: object = REQUIRED


@attrs.frozen
@typed
class ShiftC:
    """tpu_bdc_arithmetic_shift_C / logical_shift_C."""
    dst_addr: object
    src_addr: object
    C: object  # noqa: N815
    shape: object
    dst_stride: object = None
    src_stride: object = None
    dst_dtype: object = REQUIRED
    src_dtype: object = REQUIRED
    rounding_mode: object = REQUIRED


@attrs.frozen
@typed
class Compare:
    """tpu_bdc_greater / less / equal / greater_equal / less_equal / not_equal."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    true_val: object
    shape: object
    dst_stride: object = None
    src0_stride: object = None
    src1_stride: object = None
    dst_dtype: object = REQUIRED
    src_dtype: object = REQUIRED


@attrs.frozen
@typed
class CompareC:
    """tpu_bdc_greater_C / ... / not_equal_C."""
    dst_addr: object
    src_addr: object
    C: object  # noqa: N815
    true_val: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    dst_dtype: object = REQUIRED
    src_dtype: object = REQUIRED


@attrs.frozen
@typed
class VcBinary:
    """tpu_bdc_vc_and / or / xor / min / max."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    src0_len: object
    src1_len: object
    src0_len_per_channel: object
    src1_len_per_channel: object
    dtype: object


@attrs.frozen
@typed
class VcCompare:
    """tpu_bdc_vc_greater / less / equal / greater_equal / less_equal / not_equal."""
    dst_addr: object
    src0_addr: object
    src1_addr: object
    true_val: object
    src0_len: object
    src1_len: object
    src0_len_per_channel: object
    src1_len_per_channel: object
    dst_dtype: object
    src_dtype: object


@attrs.frozen
@typed
class GdmaCpy:
    """tpu_gdma_cpy_S2L / L2S / L2L / S2S."""
    dst_addr: object
    src_addr: object
    shape: object
    dst_stride: object = None
    src_stride: object = None
    dtype: object = REQUIRED
