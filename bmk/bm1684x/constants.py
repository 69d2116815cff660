"""TPU-Kernel enum constants of BM1684X: `data_type_t` and `rounding_mode_t` (API.md section
bm1684x; isa-facts/bm1684x-memory.md sections 3 and 4).

`data_type_t` is (precision << 1) | sign, the precision codes being the spec's `prec` enum
(specs/bm1684x/tiu.toml), so the values are derived from the spec rather than written here:
the public constants of the chip's API are the one thing of the package built from the
shipped spec when it is imported (checks and lowering use the chip they are given).
`rounding_mode_t` takes the values of `bmk.numerics.Round`. Both are IntEnums (`DataType`,
`RoundingMode`) that print by name (`DT_INT8`, `RM_HALF_TO_EVEN`) and are their ints everywhere
else (dict keys, comparisons, field values).
"""
from bmk import dtypes
from bmk.isa import load_chip
from bmk.numerics import Round
from bmk.util import NamedIntEnum

# data_type_t: name -> (member of the spec's precision enum, sign bit)
_DATA_TYPES = {"DT_UINT8": ("int8", 0), "DT_INT8": ("int8", 1), "DT_FP16": ("fp16", 1), "DT_FP32": ("fp32", 1),
               "DT_UINT16": ("int16", 0), "DT_INT16": ("int16", 1), "DT_UINT32": ("int32", 0),
               "DT_INT32": ("int32", 1), "DT_BFP16": ("bf16", 1), "DT_UINT4": ("int4", 0), "DT_INT4": ("int4", 1)}


def _dt(prec, sign):
    return (load_chip("bm1684x").code("tiu", "res0_prec", prec, "sAR") << 1) | sign


DataType = NamedIntEnum("DataType", [(name, _dt(*ps)) for name, ps in _DATA_TYPES.items()], module=__name__)
DataType.__doc__ = "data_type_t: (precision code << 1) | sign (see the module docstring)."
DT_UINT8 = DataType.DT_UINT8
DT_INT8 = DataType.DT_INT8
DT_FP16 = DataType.DT_FP16
DT_FP32 = DataType.DT_FP32
DT_UINT16 = DataType.DT_UINT16
DT_INT16 = DataType.DT_INT16
DT_UINT32 = DataType.DT_UINT32
DT_INT32 = DataType.DT_INT32
DT_BFP16 = DataType.DT_BFP16
DT_UINT4 = DataType.DT_UINT4
DT_INT4 = DataType.DT_INT4

RoundingMode = NamedIntEnum("RoundingMode", [(f"RM_{m.name}", int(m)) for m in Round], module=__name__)
RoundingMode.__doc__ = "rounding_mode_t: the values of bmk.numerics.Round."
RM_HALF_TO_EVEN = RoundingMode.RM_HALF_TO_EVEN
RM_HALF_AWAY_FROM_ZERO = RoundingMode.RM_HALF_AWAY_FROM_ZERO
RM_TOWARDS_ZERO = RoundingMode.RM_TOWARDS_ZERO
RM_DOWN = RoundingMode.RM_DOWN
RM_UP = RoundingMode.RM_UP
RM_HALF_UP = RoundingMode.RM_HALF_UP
RM_HALF_DOWN = RoundingMode.RM_HALF_DOWN

# data_type_t -> (constant name, bmk DType)
DTYPES = {DataType[name]: (name, dtypes.of_precision(prec, sign)) for name, (prec, sign) in _DATA_TYPES.items()}
ROUNDING_MODES = {int(m): f"RM_{m.name}" for m in Round}

INTEGER_DTYPES = (DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32)
FLOAT_DTYPES = (DT_FP16, DT_BFP16, DT_FP32)
# Every dtype of 8 bits or more (int4 packs two elements a byte and no seed-001 call takes it).
WHOLE_BYTE_DTYPES = INTEGER_DTYPES + FLOAT_DTYPES


def bitwise(code):
    """The data_type_t a bitwise command (and, or, xor) computes `code` as: itself for an
    integer type, the signed integer of the same width for a float type (the vendor's
    TPU-Kernel encodes and/or/xor of fp32 as int32 and of fp16/bf16 as int16, sign 1:
    issue 18's reading of the BM1690 firmware kernel/tpu_kernel.c, family evidence)."""
    dt = dtype_of(code)
    if not dt.is_float:
        return code
    return {32: DT_INT32, 16: DT_INT16}[dt.bits]


def dtype_of(code):
    """The bmk DType of a data_type_t code."""
    return DTYPES[code][1]


def prec_sign(code):
    """(precision code, sign bit) of a data_type_t: the `*_prec` and `*_sign` field values."""
    return code >> 1, code & 1


def dtype_name(code):
    return DTYPES[code][0] if code in DTYPES else repr(code)
