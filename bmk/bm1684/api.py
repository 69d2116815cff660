"""The bm1684 op table: one row per OKKernel function of seeds 003/004, by the seed's groups.

A row names the function (C name without `okk_`), its op record (params.py, one class per C
signature), its check and lowering functions by family (checks/<group>.py, lowering/<group>.py)
with their family parameters (the instruction kind, the sides of a copy, the op_type_t
choices...), the seed section ("003 <group>"), one docstring line, and the instruction kinds
(specs/bm1684/*.toml) its lowering may emit. Every OKKernel function takes plain C arguments:
the methods are POSITIONAL (keywords allowed, named as in C). The Common and Utils functions
that emit nothing are Context methods (context.py) or module functions (layout.py).
"""
from functools import partial

from bmk.bm1684 import params as r
from bmk.bm1684.checks import bit32_binary as ck_bit32
from bmk.bm1684.checks import converting as ck_converting
from bmk.bm1684.checks import fixed_point as ck_fixed
from bmk.bm1684.checks import fp32_binary as ck_fp32
from bmk.bm1684.checks import fp32_unary as ck_unary
from bmk.bm1684.checks import gdma as ck_gdma
from bmk.bm1684.checks import memory as ck_memory
from bmk.bm1684.checks import neural_network as ck_nn
from bmk.bm1684.lowering import bit32_binary as lo_bit32
from bmk.bm1684.lowering import converting as lo_converting
from bmk.bm1684.lowering import fixed_point as lo_fixed
from bmk.bm1684.lowering import fp32_binary as lo_fp32
from bmk.bm1684.lowering import fp32_unary as lo_unary
from bmk.bm1684.lowering import gdma as lo_gdma
from bmk.bm1684.lowering import memory as lo_memory
from bmk.bm1684.lowering import neural_network as lo_nn
from bmk.dtypes import INT32, UINT32
from bmk.optable import POSITIONAL, OpRow


def op(name, record, check, lower, group, doc, kinds):
    return OpRow(name, record, check, lower, f"okk_{name}", f"003 {group}", doc, POSITIONAL, tuple(kinds))


# -- GDMA Functions ----------------------------------------------------------------------------
LOCAL, SYSTEM = ck_gdma.LOCAL, ck_gdma.SYSTEM
_SPACE = {"S": SYSTEM, "L": LOCAL}
_WHERE = {"S2L": "system to local", "L2S": "local to system", "L2L": "local to local", "S2S": "system to system"}


def _gdma():
    group, copy, fill = "GDMA Functions", ["gdma.dma.tensor"], ["gdma.dma.constant"]
    rows = []
    for bits in (32, 16, 8):
        for direction, where in _WHERE.items():
            sides = dict(dst=_SPACE[direction[2]], src=_SPACE[direction[0]], bits=bits)
            rows.append(op(f"gdma_{bits}bit_cpy_{direction}", r.Copy, partial(ck_gdma.copy, **sides),
                           partial(lo_gdma.copy, **sides), group,
                           f"dst = src, {bits}-bit elements, {where}.", copy))
        for space in (SYSTEM, LOCAL):
            rows.append(op(f"gdma_{bits}bit_set_C_{space}", r.SetC, partial(ck_gdma.set_C, dst=space, bits=bits),
                           partial(lo_gdma.set_C, dst=space, bits=bits), group,
                           f"dst = C, {bits}-bit elements in {space} memory.", fill))
    for direction in ("S2L", "L2S"):
        sides = dict(dst=_SPACE[direction[2]], src=_SPACE[direction[0]], bits=32)
        rows.append(op(f"gdma_32bit_matrix_{direction}", r.Matrix, partial(ck_gdma.matrix, **sides),
                       partial(lo_gdma.matrix, **sides), group,
                       f"dst(x, y) = src(x, y), a 32-bit matrix, {_WHERE[direction]}.", copy))
    return tuple(rows)


GDMA = _gdma()


# -- Memory Functions --------------------------------------------------------------------------
M = "Memory Functions"
MEMORY = (
    op("bdc_32bit_cpy", r.Copy, ck_memory.copy, lo_memory.copy, M, "dst = src, 32-bit elements.",
       ["tiu.arith.copy"]),
    op("bdc_32bit_set_C", r.SetC, ck_memory.set_C, lo_memory.set_C, M, "dst = C, 32-bit elements.",
       ["tiu.arith.copy"]),
)


