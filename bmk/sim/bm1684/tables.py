"""The lookup tables a BM1684 holds in L2 SRAM before any command runs (placed by the simulator).

Where: the L2 SRAM space of the memory map (specs/bm1684/chip.toml [memory.l2sram], 4 MiB at
0x10000000), at the offsets the chip's params name (`l2_sram_*`, from the vendor's memmap.h
layout; the yolov5s and retinaface streams' lut / md_sfu taylor commands read 0x300000,
0x300400, 0x300C00 and 0x301300 there). TIU commands address a table by its offset in L2 SRAM
(opd1_addr), not by the device address.

Contents: what the vendor's public table generator (`construct_table` of its l2_sram_table.h
generator, which the runtime copies to EX_INT_TABLE_OFFSET at start-up) computes, all fp32
little-endian, entries it does not set are 0:
- exp int (256): entry (i & 0xff) = float(i) for i in [-103, 88] (the integer part that
  fp32_to_int gives, as a float: the exp sequence subtracts it from x);
- exp (256): entry (i & 0xff) = fp32(e^i) for i in [-103, 88];
- lnx (256): entry i = fp32(ln 2 * (i - 127)) (the exponent of a float, times ln 2);
- exp / lnx / arcsin / sin taylor (64 each): entry k-1 = the coefficient of x^k, computed in
  fp32 as the generator does (1/k! by k successive fp32 divisions; (-1)^(k+1)/k; arcsin:
  odd k: (1*3*..*(k-2)) / (2*4*..*(k-1)) / k; sin: odd k: +-1/k! alternating from +1);
- uint2float (256): float(i); int2float (256): float(i read as int8).
Not placed: the generator's trailing warp table (its array puts it at 0x301800, memmap.h's
WARP_TABLE_OFFSET after 2048 serial-number words: the two disagree, and no BM1684 stream seen
reads it) and the serial numbers; they read as zero.
"""
import math

import numpy as np

# the vendor's exp tables cover the fp32_to_int results of x in [-103, 88] (e^x is 0 / inf
# outside in fp32); index = the value's low 8 bits
EXP_RANGE = range(-103, 89)


def _sfu_size(chip):
    return 1 << chip.param("lookup_table_index_bits")


def _by_low_byte(chip, values_of):
    table = np.zeros(_sfu_size(chip), np.float32)
    for i in EXP_RANGE:
        table[i & (_sfu_size(chip) - 1)] = values_of(i)
    return table


def exp_int_table(chip):
    return _by_low_byte(chip, float)


def exp_table(chip):
    return _by_low_byte(chip, math.exp)


def lnx_table(chip):
    i = np.arange(_sfu_size(chip), dtype=np.float64)
    # the generator: log(2.0) (double) * ((float)i - 127.0) (double), stored as float
    return (math.log(2.0) * (i - 127.0)).astype(np.float32)


def _taylor(chip, coefficient):
    return np.array([coefficient(level) for level in range(1, chip.param("taylor_table_len") + 1)], np.float32)


def _inverse_factorial(level):
    coeff = np.float32(1.0)
    for idx in range(1, level + 1):
        coeff = np.float32(coeff / np.float32(idx))
    return coeff


def exp_taylor_table(chip):
    return _taylor(chip, _inverse_factorial)


def lnx_taylor_table(chip):
    return _taylor(chip, lambda level: np.float32((-1.0 if level % 2 == 0 else 1.0)) / np.float32(level))


def _arcsin(level):
    if level % 2 == 0:
        return np.float32(0.0)
    de = nu = np.float32(1.0)
    # as in C: the products overflow to inf for large levels, and the coefficient is then NaN
    with np.errstate(over="ignore", invalid="ignore"):
        return _arcsin_terms(level, de, nu)


def _arcsin_terms(level, de, nu):
    for idx in range(1, level):
        if idx % 2 == 0:
            de = np.float32(de * np.float32(idx))
        else:
            nu = np.float32(nu * np.float32(idx))
    return np.float32(np.float32(nu / de) / np.float32(level))


def arcsinx_taylor_table(chip):
    return _taylor(chip, _arcsin)


def _sin(level):
    if level % 2 == 0:
        return np.float32(0.0)
    coeff = np.float32(1.0 if level % 4 == 1 else -1.0)
    for idx in range(1, level + 1):
        coeff = np.float32(coeff / np.float32(idx))
    return coeff


def sinx_taylor_table(chip):
    return _taylor(chip, _sin)


def int2float_table(chip):
    n = _sfu_size(chip)
    i = np.arange(n, dtype=np.int64)
    return np.where(i < n // 2, i, i - n).astype(np.float32)


def uint2float_table(chip):
    return np.arange(_sfu_size(chip), dtype=np.float32)


TABLES = {
    "l2_sram_exp_int_table": exp_int_table,
    "l2_sram_exp_table": exp_table,
    "l2_sram_lnx_table": lnx_table,
    "l2_sram_exp_taylor_table": exp_taylor_table,
    "l2_sram_lnx_taylor_table": lnx_taylor_table,
    "l2_sram_arcsinx_taylor_table": arcsinx_taylor_table,
    "l2_sram_uint2float_table": uint2float_table,
    "l2_sram_int2float_table": int2float_table,
    "l2_sram_sinx_taylor_table": sinx_taylor_table,
}


def image(chip):
    """[(L2 SRAM offset, bytes)] of every table (computed once per chip spec: chip.derived)."""
    return [(chip.param(name), make(chip).astype("<f4").view(np.uint8)) for name, make in TABLES.items()]


def load(m):
    """Write every table into the simulator's L2 SRAM (Semantics.init: on construction)."""
    l2 = m.memories["l2sram"]
    for offset, data in m.chip.derived(("bm1684", "l2_tables"), lambda: image(m.chip)):
        l2.store(offset, data)
