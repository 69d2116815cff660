"""Why a field's change can leave a command's result the same (issue 27 item 5).

tools/silent_fields.py changes one field of a real command at a time, re-encodes, runs the
model and, when every output stays byte-identical, runs the command alone on memories full of
values that tell results apart (fp32/fp16/bf16 halves: ties of every rounding mode, values in
and out of 8-bit range; random bits) with and without the change:
- the bytes it writes (its access log) or the memories differ: the command did something
  else, which the outputs do not show (a result nobody reads, one overwritten before it is,
  or a difference the model's own data never brings out, e.g. a rounding mode where nothing
  ties): UNREAD;
- they are the same: the field changed nothing in that command. `explain` names the rule
  (RULES) saying why, or None: then the field is silent, which the project's rule forbids
  (every field that can change a result is executed or refused), and tests/sim/
  test_silent_fields.py fails.

Each rule is a reason and a test of the command's own fields; tests/sim/test_silent_fields.py
shows each reason on a command built for it (the field changes the result where the rule's
condition does not hold). Field meanings: bmk/sim/bm1684x/fields.py and operands.py (head
fields, layouts, constants, tsk_opd_num), bmk/sim/bm1684/contract.py and common.py (the
contract's ignored fields, short_X_str layouts, opt_X_const), tpu-mlir
python/debugger/target_1684x/opparam.py (operand shapes and strides per kind).
"""
import re
import typing

UNREAD = ("unread: run alone, the command writes other bytes or values; the outputs do not show it (a result "
          "nobody reads, one overwritten, or a difference the model's data never brings out)")


class Rule(typing.NamedTuple):
    name: str
    reason: str
    test: object           # test(Ctx) -> bool


class Ctx(typing.NamedTuple):
    spec: object            # the ChipSpec
    rec: object             # the command as the file has it (a Record)
    field: str
    old: int
    new: int

    @property
    def f(self):
        return self.rec.fields

    @property
    def chip(self):
        return self.spec.name

    def member(self, name, value=None):
        """The enum name of a field's value (the spec's enum), or None."""
        try:
            fld = self.spec.field(self.rec.engine, name, self.rec.cls)
        except Exception:
            return None
        return fld.enum_name(self.f.get(name, 0) if value is None else value)


# -- helpers reading a command's operands by the chips' field names ------------------------------
_FLOATS = ("fp16", "fp32", "bf16", "fp8")


def _prec_field(ctx, slot):
    return f"{slot}_prec" if ctx.chip == "bm1684x" else f"opt_{slot}_prec"


def _const_field(ctx, slot):
    return f"{slot}_const" if ctx.chip == "bm1684x" else f"opt_{slot}_const"


def _layout_field(ctx, slot):
    return f"{slot}_str" if ctx.chip == "bm1684x" else f"short_{slot}_str"


def _is_const(ctx, slot):
    return bool(ctx.f.get(_const_field(ctx, slot), 0))


def _is_float(ctx, slot):
    name = ctx.member(_prec_field(ctx, slot))
    return name is not None and name.startswith(_FLOATS)


def _reads(ctx):
    """bm1684: the fields the kind's contract executes (empty for other chips)."""
    if ctx.chip != "bm1684":
        return frozenset()
    from bmk.sim.semantics import semantics_for
    c = getattr(semantics_for("bm1684").kinds.get((ctx.rec.engine, ctx.rec.kind)), "contract", None)
    return c.resolved(ctx.spec, ctx.rec.engine, ctx.rec.kind)[0] if c is not None else frozenset()


def _size(ctx, slot, d):
    """The size of dimension d of TIU operand `slot`: its own field where the kind reads one
    (bm1684: its contract says so; bm1684x: a non-zero X_d), else res0's (the operands of
    element-wise kinds take res0's shape)."""
    v = ctx.f.get(f"{slot}_{d}", 0)
    own = f"{slot}_{d}" in _reads(ctx) if ctx.chip == "bm1684" else bool(v)
    return v if own else ctx.f.get(f"res0_{d}", 0)


def _lane_bytes(ctx):
    sp = ctx.spec.space("local")
    return sp.lane_bytes, sp.base


