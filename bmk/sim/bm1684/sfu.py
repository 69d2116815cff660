"""The special-function numerics (used by the md_sfu / ar / md_scalar eu types of
elementwise.py) and the lut_op command (table lookup).

Seeds 003 "Data Type Converting Functions" and "FP32 Unary Functions"; field use from the
yolov5s and retinaface streams (isa-facts bm1684-lowering.md: md_sfu 14 and 13, lut 0).
- rsqrt: 1 / sqrt(x) in fp32, correctly rounded (computed in float64).
- taylor: sum_{k<n} c_k * x^(k+1), n = opd1_n, c_k the fp32 words at offset opd1_addr of
  L2 SRAM; fp32 Horner steps, each product and sum rounded: acc = c_{n-1};
  acc = acc * x + c_k (k = n-2 .. 0); result = acc * x. With the exp taylor table
  (c_k = 1/(k+1)!) this is e^x - 1: the vendor's exp adds 1.0 after its taylor command.
- mantissa / biased_exponent (fp32_normalize / int_normalize, an assumption: elementwise.py).
- lut (lut_op, eu lut = 0): res0 = table[i], i = the low opd1_h bits of opd0's integer value
  (opd0 int8/int16/int32 by its precision and sign, 4N/2N for 8/16-bit; an fp32-precision
  opd0 is read as its 32-bit word: the vendor feeds fp32_to_int results with the default fp32
  precision); the table is 2^opd1_h 32-bit words at offset opd1_addr of L2 SRAM, written to
  res0 (32-bit) bit for bit. eu 19 ("lut (copy)" in isa-facts) has no public meaning: refused.
  opd1's other fields and opd2 are not read (bm1684_defs.py: a lut reads the index, the table
  and writes the result). Shapes: res0's (the vendor puts the shape in res0 only).
The tables themselves: tables.py (placed by the simulator on construction).
"""
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684 import tables
from bmk.sim.bm1684.contract import contract
from bmk.sim.semantics import planned

MAX_INDEX_BITS = 16


def rsqrt(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / np.sqrt(np.asarray(x, np.float64))).astype(np.float32)


def _l2_words(m, offset, count, what):
    """() -> `count` 32-bit words of L2 SRAM at `offset` (logged as a read)."""
    from bmk.sim.memory import AccessLog
    log = AccessLog()
    view = m.memories["l2sram"].tensor(what, offset, (1, 1, 1, count), (1, 1, 1, 1), log, dtype=np.dtype("<u4"))
    entry = log.entries[0]
    trail = m.trail

    def read():
        trail.log.entries.append(entry)
        return view.read().reshape(-1)
    return read


def taylor_coefficients(m, f):
    n = f["opd1_n"]
    if not 1 <= n <= m.chip.param("taylor_table_len"):
        raise SimulationError(f"taylor: opd1_n (number of series) must be in [1, {m.chip.param('taylor_table_len')}], "
                              f"not {n}")
    words = _l2_words(m, f["opd1_addr"], n, "taylor table (opd1)")
    return lambda: words().view(np.float32)


def horner(coeff, x, out=None):
    """sum_{k<n} coeff[k] * x^(k+1) by fp32 Horner steps (module docstring), into `out` (a
    float32 array of x's shape, which may be x's own memory) or a new array. Each step is one
    in-place fp32 multiply and add (the table has up to 32 terms: no temporaries per step)."""
    x = np.asarray(x, np.float32)
    flat = np.ascontiguousarray(x).reshape(-1)          # the steps on one contiguous run
    coeff = list(np.asarray(coeff, np.float32))
    n = len(coeff)
    acc = np.empty(flat.shape, np.float32)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        acc.fill(coeff[n - 1])
        for k in range(n - 2, -1, -1):
            np.multiply(acc, flat, out=acc)
            np.add(acc, coeff[k], out=acc)
        return np.multiply(acc.reshape(x.shape), x, out=out)


