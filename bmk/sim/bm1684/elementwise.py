"""Semantics of the element-wise TIU classes: ar_op (arith.*), md_scalar_op (md_scalar.*) and
md_sfu_op (md_sfu.*), every eu type of each (specs/bm1684/tiu.toml; isa-facts bm1684-lowering.md
lists ar eu 0..24, md_scalar 0..20, md_sfu 0..24).

Operands (common.py): res0 gives the shape (N, C, H, W) of every operand; bm1684_defs.py
(tpu-mlir profile_helper) reads A, B and the result with res0's n, c, h, w for ar, md_scalar
and md_sfu, so opdX_n/c/h/w are ignored (the vendor writes 1 there). An operand is a constant
(opt_opdX_const, its bits in opdX_addr), a per-channel tensor (short_opdX_str offset: one
element per channel in the compact [1, C, 1, 1] layout, broadcast over n, h, w) or a tensor of
res0's shape in its short_X_str layout (aligned, compact, or free with X_n/c/h/w_str; zero
strides broadcast, as the vendor's softmax does).
opd1_neq1 = 1 ("opd1's N equals 1"; the firmware's tensor-arithmetic layer parameter B_N_is_1,
tpu-mlir's BM1684 fw_tensor_arithmetic_layer_param_t, and the register's name): opd1 has one
batch, which every batch of res0 reads: it is read as (1, C, H, W) with its own layout and
broadcast over N; in the 4N / 2N storage of an 8/16-bit opd1 that is the batch-0 byte / half
of each word, the low one. Confirmed on face_detection_int8_b4: its 255 per-channel scale,
bias and shift operands are 32-bit words loaded by fp32-format GDMA copies (value 0x000000a7
for the scale -89, 0xffffffef for the shift -17), read with strides (0, 1, 0, 0); any reading
that gave batch n its byte n would hand batches 1..3 zeros, and the run agrees with the fp32
twin and its batch items are independent (tests/chips/bm1684/sim/test_int8_network.py).
opd0_neq1 is executed only at 0 (no stream sets it).

What each eu computes (fp32 mode: every operand and res0 fp32, numpy float32, one rounding
per operation, NaN/inf as IEEE; int mode: int8/int16/int32 operands, exact then saturated):
- mul, add, sub, max, min: res = a op b. int: widened, exact, then add/sub/mul (and mac)
  round a right shift of opt_right_shift bits as the seed's (x + 2^(r-1)) >> r, saturate to
  res0's type; max/min saturate. The int result (mul, mac, add, sub, max, min) is signed iff
  opd0 or opd1 is signed, or the eu is sub: BM1684 has no res0 sign field, and seed 003's
  valid op types say so for every fixed-point function (add, add_C, mul, mul_C, mac, mac_C,
  max, min and their _C forms: the destination is signed exactly when a source is; sub, sub_C,
  C_sub: always signed, U8_OP_U8_TO_S8 and no U8_OP_U8_TO_U8). The vendor's int8 stream agrees:
  it writes opt_opd2_sign 1 on every ar command, also on its requantizing adds (u16 + 0 ->
  8-bit) whose results the next layer reads unsigned with a calibrated range 0..255
  (face_detection_int8_b4 instruction 24: the fp32 twin's values reach 241 in its scale; the
  layer's cosine to the twin is 0.99979 uint8-saturated, 0.99856 int8-saturated). So
  opt_opd2_sign is not read by these eus (the OKKernel lowering sets it to the destination's
  sign, which is the same value for every valid op type). The seed's "for some unexpected
  reasons, S16_MUL_U8_TO_S16 is unsupported for BM1684" (16bit_mul_8bit: its second command
  is a mac of the unsigned low byte and the unsigned source 1 into a signed destination) is
  what this rule forbids.
- mac: res = old * 2^opt_left_shift + a * b (int; old read with sign opt_res_add_sign) or
  old + fp32(a * b) (fp32).
- divide: fp32 a / b (int: SimulationError).
- shift (int): a << b for b > 0, else a >> -b, arithmetic for a signed a, wrapped to res0.
- and, or, xor: on the operands' bit patterns, wrapped to res0's width.
- select_gt, select_eq: res = c if a > b (a == b) else 0, c = opd2 as res0-width bits.
- copy: res = a, bit for bit in a's precision.
- fp32_to_int: res0 (integer precision, signed iff opt_opd2_sign) = a rounded to nearest, ties to
  even, saturated.
- rsqrt: 1 / sqrt(a), correctly rounded.
- taylor: sum_{k<n} c_k a^(k+1), n = opd1_n, c_k the fp32 words at L2 SRAM offset opd1_addr;
  Horner in fp32 (sfu.py).
- fp32_normalize, int_normalize (bm1684_defs.py: SFU_NORMA, SFU_NORMB): assumption (no public
  formula): the mantissa of a as an fp32 in [1, 2) with a's sign (fp32_normalize) and its biased
  exponent as an int32 (int_normalize) -- the split that the lnx table (ln 2 * (i - 127)) and
  the ln taylor table serve. A real run would check: x = 6.0 -> 1.5 and 129.
- square_sum, square_diff: assumption: (a + b)^2 and (a - b)^2 in fp32 (one rounding each
  for the sum and the square).
- cmp, select, cmp_select (opd0..opd3, res0 and res1, as md_cmp: compare.py): assumption.
- add_tree: SimulationError: an element-wise add_tree has no public meaning (md_sum is the
  add-tree reduction: linear.py).
opt_res_add (fp32): res = old res0 + result; int: SimulationError (the order of the sum and
the saturation is not public). opt_res_add_sign: the sign of an old integer res0, read by mac
only; the other eus read no old integer value (opt_res_add with an integer result is refused),
so it is ignored there (the vendor leaves it 1 on the mul and add around its int8 macs).
opt_relu: 1, the value every fp32 vendor and OKKernel command carries, is "no ReLU"; 0 with an
integer res0 (the vendor's int8 commands) is "no ReLU" too; 0 with an fp32 res0 is refused
(common.py). tsk_lane_num: channels on disabled lanes keep their old values (common.store).
opt_shift_typ: add/sub/mul/mac with opt_right_shift > 0 run with 0 (the OKKernel lowering's
value) and 1 (the vendor's int8 stream sets 1 exactly on the ar commands that right-shift), both
the seed's rounding shift; other values are refused. shift: 0 (arithmetic for a signed opd0,
logical for an unsigned one) and 1 with a signed opd0 (the vendor pairs 1 with its signed
requantizing shifts and 0 with its unsigned ones: isa-facts "arithmetic vs logical via
opt_shift_typ and sign"), executed as the arithmetic shift, floor (no rounding: with the
rounding form the int8 network's outputs agree less with its fp32 twin, e.g. bbox_pred_stride16
on face1 0.9875 -> 0.9843, measured with the operand-sign result rule); 1 with an unsigned opd0 is refused. In fp32 mode nothing is shifted
or rounded by it, so any value runs. opt_right_shift on max/min and shift is refused (they do
not round).
Ignored: tsk_opd_num (the operand count follows from the eu: the vendor writes 2 on its
one-operand md_sfu commands and 1 on its copies); opt_opd*_sign of fp32 operands (fp32 has no
sign mode).
Bounded work: res0 must hold at most one NPU's memory per NPU (SimulationError otherwise).
"""
import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk import numerics
from bmk.errors import SimulationError, refused_field
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684 import sfu
from bmk.sim.bm1684.common import operand
from bmk.sim.bm1684.contract import contract, refused
from bmk.sim.semantics import planned

