"""Every one of the 119 OKKernel functions of seed 003 exists under its API.md name: op-table
rows (Context methods that emit commands), Context methods of the Common group, or module
functions of the Common and Utils groups."""
from bmk import bm1684
from tests.chips.bm1684.seed import signatures

# API.md: okk_initialize() is bm1684.Context(); the 128-byte stride helpers drop "128_byte_".
RENAMED = {"okk_initialize": "Context"}
MODULE = {"npu_num", "local_mem_size_per_npu", "l2_sram_size", "dtcm_size", "start_npu_index",
          "channle_num_per_npu", "compact_stride", "continuous_stride"}


def api_name(c_name):
    if c_name in RENAMED:
        return RENAMED[c_name]
    return c_name.removeprefix("okk_").replace("128_byte_aligned_stride", "aligned_stride")


def test_all_119_functions_exist():
    names = signatures()
    assert len(names) == 119
    rows = {row.name for row in bm1684.Context.OPS}
    missing = []
    for c_name in names:
        name = api_name(c_name)
        if name in rows:
            continue
        if name == "Context" or name in MODULE or name.startswith("aligned_stride_for_"):
            ok = callable(getattr(bm1684, name, None))
        else:
            ok = callable(getattr(bm1684.Context, name, None))
        if not ok:
            missing.append(c_name)
    assert missing == []
    assert len(rows) == 103          # the functions that emit commands; the other 16 are Common / Utils
