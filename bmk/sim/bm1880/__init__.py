"""bm1880 instruction semantics for the simulator, and its cost model.

`SEMANTICS` (bmk.sim.semantics.Semantics) maps (engine, kind) to the function executing one
decoded instruction of that kind (the kinds are the `instructions` tables of
specs/bm1880/*.toml; `KINDS[engine][kind]` is the same table by engine). `check(engine, f)`
refuses fields the semantics do not model; `cycles(engine, kind, f, m)` is the cost model.

API function -> instruction kind(s) it is lowered to (bmk/bm1880/lowering) -> function here:
  tpu_mul, tpu_mul_const -> mul;  tpu_mac, tpu_mac_const -> mac;  tpu_add, tpu_add_const -> add;
  tpu_sub -> sub;  tpu_max, tpu_relu (max with 0) -> max;  tpu_min, tpu_min_const -> min;
  tpu_arith_shift -> arith_shift;  tpu_and/or/xor_int8/int16 -> and_/or_/xor;
  tpu_copy, tpu_copy_with_stride -> copy;  tpu_mdsum -> mdsum;  tpu_lut -> lut;
  tpu_conv, tpu_winograd -> conv;  tpu_depthwise -> depthwise;  tpu_max_pooling -> max_pool;
  tpu_avg_pooling -> avg_pool;  tpu_matrix_mac, tpu_matrix_mac_2 -> matrix_mac  (tiu.py)
  gdma_load(_stride) -> load / load_tp (CTRL_TP);  gdma_store(_stride) -> store / store_tp;
  gdma_copy_gmem -> copy_gmem / copy_gmem_tp (CTRL_TP);  gdma_copy_lmem -> copy_lmem;
  gdma_lrn_shift -> copy_lmem (lane-shifted) + fill  (tdma.py)

Cost model (cycles; made up but monotone in the work, documented so results are comparable):
- TIU: TIU_STARTUP + ceil(work / eu_num), where work is the number of multiply-accumulate (or
  element) steps one NPU lane performs; lanes work in parallel, so a channel count C costs
  ceil(C / npu_num) passes:
    element-wise, lut, copy     N * ceil(C / npu) * H * W of res0 (x2 when an operand is 16-bit)
    mdsum                       N * ceil(C / npu) * H * W of opd0
    conv                        N * ceil(Cout / npu) * Ho * Wo * Cin * kh * kw
    depthwise, pooling          N * ceil(C / npu) * Ho * Wo * kh * kw
    matrix_mac                  R * ceil(C' / npu) * W * K
- TDMA: TDMA_STARTUP + ceil(bytes / TDMA_BYTES_PER_CYCLE), bytes = elements moved (or filled).

Bounds: every memory view has at most bmk.sim.memory.MAX_VIEW_ELEMENTS elements; `check`
also refuses, before anything runs, a TIU instruction with an operand of more than
MAX_TIU_ELEMENTS elements, or a convolution, depthwise, pooling or matrix instruction whose
windows (N * C * Ho * Wo * kh * kw), padded input or multiply-accumulates exceed
MAX_WINDOW_ELEMENTS / MAX_MACS, so no instruction takes unbounded time or memory.
"""
from bmk.errors import SimulationError, refused_field
from bmk.sim.bm1880 import tdma, tiu
from bmk.sim.bm1880.common import ceil_div
from bmk.sim.semantics import Semantics

KINDS = {"tiu": tiu.KINDS, "tdma": tdma.KINDS}

TIU_STARTUP = 16
TDMA_STARTUP = 64
TDMA_BYTES_PER_CYCLE = 16
MAX_MACS = 1 << 32              # multiply-accumulates of one instruction
MAX_TIU_ELEMENTS = 1 << 22      # elements of one TIU operand (4x the lmem: values are widened to 64 bits)
MAX_WINDOW_ELEMENTS = 1 << 24   # kernel-window (im2col) and padded-input elements of one instruction
TAP_COST = 1024                 # a kernel tap is one numpy pass: count it as this many MACs

# (field, legal values) the semantics rely on; anything else is a malformed instruction.
_LEGAL = {
    "tiu": (("cmd_en", (1,)), ("opd_typ", (0,)), ("ps32_md", (0,)), ("opt_chl_quan", (0,)),
            ("opt_left_tran", (0,)), ("tsk_opd_num", (1, 2, 3))),
    "tdma": (("vld", (1,)), ("compress_en", (0,)), ("src_fmt", (1,)), ("dst_fmt", (1,)),
             ("transpose_md", (0,))),
}


