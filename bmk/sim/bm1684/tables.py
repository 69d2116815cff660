"""The lookup tables a BM1684 holds in L2 SRAM before any command runs (placed by the simulator).

Where: the L2 SRAM space of the memory map (specs/bm1684/chip.toml [memory.l2sram], 4 MiB at
0x10000000), at the offsets the chip's params name (`l2_sram_*_table`, from the vendor's
memmap.h layout; the yolov5s stream's lut / md_sfu taylor commands read 0x300400, 0x300C00 and
0x301300 there). TIU commands address a table by its offset in L2 SRAM (opd1_addr), not by
the device address. Contents (all fp32, little-endian):
- exp table (256 entries): entry i = fp32(e^k), k = i read as an int8 (the lut index is the low
  8 bits of a two's-complement integer, so k in [-128, 127]; e^k under/overflows to 0 / inf
  outside fp32, which the seed's [-103, 88] input range avoids);
- int2float table (256): entry i = float(i read as int8); uint2float table (256): float(i);
- exp taylor table (64 = taylor_table_len): entry k = fp32(1 / (k + 1)!), the coefficients of
  x^(k+1) in e^x - 1 (the md_sfu taylor command sums c_k x^(k+1); bmk/sim/bm1684/sfu.py).
Only the tables the OKKernel lowering reads are written; the rest of L2 SRAM reads as zero.
"""
import math

import numpy as np


def _index_range(chip):
    n = 1 << chip.param("lookup_table_index_bits")
    return np.arange(n, dtype=np.int64), n


def exp_table(chip):
    i, n = _index_range(chip)
    k = np.where(i < n // 2, i, i - n).astype(np.float64)
    with np.errstate(over="ignore"):
        return np.exp(k).astype(np.float32)


def int2float_table(chip):
    i, n = _index_range(chip)
    return np.where(i < n // 2, i, i - n).astype(np.float32)


def uint2float_table(chip):
    i, _ = _index_range(chip)
    return i.astype(np.float32)


def exp_taylor_table(chip):
    return np.array([1.0 / math.factorial(k + 1) for k in range(chip.param("taylor_table_len"))], np.float32)


TABLES = {
    "l2_sram_exp_table": exp_table,
    "l2_sram_int2float_table": int2float_table,
    "l2_sram_uint2float_table": uint2float_table,
    "l2_sram_exp_taylor_table": exp_taylor_table,
}


def load(m):
    """Write every table into the simulator's L2 SRAM (Semantics.init: on construction)."""
    l2 = m.memories["l2sram"]
    for name, make in TABLES.items():
        l2.store(m.chip.param(name), make(m.chip).astype("<f4").view(np.uint8))
