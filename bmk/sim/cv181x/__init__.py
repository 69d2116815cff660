"""CV181X instruction semantics: bm1880's, read through the CV18xx TIU descriptor (issue 30).

The CV18xx family (CV181X, CV180X, CV182X = BM1822) shares BM1880v2's TDMA layout (plus
intra_cmd_paral) and a 112-byte TIU descriptor whose fields carry bm1880's names where they are
the same register (tools/facts/families.json). So every kind runs bm1880's function
(bmk/sim/bm1880: tiu.py, tdma.py) on the chip's own parameters (npu_num, eu_num, lmem_size are
read from `m.chip`), after one translation of the field dict:

- opt_X_int8 (bm1880: one 8-bit plane or two) is opt_X_seg == `seg.int8` (specs/cv181x/tiu.toml
  enum seg; cvikernel src/cv181x/tiu_add.c: opt_res0_seg = (res_high == NULL)).

Beyond bm1880, this family's own modules run (chosen per instruction by `_adapted`):
- quant.py: per-channel quantization (opt_chl_quan 1: cvikernel's `pt_*` / chl_quan_param convolutions,
  depthwise, `mul_qm`, `matrix_multiplication_qm`);
- bf16.py: bf16 operations (opd_typ 1): element-wise, pooling, matrix, convolution and depthwise
  convolution (fp32 sums, an fp32 bias in two bf16 halves; `bf16.refusal` names the fields a bf16
  convolution refuses);
- tdma.py: TDMA moves with a bf16 side (src_fmt / dst_fmt bf16, conversions to and from 8 bits)
  and VLC-compressed int8 and bf16 loads (compress_en 1, vlc.py; a compressed load converts nothing).

Every field these semantics do not read is executed or refused by name (SimulationError naming
the instruction kind, the field, the value and the rule: `check`, before anything runs):
- bm1880's own rules (bmk/sim/bm1880 _LEGAL): ps32_md (partial sums; a bf16 conv's are bf16.py's),
  opt_left_tran, compress_en but on a load (compressed stores), transpose_md ...; opd_typ 1 for a
  kind bf16.py has no function for,
  opt_chl_quan 1 for one quant.py has none for;
- opt_X_seg must be a member of the seg enum (int8 or int16);
- opt_rshift_typ must be 1 (cv181x_tiu_reg.h's reset value, which every encoder keeps but
  tiu_shift.c's 0: what 0 changes is not modelled);
- opt_relu must be 0 or 1 (cvikernel's opt_relu_typ; other values are not modelled), opt_relu_value
  0, cmd_pre_exe and cmd_pre_exe_typ 0 (not modelled);
- double_conv is executed as nothing: cvikernel src/cv181x/tiu_convolution.c sets it by itself
  ("always automatically enable double conv") when can_do_double_conv, so it cannot change the
  result, only the speed;
- TDMA intra_cmd_paral and mv_lut_base must be 0 (not modelled); mv_lut_idx 1 is a bf16
  copy_lmem's (tdma.py), refused on any other move;
- TDMA src_base_reg_sel / dst_base_reg_sel are executed: a global address is the base register
  they pick plus the descriptor's address (cviruntime: the runtime loads one base register per
  memory region, Neuron::reserveIonMem: 0 shared, 1 weights, 2 private, 3 and up one io buffer
  each; a cvimodel's tensor addresses carry that index in bits 40-42). The runtime chooses the
  register values; bmk's (`init`, `region_base`): the global window cut in one equal slice per
  register, register k at k * (global size / 2^width of the field), held in `m.base_regs`.
The kinds bm1880 has no function for (ge, min_pool) are kinds.py's. Cost model: bm1880's
(`cycles`), on this chip's npu_num and eu_num.
"""
from bmk.errors import SimulationError, refused_field
from bmk.sim import bm1880
from bmk.sim.cv181x import bf16, kinds, quant, tdma
from bmk.sim.semantics import Semantics

SLOTS = ("res0", "opd0", "opd1", "opd2")
# (engine, field, legal values) beyond bm1880's rules; see the module docstring for the sources.
_ZERO = (("tiu", "opt_relu_value"), ("tiu", "cmd_pre_exe"), ("tiu", "cmd_pre_exe_typ"),
         ("tdma", "intra_cmd_paral"), ("tdma", "mv_lut_base"))
_RELU = (0, 1)


def _kind(chip, engine, f):
    ins = chip.fmt(engine).instruction_of(f)
    return ins.name if ins is not None else "?"


def _refuse(chip, engine, f, name, rule):
    return refused_field(f"{engine}.{_kind(chip, engine, f)}: {name} must be {rule}, not {f[name]!r}", name, f[name])