def _start_npu(ctx, addr):
    lane, base = _lane_bytes(ctx)
    npu = ctx.spec.param("npu_num")
    off = addr - base if addr >= base else addr
    return (off // lane) % npu


def _channels_in_one_row(ctx, addr, c):
    """Whether c channels starting at addr's NPU all sit in its first row of NPUs: then the
    channel stride multiplies 0 for every channel (channel k is on NPU s + k, row 0)."""
    return _start_npu(ctx, addr) + c <= ctx.spec.param("npu_num")


_TIU_STRIDE = re.compile(r"^(res0|res1|opd[0-3])_([nchw])_str$")


def _tiu_stride(ctx):
    if ctx.chip == "bm1684x" and ctx.field == "opd2_n_str":
        return None         # bm1684x: the rounding mode (or div's iterations), not a stride
    m = _TIU_STRIDE.match(ctx.field)
    return (m.group(1), m.group(2)) if m and ctx.rec.engine == "tiu" else None


# -- the rules -------------------------------------------------------------------------------------
def _head(ctx):
    if ctx.chip != "bm1684x":
        return False
    from bmk.sim.bm1684x.fields import head
    return ctx.field in head(ctx.spec, ctx.rec.engine)


def _contract_ignores(ctx):
    """bm1684: the field is one the kind's contract ignores (with its reason)."""
    if ctx.chip != "bm1684":
        return None
    from bmk.sim.semantics import semantics_for
    fn = semantics_for("bm1684").kinds.get((ctx.rec.engine, ctx.rec.kind))
    c = getattr(fn, "contract", None)
    if c is None:
        return None
    _, ignores = c.resolved(ctx.spec, ctx.rec.engine, ctx.rec.kind)
    return ignores.get(ctx.field)


def _reserved(ctx):
    try:
        return ctx.spec.field(ctx.rec.engine, ctx.field, ctx.rec.cls).reserved
    except Exception:
        return False


def _size_one_stride(ctx):
    """A stride of a dimension of size 1 (its one index is 0), or the channel stride of
    channels that all sit in one row of NPUs."""
    t = _tiu_stride(ctx)
    if t is not None:
        slot, d = t
        if d == "c":
            return _channels_in_one_row(ctx, ctx.f.get(f"{slot}_addr", 0), _size(ctx, slot, "c"))
        return _size(ctx, slot, d) == 1
    m = re.match(r"^(src|dst)_([nchw])stride$", ctx.field)
    if m and ctx.rec.engine == "gdma":
        side, d = m.groups()
        size = _gdma_shape(ctx, side)["nchw".index(d)]
        if d == "c":
            addr = _gdma_addr(ctx, side)
            if addr is not None and _is_local(ctx, addr):
                return _channels_in_one_row(ctx, addr, size)
        return size == 1
    return False


def _gdma_shape(ctx, side):
    """A GDMA side's (n, c, h, w): its size fields, or for the destination of a copy that
    takes the source's shape (chw_copy / nchw_copy 1) the source's, n and c swapped by
    bm1684's dma.trans."""
    f = ctx.f
    src = tuple(f.get(f"src_{d}size", 0) for d in "nchw")
    if side == "src":
        return src
    if f.get("chw_copy", 0) or f.get("nchw_copy", 0):
        return (src[1], src[0], src[2], src[3]) if ctx.rec.kind == "dma.trans" else src
    return tuple(f.get(f"dst_{d}size", 0) for d in "nchw")


def _gdma_addr(ctx, side):
    """A GDMA side's device address, composed from its parts (the spec's composed rows)."""
    lo, hi = f"{side}_start_addr_l32", f"{side}_start_addr_h8"
    return ctx.f[lo] | (ctx.f.get(hi, 0) << 32) if lo in ctx.f else None


def _is_local(ctx, addr):
    sp = ctx.spec.space("local")
    return sp.base <= addr < sp.base + sp.size


def _not_free_layout(ctx):
    """A free stride of an operand whose layout code computes its strides."""
    t = _tiu_stride(ctx)
    if t is None:
        return False
    return ctx.member(_layout_field(ctx, t[0])) not in (None, "free")


def _const_layout(ctx):
    """The layout and strides of a constant operand (X_const 1: X_addr holds the value)."""
    m = re.match(r"^(?:short_)?(res0|opd[0-3])_(?:[nchw]_)?str$", ctx.field)
    return bool(m) and _is_const(ctx, m.group(1))


def _opd_num(ctx):
    """bm1684x AR: an operand slot past tsk_opd_num (opd1 of a one-operand kind, opd2 of a
    two-operand one): its fields describe no operand. opd2_sign and opd2_n_str are not
    opd2's: cast's result sign and the rounding mode. bm1684 conv and pord kinds: the bias
    opd2 with tsk_opd_num 2 (nn.py reads it with 3 only)."""
    if ctx.chip == "bm1684":
        kind = ctx.rec.kind or ""
        m = re.match(r"^(?:opt_|short_)?opd2_", ctx.field)
        return bool(m) and (kind == "conv" or kind.startswith("pord.")) and ctx.f.get("tsk_opd_num", 0) == 2
    if ctx.chip != "bm1684x" or ctx.rec.cls not in ("AR", "sAR"):
        return False
    m = re.match(r"^opd([12])_(addr|const|prec|sign|str|[nchw]_str|[nchw])$", ctx.field)
    if not m or ctx.field == "opd2_n_str":
        return False
    if ctx.field == "opd2_sign" and (ctx.rec.kind or "").startswith(("arith.cast", "arith.select")):
        return False
    return int(m.group(1)) >= ctx.f.get("tsk_opd_num", 0)


_SIMS = {}


def _sim(spec):
    """A Simulator of the spec (its lane size, NPU count and eu_num answer the layout helpers)."""
    sim = _SIMS.get(spec.name)
    if sim is None or sim.chip is not spec:
        from bmk.sim.core import Simulator
        sim = _SIMS[spec.name] = Simulator(spec)
    return sim


def _same_strides(ctx):
    """bm1684x: a layout code X_str changed to one that gives the operand the same strides on
    every dimension it has (size > 1; channels beyond one row of NPUs) as the old one."""
    m = re.match(r"^(res0|opd[0-2])_str$", ctx.field)
    if ctx.chip != "bm1684x" or not m or ctx.rec.cls not in ("AR", "sAR"):
        return False
    from bmk import dtypes
    from bmk.sim.bm1684x.operands import strides_of
    slot = m.group(1)
    shape = tuple(_size(ctx, slot, d) for d in "nchw")
    prec = ctx.member(_prec_field(ctx, slot))
    if prec is None:
        return False
    dtype = dtypes.of_precision(prec, ctx.f.get(f"{slot}_sign", 0))
    sim, addr = _sim(ctx.spec), ctx.f.get(f"{slot}_addr", 0)
    try:
        old = strides_of(sim, ctx.f, slot, addr, shape, dtype, ctx.old)
        new = strides_of(sim, ctx.f, slot, addr, shape, dtype, ctx.new)
    except Exception:
        return False
    used = [shape[0] > 1, not _channels_in_one_row(ctx, addr, shape[1]), shape[2] > 1, shape[3] > 1]
    return all(a == b for a, b, u in zip(old, new, used) if u)


def _gdma_condition(ctx):
    """bm1684x dma.tensor fields read only under another field's value (gdma.py, opparam
    `DMA_tensor_0x000__converter`): constant_value with fill_constant_en; the destination
    sizes without nchw_copy (with it the destination takes the source's shape); the lane
    mask for a local destination."""
    f = ctx.f
    if ctx.chip == "bm1684" and ctx.rec.engine == "gdma":
        # bm1684 gdma.py: chw_copy 1 -> the destination takes the source's sizes
        return bool(re.match(r"^dst_[nchw]size$", ctx.field)) and bool(f.get("chw_copy", 0)) \
            and ctx.rec.kind in ("dma.tensor", "dma.trans", "dma.cw_trans", "dma.format")
    if ctx.chip != "bm1684x" or not (ctx.rec.kind or "").startswith("dma.tensor"):
        return False
    if ctx.field == "constant_value":
        return not f.get("fill_constant_en", 0)
    if re.match(r"^dst_[nchw]size$", ctx.field):
        return bool(f.get("nchw_copy", 0)) and f.get("cmd_special_function", 0) == 0
    if ctx.field in ("localmem_mask_l32", "localmem_mask_h32"):
        addr = _gdma_addr(ctx, "dst")
        return addr is not None and not _is_local(ctx, addr)
    return False


def _same_strides_1684(ctx):
    """bm1684: a layout code short_X_str changed to one giving the same strides on every
    dimension the operand has (common.py `strides`); a GDMA stride_enable changed where the
    automatic strides equal the stride fields on every dimension the sides have (gdma.py)."""
    if ctx.chip != "bm1684":
        return False
    from bmk import dtypes
    sim = _sim(ctx.spec)
    local = ctx.spec.space("local")
    if ctx.rec.engine == "gdma" and ctx.field == "stride_enable":
        from bmk.sim.bm1684 import gdma
        try:
            dt = gdma._mover(sim, ctx.f)
            for side in ("src", "dst"):
                shape = _gdma_shape(ctx, side)
                auto = gdma._auto_strides(sim, ctx.f, side, shape, dt)
                given = tuple(ctx.f[f"{side}_{d}stride"] for d in "nchw")
                addr = _gdma_addr(ctx, side)
                used = [shape[0] > 1, shape[1] > 1 and not (_is_local(ctx, addr) and
                                                            _channels_in_one_row(ctx, addr, shape[1])),
                        shape[2] > 1, shape[3] > 1]
                if any(u and a != b for a, b, u in zip(auto, given, used)):
                    return False
            return True
        except Exception:
            return False
    m = re.match(r"^short_(res0|opd[0-3])_str$", ctx.field)
    if not m or ctx.rec.engine != "tiu" or _is_const(ctx, m.group(1)):
        return False
    from bmk.sim.bm1684 import common
    slot = m.group(1)
    shape = tuple(_size(ctx, slot, d) for d in "nchw")
    prec = ctx.member(f"opt_{slot}_prec")
    if prec is None:
        return False
    dtype = dtypes.of_precision(prec, 1)
    addr = ctx.f.get(f"{slot}_addr", 0) - local.base

    def strides(code):
        if ctx.member(ctx.field, code) == "offset":     # elementwise.py: one value per channel, broadcast
            from bmk import layout
            start = addr // local.lane_bytes
            return (0, layout.compact_stride((1, shape[1], 1, 1), sim.npu_num, start)[1], 0, 0)
        return tuple(common.strides(sim, dict(ctx.f, **{ctx.field: code}), slot, shape, dtype, addr))
    try:
        old, new = strides(ctx.old), strides(ctx.new)
    except Exception:
        return False
    used = [shape[0] > 1, not _channels_in_one_row(ctx, ctx.f.get(f"{slot}_addr", 0), shape[1]), shape[2] > 1,
            shape[3] > 1]
    return all(a == b for a, b, u in zip(old, new, used) if u)


def _pord_kernel_layout(ctx):
    """bm1684 pord kernels: short_opd1_str aligned is read as compact (nn.py `_pord_kernel`:
    bm1684_defs.py reads a pord kernel with is_aligned False; the vendor lays a 128-channel
    3x3 kernel with channel stride 9), so aligned <-> compact is the same kernel."""
    if ctx.chip != "bm1684" or ctx.field != "short_opd1_str" or not (ctx.rec.kind or "").startswith("pord."):
        return False
    return {ctx.member(ctx.field, ctx.old), ctx.member(ctx.field, ctx.new)} == {"aligned", "compact"}


def _lane_mask(ctx):
    """tsk_lane_num (TIU) or localmem_mask_l32 / _h32 (GDMA, a local destination) bits changed
    only for NPUs that hold no channel of the result."""
    npu = ctx.spec.param("npu_num")
    if ctx.field == "tsk_lane_num" and ctx.rec.engine == "tiu":
        c, addr, shift = ctx.f.get("res0_c", 0), ctx.f.get("res0_addr", 0), 0
    elif ctx.field in ("localmem_mask_l32", "localmem_mask_h32") and ctx.rec.engine == "gdma":
        addr = _gdma_addr(ctx, "dst")
        if addr is None or not _is_local(ctx, addr) or ctx.f.get("cmd_special_function", 0):
            return False
        c, shift = _gdma_shape(ctx, "dst")[1], 32 if ctx.field.endswith("h32") else 0
    else:
        return False
    start = _start_npu(ctx, addr)
    lanes = {(start + k) % npu for k in range(min(c, npu))}
    changed = (ctx.old ^ ctx.new) << shift
    return not any((changed >> lane) & 1 for lane in lanes)


def _far_pad(ctx):
    """bm1684 conv / depthwise / pooling: bottom or right padding past what the last output
    window reaches (it ends inside the input, the top / left padding and the smaller of the
    old and new padding: the zeros it reads are there either way; nn.py's window geometry)."""
    if ctx.chip != "bm1684" or ctx.field not in ("opd0_dn_pad", "opd0_rt_pad"):
        return False
    f = ctx.f
    if ctx.field == "opd0_dn_pad":
        out, stride, k, kins, inp, ins, near = (f["res0_h"], f["res_op_y_str"], f["opd1_h"], f["opd1_y_ins0"],
                                                f["opd0_h"], f["opd0_y_ins0"], f["opd0_up_pad"])
    else:
        out, stride, k, kins, inp, ins, near = (f["res0_w"], f["res_op_x_str"], f["opd1_w"], f["opd1_x_ins0"],
                                                f["opd0_w"], f["opd0_x_ins0"], f["opd0_lf_pad"])
    if not ({"opd1_h", "opd1_w"} <= _reads(ctx)):
        return False
    last = (out - 1) * stride + (k - 1) * (kins + 1) + 1
    return last <= near + (inp - 1) * (ins + 1) + 1 + min(ctx.old, ctx.new)


def _size_one_insertion(ctx):
    """bm1684: the zeros inserted between the rows / columns of a kernel or input with one row
    / column (opd1_y_ins0 with opd1_h 1: the dilation of a 1-row kernel; nn.py)."""
    m = re.match(r"^(opd[01])_([xy])_ins0$", ctx.field)
    if ctx.chip != "bm1684" or not m or ctx.field not in _reads(ctx):
        return False
    slot, axis = m.groups()
    return ctx.f.get(f"{slot}_{'h' if axis == 'y' else 'w'}", 0) == 1


def _nothing_shifted(ctx):
    """bm1684 opt_shift_typ of a command that shifts and rounds nothing: fp32 operands, or
    integer ones with opt_right_shift and opt_left_shift 0 (elementwise.py reads it only for
    integer forms that shift; the vendor's fp32 commands carry 0 and 1 alike)."""
    if ctx.chip != "bm1684" or ctx.field != "opt_shift_typ":
        return False
    return not ctx.f.get("opt_right_shift", 0) and not ctx.f.get("opt_left_shift", 0)


def _float_sign(ctx):
    """The sign field of a float operand (floats carry their sign bit; the field is read for
    integer precisions only: operands.py `dt`); cast's result sign opd2_sign when the result
    is a float."""
    if ctx.chip == "bm1684x":
        if ctx.field == "opd2_sign" and ctx.rec.kind == "arith.cast":
            return _is_float(ctx, "res0")
        m = re.match(r"^(res0|opd[0-3])_sign$", ctx.field)
    else:
        if ctx.field == "opt_res_add_sign":     # mac's old result read with this sign (integers)
            return _is_float(ctx, "res0")
        if ctx.field == "opt_opd2_sign" and (ctx.rec.kind or "").startswith(("arith.", "md_")):
            return _is_float(ctx, "res0")       # elementwise.py: the integer result's sign
        m = re.match(r"^opt_(res0|opd[0-3])_sign$", ctx.field)
    return bool(m) and _is_float(ctx, m.group(1))


def _zero_const(ctx):
    """The precision or sign of the constant 0 (0 in every precision and sign)."""
    m = re.match(r"^(?:opt_)?(opd[0-3])_(prec|sign)$", ctx.field)
    return bool(m) and _is_const(ctx, m.group(1)) and ctx.f.get(f"{m.group(1)}_addr", 0) == 0 \
        and ctx.member(_prec_field(ctx, m.group(1)), ctx.new) is not None


def _exact_rounding(ctx):
    """The rounding mode of a result that is never rounded: max/min return one of their
    operands; a float product by a constant power of two is exact."""
    if ctx.chip != "bm1684x" or ctx.field != "opd2_n_str":
        return False
    kind = ctx.rec.kind
    if kind in ("arith.max", "arith.min"):
        return True
    if kind == "arith.mul" and _is_const(ctx, "opd1") and _is_float(ctx, "opd1"):
        import struct
        v = struct.unpack("<f", struct.pack("<I", ctx.f.get("opd1_addr", 0) & 0xFFFFFFFF))[0]
        mant = abs(v)
        while mant and mant != int(mant):
            mant *= 2
        return mant != 0 and int(mant) & (int(mant) - 1) == 0
    return False


RULES = (
    Rule("head", "a HEAD field (bm1684x fields.py): sync ids and their enable order commands, the selectors "
         "name the kind, pwr_step and intr_en change no data", _head),
    Rule("reserved", "a reserved field (the spec marks it): the vendor's format gives it no meaning", _reserved),
    Rule("size-one-stride", "the stride of a dimension of size 1 (its one index is 0), or the channel stride "
         "of channels that all sit in one row of NPUs (channel k on NPU s + k)", _size_one_stride),
    Rule("layout-computes-strides", "a free stride of an operand whose layout code (aligned, compact, "
         "offset) computes its strides: the fields are read with the free layout only", _not_free_layout),
    Rule("constant-has-no-layout", "the layout or a stride of a constant operand: the value is in X_addr, "
         "nothing is read from memory", _const_layout),
    Rule("same-strides", "a layout code changed to one giving the operand the same strides on every "
         "dimension it has (sizes > 1, channels past one row of NPUs)", _same_strides),
    Rule("gdma-condition", "a dma.tensor field read only under another's value: constant_value with "
         "fill_constant_en, the destination sizes without nchw_copy, the lane mask for a local destination",
         _gdma_condition),
    Rule("same-strides-1684", "a layout code (short_X_str) or GDMA stride_enable changed to one giving the "
         "same strides on every dimension the operand has", _same_strides_1684),
    Rule("pord-kernel-compact", "a pord kernel's short_opd1_str aligned <-> compact: an aligned kernel is "
         "read compact (bm1684_defs.py is_aligned False)", _pord_kernel_layout),
    Rule("lane-without-channel", "lane-mask bits (tsk_lane_num, localmem_mask) of NPUs that hold no channel "
         "of the result",
         _lane_mask),
    Rule("far-pad", "bottom / right padding past what the last output window reaches", _far_pad),
    Rule("size-one-insertion", "the zeros inserted between the rows / columns of a kernel or input with one "
         "row / column", _size_one_insertion),
    Rule("nothing-shifted", "opt_shift_typ of a command that shifts nothing (fp32, or shifts 0)",
         _nothing_shifted),
    Rule("past-tsk_opd_num", "an operand past tsk_opd_num: the kind reads opd0 .. opd(tsk_opd_num - 1)",
         _opd_num),
    Rule("float-sign", "the sign of a float operand or result: floats carry their own sign bit, the sign "
         "field is read for integers only", _float_sign),
    Rule("zero-constant", "the precision or sign of the constant 0, which is 0 in every precision",
         _zero_const),
    Rule("exact-result", "the rounding mode of a result that is never rounded (max/min return an operand; "
         "a float product by a power of two is exact)", _exact_rounding),
)


def explain(spec, rec, field, old, new):
    """The rule (name: reason) explaining why changing `field` of `rec` from old to new cannot
    change its result, or None. bm1684: a field the kind's contract ignores explains itself
    (the contract's reason)."""
    ctx = Ctx(spec, rec, field, old, new)
    why = _contract_ignores(ctx)
    if why:
        return f"contract: {why}"
    for rule in RULES:
        if rule.test(ctx):
            return f"{rule.name}: {rule.reason}"
    return None