# -- Data Type Converting Functions ------------------------------------------------------------
CV = "Data Type Converting Functions"
CONVERTING = (
    op("bdc_fp32_to_int32", r.Unary, ck_converting.aligned_pair, lo_converting.fp32_to_int32, CV,
       "dst = INT32(src), rounded to nearest even, saturated.", ["tiu.md_sfu.fp32_to_int"]),
    op("bdc_lookup_int32_to_fp32", r.Unary, ck_converting.aligned_pair, lo_converting.lookup_int32_to_fp32, CV,
       "dst = FP32(src), src in [-128, 127], by table.", ["tiu.lut"]),
    op("bdc_4N_int8_to_fp32", r.Int8ToFp32, partial(ck_converting.int8_to_fp32, n_packed=True),
       lo_converting.int8_4n_to_fp32, CV, "dst = FP32(src), src 4N int8 / uint8.", ["tiu.lut"]),
    op("bdc_int8_to_fp32", r.Int8ToFp32, partial(ck_converting.int8_to_fp32, n_packed=False),
       lo_converting.int8_1n_to_fp32, CV, "dst = FP32(src), src 1N int8 / uint8.", ["tiu.arith.copy", "tiu.lut"]),
)


# -- FP32 Binary Functions -----------------------------------------------------------------------
def _fp32(name, record, check, lower, doc, kind, **params):
    return op(name, record, check, partial(lower, kind=kind, **params), "FP32 Binary Functions", doc, ["tiu." + kind])


def _fp32_rows():
    t, c, sel = lo_fp32.tensors, lo_fp32.with_const, lo_fp32.select
    tt, tc = (r.Binary, ck_fp32.tensors), (r.BinaryC, ck_fp32.const)
    st, sc = (r.SelectValue, ck_fp32.select), (r.SelectCValue, ck_fp32.select_const)
    return (
        _fp32("bdc_add", *tt, t, "dst = src0 + src1.", "arith.add"),
        _fp32("bdc_add_C", *tc, c, "dst = src + C.", "md_scalar.add"),
        _fp32("bdc_sub", *tt, t, "dst = src0 - src1.", "arith.sub"),
        _fp32("bdc_sub_C", *tc, c, "dst = src - C.", "md_scalar.sub"),
        _fp32("bdc_C_sub", *tc, c, "dst = C - src.", "md_scalar.sub", slot="opd0"),
        _fp32("bdc_mul", *tt, t, "dst = src0 * src1.", "arith.mul"),
        _fp32("bdc_mul_C", *tc, c, "dst = src * C.", "md_scalar.mul"),
        _fp32("bdc_div", *tt, t, "dst = src0 / src1.", "md_scalar.divide"),
        _fp32("bdc_div_C", *tc, c, "dst = src / C.", "md_scalar.divide"),
        _fp32("bdc_C_div", *tc, c, "dst = C / src.", "md_scalar.divide", slot="opd0"),
        _fp32("bdc_mac", *tt, t, "dst = dst + src0 * src1.", "arith.mac"),
        _fp32("bdc_mac_C", *tc, c, "dst = dst + src * C.", "md_scalar.mac"),
        _fp32("bdc_max", *tt, t, "dst = max(src0, src1).", "arith.max"),
        _fp32("bdc_max_C", *tc, c, "dst = max(src, C).", "arith.max"),
        _fp32("bdc_min", *tt, t, "dst = min(src0, src1).", "arith.min"),
        _fp32("bdc_min_C", *tc, c, "dst = min(src, C).", "arith.min"),
        _fp32("bdc_greater_select_value", *st, sel, "dst = select_val if src0 > src1 else 0.", "arith.select_gt"),
        _fp32("bdc_greater_C_select_value", *sc, sel, "dst = select_val if src > C else 0.", "arith.select_gt",
              slot="opd1"),
        _fp32("bdc_C_greater_select_value", *sc, sel, "dst = select_val if C > src else 0.", "arith.select_gt",
              slot="opd0"),
        _fp32("bdc_equal_select_value", *st, sel, "dst = select_val if src0 == src1 else 0.", "arith.select_eq"),
        _fp32("bdc_equal_C_select_value", *sc, sel, "dst = select_val if src == C else 0.", "arith.select_eq",
              slot="opd1"),
    )