def mantissa(x):
    """x's significand as an fp32 in [1, 2) with x's sign (0, inf, NaN: x itself)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    exp = (bits >> 23) & 0xFF
    normal = (exp != 0) & (exp != 0xFF)
    out = np.where(normal, (bits & np.uint32(0x807FFFFF)) | np.uint32(127 << 23), bits)
    return out.astype(np.uint32).view(np.float32)


def biased_exponent(x):
    """x's biased exponent field (0..255) as an int32."""
    return ((np.asarray(x, np.float32).view(np.uint32) >> 23) & 0xFF).astype(np.int32)


def _index(m, f, bits):
    prec = c.prec_name(m, f, "opd0")
    if prec == "fp16":
        raise SimulationError("lut: opt_opd0_prec must be an integer precision or fp32 (the word as an "
                              "integer), not fp16")
    dt = dtypes.INT32 if prec == "fp32" else c.dtype_of(m, f, "opd0")
    read = c.reader(m, f, "opd0", dt, c.res0_shape(f))
    return lambda: np.asarray(read()).astype(np.int64) & ((1 << bits) - 1)


def _lookup_eu(m):
    """lut_op's table-lookup eu: the field's reset default (isa-facts: lut_op eu 0 'lut', 19 'lut (copy)')."""
    return m.chip.field("tiu", "tsk_eu_typ").default


NOT_READ = "a lut reads the index (opd0), the table (opd1_addr, opd1_h) and writes res0 (bm1684_defs.py)"


@contract(reads={"tsk_eu_typ", "opd1_addr", "opd1_h", "opt_relu", "opt_res_add", "tsk_lane_num",
                 "res0_n", "res0_c", "res0_h", "res0_w"},
          read_slots=("res0", "opd0"),
          unread_slots={"opd2": NOT_READ, "opd3": NOT_READ, "res1": NOT_READ},
          ignores={"tsk_opd_num": "the operand count is fixed by the kind",
                   "opt_opd1_prec": NOT_READ, "opt_opd1_sign": NOT_READ, "opt_opd1_const": NOT_READ,
                   "short_opd1_str": NOT_READ, "opd1_n": NOT_READ, "opd1_c": NOT_READ, "opd1_w": NOT_READ,
                   "opd1_n_str": NOT_READ, "opd1_c_str": NOT_READ, "opd1_h_str": NOT_READ, "opd1_w_str": NOT_READ,
                   "opd0_n": "shape from res0", "opd0_c": "shape from res0", "opd0_h": "shape from res0",
                   "opd0_w": "shape from res0", "opt_opd2_sign": NOT_READ})
@planned
def lut(m, f):
    if f["tsk_eu_typ"] != _lookup_eu(m):
        raise SimulationError(f"lut: tsk_eu_typ must be {_lookup_eu(m)} (the table lookup; only it is "
                              f"modelled), not {f['tsk_eu_typ']}")
    if f["opt_opd0_const"]:
        raise SimulationError("lut: field opt_opd0_const = 1 is not modelled (the index opd0 is read as a local "
                              "tensor)")
    bits = f["opd1_h"]
    if not 1 <= bits <= MAX_INDEX_BITS:
        raise SimulationError(f"lut: opd1_h (index bits) must be in [1, {MAX_INDEX_BITS}], not {bits}")
    if c.prec_name(m, f, "res0") not in ("fp32", "int32"):
        raise SimulationError(f"lut: opt_res0_prec must be 32-bit (fp32 or int32), not "
                              f"{c.prec_name(m, f, 'res0')}")
    table = _l2_words(m, f["opd1_addr"], 1 << bits, "lut table (opd1)")
    index = _index(m, f, bits)
    dt = c.dtype_of(m, f, "res0", signed=True)
    return c.storer(m, f, "lut", lambda: (dt, table()[index()].view(dt.numpy)), into=(dt, None))


KINDS = {("tiu", "lut"): lut}
INIT = tables.load
