"""Checks of the matrix functions (seed 4.46-4.47), with the BM1880v2 layout rules
(isa-facts/bm1880-notes.md, "v2 layout checks": matrix operands aligned, la % eu_num == 0)."""
from bmk.bm1880.constants import CTRL_NULL, CTRL_RA, CTRL_RELU

TIU = "tiu"
MAC2_FC_BYTES = 256 * 16    # tpu_matrix_mac_2: left/res are read/written as a (256, 16, 1, 16) FC matrix


def matrix_mac(c, p):
    """Seed 4.46."""
    for name in ("res", "left", "right"):
        c.tensor(name, getattr(p, name), matrix=True, aligned=True, la_multiple=c.eu_num)
    c.ctrls("ctrls", p.ctrls, [("CTRL_NULL", CTRL_NULL), ("CTRL_RA", CTRL_RA), ("CTRL_RELU", CTRL_RELU)])
    c.flag("res_is_int8", p.res_is_int8)
    c.in_field("lshift_width", p.lshift_width, TIU, "opt_left_shift")
    c.in_field("rshift_width", p.rshift_width, TIU, "opt_right_shift")
    left, right, res = p.left.shape, p.right.shape, p.res.shape
    if right.row != left.col:
        c.fail("right.shape", f"of {left.col} rows (the columns of left)", right)
    double = p.ctrls == CTRL_RA or not p.res_is_int8
    rows = left.row * 2 if double else left.row
    why = ("2 x the rows of left: a 16-bit res is two 8-bit planes" if double else "the rows of left")
    if (res.row, res.col) != (rows, right.col):
        c.fail("res.shape", f"({rows}, {right.col}) ({why}, the columns of right)", res)
    if p.bias is not None:
        c.tensor("bias", p.bias, matrix=True, aligned=True, la_multiple=c.eu_num)
        if (p.bias.shape.row, p.bias.shape.col) != (2, right.col):
            c.fail("bias.shape", f"(2, {right.col}) (a 16-bit (1, {right.col}) matrix as two planes)",
                   p.bias.shape)


def matrix_mac_2(c, p):
    """Seed 4.47: fixed shapes; left and res take 4096 bytes per lane from la (lowering/matrix.py)."""
    for name, dims in (("res", (1, 256, 1, 256)), ("left", (1, 256, 1, 256)), ("right", (256, 16, 1, 16))):
        t = c.tensor(name, getattr(p, name), la_multiple=c.eu_num)
        if t.shape.dims() != dims:
            c.fail(f"{name}.shape", f"{dims}", t.shape)
    lmem_size = c.chip.param("lmem_size")
    for name in ("res", "left"):
        t = getattr(p, name)
        if t.la + MAC2_FC_BYTES > lmem_size:
            c.fail(f"{name}.la", f"at most 0x{lmem_size - MAC2_FC_BYTES:x} (the FC lowering uses "
                                 f"{MAC2_FC_BYTES} bytes per lane from la)", t.la)