def check(chip, engine, f):
    """Refuse (SimulationError naming kind, field, value, rule) what the semantics do not model."""
    for eng, name in _ZERO:
        if eng == engine and f[name]:
            raise _refuse(chip, engine, f, name, "0 (not modelled)")
    kind = _kind(chip, engine, f)
    if engine == "tiu":
        if f["opd_typ"] and kind not in bf16.KINDS:
            raise _refuse(chip, engine, f, "opd_typ", f"0 for {kind} (bf16 is modelled for {sorted(bf16.KINDS)})")
        bad = bf16.refusal(chip, kind, f) if f["opd_typ"] else None
        if bad is not None:
            raise _refuse(chip, engine, f, *bad)
        if f["opt_chl_quan"] and (f["opd_typ"] or kind not in quant.KINDS):
            raise _refuse(chip, engine, f, "opt_chl_quan",
                          f"0 for {kind} (per-channel quantization is modelled for int8 {sorted(quant.KINDS)})")
        if f["opt_rshift_typ"] != 1:
            raise _refuse(chip, engine, f, "opt_rshift_typ",
                          "1 (the encoder's reset value; tiu_shift.c's 0 is not modelled)")
        if f["opt_relu"] not in _RELU:
            raise _refuse(chip, engine, f, "opt_relu", f"one of {list(_RELU)}")
        for slot in SLOTS:
            name = f"opt_{slot}_seg"
            if chip.member("tiu", name, f[name]) is None:
                raise _refuse(chip, engine, f, name, "a member of the seg enum (int8 1, int16 0)")
    if engine == "tdma":
        for name in ("src_fmt", "dst_fmt"):
            if chip.member("tdma", name, f[name]) is None:
                raise _refuse(chip, engine, f, name, "a member of the fmt enum (fix8b, bf16)")
        if f["mv_lut_idx"] and not (kind == "copy_lmem" and tdma.is_bf16(chip, f, "src")
                                    and tdma.is_bf16(chip, f, "dst")):
            raise _refuse(chip, engine, f, "mv_lut_idx", "0 but on a bf16 copy_lmem")
        if f["compress_en"] and kind == "load" and tdma.is_bf16(chip, f, "src") != tdma.is_bf16(chip, f, "dst"):
            raise _refuse(chip, engine, f, "dst_fmt", "src_fmt for a compressed load (no conversion is modelled)")
        if tdma.has_bf16(chip, f) and kind not in tdma.KINDS:
            raise _refuse(chip, engine, f, "src_fmt" if tdma.is_bf16(chip, f, "src") else "dst_fmt",
                          f"fix8b for {kind} (a bf16 side is modelled for {sorted(tdma.KINDS)})")
    g = as_bm1880(chip, engine, f)
    if engine == "tiu" and f["opd_typ"] and kind == "conv":
        g = dict(g, ps32_md=0)          # a bf16 conv's partial sums are bf16.py's (bf16.conv, bf16.refusal)
    try:
        bm1880.check(chip, engine, g)
    except SimulationError as e:    # bm1880's message, prefixed with the kind
        if getattr(e, "field", None) is None:
            raise
        raise refused_field(f"{engine}.{_kind(chip, engine, f)}: {e}", e.field, e.value) from None


def as_bm1880(chip, engine, f):
    """The field dict as bm1880's semantics read it (module docstring)."""
    if engine != "tiu":
        # a bf16 side and a compressed load are this module's (tdma.py); bm1880's rules see neither
        fix8b = chip.code("tdma", "src_fmt", "fix8b") if tdma.has_bf16(chip, f) else None
        g = f if fix8b is None else dict(f, src_fmt=fix8b, dst_fmt=fix8b)
        if f["compress_en"] and _kind(chip, engine, f) == "load":
            g = dict(g, compress_en=0)
        return g
    g = dict(f, opd_typ=0, opt_chl_quan=0)      # bf16 (bf16.py) and per-channel (quant.py) are this module's
    for slot in SLOTS:
        g[f"opt_{slot}_int8"] = int(chip.member("tiu", f"opt_{slot}_seg", f[f"opt_{slot}_seg"]) == "int8")
    return g


def _adapted(engine, kind, fn):
    """bm1880's function `fn`, or this family's own for a bf16 (opd_typ 1, a TDMA fmt 2) or
    per-channel quantized (opt_chl_quan 1) instruction; `check` has refused the rest."""
    if engine == "tdma":
        own = tdma.KINDS.get(kind)

        def run(m, f):
            if f["compress_en"]:
                tdma.load_compressed(m, f)
            elif own is not None and tdma.has_bf16(m.chip, f):
                own(m, f)
            else:
                fn(m, f)
    else:
        half, qm = bf16.KINDS.get(kind), quant.KINDS.get(kind)

        def run(m, f):
            if f["opd_typ"]:
                half(m, as_bm1880(m.chip, engine, f))
            elif f["opt_chl_quan"]:
                qm(m, as_bm1880(m.chip, engine, f))
            else:
                fn(m, as_bm1880(m.chip, engine, f))
    run.__doc__ = fn.__doc__
    return run


def cycles(engine, kind, f, m):
    return bm1880.cycles(engine, kind, as_bm1880(m.chip, engine, f), m)


def region_base(chip, sel):
    """The global offset bmk's base register `sel` holds (module docstring): sel * slice."""
    count = 1 << chip.field("tdma", "src_base_reg_sel").width
    if not 0 <= sel < count:
        raise SimulationError(f"a base register must be in [0, {count}), not {sel!r}")
    return sel * (chip.space("global").size // count)


def init(m):
    """The region base registers the runtime would load (bmk's placement: `region_base`)."""
    count = 1 << m.chip.field("tdma", "src_base_reg_sel").width
    m.base_regs = tuple(region_base(m.chip, k) for k in range(count))


# Every bm1880 kind: mdsum has no CV18xx encoding (cv181x.json classes), so the decoder never names it.
_TABLES = {"tiu": {**bm1880.KINDS["tiu"], **kinds.KINDS}, "tdma": bm1880.KINDS["tdma"]}
SEMANTICS = Semantics({(engine, kind): _adapted(engine, kind, fn) for engine, table in _TABLES.items()
                       for kind, fn in table.items()}, check, cycles, init)
