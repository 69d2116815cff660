"""Data types shared by every chip: DType(name, bits, signed, is_float).

Each chip maps its own codes onto these (bm1880 FMT_I8/FMT_U8, bm1684 store modes,
bm1684x `data_type_t = (precision << 1) | sign`) in its own package; no chip code table lives
here. numpy has no bfloat16: BF16 is *stored* as uint16 (`DType.numpy`) and converted
explicitly (`bmk.numerics.bf16_to_fp32` / `fp32_to_bf16`); the 8-bit floats FP8E5M2 and
FP8E4M3 (OCP E5M2 and E4M3FN) are stored as uint8 and converted by `bmk.numerics.fp8_*`. INT4/UINT4 are
packed two per byte and have no whole-byte itemsize; memory views refuse them.
"""
import attrs
import numpy as np

from bmk.errors import ArgumentError

# Largest finite value of each float format (IEEE binary16, bfloat16, binary32, OCP FP8: numerics.fp8_*).
_FLOAT_MAX = {"fp16": 65504.0, "bf16": 3.3895313892515355e38, "fp32": 3.4028234663852886e38,
              "fp8e5m2": 57344.0, "fp8e4m3": 448.0}


@attrs.frozen
class DType:
    name: str
    bits: int
    signed: bool
    is_float: bool = False

    @property
    def itemsize(self):
        """Bytes per element (ArgumentError for the sub-byte int4 types)."""
        if self.bits % 8:
            raise ArgumentError(f"{self.name} is packed {8 // self.bits} per byte and has no whole-byte itemsize")
        return self.bits // 8

    @property
    def numpy(self):
        """The numpy dtype of the stored bits (bf16 -> uint16; int4 -> int8/uint8, one value a byte)."""
        return _NUMPY[self.name]

    @property
    def min(self):
        if self.is_float:
            return -_FLOAT_MAX[self.name]
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self):
        if self.is_float:
            return _FLOAT_MAX[self.name]
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def __repr__(self):
        return self.name.upper()


INT4 = DType("int4", 4, True)
UINT4 = DType("uint4", 4, False)
INT8 = DType("int8", 8, True)
UINT8 = DType("uint8", 8, False)
INT16 = DType("int16", 16, True)
UINT16 = DType("uint16", 16, False)
INT32 = DType("int32", 32, True)
UINT32 = DType("uint32", 32, False)
FP16 = DType("fp16", 16, True, True)
BF16 = DType("bf16", 16, True, True)
FP32 = DType("fp32", 32, True, True)
FP8E5M2 = DType("fp8e5m2", 8, True, True)
FP8E4M3 = DType("fp8e4m3", 8, True, True)

STANDARD = (INT4, UINT4, INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16, FP32, FP8E5M2, FP8E4M3)
BY_NAME = {d.name: d for d in STANDARD}

_NUMPY = {"int4": np.dtype(np.int8), "uint4": np.dtype(np.uint8), "int8": np.dtype(np.int8),
          "uint8": np.dtype(np.uint8), "int16": np.dtype("<i2"), "uint16": np.dtype("<u2"),
          "int32": np.dtype("<i4"), "uint32": np.dtype("<u4"), "fp16": np.dtype("<f2"),
          "bf16": np.dtype("<u2"), "fp32": np.dtype("<f4"), "fp8e5m2": np.dtype(np.uint8),
          "fp8e4m3": np.dtype(np.uint8)}


def integer(bits, signed):
    """The integer DType of a width and sign (int4 .. int32)."""
    return BY_NAME[f"{'' if signed else 'u'}int{bits}"]


def of_precision(prec, signed):
    """The DType a chip's precision and sign bit stand for: `prec` names a member of its spec's
    precision enum (int4, int8, int16, int32, fp16, bf16, fp32, fp8); integers take the sign,
    fp16/bf16/fp32 are signed by definition, and fp8's sign bit picks its format (tpu-mlir's
    debugger dtype rule, isa-facts bm1690: E4M3 when 1, E5M2 when 0). KeyError for any other
    name."""
    if prec.startswith("int"):
        return integer(int(prec[3:]), signed)
    if prec == "fp8":
        return FP8E4M3 if signed else FP8E5M2
    return {"fp16": FP16, "bf16": BF16, "fp32": FP32}[prec]


def as_dtype(value, call="dtype"):
    """A DType from a DType, its name ('int8') or a numpy dtype of the same storage."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value.lower() in BY_NAME:
        return BY_NAME[value.lower()]
    try:
        npd = np.dtype(value)
    except TypeError:
        npd = None
    if npd is not None and npd.kind in "iuf":
        for d in (INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, FP32):
            if d.numpy == npd.newbyteorder("<"):
                return d
    raise ArgumentError(f"{call}: dtype must be a DType, one of {sorted(BY_NAME)} or a matching numpy dtype, "
                        f"not {value!r}")
