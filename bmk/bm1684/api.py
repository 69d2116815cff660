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
from bmk.bm1684.checks import converting as ck_converting
from bmk.bm1684.checks import fp32_unary as ck_unary
from bmk.bm1684.checks import memory as ck_memory
from bmk.bm1684.lowering import converting as lo_converting
from bmk.bm1684.lowering import fp32_unary as lo_unary
from bmk.bm1684.lowering import memory as lo_memory
from bmk.program import POSITIONAL, OpRow


def op(name, record, check, lower, group, doc="", *, kinds=(), aliases=()):
    return OpRow(name, record, check, lower, f"okk_{name}", f"003 {group}", doc, POSITIONAL, tuple(kinds),
                 tuple(aliases))


# -- GDMA Functions ----------------------------------------------------------------------------
GDMA = (
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
       "dst = INT32(src), rounded to nearest even, saturated.", kinds=["tiu.mdsfu.fp32_to_int"]),
    op("bdc_lookup_int32_to_fp32", r.Unary, ck_converting.bdc_lookup_int32_to_fp32,
       lo_converting.bdc_lookup_int32_to_fp32, CV, "dst = FP32(src), src in [-128, 127], by table.",
       kinds=["tiu.lut"]),
    op("bdc_4N_int8_to_fp32", r.Int8ToFp32, ck_converting.bdc_4N_int8_to_fp32, lo_converting.bdc_4N_int8_to_fp32,
       CV, "dst = FP32(src), src 4N int8 / uint8.", kinds=["tiu.lut"]),
    op("bdc_int8_to_fp32", r.Int8ToFp32, ck_converting.bdc_int8_to_fp32, lo_converting.bdc_int8_to_fp32, CV,
       "dst = FP32(src), src 1N int8 / uint8.", kinds=["tiu.arith.copy", "tiu.lut"]),
)


# -- FP32 Binary, 32-Bit Binary, Fixed Point Binary and Unary Functions ---------------------------
BINARY = (
)


# -- FP32 Unary Functions ----------------------------------------------------------------------
UN = "FP32 Unary Functions"
EXP_KINDS = ("tiu.arith.min", "tiu.arith.max", "tiu.mdsfu.fp32_to_int", "tiu.lut", "tiu.mdscalar.sub",
             "tiu.mdsfu.taylor", "tiu.mdscalar.add", "tiu.mdscalar.mul")      # lowering/fp32_unary.py
RATIO_KINDS = EXP_KINDS + ("tiu.mdscalar.divide",)                            # sigmoid, tanh
UNARY = (
    op("bdc_rsqrt", r.Unary, ck_unary.bdc_rsqrt, lo_unary.bdc_rsqrt, UN, "dst = 1 / sqrt(src).",
       kinds=["tiu.mdsfu.rsqrt"]),
    op("bdc_sqrt", r.Unary, ck_unary.bdc_sqrt, lo_unary.bdc_sqrt, UN, "dst = sqrt(src) = 1 / rsqrt(src).",
       kinds=["tiu.mdsfu.rsqrt", "tiu.mdscalar.divide"]),
    op("bdc_taylor_exp", r.TaylorSeries, ck_unary.bdc_taylor_exp, lo_unary.bdc_taylor_exp, UN,
       "dst = e^src by num_series taylor terms.", kinds=["tiu.mdsfu.taylor", "tiu.mdscalar.add"]),
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
       kinds=["tiu.mdscalar.divide"]),
    op("bdc_neg", r.Copy, ck_unary.bdc_neg, lo_unary.bdc_neg, UN, "dst = -src.", kinds=["tiu.mdscalar.mul"]),
)


# -- FP32 Neural Network Functions -------------------------------------------------------------
NEURAL_NETWORK = (
)


OPS = GDMA + MEMORY + CONVERTING + BINARY + UNARY + NEURAL_NETWORK
