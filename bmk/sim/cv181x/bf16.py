"""CV18xx bf16 TIU operations (opd_typ 1).

Facts (sophgo/cvikernel src/cv181x): an operation whose tensors are CVK_FMT_BF16 sets opd_typ 1
(tiu_mul.c: `reg.opd_typ = bf16_enable`); a tensor's strides are the cvk_tl_t strides, in bytes
(a bf16 element is 2 bytes: tl_default_stride gives w 2, h 2W, c align_up(2HW, eu_num) when
eu-aligned, cvkcv181x.c); a constant operand holds its bf16 bits in opd1_addr (tiu_mul.c:
`reg.opd1_addr = bf16_enable ? p->b_const.val : ...`). Values are bf16 bit patterns (the high
half of an fp32); bmk computes each operation in float32 and rounds the result to bf16 to nearest
even (bmk.numerics.fp32_to_bf16), the rounding the vendor's bf16 conversion helpers use
(cvikernel include/cvikernel/cvk_fp_convert.h). Signs, shifts and int8 segments do not apply.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.layout import align_up, ceil_div

_BF16 = np.dtype("<u2")


def _strides(m, f, name, shape):
    mode = m.chip.member("tiu", f"short_{name}_str", f[f"short_{name}_str"])
    n, c, h, w = shape
    if mode == "explicit":
        st = tuple(f[f"{name}_{d}_str"] for d in "nchw")
    elif mode == "aligned":
        cs = align_up(2 * h * w, m.eu_num)
        st = (cs * ceil_div(c, m.npu_num), cs, 2 * w, 2)
    elif mode == "bias":
        st = (2 * h * w * ceil_div(c, m.npu_num), 2 * h * w, 2 * w, 2)
    else:
        raise SimulationError(f"short_{name}_str must be explicit, aligned or bias for a bf16 operand, "
                              f"not {mode!r}")
    odd = [s for s in st if s % 2]
    if odd or f[f"{name}_addr"] % 2:
        raise SimulationError(f"{name}: a bf16 operand's address and strides must be even (2-byte elements), "
                              f"not address {f[f'{name}_addr']} strides {st}")
    return tuple(s // 2 for s in st)


def shape(f, name):
    return tuple(f[f"{name}_{d}"] for d in "nchw")


def view(m, f, name, shp=None, write=False):
    """The TensorView of bf16 operand `name` (uint16 bit patterns)."""
    shp = shape(f, name) if shp is None else shp
    return m.lmem.tensor(name, f[f"{name}_addr"], shp, _strides(m, f, name, shp), m.log, write, _BF16)


def read(m, f, name, shp=None):
    """float32 values of bf16 operand `name`."""
    return numerics.bf16_to_fp32(np.asarray(view(m, f, name, shp).read(), np.uint16))


def write(m, f, name, values, shp=None):
    """Round float values to bf16 (nearest even) and store them in operand `name`."""
    bits = numerics.fp32_to_bf16(np.asarray(values, np.float32))
    view(m, f, name, shp, write=True).write(bits)


def const(f, name="opd1"):
    """A bf16 constant: its bits in X_addr."""
    return numerics.bf16_to_fp32(np.array([f[f"{name}_addr"] & 0xFFFF], np.uint16))[0]


def _same(f, a, b):
    if shape(f, a) != shape(f, b):
        raise SimulationError(f"{b} shape must equal {a} shape {shape(f, a)}, not {shape(f, b)}")


def _ab(m, f):
    _same(f, "res0", "opd0")
    a = read(m, f, "opd0")
    if f["opt_opd1_const"]:
        return a, const(f)
    _same(f, "res0", "opd1")
    return a, read(m, f, "opd1")


def _relu(f, v):
    return np.maximum(v, np.float32(0)) if f["opt_relu"] else v


def _eltwise(op):
    def run(m, f):
        a, b = _ab(m, f)
        write(m, f, "res0", _relu(f, op(a, b)))
    return run


def mac(m, f):
    """cvikernel tiu_mac (bf16): res = a * b + res (opt_res_add), relu."""
    a, b = _ab(m, f)
    v = a * b
    if f["opt_res_add"]:
        v = v + read(m, f, "res0")
    write(m, f, "res0", _relu(f, v))


def copy(m, f):
    """cvikernel tiu_copy (bf16): res = a, 2-byte elements."""
    _same(f, "res0", "opd0")
    view(m, f, "res0", write=True).write(view(m, f, "opd0").read())


KINDS = {"mul": _eltwise(np.multiply), "add": _eltwise(np.add), "sub": _eltwise(np.subtract),
         "max": _eltwise(np.maximum), "min": _eltwise(np.minimum), "mac": mac, "copy": copy}
