"""Field builders shared by the bm1684x lowerings: AR/VC operands, constants, short and long
forms (isa-facts/bm1684x-lowering.md; specs/bm1684x/tiu.toml).

Every code comes from the chip given to the lowering (its spec): tsk_typ and tsk_eu_typ
from the instruction kinds of the class, layouts from the `layout` enum. A lowering first
builds the short form (cmd_short = 1: sAR, sVC), which is what the vendor compiler emits;
`fit` turns it into the long form (AR, VC) when a value does not fit a short field (a free
h or w stride wider than the short class's `*_h_str`/`*_w_str`), and `long_form` does so
unconditionally (the context's `long_form=True` forces it). The long form carries the same
fields, `cmd_short` = 0, and `tsk_lane_num` = every lane (the firmware's default lane mask).

Choices where the facts are silent, following the public vendor firmware's AR and VC
gen_cmd (whose register positions match specs/bm1684x): the long class's operand shapes
(opd0_n..opd1_w of AR) stay 0, every operand having res0's shape as in the short class;
pad, insertion, shift and res_add fields stay 0. A free layout's strides are written as
given (n and c into the 16-bit `*_n_str`/`*_c_str`; the BM1688 firmware's 18-bit split is
unverified for BM1684X and not used). No class has a res0_sign: the result's signedness
follows the operands (the checks make the seed's sign rules hold), for selects opd2_sign.
Lowerings compute with their int arguments and read dtype codes through `fixed` (the
call-template rule: bmk/checks.py).
"""
import struct

import numpy as np

from bmk.bm1684x.constants import DT_BFP16, DT_FP16, DT_FP32, dtype_of, prec_sign
from bmk.checks import as_int, fixed
from bmk.numerics import fp32_to_bf16

TIU, GDMA = "tiu", "gdma"
SHORT = {"AR": "sAR", "VC": "sVC"}      # the short class of each long one this API emits


def const_bits(value, dtype):
    """A scalar_t as the 32-bit operand field holds it: its bits in its own dtype's width,
    zero-extended (a scalar_t union written through its member; the vendor's stream carries
    the int8 shift -8 of its sAR muls as 0xF8), so a reader takes the low bits of the
    operand's precision with the operand's sign."""
    dtype = int(fixed(dtype))
    if dtype in (DT_FP32, DT_FP16, DT_BFP16):
        value = fixed(value)        # converted to float bits: a template serves this value only
    if dtype == DT_FP32:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if dtype == DT_FP16:
        return int(np.float16(value).view(np.uint16))
    if dtype == DT_BFP16:
        return int(fp32_to_bf16(np.float32(value)))
    return as_int(value) & ((1 << dtype_of(dtype).bits) - 1)


def tensor(chip, prefix, addr, stride, dtype):
    """Fields of a tensor operand (prefix res0, opd0, opd1) at local address addr: its
    precision, sign (operands only: no class has res0_sign) and layout with its strides."""
    prec, sign = prec_sign(int(fixed(dtype)))
    f = {f"{prefix}_addr": as_int(addr), f"{prefix}_prec": prec}
    if prefix != "res0":
        f[f"{prefix}_sign"] = sign
    if stride is None:
        f[f"{prefix}_str"] = chip.code(TIU, "res0_str", "aligned")
    else:
        n, c, h, w = (as_int(v) for v in stride)
        f.update({f"{prefix}_str": chip.code(TIU, "res0_str", "free"), f"{prefix}_n_str": n, f"{prefix}_c_str": c,
                  f"{prefix}_h_str": h, f"{prefix}_w_str": w})
    return f


def const(prefix, value, dtype, as_dtype=None):
    """Fields of a constant operand: the const flag, its bits (in dtype) in `*_addr`, prec and
    sign (of as_dtype when given: a float constant of a bitwise command keeps its bits)."""
    dtype = int(fixed(dtype))
    prec, sign = prec_sign(dtype if as_dtype is None else int(fixed(as_dtype)))
    return {f"{prefix}_const": 1, f"{prefix}_addr": const_bits(value, dtype), f"{prefix}_prec": prec,
            f"{prefix}_sign": sign}


def short(chip, long_class, kind, **fields):
    """A short command of instruction kind `kind` (e.g. arith.and of sAR): its identifying
    fields (cmd_short, tsk_typ, tsk_eu_typ) from the spec, then `fields`."""
    return {**chip.kind(TIU, kind, SHORT[long_class]), **fields}


def ar(chip, kind, shape, res, *operands, opd2_n_str=None):
    """A short AR command: tsk_opd_num = the number of operands, res0 shape = `shape` (the
    operands share it; the short class has no operand shapes)."""
    n, c, h, w = (as_int(v) for v in shape)
    f = short(chip, "AR", kind, tsk_opd_num=len(operands), res0_n=n, res0_c=c, res0_h=h, res0_w=w)
    f.update(res)
    for o in operands:
        f.update(o)
    if opd2_n_str is not None:
        f["opd2_n_str"] = as_int(opd2_n_str)
    return fit(chip, f)


def _short_stride_limits(chip):
    """{field: largest value} of the short classes' h and w stride fields (narrower than the
    long classes': a wider stride takes the long form)."""
    def compute():
        return tuple({(f.name, f.max) for cls in SHORT.values() for f in chip.fmt(TIU, cls).fields
                      if f.name.endswith(("_h_str", "_w_str"))})
    return chip.derived(("bm1684x.lowering", "short stride limits"), compute)


def fit(chip, fields):
    """The short form if every value fits the short class, else the long form."""
    for name, top in _short_stride_limits(chip):
        if fields.get(name, 0) > top:
            return long_form(chip, fields)
    return fields


def long_form(chip, fields):
    """The long class of a short TIU command: same fields, cmd_short 0, every lane."""
    if fields.get("cmd_short") != 1:
        return fields
    return {**fields, "cmd_short": 0, "tsk_lane_num": chip.all_lanes}


def force_long(lower):
    """A lowering that emits the long form of every short TIU command of `lower`."""
    def lower_long(chip, p):
        return tuple((engine, long_form(chip, f) if engine == TIU else f) for engine, f in lower(chip, p))
    lower_long.__name__ = getattr(lower, "__name__", "lower")
    lower_long.__doc__ = lower.__doc__
    return lower_long