def check(chip, engine, f):
    for name, legal in _LEGAL.get(engine, ()):
        if f[name] not in legal:
            rule = f"{legal[0]}" if len(legal) == 1 else f"one of {list(legal)}"
            raise refused_field(f"{name} must be {rule}, not {f[name]!r}", name, f[name])
    if engine == "tiu":
        _check_work(chip, f)


def _check_work(chip, f):
    """Refuse a TIU instruction whose work would exceed the simulator's bounds (module docstring)."""
    ins = chip.fmt("tiu").instruction_of(f)
    kind = ins.name if ins is not None else None
    res = f["res0_n"] * f["res0_c"] * f["res0_h"] * f["res0_w"]
    kh, kw = f["opd1_h"], f["opd1_w"]
    for slot in ("res0", "opd0", "opd1", "opd2"):
        _bound(kind, f"{slot} elements", f[f"{slot}_n"] * f[f"{slot}_c"] * f[f"{slot}_h"] * f[f"{slot}_w"],
               MAX_TIU_ELEMENTS)
    if kind in ("conv", "depthwise", "max_pool", "avg_pool", "min_pool"):      # min_pool: CV18xx
        n, c, h, w = f["opd0_n"], f["opd0_c"], f["opd0_h"], f["opd0_w"]
        hp = (h - 1) * (f["conv_opd0_y_ins0"] + 1) + 1 + f["conv_opd0_y_ins0_last"] + f["conv_opd0_up_pad"] \
            + f["conv_opd0_dn_pad"]
        wp = (w - 1) * (f["conv_opd0_x_ins0"] + 1) + 1 + f["conv_opd0_x_ins0_last"] + f["conv_opd0_lf_pad"] \
            + f["conv_opd0_rt_pad"]
        windows = f["res0_n"] * c * f["res0_h"] * f["res0_w"] * kh * kw
        macs = res * kh * kw * (f["opd1_n"] if kind == "conv" else 1)
        _bound(kind, "padded input", n * c * hp * wp, MAX_WINDOW_ELEMENTS)
        _bound(kind, "kernel windows", windows, MAX_WINDOW_ELEMENTS)
        _bound(kind, "multiply-accumulates", macs + kh * kw * TAP_COST, MAX_MACS)
    elif kind == "matrix_mac":
        _bound(kind, "multiply-accumulates", res * f["opd1_n"], MAX_MACS)


def _bound(kind, what, count, bound):
    if count > bound:
        raise SimulationError(f"{kind}: its {what} ({count}) exceed the simulator's bound of {bound}")


def _passes(c, npu):
    return ceil_div(c, npu)


def cycles(engine, kind, f, m):
    npu, eu = m.npu_num, m.eu_num
    if engine == "tdma":
        n = f["src_n"]
        if kind == "fill":
            count = n * f["dst_c"] * f["dst_h"] * f["dst_w"]
        elif f["sys_dtype"]:
            count = f["src_n"] * f["src_w"] if kind.startswith("load") else f["dst_c"] * f["dst_w"]
        else:
            count = n * f["src_c"] * f["src_h"] * f["src_w"]
        return TDMA_STARTUP + ceil_div(count, TDMA_BYTES_PER_CYCLE)
    rn, rc, rh, rw = f["res0_n"], f["res0_c"], f["res0_h"], f["res0_w"]
    if kind == "conv":
        work = rn * _passes(rc, npu) * rh * rw * f["opd1_n"] * f["opd1_h"] * f["opd1_w"]
    elif kind in ("depthwise", "max_pool", "avg_pool", "min_pool"):
        work = rn * _passes(rc, npu) * rh * rw * f["opd1_h"] * f["opd1_w"]
    elif kind == "matrix_mac":
        work = rn * _passes(rc, npu) * rw * f["opd1_n"]
    elif kind == "mdsum":
        work = f["opd0_n"] * _passes(f["opd0_c"], npu) * f["opd0_h"] * f["opd0_w"]
    else:
        work = rn * _passes(rc, npu) * rh * rw
        if not (f["opt_res0_int8"] and f["opt_opd0_int8"] and f["opt_opd1_int8"]):
            work *= 2
    return TIU_STARTUP + ceil_div(work, eu)


SEMANTICS = Semantics({(engine, kind): fn for engine, table in KINDS.items() for kind, fn in table.items()},
                      check, cycles)