# -- 32-Bit Binary Functions ---------------------------------------------------------------------
_LOGIC = {"and": "AND", "or": "OR", "xor": "XOR"}
_SHIFT = {"arithmetic": (True, "int32", INT32), "logical": (False, "uint32", UINT32)}


def _bit32_rows():
    group, rows = "32-Bit Binary Functions", []
    for name, word in _LOGIC.items():
        kind = f"arith.{name}"
        rows.append(op(f"bdc_32bit_{name}", r.Binary, ck_bit32.tensors, partial(lo_bit32.logic, kind=kind), group,
                       f"dst = src0 {word} src1, 32-bit.", ["tiu." + kind]))
        rows.append(op(f"bdc_32bit_{name}_C", r.BinaryC, ck_bit32.logic_const,
                       partial(lo_bit32.logic_const, kind=kind), group, f"dst = src {word} C, 32-bit.",
                       ["tiu." + kind]))
    shift = ["tiu.arith.shift"]
    for name, (arithmetic, ctype, dtype) in _SHIFT.items():
        rows.append(op(f"bdc_32bit_{name}_shift", r.Binary, ck_bit32.tensors,
                       partial(lo_bit32.shift, arithmetic=arithmetic), group,
                       f"dst = src0 shifted by src1 ({ctype}, {name}).", shift))
    for name, (arithmetic, ctype, dtype) in _SHIFT.items():
        rows.append(op(f"bdc_32bit_{name}_shift_C", r.BinaryC, ck_bit32.shift_const,
                       partial(lo_bit32.shift_const, arithmetic=arithmetic, slot="opd1"), group,
                       f"dst = src shifted by C ({ctype}, {name}).", shift))
    for name, (arithmetic, ctype, dtype) in _SHIFT.items():
        rows.append(op(f"bdc_32bit_C_{name}_shift", r.BinaryC, partial(ck_bit32.const_shift, dtype=dtype),
                       partial(lo_bit32.shift_const, arithmetic=arithmetic, slot="opd0"), group,
                       f"dst = C shifted by src ({ctype}, {name}).", shift))
    return tuple(rows)


# -- Fixed Point Binary and Unary Functions ---------------------------------------------------------
FX = "bdc_fixed_point_packed_"
_FIXED = {"add": ("+", "arith.add"), "sub": ("-", "arith.sub"), "mul": ("*", "arith.mul")}
_MAXMIN = {"max": "arith.max", "min": "arith.min"}
_SHIFT16 = {"arithmetic": (False, "int16"), "logical": (True, "uint16")}


