"""Shared helpers of the lowering modules. Lowering: op record -> descriptors, as {field: value} of the bm1880 TIU / TDMA formats.

One function per API function, named after it. Each returns a tuple of (engine, fields);
fields left out keep the format's reset defaults (specs/bm1880/*.toml), exactly as the
public BM1880v2 encoder does (isa-facts/bm1880-notes.md, "Per-op encoding"). Sync-id
fields are not set here: the scheduler writes them at acquisition.
Only field names and values appear here; bit positions live in specs/.
"""

TIU, TDMA = "tiu", "tdma"

# tsk_typ (specs/bm1880/tiu.toml [enums.tsk_typ]) and tsk_eu_typ per task type.
CONV, DEPTHWISE_POOL, FC, TENSOR_ARITH = 0, 1, 2, 3
EU_MUL, EU_MAC, EU_ADD, EU_SUB, EU_MAX, EU_MIN, EU_SHIFT, EU_AND, EU_OR, EU_XOR, EU_COPY = range(11)
EU_MAX_POOL, EU_AVG_POOL, EU_DEPTHWISE = 0, 1, 2
# short_*_str: 0 shape-derived (eu-aligned), 1 conv weight, 2 bias planes, 3 explicit strides.
STR_ALIGNED, STR_WEIGHT, STR_BIAS, STR_EXPLICIT = 0, 1, 2, 3
# TDMA trans_dir / spec_func / sys_dtype (specs/bm1880/tdma.toml enums).
G2L, L2G, G2G, L2L = 0, 1, 2, 3
SPEC_COPY, SPEC_TRANSPOSE, SPEC_CONST_FILL = 0, 1, 4
SYS_TENSOR, SYS_MATRIX = 0, 1


def signed(t):
    return int(t is not None and t.signed)


# -- TIU helpers ------------------------------------------------------------------------------
def tiu(tsk_typ, eu, opd_num, **fields):
    return dict(cmd_en=1, tsk_typ=tsk_typ, tsk_eu_typ=eu, tsk_opd_num=opd_num, **fields)


def shape(f, slot, layout):
    f[f"{slot}_n"], f[f"{slot}_c"], f[f"{slot}_h"], f[f"{slot}_w"] = layout.n, layout.c, layout.h, layout.w


def strides(f, slot, stride, with_w=False):
    f[f"{slot}_n_str"], f[f"{slot}_c_str"], f[f"{slot}_h_str"] = stride.n, stride.c, stride.h
    if with_w:
        f[f"{slot}_w_str"] = stride.w


def eltwise(eu, opd_num, res, a, b=None, *, res_high=None, a_high=None, b_high=None, res_int8=None):
    """Element-wise TENSOR_ARITH: every operand slot takes a's shape, explicit strides."""
    f = tiu(TENSOR_ARITH, eu, opd_num, opt_relu=0,
             short_res0_str=STR_EXPLICIT, short_opd0_str=STR_EXPLICIT,
             short_opd1_str=STR_EXPLICIT, short_opd2_str=STR_EXPLICIT,
             res0_addr=res.la, opd0_addr=a.la,
             opt_res0_sign=signed(res), opt_opd0_sign=signed(a),
             opt_res0_int8=int(res_high is None if res_int8 is None else res_int8),
             opt_opd0_int8=int(a_high is None))
    for slot in ("res0", "opd0", "opd1", "opd2"):
        shape(f, slot, a.layout)
    strides(f, "res0", res.stride)
    strides(f, "opd0", a.stride)
    if res_high is not None:
        f["res0_b_str"] = res_high.la - res.la
    if a_high is not None:
        f["opd0_b_str"] = a_high.la - a.la
    if b is not None:
        f["opd1_addr"] = b.la
        f["opt_opd1_sign"] = signed(b)
        f["opt_opd1_int8"] = int(b_high is None)
        strides(f, "opd1", b.stride)
        if b_high is not None:
            f["opd1_b_str"] = b_high.la - b.la
    return f


def const(f, value, signed, width=8):
    """A scalar operand b in opd1: the constant's two's complement bits in opd1_addr."""
    f.update(opt_opd1_const=1, opd1_addr=value & ((1 << width) - 1), opt_opd1_sign=int(bool(signed)))
    return f




def gmem_addr(chip, gaddr):
    """gmem addresses are written as (addr & mask) + base (chip.toml [memory.global])."""
    return (int(gaddr) & chip.gmem_addr_mask) + chip.gmem_addr_offset


def gmem_limit(chip):
    """Bytes of gmem a TDMA descriptor reaches (seed 4.14: `u64 gaddr`): the offsets that, once
    the window base is added, fit the composed address fields (40 bits in the v2 encoding),
    and lie inside the [memory.global] window."""
    fmt = chip.engine(TDMA).format
    width = sum(fmt.field(part).width for part in dict(fmt.composed)["src_addr"])
    return min(chip.space("global").size, (1 << width) - chip.gmem_addr_offset)
