"""The bm1684 op table: one row per OKKernel function of seeds 003/004, by the seed's groups.

A row names the function (C name without `okk_`), its op record (params.py, one class per C
signature), its checks and lowering (checks/<group>.py, lowering/<group>.py, functions named
after the API function), the seed section ("003 <group>"), one docstring line, and the
instruction kinds (specs/bm1684/*.toml) its lowering may emit. Every OKKernel function
takes plain C arguments: the methods are POSITIONAL (keywords allowed, named as in C).
The Common and Utils functions that emit nothing are Context methods (context.py) or module
functions (layout.py).
"""
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
from bmk.program import POSITIONAL, OpRow


def op(name, record, check, lower, group, doc="", *, kinds=(), aliases=()):
    return OpRow(name, record, check, lower, f"okk_{name}", f"003 {group}", doc, POSITIONAL, tuple(kinds),
                 tuple(aliases))


# -- GDMA Functions ----------------------------------------------------------------------------
G = "GDMA Functions"
KINDS_COPY, KINDS_SET = ["gdma.dma.tensor"], ["gdma.dma.constant"]
GDMA = (
    op("gdma_32bit_cpy_S2L", r.Copy, ck_gdma.gdma_32bit_cpy_S2L, lo_gdma.gdma_32bit_cpy_S2L, G,
       "dst = src, 32-bit elements, system to local.", kinds=KINDS_COPY),
    op("gdma_32bit_cpy_L2S", r.Copy, ck_gdma.gdma_32bit_cpy_L2S, lo_gdma.gdma_32bit_cpy_L2S, G,
       "dst = src, 32-bit elements, local to system.", kinds=KINDS_COPY),
    op("gdma_32bit_cpy_L2L", r.Copy, ck_gdma.gdma_32bit_cpy_L2L, lo_gdma.gdma_32bit_cpy_L2L, G,
       "dst = src, 32-bit elements, local to local.", kinds=KINDS_COPY),
    op("gdma_32bit_cpy_S2S", r.Copy, ck_gdma.gdma_32bit_cpy_S2S, lo_gdma.gdma_32bit_cpy_S2S, G,
       "dst = src, 32-bit elements, system to system.", kinds=KINDS_COPY),
    op("gdma_32bit_set_C_system", r.SetC, ck_gdma.gdma_32bit_set_C_system, lo_gdma.gdma_32bit_set_C_system, G,
       "dst = C, 32-bit elements in system memory.", kinds=KINDS_SET),
    op("gdma_32bit_set_C_local", r.SetC, ck_gdma.gdma_32bit_set_C_local, lo_gdma.gdma_32bit_set_C_local, G,
       "dst = C, 32-bit elements in local memory.", kinds=KINDS_SET),
    op("gdma_16bit_cpy_S2L", r.Copy, ck_gdma.gdma_16bit_cpy_S2L, lo_gdma.gdma_16bit_cpy_S2L, G,
       "dst = src, 16-bit elements, system to local.", kinds=KINDS_COPY),
    op("gdma_16bit_cpy_L2S", r.Copy, ck_gdma.gdma_16bit_cpy_L2S, lo_gdma.gdma_16bit_cpy_L2S, G,
       "dst = src, 16-bit elements, local to system.", kinds=KINDS_COPY),
    op("gdma_16bit_cpy_L2L", r.Copy, ck_gdma.gdma_16bit_cpy_L2L, lo_gdma.gdma_16bit_cpy_L2L, G,
       "dst = src, 16-bit elements, local to local.", kinds=KINDS_COPY),
    op("gdma_16bit_cpy_S2S", r.Copy, ck_gdma.gdma_16bit_cpy_S2S, lo_gdma.gdma_16bit_cpy_S2S, G,
       "dst = src, 16-bit elements, system to system.", kinds=KINDS_COPY),
    op("gdma_16bit_set_C_system", r.SetC, ck_gdma.gdma_16bit_set_C_system, lo_gdma.gdma_16bit_set_C_system, G,
       "dst = C, 16-bit elements in system memory.", kinds=KINDS_SET),
    op("gdma_16bit_set_C_local", r.SetC, ck_gdma.gdma_16bit_set_C_local, lo_gdma.gdma_16bit_set_C_local, G,
       "dst = C, 16-bit elements in local memory.", kinds=KINDS_SET),
    op("gdma_8bit_cpy_S2L", r.Copy, ck_gdma.gdma_8bit_cpy_S2L, lo_gdma.gdma_8bit_cpy_S2L, G,
       "dst = src, 8-bit elements, system to local.", kinds=KINDS_COPY),
    op("gdma_8bit_cpy_L2S", r.Copy, ck_gdma.gdma_8bit_cpy_L2S, lo_gdma.gdma_8bit_cpy_L2S, G,
       "dst = src, 8-bit elements, local to system.", kinds=KINDS_COPY),
    op("gdma_8bit_cpy_L2L", r.Copy, ck_gdma.gdma_8bit_cpy_L2L, lo_gdma.gdma_8bit_cpy_L2L, G,
       "dst = src, 8-bit elements, local to local.", kinds=KINDS_COPY),
    op("gdma_8bit_cpy_S2S", r.Copy, ck_gdma.gdma_8bit_cpy_S2S, lo_gdma.gdma_8bit_cpy_S2S, G,
       "dst = src, 8-bit elements, system to system.", kinds=KINDS_COPY),
    op("gdma_8bit_set_C_system", r.SetC, ck_gdma.gdma_8bit_set_C_system, lo_gdma.gdma_8bit_set_C_system, G,
       "dst = C, 8-bit elements in system memory.", kinds=KINDS_SET),
    op("gdma_8bit_set_C_local", r.SetC, ck_gdma.gdma_8bit_set_C_local, lo_gdma.gdma_8bit_set_C_local, G,
       "dst = C, 8-bit elements in local memory.", kinds=KINDS_SET),
    op("gdma_32bit_matrix_S2L", r.Matrix, ck_gdma.gdma_32bit_matrix_S2L, lo_gdma.gdma_32bit_matrix_S2L, G,
       "dst(x, y) = src(x, y), a 32-bit matrix, system to local.", kinds=KINDS_COPY),
    op("gdma_32bit_matrix_L2S", r.Matrix, ck_gdma.gdma_32bit_matrix_L2S, lo_gdma.gdma_32bit_matrix_L2S, G,
       "dst(x, y) = src(x, y), a 32-bit matrix, local to system.", kinds=KINDS_COPY),
)


