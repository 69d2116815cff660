"""Semantics of the special-function commands: md_sfu (fp32_to_int, taylor, rsqrt) and lut.

Element-wise over res0's shape (the vendor puts the shape in res0 only); operands as in
common.py. Seeds 003 "Data Type Converting Functions" and "FP32 Unary Functions"; the field
use follows the yolov5s stream (isa-facts bm1684-lowering.md: md_sfu 14 and 13, lut 0 observed).

- md_sfu.fp32_to_int: res0 = the fp32 opd0 rounded to the nearest integer, ties to even (the
  IEEE default rounding; the seed's INT32() names no mode: our choice), saturated to res0's
  integer precision (signed; NaN -> 0: bmk.numerics.to_int).
- md_sfu.rsqrt: res0 = 1 / sqrt(opd0) in fp32, correctly rounded (computed in float64).
- md_sfu.taylor: res0 = sum_{k<n} c_k * x^(k+1), n = opd1_n, x = opd0, c_k the fp32 words at
  offset opd1_addr of L2 SRAM; fp32 Horner steps, each product and sum rounded:
  acc = c_{n-1}; acc = acc * x + c_k (k = n-2 .. 0); res0 = acc * x. With the exp taylor
  table (c_k = 1/(k+1)!) this is e^x - 1: the yolov5s stream adds 1.0 after its taylor command.
- lut: res0 = table[i], i = the low opd1_h bits of opd0's integer value (opd0 int8/int16/int32 by
  its precision and sign, 4N/2N for 8/16-bit; an fp32-precision opd0 is read as its 32-bit
  word, as the vendor feeds fp32_to_int results with the default fp32 precision); the table
  is 2^opd1_h 32-bit words at offset opd1_addr of L2 SRAM, written to res0 bit for bit (res0 is
  32-bit). Only eu lut (0) is modelled.
The tables themselves: tables.py (placed by the simulator on construction).
"""
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk import numerics
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684 import tables

MAX_INDEX_BITS = 16


def _res0_int(m, f):
    dt = c.dtype_of(m, f, "res0", signed=True)
    if dt.is_float:
        raise SimulationError(f"md_sfu fp32_to_int: opt_res0_prec must be an integer precision, not "
                              f"{c.prec_name(m, f, 'res0')}")
    return dt


def _fp32_opd0(m, f, what):
    if c.prec_name(m, f, "opd0") != "fp32":
        raise SimulationError(f"{what}: opt_opd0_prec must be fp32, not {c.prec_name(m, f, 'opd0')}")
    return dtypes.FP32


def fp32_to_int(m, f):
    x = c.read(m, f, "opd0", _fp32_opd0(m, f, "md_sfu fp32_to_int"), c.res0_shape(f))
    dt = _res0_int(m, f)
    c.write(m, f, "res0", dt, numerics.to_int(x, dt))


def rsqrt(m, f):
    x = c.read(m, f, "opd0", _fp32_opd0(m, f, "md_sfu rsqrt"), c.res0_shape(f))
    with np.errstate(divide="ignore", invalid="ignore"):
        y = (1.0 / np.sqrt(np.asarray(x, np.float64))).astype(np.float32)
    c.write(m, f, "res0", dtypes.FP32, y)


def _l2_words(m, f, count, what):
    """`count` 32-bit words of L2 SRAM at offset opd1_addr (logged as a read)."""
    view = m.memories["l2sram"].tensor(what, f["opd1_addr"], (1, 1, 1, count), (1, 1, 1, 1), m.log,
                                       dtype=np.dtype("<u4"))
    return view.read().reshape(-1)


def taylor(m, f):
    n = f["opd1_n"]
    if n < 1:
        raise SimulationError(f"md_sfu taylor: opd1_n (number of series) must be at least 1, not {n}")
    coeff = _l2_words(m, f, n, "md_sfu taylor table (opd1)").view(np.float32)
    x = np.asarray(c.read(m, f, "opd0", _fp32_opd0(m, f, "md_sfu taylor"), c.res0_shape(f)), np.float32)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        acc = np.full(x.shape, coeff[n - 1], np.float32)
        for k in range(n - 2, -1, -1):
            acc = acc * x + coeff[k]
        c.write(m, f, "res0", dtypes.FP32, acc * x)


def _index(m, f, bits):
    prec = c.prec_name(m, f, "opd0")
    if prec == "fp16":
        raise SimulationError("lut: opt_opd0_prec must be an integer precision or fp32 (the word as an "
                              "integer), not fp16")
    dt = dtypes.INT32 if prec == "fp32" else c.dtype_of(m, f, "opd0")
    i = np.asarray(c.read(m, f, "opd0", dt, c.res0_shape(f))).astype(np.int64)
    return i & ((1 << bits) - 1)


def _lookup_eu(m):
    """lut_op's table-lookup eu: the field's reset default (isa-facts: lut_op eu 0 'lut', 19 'lut (copy)')."""
    return m.chip.field("tiu", "tsk_eu_typ").default


def lut(m, f):
    if f["tsk_eu_typ"] != _lookup_eu(m):
        raise SimulationError(f"lut: tsk_eu_typ must be {_lookup_eu(m)} (the table lookup; only it is "
                              f"modelled), not {f['tsk_eu_typ']}")
    bits = f["opd1_h"]
    if not 1 <= bits <= MAX_INDEX_BITS:
        raise SimulationError(f"lut: opd1_h (index bits) must be in [1, {MAX_INDEX_BITS}], not {bits}")
    if c.prec_name(m, f, "res0") not in ("fp32", "int32"):
        raise SimulationError(f"lut: opt_res0_prec must be 32-bit (fp32 or int32), not {c.prec_name(m, f, 'res0')}")
    table = _l2_words(m, f, 1 << bits, "lut table (opd1)")
    words = table[_index(m, f, bits)]
    dt = c.dtype_of(m, f, "res0", signed=True)
    c.write(m, f, "res0", dt, words.view(dt.numpy))


KINDS = {
    ("tiu", "md_sfu.fp32_to_int"): fp32_to_int,
    ("tiu", "md_sfu.rsqrt"): rsqrt,
    ("tiu", "md_sfu.taylor"): taylor,
    ("tiu", "lut"): lut,
}
INIT = tables.load
