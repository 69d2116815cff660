"""One valid call of every bm1684x API function (tests share them): name -> (args, expected
kinds in order). Addresses: NPU 0 at 0x0/0x400/0x800/0xc00 and a vector area at 0x10000."""
from bmk import bm1684x as x

S = x.dim4(2, 70, 3, 5)          # 70 channels: two channel slots from NPU 0
G = 0x100000000                  # the start of global memory
A, B, D, T = 0x0, 0x2000, 0x4000, 0x6000


def calls():
    out = {}
    for name, kind in (("and", "and"), ("or", "or"), ("xor", "xor"), ("min", "min"), ("max", "max")):
        out[f"bdc_{name}"] = ((D, A, B, S, None, None, None, x.DT_INT16), [f"arith.{kind}"])
        out[f"bdc_{name}_C"] = ((D, A, -7, S, None, None, x.DT_INT16), [f"arith.{kind}"])
    out["bdc_arithmetic_shift"] = ((D, A, B, S, None, None, None, x.DT_INT32, x.DT_INT32, x.DT_INT8,
                                    x.RM_HALF_AWAY_FROM_ZERO), ["arith.ashift"])
    out["bdc_arithmetic_shift_C"] = ((D, A, -3, S, None, None, x.DT_INT8, x.DT_INT16, x.RM_DOWN), ["arith.ashift"])
    out["bdc_logical_shift"] = ((D, A, B, S, None, None, None, x.DT_UINT16, x.DT_UINT32, x.DT_INT16, x.RM_UP),
                                ["arith.logicShift"])
    out["bdc_logical_shift_C"] = ((D, A, 31, S, None, None, x.DT_UINT8, x.DT_UINT8, x.RM_HALF_TO_EVEN),
                                  ["arith.logicShift"])
    select = {"greater": ["arith.selectGreat"], "less": ["arith.selectLess"], "equal": ["arith.selectEqual"],
              "greater_equal": ["arith.selectLess", "arith.xor"],
              "less_equal": ["arith.selectGreat", "arith.xor"],
              "not_equal": ["arith.selectEqual", "arith.xor"]}
    vselect = {"greater": ["vc.select_gt"], "less": ["vc.select_lt"], "equal": ["vc.select_eq"],
               "greater_equal": ["vc.select_lt", "arith.xor"],
               "less_equal": ["vc.select_gt", "arith.xor"],
               "not_equal": ["vc.select_eq", "arith.xor"]}
    for name, kinds in select.items():
        out[f"bdc_{name}"] = ((D, A, B, 200, S, None, None, None, x.DT_UINT8, x.DT_INT16), kinds)
        out[f"bdc_{name}_C"] = ((D, A, -300, 200, S, None, None, x.DT_UINT8, x.DT_INT16), kinds)
    for name in ("and", "or", "xor", "min", "max"):
        out[f"bdc_vc_{name}"] = ((D, A, B, 100, 130, 16, 64, x.DT_INT8), [f"vc.{name}"])
    for name, kinds in vselect.items():
        out[f"bdc_vc_{name}"] = ((D, A, B, -1, 100, 130, 16, 64, x.DT_INT8, x.DT_INT32), kinds)
    out["gdma_cpy_S2L"] = ((A, G, S, None, None, x.DT_INT16), ["dma.tensor"])
    out["gdma_cpy_L2S"] = ((G + 0x1000, A, S, None, None, x.DT_FP32), ["dma.tensor"])
    out["gdma_cpy_L2L"] = ((D, A, S, None, None, x.DT_UINT8), ["dma.tensor"])
    out["gdma_cpy_S2S"] = ((G + 0x8000, G, S, None, None, x.DT_BFP16), ["dma.tensor"])
    return out


CALLS = calls()