# -- Memory Functions --------------------------------------------------------------------------
MEMORY = (
    op("bdc_32bit_cpy", r.Copy, ck_memory.bdc_32bit_cpy, lo_memory.bdc_32bit_cpy, "Memory Functions",
       "dst = src, 32-bit elements.", kinds=["tiu.arith.copy"]),
    op("bdc_32bit_set_C", r.SetC, ck_memory.bdc_32bit_set_C, lo_memory.bdc_32bit_set_C, "Memory Functions",
       "dst = C, 32-bit elements.", kinds=["tiu.arith.copy"]),
)


# -- Data Type Converting Functions ------------------------------------------------------------
CV = "Data Type Converting Functions"
CONVERTING = (
    op("bdc_fp32_to_int32", r.Unary, ck_converting.bdc_fp32_to_int32, lo_converting.bdc_fp32_to_int32, CV,
       "dst = INT32(src), rounded to nearest even, saturated.", kinds=["tiu.md_sfu.fp32_to_int"]),
    op("bdc_lookup_int32_to_fp32", r.Unary, ck_converting.bdc_lookup_int32_to_fp32,
       lo_converting.bdc_lookup_int32_to_fp32, CV, "dst = FP32(src), src in [-128, 127], by table.",
       kinds=["tiu.lut"]),
    op("bdc_4N_int8_to_fp32", r.Int8ToFp32, ck_converting.bdc_4N_int8_to_fp32, lo_converting.bdc_4N_int8_to_fp32,
       CV, "dst = FP32(src), src 4N int8 / uint8.", kinds=["tiu.lut"]),
    op("bdc_int8_to_fp32", r.Int8ToFp32, ck_converting.bdc_int8_to_fp32, lo_converting.bdc_int8_to_fp32, CV,
       "dst = FP32(src), src 1N int8 / uint8.", kinds=["tiu.arith.copy", "tiu.lut"]),
)