def _fixed_rows():
    group, rows = "Fixed Point Binary Functions", []

    def row(name, record, check, lower, doc, kinds, group=group):
        rows.append(op(FX + name, record, check, lower, group, doc, kinds))

    rounded = "(op_type)."
    for name, (sign, kind) in _FIXED.items():
        row(name, r.FixedBinary, partial(ck_fixed.binary, valid=name), partial(lo_fixed.binary, kind=kind),
            f"dst = (src0 {sign} src1 + round) RSH rshift, saturated {rounded}", ["tiu." + kind])
        row(f"{name}_C", r.FixedBinaryC, partial(ck_fixed.binary, valid=name, const=True),
            partial(lo_fixed.binary, kind=kind, slot="opd1"),
            f"dst = (src {sign} C + round) RSH rshift, saturated {rounded}", ["tiu." + kind])
        if name == "sub":
            row("C_sub", r.FixedBinaryC, partial(ck_fixed.binary, valid=name, const=True, const_is_src0=True),
                partial(lo_fixed.binary, kind=kind, slot="opd0"),
                f"dst = (C - src + round) RSH rshift, saturated {rounded}", ["tiu." + kind])
    row("mac", r.FixedMac, ck_fixed.mac, lo_fixed.mac,
        "dst = (dst * 2^lshift + src0 * src1 + round) RSH rshift, saturated.", ["tiu.arith.mac"])
    row("mac_C", r.FixedMacC, partial(ck_fixed.mac, const=True), partial(lo_fixed.mac, const=True),
        "dst = (dst * 2^lshift + src * C + round) RSH rshift, saturated.", ["tiu.arith.mac"])
    for name, kind in _MAXMIN.items():
        row(name, r.FixedMaxMin, ck_fixed.maxmin, partial(lo_fixed.binary, kind=kind, shifts=False),
            f"dst = {name}(src0, src1) (op_type).", ["tiu." + kind])
        row(f"{name}_C", r.FixedMaxMinC, partial(ck_fixed.maxmin, const=True),
            partial(lo_fixed.binary, kind=kind, slot="opd1", shifts=False), f"dst = {name}(src, C) (op_type).",
            ["tiu." + kind])
    shift = ["tiu.arith.shift"]
    for name, (logical, ctype) in _SHIFT16.items():
        row(f"16bit_{name}_shift", r.Binary, partial(ck_fixed.shift16, logical=logical),
            partial(lo_fixed.shift16, logical=logical), f"dst = src0 shifted by src1 ({ctype}, {name}, 2N).", shift)
    for name, (logical, ctype) in _SHIFT16.items():
        row(f"16bit_{name}_shift_C", r.BinaryC, partial(ck_fixed.shift16_const, logical=logical),
            partial(lo_fixed.shift16_const, logical=logical, slot="opd1"),
            f"dst = src shifted by C ({ctype}, {name}, 2N).", shift)
    for name, (logical, ctype) in _SHIFT16.items():
        row(f"16bit_C_{name}_shift", r.BinaryC, partial(ck_fixed.const_shift16, logical=logical),
            partial(lo_fixed.shift16_const, logical=logical, slot="opd0"),
            f"dst = C shifted by src ({ctype}, {name}, 2N).", shift)
    row("16bit_mul_8bit", r.Mul16x8, ck_fixed.mul_8bit, lo_fixed.mul_8bit,
        "dst = (src0 * src1 + round) RSH rshift, src0 as high/low bytes (mul_type).",
        ["tiu.arith.mul", "tiu.arith.mac"])
    unary = "Fixed Point Unary Functions"
    row("16bit_split_high_8bit", r.Copy, ck_fixed.split_high, lo_fixed.split_high,
        "dst = the most significant 8 bits of src (16-bit, 2N -> 4N).", shift, unary)
    row("16bit_split_low_8bit", r.SplitWork, ck_fixed.split_low, lo_fixed.split_low,
        "dst = the least significant 8 bits of src (16-bit, 2N -> 4N).", shift, unary)
    return tuple(rows)


BINARY = _fp32_rows() + _bit32_rows() + _fixed_rows()


# -- FP32 Unary Functions ----------------------------------------------------------------------
UN = "FP32 Unary Functions"
EXP_KINDS = ("tiu.arith.min", "tiu.arith.max", "tiu.md_sfu.fp32_to_int", "tiu.lut", "tiu.md_scalar.sub",
             "tiu.md_sfu.taylor", "tiu.md_scalar.add", "tiu.md_scalar.mul")      # lowering/fp32_unary.py
RATIO_KINDS = EXP_KINDS + ("tiu.md_scalar.divide",)                            # sigmoid, tanh
_WORK = {"exp": ("dst = e^src", EXP_KINDS), "sigmoid": ("dst = 1 / (1 + e^-src)", RATIO_KINDS),
         "tanh": ("dst = tanh(src)", RATIO_KINDS)}


