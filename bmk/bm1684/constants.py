"""OKKernel API codes (seed 003 "Some Definitions"): `op_type_t` and `mul_type_t`.

These are API values, not register fields: the lowering turns them into the TIU's precision
and sign fields (specs/bm1684/tiu.toml). Read from the seed's values (isa-facts
bm1684-lowering.md "Codes"): op_type_t bit0 = sources are 8-bit, bit1 = src0 signed, bit2 =
src1 signed, bit3 = destination 8-bit, bit4 = destination signed; mul_type_t bit0 = src0
(16-bit) signed, bit1 = src1 (8-bit) signed, bit2 = result signed.
"""
from bmk.dtypes import INT8, INT16, UINT8, UINT16

# enum op_type_t
S8_OP_S8_TO_S8 = 31
S8_OP_S8_TO_S16 = 23
S8_OP_U8_TO_S8 = 27
S8_OP_U8_TO_S16 = 19
U8_OP_S8_TO_S8 = 29
U8_OP_S8_TO_S16 = 21
U8_OP_U8_TO_S8 = 25
U8_OP_U8_TO_S16 = 17
U8_OP_U8_TO_U8 = 9
U8_OP_U8_TO_U16 = 1
S16_OP_S16_TO_S8 = 30
S16_OP_S16_TO_S16 = 22
S16_OP_U16_TO_S8 = 26
S16_OP_U16_TO_S16 = 18
U16_OP_S16_TO_S8 = 28
U16_OP_S16_TO_S16 = 20
U16_OP_U16_TO_S8 = 24
U16_OP_U16_TO_S16 = 16
U16_OP_U16_TO_U8 = 8
U16_OP_U16_TO_U16 = 0

# enum mul_type_t
S16_MUL_S8_TO_S16 = 7
U16_MUL_S8_TO_S16 = 6
U16_MUL_U8_TO_U16 = 0
S16_MUL_U8_TO_S16 = 5

OP_TYPES = {name: value for name, value in globals().items() if "_OP_" in name}
MUL_TYPES = {name: value for name, value in globals().items() if "_MUL_" in name}


def _int(bits, signed):
    return {(8, True): INT8, (8, False): UINT8, (16, True): INT16, (16, False): UINT16}[bits, signed]


def op_type_dtypes(op_type):
    """(src0, src1, dst) DTypes of an op_type_t value, by its bits (see the module docstring)."""
    src_bits = 8 if op_type & 1 else 16
    dst_bits = 8 if op_type & 8 else 16
    return (_int(src_bits, bool(op_type & 2)), _int(src_bits, bool(op_type & 4)),
            _int(dst_bits, bool(op_type & 16)))


def mul_type_dtypes(mul_type):
    """(src0 16-bit, src1 8-bit, dst 16-bit) DTypes of a mul_type_t value."""
    return _int(16, bool(mul_type & 1)), _int(8, bool(mul_type & 2)), _int(16, bool(mul_type & 4))