# -- FP32 Binary, 32-Bit Binary, Fixed Point Binary and Unary Functions ---------------------------
def _group(checks, lowering, group):
    """Rows of one seed group whose checks and lowering functions are named after the API function."""
    def row(name, record, doc, kinds):
        return op(name, record, getattr(checks, name), getattr(lowering, name), group, doc, kinds=kinds)
    return row


_fp32 = _group(ck_fp32, lo_fp32, "FP32 Binary Functions")
_bit32 = _group(ck_bit32, lo_bit32, "32-Bit Binary Functions")
_fixed = _group(ck_fixed, lo_fixed, "Fixed Point Binary Functions")
_fixed_unary = _group(ck_fixed, lo_fixed, "Fixed Point Unary Functions")
FX = "bdc_fixed_point_packed_"

BINARY = (
    # FP32 Binary Functions
    _fp32("bdc_add", r.Binary, "dst = src0 + src1.", ["tiu.arith.add"]),
    _fp32("bdc_add_C", r.BinaryC, "dst = src + C.", ["tiu.md_scalar.add"]),
    _fp32("bdc_sub", r.Binary, "dst = src0 - src1.", ["tiu.arith.sub"]),
    _fp32("bdc_sub_C", r.BinaryC, "dst = src - C.", ["tiu.md_scalar.sub"]),
    _fp32("bdc_C_sub", r.BinaryC, "dst = C - src.", ["tiu.md_scalar.sub"]),
    _fp32("bdc_mul", r.Binary, "dst = src0 * src1.", ["tiu.arith.mul"]),
    _fp32("bdc_mul_C", r.BinaryC, "dst = src * C.", ["tiu.md_scalar.mul"]),
    _fp32("bdc_div", r.Binary, "dst = src0 / src1.", ["tiu.md_scalar.divide"]),
    _fp32("bdc_div_C", r.BinaryC, "dst = src / C.", ["tiu.md_scalar.divide"]),
    _fp32("bdc_C_div", r.BinaryC, "dst = C / src.", ["tiu.md_scalar.divide"]),
    _fp32("bdc_mac", r.Binary, "dst = dst + src0 * src1.", ["tiu.arith.mac"]),
    _fp32("bdc_mac_C", r.BinaryC, "dst = dst + src * C.", ["tiu.md_scalar.mac"]),
    _fp32("bdc_max", r.Binary, "dst = max(src0, src1).", ["tiu.arith.max"]),
    _fp32("bdc_max_C", r.BinaryC, "dst = max(src, C).", ["tiu.arith.max"]),
    _fp32("bdc_min", r.Binary, "dst = min(src0, src1).", ["tiu.arith.min"]),
    _fp32("bdc_min_C", r.BinaryC, "dst = min(src, C).", ["tiu.arith.min"]),
    _fp32("bdc_greater_select_value", r.SelectValue,
          "dst = select_val if src0 > src1 else 0.", ["tiu.arith.select_gt"]),
    _fp32("bdc_greater_C_select_value", r.SelectCValue,
          "dst = select_val if src > C else 0.", ["tiu.arith.select_gt"]),
    _fp32("bdc_C_greater_select_value", r.SelectCValue,
          "dst = select_val if C > src else 0.", ["tiu.arith.select_gt"]),
    _fp32("bdc_equal_select_value", r.SelectValue,
          "dst = select_val if src0 == src1 else 0.", ["tiu.arith.select_eq"]),
    _fp32("bdc_equal_C_select_value", r.SelectCValue,
          "dst = select_val if src == C else 0.", ["tiu.arith.select_eq"]),
    # 32-Bit Binary Functions
    _bit32("bdc_32bit_and", r.Binary, "dst = src0 AND src1, 32-bit.", ["tiu.arith.and"]),
    _bit32("bdc_32bit_and_C", r.BinaryC, "dst = src AND C, 32-bit.", ["tiu.arith.and"]),
    _bit32("bdc_32bit_or", r.Binary, "dst = src0 OR src1, 32-bit.", ["tiu.arith.or"]),
    _bit32("bdc_32bit_or_C", r.BinaryC, "dst = src OR C, 32-bit.", ["tiu.arith.or"]),
    _bit32("bdc_32bit_xor", r.Binary, "dst = src0 XOR src1, 32-bit.", ["tiu.arith.xor"]),
    _bit32("bdc_32bit_xor_C", r.BinaryC, "dst = src XOR C, 32-bit.", ["tiu.arith.xor"]),
    _bit32("bdc_32bit_arithmetic_shift", r.Binary,
           "dst = src0 shifted by src1 (int32, arithmetic).", ["tiu.arith.shift"]),
    _bit32("bdc_32bit_logical_shift", r.Binary,
           "dst = src0 shifted by src1 (uint32, logical).", ["tiu.arith.shift"]),
    _bit32("bdc_32bit_arithmetic_shift_C", r.BinaryC,
           "dst = src shifted by C (int32, arithmetic).", ["tiu.arith.shift"]),
    _bit32("bdc_32bit_logical_shift_C", r.BinaryC,
           "dst = src shifted by C (uint32, logical).", ["tiu.arith.shift"]),
    _bit32("bdc_32bit_C_arithmetic_shift", r.BinaryC,
           "dst = C shifted by src (int32, arithmetic).", ["tiu.arith.shift"]),
    _bit32("bdc_32bit_C_logical_shift", r.BinaryC,
           "dst = C shifted by src (uint32, logical).", ["tiu.arith.shift"]),
    # Fixed Point Binary Functions
    _fixed(FX + "add", r.FixedBinary,
           "dst = (src0 + src1 + round) RSH rshift, saturated (op_type).", ["tiu.arith.add"]),
    _fixed(FX + "add_C", r.FixedBinaryC,
           "dst = (src + C + round) RSH rshift, saturated (op_type).", ["tiu.arith.add"]),
    _fixed(FX + "sub", r.FixedBinary,
           "dst = (src0 - src1 + round) RSH rshift, saturated (op_type).", ["tiu.arith.sub"]),
    _fixed(FX + "sub_C", r.FixedBinaryC,
           "dst = (src - C + round) RSH rshift, saturated (op_type).", ["tiu.arith.sub"]),
    _fixed(FX + "C_sub", r.FixedBinaryC,
           "dst = (C - src + round) RSH rshift, saturated (op_type).", ["tiu.arith.sub"]),
    _fixed(FX + "mul", r.FixedBinary,
           "dst = (src0 * src1 + round) RSH rshift, saturated (op_type).", ["tiu.arith.mul"]),
    _fixed(FX + "mul_C", r.FixedBinaryC,
           "dst = (src * C + round) RSH rshift, saturated (op_type).", ["tiu.arith.mul"]),
    _fixed(FX + "mac", r.FixedMac,
           "dst = (dst * 2^lshift + src0 * src1 + round) RSH rshift, saturated.", ["tiu.arith.mac"]),
    _fixed(FX + "mac_C", r.FixedMacC,
           "dst = (dst * 2^lshift + src * C + round) RSH rshift, saturated.", ["tiu.arith.mac"]),
    _fixed(FX + "max", r.FixedMaxMin, "dst = max(src0, src1) (op_type).", ["tiu.arith.max"]),
    _fixed(FX + "max_C", r.FixedMaxMinC, "dst = max(src, C) (op_type).", ["tiu.arith.max"]),
    _fixed(FX + "min", r.FixedMaxMin, "dst = min(src0, src1) (op_type).", ["tiu.arith.min"]),
    _fixed(FX + "min_C", r.FixedMaxMinC, "dst = min(src, C) (op_type).", ["tiu.arith.min"]),
    _fixed(FX + "16bit_arithmetic_shift", r.Binary,
           "dst = src0 shifted by src1 (int16, arithmetic, 2N).", ["tiu.arith.shift"]),
    _fixed(FX + "16bit_logical_shift", r.Binary,
           "dst = src0 shifted by src1 (uint16, logical, 2N).", ["tiu.arith.shift"]),
    _fixed(FX + "16bit_arithmetic_shift_C", r.BinaryC,
           "dst = src shifted by C (int16, arithmetic, 2N).", ["tiu.arith.shift"]),
    _fixed(FX + "16bit_logical_shift_C", r.BinaryC,
           "dst = src shifted by C (uint16, logical, 2N).", ["tiu.arith.shift"]),
    _fixed(FX + "16bit_C_arithmetic_shift", r.BinaryC,
           "dst = C shifted by src (int16, arithmetic, 2N).", ["tiu.arith.shift"]),
    _fixed(FX + "16bit_C_logical_shift", r.BinaryC,
           "dst = C shifted by src (uint16, logical, 2N).", ["tiu.arith.shift"]),
    _fixed(FX + "16bit_mul_8bit", r.Mul16x8,
           "dst = (src0 * src1 + round) RSH rshift, src0 as high/low bytes (mul_type).",
           ["tiu.arith.mul", "tiu.arith.mac"]),
    # Fixed Point Unary Functions
    _fixed_unary(FX + "16bit_split_high_8bit", r.Copy,
                 "dst = the most significant 8 bits of src (16-bit, 2N -> 4N).", ["tiu.arith.shift"]),
    _fixed_unary(FX + "16bit_split_low_8bit", r.SplitWork,
                 "dst = the least significant 8 bits of src (16-bit, 2N -> 4N).", ["tiu.arith.shift"]),
)