FP32 = dtypes.FP32
WIDTH = {"int8": 8, "int16": 16, "int32": 32, "fp32": 32, "fp16": 16}
NOT_READ = "this eu type does not read the operand"
SHAPE_FROM_RES0 = "the engine takes every operand's shape from res0 (bm1684_defs.py reads A, B with res0's n, c, h, w)"
SIGN_FROM_OPERANDS = ("mul", "mac", "add", "sub", "max", "min", "divide")
RESULT_SIGN = ("the result's sign follows the operands' (seed 003's op types; module docstring); opd2 is not "
               "an operand of this eu")
OLD_SIGN = ("the sign of an old integer res0 value: only mac reads one (opt_res_add with an integer result is "
            "refused, an fp32 one has no sign); the vendor leaves it 1 on the mul and add around its int8 macs")
OPD_NUM = "the operand count follows from the eu type (the vendor writes 2 on its one-operand md_sfu commands)"


def _width(m, f, slot):
    return WIDTH[c.prec_name(m, f, slot)]


def _bounded(m, f, kind):
    n, ch, h, w = c.res0_shape(f)
    local, addr = m.space("local"), f["res0_addr"]
    start = (addr if addr < local.size else max(0, addr - local.base)) // m.lmem.lane_size % m.npu_num
    per_lane = n * -(-(start + ch) // m.npu_num) * h * w
    if per_lane * _width(m, f, "res0") // 8 > m.lmem.lane_size:
        raise SimulationError(f"{kind}: res0 must hold at most {m.lmem.lane_size} bytes per NPU, not "
                              f"{per_lane} elements of {_width(m, f, 'res0')} bits (shape {(n, ch, h, w)})")


def _mode(m, f, kind, slots):
    precs = {c.prec_name(m, f, s) for s in ("res0", *slots)}
    if precs == {"fp32"}:
        return "fp32"
    if precs <= {"int8", "int16", "int32"}:
        return "int"
    raise SimulationError(f"{kind}: precisions must be all fp32 or all int8/int16/int32, not "
                          f"{', '.join(f'{s} {c.prec_name(m, f, s)}' for s in ('res0', *slots))}")


def _ints(m, f, slot, exact=False):
    read = operand(m, f, slot, c.dtype_of(m, f, slot))
    if exact:
        return lambda: np.asarray(read(), np.int64).astype(object)
    return lambda: np.asarray(read(), np.int64)


def _floats(m, f, slot):
    read = operand(m, f, slot, FP32)
    return read


def res_dtype(m, f):
    """The integer DType of a shift's res0: its precision, signed iff opt_opd2_sign (the result
    wraps: its sign changes no bit)."""
    return dtypes.integer(_width(m, f, "res0"), bool(f["opt_opd2_sign"]))


def arith_dtype(m, f, kind):
    """The integer DType of res0 of mul/add/sub/max/min/mac: its precision, signed iff opd0 or
    opd1 is, or the eu is sub (module docstring)."""
    signed = f["opt_opd0_sign"] or f["opt_opd1_sign"] or kind.endswith(".sub")
    return dtypes.integer(_width(m, f, "res0"), bool(signed))


def _round_shift(x, n):
    return x if n == 0 else (x + (1 << (n - 1))) >> n


def _wide(m, f, slots):
    return any(_width(m, f, s) == 32 for s in ("res0", *slots))


def _int_shift_type(f, kind, shifts):
    """The integer forms that round a right shift (add/sub/mul/mac with opt_right_shift > 0) read
    opt_shift_typ: 0 (the OKKernel lowering's value) and 1 (the vendor's value on every ar command
    that right-shifts, face_detection int8) are both executed as the seed's rounding
    (x + 2^(r-1)) >> r; any other value is refused."""
    if shifts and f["opt_shift_typ"] not in (0, 1):
        raise SimulationError(f"{kind}: field opt_shift_typ = {f['opt_shift_typ']} is not modelled for integer "
                              f"rounding right shifts (only 0 and 1)")


# -- the eu table: build(m, f, kind) -> (slots read, compute() -> (dtype, values)) ---------------------
def _no_fp32_shift(f, kind, *fields):
    """fp32 arithmetic shifts nothing: a non-zero shift field is refused, not ignored."""
    for name in fields:
        if f[name]:
            raise SimulationError(f"{kind}: field {name} = {f[name]} is not modelled in fp32 mode")


def _binary(fp, integer, rounded):
    def build(m, f, kind):
        if _mode(m, f, kind, ("opd0", "opd1")) == "fp32":
            _no_fp32_shift(f, kind, "opt_right_shift")
            a, b = _floats(m, f, "opd0"), _floats(m, f, "opd1")

            def run():             # (numpy's floating-point errors are off while a buffer runs)
                return FP32, np.asarray(fp(a(), b()), np.float32)

            def fill(out):          # the same fp32 operation, its result written in place
                fp(a(), b(), out=out)
            run.into = (FP32, fill)
            return run
        if integer is None:
            raise SimulationError(f"{kind}: integer precisions are not supported (fp32 only)")
        shift = f["opt_right_shift"] if rounded else 0
        _int_shift_type(f, kind, shift)
        if not rounded and f["opt_right_shift"]:
            raise SimulationError(f"{kind}: field opt_right_shift = {f['opt_right_shift']} is not modelled "
                                  f"(max/min do not round)")
        wide = _wide(m, f, ("opd0", "opd1"))
        a, b = _ints(m, f, "opd0", wide), _ints(m, f, "opd1", wide)
        dt = arith_dtype(m, f, kind)

        def run():
            exact = _round_shift(integer(a(), b()), shift)
            return dt, np.clip(exact, dt.min, dt.max).astype(dt.numpy)
        return run
    return build


def _mac(m, f, kind):
    shape = c.res0_shape(f)
    if _mode(m, f, kind, ("opd0", "opd1")) == "fp32":
        _no_fp32_shift(f, kind, "opt_right_shift", "opt_left_shift")
        old, a, b = c.reader(m, f, "res0", FP32, shape), _floats(m, f, "opd0"), _floats(m, f, "opd1")

        def run():
            with np.errstate(all="ignore"):
                return FP32, np.asarray(old() + np.asarray(a() * b(), np.float32), np.float32)
        return run
    shift, left = f["opt_right_shift"], f["opt_left_shift"]
    _int_shift_type(f, kind, shift)
    old_dt = dtypes.integer(_width(m, f, "res0"), bool(f["opt_res_add_sign"]))
    wide = _wide(m, f, ("opd0", "opd1"))
    old = c.reader(m, f, "res0", old_dt, shape)
    a, b = _ints(m, f, "opd0", wide), _ints(m, f, "opd1", wide)
    dt = arith_dtype(m, f, kind)

    def run():
        o = np.asarray(old(), np.int64)
        o = o.astype(object) if wide else o
        exact = _round_shift((o << left) + a() * b(), shift)
        return dt, np.clip(exact, dt.min, dt.max).astype(dt.numpy)
    return run


def _shift(m, f, kind):
    if _mode(m, f, kind, ("opd0", "opd1")) != "int":
        raise SimulationError(f"{kind}: precisions must be int8/int16/int32")
    if f["opt_shift_typ"] not in (0, 1) or (f["opt_shift_typ"] == 1 and not f["opt_opd0_sign"]):
        raise SimulationError(f"{kind}: field opt_shift_typ = {f['opt_shift_typ']} is not modelled with opt_opd0_sign "
                              f"= {f['opt_opd0_sign']} (0: arithmetic for a signed opd0, logical for an unsigned one; "
                              f"1: arithmetic, with a signed opd0 only)")
    if f["opt_right_shift"]:
        raise SimulationError(f"{kind}: field opt_right_shift = {f['opt_right_shift']} is not modelled for shifts")
    x_of, amount_of = _ints(m, f, "opd0"), _ints(m, f, "opd1")
    width = _width(m, f, "opd0")
    dt = res_dtype(m, f)

    def run():
        x, amount = np.broadcast_arrays(x_of(), amount_of())
        left = (x.astype(np.uint64) & np.uint64((1 << width) - 1)) << np.clip(amount, 0, 32).astype(np.uint64)
        right = x >> np.clip(-amount, 0, 63)
        out = np.where(amount > 0, (left & np.uint64(0xFFFFFFFF)).astype(np.int64), right)
        return dt, numerics.wrap(out, dt)
    return run


def _bits(m, f, slot):
    read = operand(m, f, slot, dtypes.integer(_width(m, f, slot), False))
    return lambda: np.asarray(read(), np.int64)


def _logic(op):
    def build(m, f, kind):
        a, b = _bits(m, f, "opd0"), _bits(m, f, "opd1")
        dt = dtypes.integer(_width(m, f, "res0"), False)
        return lambda: (dt, numerics.wrap(op(a(), b()), dt))
    return build


def _select(cond):
    def build(m, f, kind):
        if _mode(m, f, kind, ("opd0", "opd1")) == "fp32":
            a, b = _floats(m, f, "opd0"), _floats(m, f, "opd1")
        else:
            a, b = _ints(m, f, "opd0"), _ints(m, f, "opd1")
        dt = dtypes.integer(_width(m, f, "res0"), False)
        value = operand(m, f, "opd2", dt)
        zero = np.zeros((), dt.numpy)
        return lambda: (dt, np.where(cond(a(), b()), value(), zero).astype(dt.numpy))
    return build


def _copy(m, f, kind):
    dt = c.dtype_of(m, f, "opd0")
    if _width(m, f, "res0") != dt.bits:
        raise SimulationError(f"{kind}: opt_res0_prec ({c.prec_name(m, f, 'res0')}) must have opd0's width "
                              f"({c.prec_name(m, f, 'opd0')}): a copy does not convert")
    a = operand(m, f, "opd0", dt)
    run = lambda: (dt, a())       # noqa: E731
    run.into = (dt, None)
    return run


def _unary_fp32(kind_fn):
    def build(m, f, kind):
        if c.prec_name(m, f, "opd0") != "fp32":
            raise SimulationError(f"{kind}: opt_opd0_prec must be fp32, not {c.prec_name(m, f, 'opd0')}")
        return kind_fn(m, f, kind, _floats(m, f, "opd0"))
    return build


def _fp32_result(m, f, kind):
    if c.prec_name(m, f, "res0") != "fp32":
        raise SimulationError(f"{kind}: opt_res0_prec must be fp32, not {c.prec_name(m, f, 'res0')}")


def _to_int(m, f, kind, a):
    dt = c.dtype_of(m, f, "res0", signed=bool(f["opt_opd2_sign"]))     # signed iff opt_opd2_sign
    if dt.is_float:
        raise SimulationError(f"{kind}: opt_res0_prec must be an integer precision, not {c.prec_name(m, f, 'res0')}")
    run = lambda: (dt, numerics.to_int(a(), dt))       # noqa: E731
    run.into = (dt, None)
    return run


def _rsqrt(m, f, kind, a):
    _fp32_result(m, f, kind)
    return lambda: (FP32, sfu.rsqrt(a()))


def _taylor(m, f, kind, a):
    _fp32_result(m, f, kind)
    coeff = sfu.taylor_coefficients(m, f)

    def run():
        return FP32, sfu.horner(coeff(), a())
    run.into = (FP32, lambda out: sfu.horner(coeff(), a(), out))
    return run


def _fp32_normalize(m, f, kind, a):
    _fp32_result(m, f, kind)
    return lambda: (FP32, sfu.mantissa(a()))


def _int_normalize(m, f, kind, a):
    if c.prec_name(m, f, "res0") != "int32":
        raise SimulationError(f"{kind}: opt_res0_prec must be int32, not {c.prec_name(m, f, 'res0')}")
    return lambda: (dtypes.INT32, sfu.biased_exponent(a()))


def _square(op):
    def build(m, f, kind):
        if _mode(m, f, kind, ("opd0", "opd1")) != "fp32":
            raise SimulationError(f"{kind}: precisions must be fp32 (integer squares are not modelled)")
        a, b = _floats(m, f, "opd0"), _floats(m, f, "opd1")

        def run():
            with np.errstate(all="ignore"):
                s = np.asarray(op(a(), b()), np.float32)
                return FP32, np.asarray(s * s, np.float32)
        return run
    return build


def _no_add_tree(m, f, kind):
    raise SimulationError(f"{kind}: tsk_eu_typ add_tree has no public element-wise meaning on this class "
                          f"(md_sum is the add-tree reduction)")


BINARY = ("opd0", "opd1")
# eu name -> (build, operand slots read)
EU = {
    "mul": (_binary(np.multiply, np.multiply, True), BINARY),
    "add": (_binary(np.add, np.add, True), BINARY),
    "sub": (_binary(np.subtract, np.subtract, True), BINARY),
    "max": (_binary(np.maximum, np.maximum, False), BINARY),
    "min": (_binary(np.minimum, np.minimum, False), BINARY),
    "divide": (_binary(np.divide, None, False), BINARY),
    "mac": (_mac, BINARY),
    "shift": (_shift, BINARY),
    "and": (_logic(np.bitwise_and), BINARY),
    "or": (_logic(np.bitwise_or), BINARY),
    "xor": (_logic(np.bitwise_xor), BINARY),
    "select_gt": (_select(np.greater), ("opd0", "opd1", "opd2")),
    "select_eq": (_select(np.equal), ("opd0", "opd1", "opd2")),
    "copy": (_copy, ("opd0",)),
    "fp32_to_int": (_unary_fp32(_to_int), ("opd0",)),
    "rsqrt": (_unary_fp32(_rsqrt), ("opd0",)),
    "taylor": (_unary_fp32(_taylor), ("opd0",)),
    "fp32_normalize": (_unary_fp32(_fp32_normalize), ("opd0",)),
    "int_normalize": (_unary_fp32(_int_normalize), ("opd0",)),
    "square_sum": (_square(np.add), BINARY),
    "square_diff": (_square(np.subtract), BINARY),
    "add_tree": (_no_add_tree, ()),
}
# eu types whose integer form shifts or rounds (read opt_right_shift / opt_left_shift)
SHIFTS = {"mul": ("opt_right_shift",), "add": ("opt_right_shift",), "sub": ("opt_right_shift",),
          "mac": ("opt_right_shift", "opt_left_shift", "opt_res_add_sign"), "max": ("opt_right_shift",),
          "min": ("opt_right_shift",), "shift": ("opt_right_shift",)}


def static_view(m, f, slot, shape):
    """The layout.View of local tensor operand `slot` as `operand` (or, for res0, the storer)
    reads it; None for a constant or fields the run refuses with its own message."""
    if f.get(f"opt_{slot}_const"):
        return None
    try:
        dtype = c.dtype_of(m, f, slot, signed=False)
        addr = c.local_offset(m, f, slot)
        if slot != "res0" and f.get(f"{slot}_neq1"):
            shape = (1,) + tuple(shape[1:])
        if slot != "res0" and c.member(m, f"short_{slot}_str", f[f"short_{slot}_str"]) == "offset":
            shape = (1, shape[1], 1, 1)
            stride = chip_layout.compact_stride(shape, m.npu_num, addr // m.lmem.lane_size)
        else:
            stride = c.strides(m, f, slot, shape, dtype, addr)
    except SimulationError:
        return None
    pack = c.pack_of(dtype)
    return chip_layout.View(f"{slot}_addr", addr, tuple(shape), tuple(stride),
                            c.WORD_BYTES if pack > 1 else dtype.itemsize, pack)


def check_overlap(chip, kind, f):
    """The static refusal of issue 32.14 (before any run): res0 is each tensor operand of the
    eu exactly (in place: the same address and layout) or apart from it, per NPU
    (layout.partial_overlap, the API checks' rule). The shared bm1684 models never overlap
    partly (the survey of the report of issue 32.14), and the run computes as if the operands
    were apart, which a partial overlap is not on the chip. taylor's opd1 is its table."""
    eu = kind.split(".")[1]
    if eu not in EU or eu == "add_tree":
        return
    slots = [s for s in EU[eu][1] if not (eu == "taylor" and s == "opd1")]
    m = c.Static(chip)
    shape = c.res0_shape(f)
    try:
        _bounded(m, f, kind)
    except SimulationError:
        return          # the run refuses it first, with its own message
    if min(shape) < 1:
        return
    res = static_view(m, f, "res0", shape)
    if res is None:
        return
    for slot in slots:
        src = static_view(m, f, slot, shape)
        hit = None if src is None else chip_layout.partial_overlap(res, src, m.lmem.lane_size, m.npu_num)
        if hit is not None:
            lanes, lo, hi = hit
            raise refused_field(f"{kind}: res0_addr 0x{f['res0_addr']:x} and {slot}_addr 0x{f[slot + '_addr']:x} "
                                f"must name the same tensor (in place: the same address and layout) or tensors "
                                f"apart, not partly overlapping ones (on {chip_layout.lanes_text(lanes)} both use "
                                f"lane bytes [0x{lo:x}, 0x{hi:x}): the chip would read results as operands)",
                                "res0_addr", f["res0_addr"])


def _kind(kind, eu):
    build, slots = EU[eu]
    if eu == "add_tree":
        return refused(lambda m, f: _no_add_tree(m, f, kind))
    taylor = eu == "taylor"

    def runner(m, f):
        _bounded(m, f, kind)
        compute = build(m, f, kind)
        return c.storer(m, f, kind, compute, into=getattr(compute, "into", None))
    fn = planned(runner)
    reads = {"opt_res_add", "opt_relu", "tsk_lane_num", "opt_shift_typ", "opt_opd2_sign"}
    reads |= set(SHIFTS.get(eu, ()))
    if taylor:
        reads |= {"opd1_addr", "opd1_n"}
    unread = {s: NOT_READ for s in ("opd0", "opd1", "opd2", "opd3", "res1") if s not in slots}
    ignores = {"tsk_opd_num": OPD_NUM, **{f"{s}_{d}": SHAPE_FROM_RES0 for s in slots for d in "nchw"}}
    reads |= {f"res0_{d}" for d in "nchw"}
    if "opd1" in slots and not taylor:
        reads.add("opd1_neq1")
    if eu != "mac":
        ignores["opt_res_add_sign"] = OLD_SIGN
    if eu in SIGN_FROM_OPERANDS:
        reads.discard("opt_opd2_sign")
        ignores["opt_opd2_sign"] = RESULT_SIGN
    if taylor:
        ignores.update({k: "the taylor table is opd1_addr / opd1_n only" for k in
                        ("opt_opd1_prec", "opt_opd1_sign", "opt_opd1_const", "short_opd1_str", "opd1_c", "opd1_h",
                         "opd1_w", "opd1_n_str", "opd1_c_str", "opd1_h_str", "opd1_w_str")})
        unread.pop("opd1")
    return contract(reads=reads, read_slots=("res0",) + tuple(s for s in slots if not taylor or s != "opd1"),
                    unread_slots=unread, ignores=ignores)(fn)


def _kinds():
    from bmk.sim.bm1684 import compare
    out = {}
    for cls, eus in (("arith", None), ("md_scalar", None), ("md_sfu", None)):
        for eu in EU_NAMES[cls]:
            kind = f"{cls}.{eu}"
            out[("tiu", kind)] = compare.kind(kind, eu) if eu in compare.EU else _kind(kind, eu)
    return out


ALL_EU = ("mul", "mac", "add", "sub", "max", "min", "shift", "and", "or", "xor", "select_gt", "select_eq",
          "divide", "taylor", "fp32_to_int", "int_normalize", "fp32_normalize", "rsqrt", "add_tree", "copy",
          "square_sum", "square_diff", "cmp", "select", "cmp_select")
EU_NAMES = {"arith": ALL_EU, "md_scalar": ALL_EU[:21], "md_sfu": ALL_EU}
KINDS = _kinds()