def _unary_rows():
    rows = [
        op("bdc_rsqrt", r.Unary, ck_converting.aligned_pair, lo_unary.rsqrt, UN, "dst = 1 / sqrt(src).",
           ["tiu.md_sfu.rsqrt"]),
        op("bdc_sqrt", r.Unary, ck_converting.aligned_pair, lo_unary.sqrt, UN, "dst = sqrt(src) = 1 / rsqrt(src).",
           ["tiu.md_sfu.rsqrt", "tiu.md_scalar.divide"]),
        op("bdc_taylor_exp", r.TaylorSeries, ck_unary.taylor, lo_unary.taylor_exp, UN,
           "dst = e^src = 1 + sum_{k=1..num_series} src^k / k!: num_series is the number of taylor terms "
           "after the 1 (in [1, 64]); more terms cost more cycles.", ["tiu.md_sfu.taylor", "tiu.md_scalar.add"]),
        op("bdc_lookup_exp", r.Unary, ck_converting.aligned_pair, lo_unary.lookup_exp, UN,
           "dst = e^src, src int32 in [-103, 88], by the exp table.", ["tiu.lut"]),
    ]
    for name, (formula, kinds) in _WORK.items():
        lower = getattr(lo_unary, name)
        rows.append(op(f"bdc_{name}", r.UnaryWork, partial(ck_unary.with_work, tunable=False),
                       partial(lower, tunable=False), UN, f"{formula}; bdc_{name}_tunable with num_series 32.", kinds))
        rows.append(op(f"bdc_{name}_tunable", r.UnaryWorkSeries, partial(ck_unary.with_work, tunable=True),
                       partial(lower, tunable=True), UN,
                       f"{formula}; e^f (f the fraction, |f| <= 0.5) by num_series taylor terms of e^f - 1 = "
                       f"sum_{{k=1..num_series}} f^k / k!, num_series in [1, 64]: more terms, more accuracy "
                       f"and more cycles.", kinds))
    rows += [
        op("bdc_reciprocal", r.Copy, ck_memory.copy, lo_unary.reciprocal, UN, "dst = 1 / src.",
           ["tiu.md_scalar.divide"]),
        op("bdc_neg", r.Copy, ck_memory.copy, lo_unary.neg, UN, "dst = -src.", ["tiu.md_scalar.mul"]),
    ]
    return tuple(rows)


UNARY = _unary_rows()


# -- FP32 Neural Network Functions -------------------------------------------------------------
NN = "FP32 Neural Network Functions"
_LINEAR = ["tiu.md_linear.mac"]
NEURAL_NETWORK = (
    op("bdc_relu", r.Copy, ck_nn.elementwise, lo_nn.relu, NN, "dst = max(src, 0), fp32.", ["tiu.arith.max"]),
    op("bdc_bias", r.Bias, partial(ck_nn.elementwise, per_channel=("bias_addr",)),
       partial(lo_nn.linear, opd1=1.0, opd2="bias_addr"), NN, "dst = src + bias(0, c, 0, 0), fp32.", _LINEAR),
    op("bdc_scale", r.Scale, partial(ck_nn.elementwise, per_channel=("scale_addr",)),
       partial(lo_nn.linear, opd1="scale_addr", opd2=-0.0), NN, "dst = src * scale(0, c, 0, 0), fp32.", _LINEAR),
    op("bdc_scale_bias", r.ScaleBias, partial(ck_nn.elementwise, per_channel=("scale_addr", "bias_addr")),
       partial(lo_nn.linear, opd1="scale_addr", opd2="bias_addr"), NN,
       "dst = src * scale(0, c, 0, 0) + bias(0, c, 0, 0), fp32.", _LINEAR),
    op("bdc_conv2d", r.Conv2d, ck_nn.conv2d, lo_nn.conv2d, NN,
       "2D convolution (2IC weight), optional bias and result accumulation, fp32.", ["tiu.conv"]),
    op("bdc_depthwise2d", r.Depthwise2d, ck_nn.depthwise2d, lo_nn.depthwise2d, NN,
       "2D depthwise convolution, optional bias, fp32.", ["tiu.pord.depthwise"]),
    op("bdc_avg_pool2d", r.Pool2d, ck_nn.pool, partial(lo_nn.pool, kind="pord.avgpooling", scale="kernel"), NN,
       "2D average pooling (sum / (kernel_h * kernel_w)), fp32.", ["tiu.pord.avgpooling"]),
    op("bdc_avg_pool2d_v2", r.Pool2dScale, partial(ck_nn.pool, scaled=True),
       partial(lo_nn.pool, kind="pord.avgpooling", scale="argument"), NN,
       "2D average pooling with a custom scale (sum * scale), fp32.", ["tiu.pord.avgpooling"]),
    op("bdc_max_pool2d", r.Pool2d, ck_nn.pool, partial(lo_nn.pool, kind="pord.maxpooling"), NN,
       "2D max pooling, fp32.", ["tiu.pord.maxpooling"]),
    op("bdc_matmul", r.Matmul, ck_nn.matmul, lo_nn.matmul, NN,
       "output = left x right (+ bias) (+ output), matrix layout, fp32.", ["tiu.mm.mul"]),
)


OPS = GDMA + MEMORY + CONVERTING + BINARY + UNARY + NEURAL_NETWORK