# -- FP32 Unary Functions ----------------------------------------------------------------------
UN = "FP32 Unary Functions"
EXP_KINDS = ("tiu.arith.min", "tiu.arith.max", "tiu.md_sfu.fp32_to_int", "tiu.lut", "tiu.md_scalar.sub",
             "tiu.md_sfu.taylor", "tiu.md_scalar.add", "tiu.md_scalar.mul")      # lowering/fp32_unary.py
RATIO_KINDS = EXP_KINDS + ("tiu.md_scalar.divide",)                            # sigmoid, tanh
UNARY = (
    op("bdc_rsqrt", r.Unary, ck_unary.bdc_rsqrt, lo_unary.bdc_rsqrt, UN, "dst = 1 / sqrt(src).",
       kinds=["tiu.md_sfu.rsqrt"]),
    op("bdc_sqrt", r.Unary, ck_unary.bdc_sqrt, lo_unary.bdc_sqrt, UN, "dst = sqrt(src) = 1 / rsqrt(src).",
       kinds=["tiu.md_sfu.rsqrt", "tiu.md_scalar.divide"]),
    op("bdc_taylor_exp", r.TaylorSeries, ck_unary.bdc_taylor_exp, lo_unary.bdc_taylor_exp, UN,
       "dst = e^src by num_series taylor terms.", kinds=["tiu.md_sfu.taylor", "tiu.md_scalar.add"]),
    op("bdc_lookup_exp", r.Unary, ck_unary.bdc_lookup_exp, lo_unary.bdc_lookup_exp, UN,
       "dst = e^src, src int32 in [-103, 88], by the exp table.", kinds=["tiu.lut"]),
    op("bdc_exp", r.UnaryWork, ck_unary.bdc_exp, lo_unary.bdc_exp, UN, "dst = e^src (num_series 32).",
       kinds=EXP_KINDS),
    op("bdc_exp_tunable", r.UnaryWorkSeries, ck_unary.bdc_exp_tunable, lo_unary.bdc_exp_tunable, UN,
       "dst = e^src.", kinds=EXP_KINDS),
    op("bdc_sigmoid", r.UnaryWork, ck_unary.bdc_sigmoid, lo_unary.bdc_sigmoid, UN,
       "dst = 1 / (1 + e^-src) (num_series 32).", kinds=RATIO_KINDS),
    op("bdc_sigmoid_tunable", r.UnaryWorkSeries, ck_unary.bdc_sigmoid_tunable, lo_unary.bdc_sigmoid_tunable,
       UN, "dst = 1 / (1 + e^-src).", kinds=RATIO_KINDS),
    op("bdc_tanh", r.UnaryWork, ck_unary.bdc_tanh, lo_unary.bdc_tanh, UN, "dst = tanh(src) (num_series 32).",
       kinds=RATIO_KINDS),
    op("bdc_tanh_tunable", r.UnaryWorkSeries, ck_unary.bdc_tanh_tunable, lo_unary.bdc_tanh_tunable, UN,
       "dst = tanh(src).", kinds=RATIO_KINDS),
    op("bdc_reciprocal", r.Copy, ck_unary.bdc_reciprocal, lo_unary.bdc_reciprocal, UN, "dst = 1 / src.",
       kinds=["tiu.md_scalar.divide"]),
    op("bdc_neg", r.Copy, ck_unary.bdc_neg, lo_unary.bdc_neg, UN, "dst = -src.", kinds=["tiu.md_scalar.mul"]),
)


