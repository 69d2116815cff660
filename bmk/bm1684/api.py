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
from bmk.bm1684.checks import gdma as ck_gdma
from bmk.bm1684.checks import memory as ck_memory
from bmk.bm1684.lowering import gdma as lo_gdma
from bmk.bm1684.lowering import memory as lo_memory
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
CONVERTING = (
)


# -- FP32 Binary, 32-Bit Binary, Fixed Point Binary and Unary Functions ---------------------------
BINARY = (
)


# -- FP32 Unary Functions ----------------------------------------------------------------------
UNARY = (
)


# -- FP32 Neural Network Functions -------------------------------------------------------------
NEURAL_NETWORK = (
)


OPS = GDMA + MEMORY + CONVERTING + BINARY + UNARY + NEURAL_NETWORK
