"""Field builders shared by the bm1880 lowerings: op record -> descriptors, as {field: value} of
the TIU / TDMA formats (specs/bm1880/*.toml).

Each lowering returns a tuple of (engine, fields); fields left out keep the format's reset
defaults, exactly as the public BM1880v2 encoder does (isa-facts/bm1880-notes.md, "Per-op
encoding"). Sync-id fields are not set here: the scheduler writes them at acquisition. Every
code comes from the chip given to the lowering: tsk_typ / tsk_eu_typ (and tens_mdsum,
tens_lookup) from the TIU instruction kinds, trans_dir / spec_func from the TDMA kinds,
short_*_str and sys_dtype from their enums, the split of composed values (40-bit addresses,
32-bit c strides) from the `composed` rows. Lowerings compute with their int arguments (the
call-template rule: bmk/checks.py).
"""
TIU, TDMA = "tiu", "tdma"
OPERANDS = ("res0", "opd0", "opd1", "opd2")


def signed(t):
    return int(t is not None and t.signed)


# -- TIU ----------------------------------------------------------------------------------------
def tiu(chip, kind, opd_num, **fields):
    """A TIU descriptor of instruction kind `kind` (e.g. "mul": tsk_typ, tsk_eu_typ) with
    `opd_num` operands, then `fields`."""
    return dict(cmd_en=1, **chip.kind(TIU, kind), tsk_opd_num=opd_num, **fields)


def short(chip, **layouts):
    """{short_<slot>_str: code} of the operand layouts named (`short_str` enum: aligned,
    weight, bias, explicit), e.g. short(chip, res0="explicit")."""
    return {f"short_{slot}_str": chip.code(TIU, f"short_{slot}_str", layout) for slot, layout in layouts.items()}


def shape(f, slot, layout):
    f[f"{slot}_n"], f[f"{slot}_c"], f[f"{slot}_h"], f[f"{slot}_w"] = layout.n, layout.c, layout.h, layout.w


def strides(f, slot, stride, with_w=False):
    f[f"{slot}_n_str"], f[f"{slot}_c_str"], f[f"{slot}_h_str"] = stride.n, stride.c, stride.h
    if with_w:
        f[f"{slot}_w_str"] = stride.w


def eltwise(chip, kind, opd_num, res, a, b=None, *, res_high=None, a_high=None, b_high=None, res_int8=None):
    """Element-wise TENSOR_ARITH: every operand slot takes a's shape, explicit strides."""
    f = tiu(chip, kind, opd_num, opt_relu=0, **short(chip, **dict.fromkeys(OPERANDS, "explicit")),
            res0_addr=res.la, opd0_addr=a.la, opt_res0_sign=signed(res), opt_opd0_sign=signed(a),
            opt_res0_int8=int(res_high is None if res_int8 is None else res_int8),
            opt_opd0_int8=int(a_high is None))
    for slot in OPERANDS:
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
    """A scalar operand b in opd1: the constant's two's complement bits (of its `width`-bit C
    type) in opd1_addr."""
    f.update(opt_opd1_const=1, opd1_addr=value & ((1 << width) - 1), opt_opd1_sign=int(bool(signed)))
    return f


# -- TDMA ---------------------------------------------------------------------------------------
def tdma(chip, kind, src_addr, dst_addr, **fields):
    """A TDMA descriptor of instruction kind `kind` (e.g. "load": trans_dir, spec_func) moving
    from src_addr to dst_addr (each split over its composed fields), then `fields`."""
    f = dict(vld=1, **chip.kind(TDMA, kind), **fields)
    f.update(chip.split(TDMA, "src_addr", src_addr))
    f.update(chip.split(TDMA, "dst_addr", dst_addr))
    return f


def gmem_addr(chip, gaddr):
    """gmem addresses are written as (addr & mask) + base (chip.toml [memory.global]). No int():
    the API hands lowerings Python ints already (util.plain), and int() would stop call
    templates (bmk.templates) from following the address."""
    return (gaddr & chip.gmem_addr_mask) + chip.gmem_addr_offset
