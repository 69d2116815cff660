"""What BM1690's float streams set that the family leaves 0: fields moot for a float result.

Sources: tpu-mlir python/debugger/target_1690/opparam.py (sAR, sCONV, MM converters: the result
sign, sym_range), and the shared bm1690/sg2260 f16 bmodels, which set them on every float command.
A float is signed by definition (bmk/dtypes.py of_precision), so a result sign of 1 or 0 and a
symmetric integer range change nothing in a float result (a conv's opd1_prec and opd2_prec are
the family's rule: bm1688/conv.py). Each rule accepts the field only where it is moot and
refuses it by name elsewhere:

  arith.adds / max / min  opt_res0_sign   any value with a float result; with an integer one,
                                          the family's result sign opd0_sign | opd1_sign (bm1684x/ar.py)
  arith.cast              sym_range       any value with a float result
  mm.normal               opt_res0_sign   any value with a float result (the family wants 1)
  mm2.nn / mm2.nt         opd2_prec       a float precision where the bias opd2 is the constant 0
                                          (zero in every float type): the vendor's f16 MatMul
                                          (sophgo/torch-tpu python/test/bmodel/MM_0_f16_sg2260)
                                          sets fp16 there; the family reads a float bias as fp32
                                          (bm1688/mm.py), so a non-zero or tensor bias of another
                                          precision is refused by name
"""
from bmk.sim import bm1688
from bmk.sim.bm1684x import fields as F


def _float_result(chip, f):
    name = chip.member("tiu", "res0_prec", f.get("res0_prec", 0)) or ""
    return name.startswith(("fp", "bf"))


def _operand_sign(f):
    return f.get("opd0_sign", 0) | f.get("opd1_sign", 0)


def _moot_for_floats(kind, field, neutral, base, agrees=None):
    def check(chip, f):
        value = f.get(field, 0)
        if value != neutral:
            if not _float_result(chip, f) and (agrees is None or value != agrees(f)):
                rule = f"must be {neutral}" + (" or opd0_sign | opd1_sign" if agrees else "")
                raise F.refuse(kind, field, value, f"{rule} with an integer result (bmk executes it only where it "
                                                   f"is moot or the family's own result sign)")
            f = {**f, field: neutral}
        if base is not None:
            base(chip, f)
    check.__name__ = "check_" + kind.replace(".", "_")
    return check


_RULES = {"arith.adds": ("opt_res0_sign", 0, _operand_sign), "arith.max": ("opt_res0_sign", 0, _operand_sign),
          "arith.min": ("opt_res0_sign", 0, _operand_sign), "arith.cast": ("sym_range", 0, None),
          "mm.normal": ("opt_res0_sign", 1, None)}



def _zero_bias_precision(kind, base):
    def check(chip, f):
        value = f.get("opd2_prec", 0)
        if value:
            name = chip.member("tiu", "res0_prec", value) or ""
            if not (name.startswith(("fp", "bf")) and _float_result(chip, f) and f.get("opd2_const", 0)
                    and f.get("opd2_addr", 0) == 0):
                raise F.refuse(kind, "opd2_prec", value, "must be 0 unless the bias is the constant 0 of a float "
                                                         "product (bmk reads a float bias as fp32)")
            f = {**f, "opd2_prec": 0}
        base(chip, f)
    check.__name__ = "check_" + kind.replace(".", "_")
    return check


_BIAS_KINDS = ("mm2.nn", "mm2.nt")

KINDS = {k: bm1688.KINDS[("tiu", k)] for k in (*_RULES, *_BIAS_KINDS)}
FIELDS = {**{k: bm1688.EXECUTES[("tiu", k)] | {field} for k, (field, _, _) in _RULES.items()},
          **{k: bm1688.EXECUTES[("tiu", k)] | {"opd2_prec"} for k in _BIAS_KINDS}}
CHECKS = {**{k: _moot_for_floats(k, field, neutral, bm1688.CHECKS.get(("tiu", k)), agrees)
             for k, (field, neutral, agrees) in _RULES.items()},
          **{k: _zero_bias_precision(k, bm1688.CHECKS[("tiu", k)]) for k in _BIAS_KINDS}}