# -- FP32 Neural Network Functions -------------------------------------------------------------
def _nn(name, record, doc, kinds):
    return op(name, record, getattr(ck_nn, name), getattr(lo_nn, name), "FP32 Neural Network Functions", doc,
              kinds=kinds)


NEURAL_NETWORK = (
    _nn("bdc_relu", r.Copy, "dst = max(src, 0), fp32.", ["tiu.arith.max"]),
    _nn("bdc_bias", r.Bias, "dst = src + bias(0, c, 0, 0), fp32.", ["tiu.md_linear.mac"]),
    _nn("bdc_scale", r.Scale, "dst = src * scale(0, c, 0, 0), fp32.", ["tiu.md_linear.mac"]),
    _nn("bdc_scale_bias", r.ScaleBias, "dst = src * scale(0, c, 0, 0) + bias(0, c, 0, 0), fp32.",
        ["tiu.md_linear.mac"]),
    _nn("bdc_conv2d", r.Conv2d, "2D convolution (2IC weight), optional bias and result accumulation, fp32.",
        ["tiu.conv"]),
    _nn("bdc_depthwise2d", r.Depthwise2d, "2D depthwise convolution, optional bias, fp32.",
        ["tiu.pord.depthwise"]),
    _nn("bdc_avg_pool2d", r.Pool2d, "2D average pooling (sum / (kernel_h * kernel_w)), fp32.",
        ["tiu.pord.avgpooling"]),
    _nn("bdc_avg_pool2d_v2", r.Pool2dScale, "2D average pooling with a custom scale (sum * scale), fp32.",
        ["tiu.pord.avgpooling"]),
    _nn("bdc_max_pool2d", r.Pool2d, "2D max pooling, fp32.", ["tiu.pord.maxpooling"]),
    _nn("bdc_matmul", r.Matmul, "output = left x right (+ bias) (+ output), matrix layout, fp32.",
        ["tiu.mm.mul", "tiu.mm.mac"]),
)


OPS = GDMA + MEMORY + CONVERTING + BINARY + UNARY + NEURAL_NETWORK
