"""CV18xx bf16 TIU operations (opd_typ 1).

Facts (sophgo/cvikernel src/cv181x): an operation whose tensors are CVK_FMT_BF16 sets opd_typ 1
(tiu_mul.c: `reg.opd_typ = bf16_enable`); a tensor's strides are the cvk_tl_t strides, in bytes
(a bf16 element is 2 bytes: tl_default_stride gives w 2, h 2W, c align_up(2HW, eu_num) when
eu-aligned, cvkcv181x.c); a constant operand holds its bf16 bits in opd1_addr (tiu_mul.c:
`reg.opd1_addr = bf16_enable ? p->b_const.val : ...`). Values are bf16 bit patterns (the high
half of an fp32); bmk computes each operation in float32 and rounds the result to bf16 to nearest
even (bmk.numerics.fp32_to_bf16), the rounding the vendor's bf16 conversion helpers use
(cvikernel include/cvikernel/cvk_fp_convert.h). Signs, shifts and int8 segments do not apply.
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.layout import align_up, ceil_div
from bmk.sim.bm1880 import tiu
from bmk.sim.bm1880.common import npu_local

_BF16 = np.dtype("<u2")


def strides(m, f, name, shape):
    """Element strides (n, c, h, w) of bf16 operand `name` by its short_X_str layout."""
    mode = m.chip.member("tiu", f"short_{name}_str", f[f"short_{name}_str"])
    n, c, h, w = shape
    if mode == "explicit":
        st = tuple(f[f"{name}_{d}_str"] for d in "nchw")
    elif mode == "aligned":
        cs = align_up(2 * h * w, m.eu_num)
        st = (cs * ceil_div(c, m.npu_num), cs, 2 * w, 2)
    elif mode == "bias":
        st = (2 * h * w * ceil_div(c, m.npu_num), 2 * h * w, 2 * w, 2)
    elif mode == "weight":                  # conv weight (Cin, Cout, kh, kw) stored (1, Cout, kh*kw, Cin)
        st = (2, 2 * n * h * w, 2 * n * w, 2 * n)
    else:
        raise SimulationError(f"short_{name}_str must be explicit, aligned, weight or bias for a bf16 operand, "
                              f"not {mode!r}")
    odd = [s for s in st if s % 2]
    if odd or f[f"{name}_addr"] % 2:
        raise SimulationError(f"{name}: a bf16 operand's address and strides must be even (2-byte elements), "
                              f"not address {f[f'{name}_addr']} strides {st}")
    return tuple(s // 2 for s in st)


def shape(f, name):
    return tuple(f[f"{name}_{d}"] for d in "nchw")


def view(m, f, name, shp=None, write=False):
    """The TensorView of bf16 operand `name` (uint16 bit patterns)."""
    shp = shape(f, name) if shp is None else shp
    return m.lmem.tensor(name, f[f"{name}_addr"], shp, strides(m, f, name, shp), m.log, write, _BF16)


def read(m, f, name, shp=None):
    """float32 values of bf16 operand `name`."""
    return numerics.bf16_to_fp32(np.asarray(view(m, f, name, shp).read(), np.uint16))


def write(m, f, name, values, shp=None):
    """Round float values to bf16 (nearest even) and store them in operand `name`."""
    bits = numerics.fp32_to_bf16(np.asarray(values, np.float32))
    view(m, f, name, shp, write=True).write(bits)


def const(f, name="opd1"):
    """A bf16 constant: its bits in X_addr."""
    return numerics.bf16_to_fp32(np.array([f[f"{name}_addr"] & 0xFFFF], np.uint16))[0]


def _same(f, a, b):
    if shape(f, a) != shape(f, b):
        raise SimulationError(f"{b} shape must equal {a} shape {shape(f, a)}, not {shape(f, b)}")


def _ab(m, f):
    _same(f, "res0", "opd0")
    a = read(m, f, "opd0")
    if f["opt_opd1_const"]:
        return a, const(f)
    _same(f, "res0", "opd1")
    return a, read(m, f, "opd1")


def _relu(f, v):
    return np.maximum(v, np.float32(0)) if f["opt_relu"] else v


def _eltwise(op):
    def run(m, f):
        a, b = _ab(m, f)
        write(m, f, "res0", _relu(f, op(a, b)))
    return run


def mac(m, f):
    """cvikernel tiu_mac (bf16): res = a * b + res (opt_res_add), relu."""
    a, b = _ab(m, f)
    v = a * b
    if f["opt_res_add"]:
        v = v + read(m, f, "res0")
    write(m, f, "res0", _relu(f, v))


def copy(m, f):
    """cvikernel tiu_copy (bf16): res = a, 2-byte elements."""
    _same(f, "res0", "opd0")
    view(m, f, "res0", write=True).write(view(m, f, "opd0").read())


def _value(bits):
    return numerics.bf16_to_fp32(np.array([bits & 0xFFFF], np.uint16))[0]


def _pool(m, f):
    """(res0 shape, (N, C, Ho, Wo, kh, kw) windows) of a bf16 pooling; the padding and inserted
    values are opd0_ins_val's bf16 (cvikernel tiu_max_pooling.c: `reg.opd0_ins_val = p->ins_fp`)."""
    res, x = shape(f, "res0"), read(m, f, "opd0")
    if res[:2] != x.shape[:2]:
        raise SimulationError(f"res0 (n, c) must equal opd0 (n, c) {x.shape[:2]}, not {res[:2]}")
    p = tiu._padded(f, x, _value(f["opd0_ins_val"]))
    return res, tiu._windows(f, p, f["opd1_h"], f["opd1_w"], res[2], res[3])


def max_pool(m, f):
    """cvikernel tiu_max_pooling (bf16): the maximum of each window."""
    _, win = _pool(m, f)
    write(m, f, "res0", win.max(axis=(4, 5)))


def min_pool(m, f):
    """cvikernel tiu_min_pooling (bf16): the minimum of each window."""
    _, win = _pool(m, f)
    write(m, f, "res0", win.min(axis=(4, 5)))


def ge(m, f):
    """cvikernel tiu_ge (bf16): 1.0 where a >= b, else 0.0 (kinds.py: bmk's reading)."""
    a, b = _ab(m, f)
    write(m, f, "res0", (a >= b).astype(np.float32))


def avg_pool(m, f):
    """cvikernel tiu_average_pooling (bf16): window sum times the bf16 constant in opd1_addr
    (the encoder stores avg_pooling_const / (kh * kw) there)."""
    if not f["opt_opd1_const"]:
        raise SimulationError(f"opt_opd1_const must be 1 for avg_pool, not {f['opt_opd1_const']!r}")
    _, win = _pool(m, f)
    write(m, f, "res0", win.astype(np.float32).sum(axis=(4, 5), dtype=np.float32) * const(f))


def lut(m, f):
    """cvikernel tiu_lookup_table (bf16, opd_typ 1): the table (1, npu_num, 32, 8) holds 256 bf16
    values per lane; res = table[lane of the channel][index], the index the low byte of each 2-byte
    opd0 element (cvkcv181x.c cvkcv181x_tiu_bf16_lookup_interp_table: an int8 index spread into
    2-byte slots (`dst.stride.h * 2`), or a bf16's exponent index from mv_lut_idx (tdma.py), or a bf16
    itself for its mantissa table, "reshape, 16->16", then read as a bf16 tensor; the shared
    hand-gesture model spreads its int8 indices with an int8 tiu.copy of w stride 2)."""
    res = shape(f, "res0")
    if shape(f, "opd0") != res:
        raise SimulationError(f"opd0 shape must equal res0 shape {res}, not {shape(f, 'opd0')}")
    if shape(f, "opd1") != (1, m.npu_num, 32, 8):
        raise SimulationError(f"opd1 (table) shape must be (1, {m.npu_num}, 32, 8), not {shape(f, 'opd1')}")
    idx = np.asarray(view(m, f, "opd0").read(), np.int64) & 0xFF
    view(m, f, "opd1")                                                     # checks and logs the table
    lane = m.lmem.lanes_of(f["opd0_addr"], res[1])
    t_l0, t_off = divmod(f["opd1_addr"], m.lmem.lane_size)
    t_ch = t_l0 + lane
    t_cs = strides(m, f, "opd1", (1, m.npu_num, 32, 8))[1] * 2
    base = (t_ch % m.npu_num) * m.lmem.lane_size + t_off + (t_ch // m.npu_num) * t_cs
    flat = base[None, :, None, None] + 2 * idx
    bits = m.lmem.data[flat].astype(np.uint16) | (m.lmem.data[flat + 1].astype(np.uint16) << 8)
    view(m, f, "res0", write=True).write(bits)


def matrix_mac(m, f):
    """cvikernel tiu_matrix_multiplication (bf16): res = left @ right + bias, relu; the bias is the
    fp32 one split in two bf16 rows, high halves then low halves (tpu-mlir CV18xx Conv2D.cpp
    transposeBiasFp32), opt_res_add not allowed (tiu_matrix_multiplication.c)."""
    if f["opt_res_add"]:
        raise SimulationError(f"opt_res_add must be 0 for a bf16 matrix, not {f['opt_res_add']!r}")
    r, cr, h, w = shape(f, "res0")
    if h != 1:
        raise SimulationError(f"res0_h must be 1 for a matrix, not {h}")
    k = f["opd1_n"]
    left = read(m, f, "opd0").reshape(f["opd0_n"], -1)
    if left.shape[0] != r or left.shape[1] < k:
        raise SimulationError(f"opd0 must be {r} rows of at least {k} columns, not {left.shape}")
    right = read(m, f, "opd1", (k, f["opd1_c"], 1, w)).reshape(k, -1)
    acc = left[:, :k].astype(np.float32) @ right.astype(np.float32)
    if f["tsk_opd_num"] == 3:
        b = view(m, f, "opd2", (2, f["opd2_c"], 1, f["opd2_w"])).read()
        b = np.asarray(b, np.uint32).reshape(2, -1)
        acc = acc + ((b[0] << 16) | b[1]).view(np.float32)[None, :acc.shape[1]]
    write(m, f, "res0", _relu(f, acc).reshape(r, cr, 1, w))


# -- convolution and depthwise convolution (tsk_typ 0; tsk_typ 1, tsk_eu_typ 2) ---------------------
# Facts (sophgo/cvikernel, and the vendor's byte-exact hardware tests in sophgo/cviruntime):
# - encoders: src/cv181x/tiu_pt_convolution.c (the only bf16 conv encoder: tiu_convolution.c has no
#   opd_typ), tiu_pt_depthwise_convolution.c;
# - weight: include/cvikernel/cvikernel.h "Convolution weight shape": TIU conv opd1 (ic, oc, kh, kw),
#   held (1, oc, kh*kw, ic), short_opd1_str 1 ("weight"), 2-byte elements; depthwise (1, C, kh, kw)
#   eu-aligned (check_bf16_stride_type_0) or one bf16 constant in opd1_addr (weight_is_const);
# - bias: cvikernel.h "Bias (2, oc, 1, 1) ... bf16: fp32, n=0 [31:16], n=1 [15:0]": an fp32 per output
#   channel, its high halves at opd2_addr, its low halves opd2_b_str bytes on (tiu_pt_convolution.c:
#   tsk_opd_num 3, opt_opd2_seg 0, short_opd2_str 2, opd2_n 1, opd2_b_str = ceil(C / npu_num) * 2);
# - padding and inserted values: opd0_ins_val = ins_fp, "padding value for bf16" (cvikernel.h);
# - arithmetic: cviruntime test/181x/test_181x_bf16_conv.c conv_ref (and test_181x_bf16_depthwise.c
#   native_pooling_avg_bf16), compared byte for byte with the chip: products of bf16 values summed in
#   fp32 over (kh, kw, ic), then + the fp32 bias, then relu (relu_enable), then one rounding to bf16
#   (cvk_convert_fp32_bf16: to nearest even, bmk.numerics.fp32_to_bf16). bmk sums in float32 too, as
#   one BLAS product (conv) or tap by tap in (kh, kw) order (depthwise): the chip's summation order is
#   not documented, so a conv's sum may differ from the chip's in its last fp32 bit.
# - opt_right_shift: the depthwise test draws rshift_bits at random (`p.rshift_bits = rand() % 32`)
#   and its reference never reads it: executed as nothing for a bf16 depthwise. The conv test leaves it
#   0; what another value does to a bf16 conv is not documented: refused (`refusal`).
# - partial sums (ps32_md, tiu_pt_convolution.c: `reg.ps32_md = p->ps32_mode`, res0_b_str = n * the
#   ofmap's n stride; cviruntime test_181x_bf16_conv_ps32.c ps32_conv_ref, byte-exact on the chip): an
#   fp32 partial sum is two bf16-sized planes of res0's shape and strides, its high halves at res0_addr,
#   its low halves res0_b_str bytes on. ps32_md 2 (begin) stores the sum; 3 (intermediate) stores the
#   stored sum plus this one; 1 (end) adds the stored sum, then the bias and relu, and stores the bf16
#   result in the first plane. Modes 2 and 3 take no bias and no relu (cvikernel: CHECK(!relu_enable),
#   CHECK(!bias) when ps32_mode & 2): refused otherwise. A bf16 depthwise has no ps32 (its encoder
#   never sets ps32_md: refused by bm1880's rule).
# - signs: cvkcv181x.h tensor_is_signed: "CVK_FMT_BF16: does not matter" (opt_X_sign not read);
#   opt_shift_typ goes with a shift and opt_left_shift with opt_res_add, neither of which applies;
#   fp_round_typ, short_nchwstr_same and quan_m no encoder sets (their reset value 0): refused otherwise.
_BF16_SEG = {"opt_res0_seg": "int8", "opt_opd0_seg": "int8", "opt_opd1_seg": "int8"}


def refusal(chip, kind, f):
    """(field, rule) a bf16 (opd_typ 1) `kind` does not model, or None: the fields the encoders
    above never set otherwise, whose other values the vendor does not document."""
    if kind not in ("conv", "depthwise"):
        return None
    zero = ["opt_res_add", "fp_round_typ", "opt_opd0_const", "opt_opd2_const", "short_nchwstr_same", "quan_m"]
    if kind == "conv":
        zero += ["double_conv", "opt_right_shift", "opt_opd1_const"]
    for name in zero:
        if f[name]:
            return name, f"0 for a bf16 {kind} (cvikernel's bf16 encoders never set it; not modelled)"
    if f["tsk_opd_num"] not in (2, 3):
        return "tsk_opd_num", f"2 or 3 for a bf16 {kind} (3: with an fp32 bias)"
    if kind == "conv" and f["ps32_md"] & 2:
        if f["opt_relu"]:
            return "opt_relu", f"0 with ps32_md {f['ps32_md']} (an fp32 partial sum has no relu)"
        if f["tsk_opd_num"] != 2:
            return "tsk_opd_num", f"2 with ps32_md {f['ps32_md']} (an fp32 partial sum has no bias)"
    for name, seg in _BF16_SEG.items():
        if chip.member("tiu", name, f[name]) != seg:
            return name, f"{seg} for a bf16 {kind} (the encoder's value)"
    if f["tsk_opd_num"] == 3 and chip.member("tiu", "opt_opd2_seg", f["opt_opd2_seg"]) != "int16":
        return "opt_opd2_seg", f"int16 for a bf16 {kind} with a bias (an fp32 in two bf16 halves)"
    return None


def _fp32_bias(m, f, cout):
    """The (1, C, 1, 1) float32 bias of opd2 when tsk_opd_num is 3 (high halves at opd2_addr, low
    halves opd2_b_str bytes on), else 0."""
    if f["tsk_opd_num"] != 3:
        return np.float32(0)
    shp = shape(f, "opd2")
    if shp != (1, cout, 1, 1):
        raise SimulationError(f"opd2 (bias) shape must be {(1, cout, 1, 1)}, not {shp}")
    return _fp32(*_halves(m, f, "opd2", shp))


def _halves(m, f, name, shp, write=False):
    """(high, low) views of fp32 operand `name`: its high halves at X_addr, its low halves X_b_str
    bytes on, both in its bf16 layout."""
    if f[f"{name}_b_str"] % 2:
        raise SimulationError(f"{name}_b_str must be even (2-byte halves), not {f[f'{name}_b_str']}")
    high = view(m, f, name, shp, write)
    low = m.lmem.tensor(f"{name} low half", f[f"{name}_addr"] + f[f"{name}_b_str"], shp, strides(m, f, name, shp),
                        m.log, write, _BF16)
    return high, low


def _fp32(high, low):
    """The float32 values of (high, low) half views."""
    return ((np.asarray(high.read(), np.uint32) << 16) | np.asarray(low.read(), np.uint32)).view(np.float32)


def _conv_input(m, f, kh, kw):
    """(res0 shape, (N, C, Ho, Wo, kh, kw) float32 windows) of opd0, padded and inserted with
    opd0_ins_val's bf16, strided and dilated (bm1880 tiu._padded, _windows)."""
    res, x = shape(f, "res0"), read(m, f, "opd0")
    p = tiu._padded(f, x, _value(f["opd0_ins_val"]))
    return res, tiu._windows(f, p, kh, kw, res[2], res[3])


def conv(m, f):
    """cvikernel tiu_pt_convolution (bf16): res = sum over (kh, kw, ic) of x * w in fp32, + the fp32
    bias, relu, rounded to bf16; with ps32_md, fp32 partial sums kept in res0 (see the facts above);
    weight and bias on the output channels' NPUs (bm1880 common.npu_local)."""
    f = npu_local(m, f)
    cin, cout, kh, kw = shape(f, "opd1")
    n = f["opd0_n"]
    if cin != f["opd0_c"] or cout != f["res0_c"] or f["res0_n"] != n:
        raise SimulationError(f"opd1 (weight) shape (Cin, Cout, kh, kw) must be ({f['opd0_c']}, {f['res0_c']}, "
                              f"kh, kw) and res0_n must be {n}, not {shape(f, 'opd1')} and {f['res0_n']}")
    res, win = _conv_input(m, f, kh, kw)
    wt = read(m, f, "opd1")
    ho, wo = res[2], res[3]
    cols = win.transpose(0, 2, 3, 4, 5, 1).reshape(n * ho * wo, kh * kw * cin)
    acc = cols @ wt.transpose(2, 3, 0, 1).reshape(kh * kw * cin, cout)
    acc = acc.reshape(n, ho, wo, cout).transpose(0, 3, 1, 2)
    ps32 = f["ps32_md"]
    if ps32 in (1, 3):
        acc = acc + _partial(m, f)
    if ps32 & 2:
        _partial(m, f, acc)
        return
    write(m, f, "res0", _relu(f, acc + _fp32_bias(m, f, cout)))


def _partial(m, f, values=None):
    """Read (values None) or write the fp32 partial sums of res0: high halves at res0_addr, low halves
    res0_b_str bytes on, both in res0's shape and strides."""
    high, low = _halves(m, f, "res0", shape(f, "res0"), write=values is not None)
    if values is None:
        return _fp32(high, low)
    bits = np.ascontiguousarray(np.asarray(values, np.float32)).view(np.uint32)
    high.write((bits >> 16).astype(np.uint16))
    low.write((bits & 0xFFFF).astype(np.uint16))


def depthwise(m, f):
    """cvikernel tiu_pt_depthwise_convolution (bf16): per channel, sum over (kh, kw) of x * w in fp32
    (w the (1, C, kh, kw) opd1, or the bf16 constant in opd1_addr when opt_opd1_const), + the fp32
    bias, relu, rounded to bf16; opt_right_shift is not read (see the facts above)."""
    n, c = f["opd0_n"], f["opd0_c"]
    kh, kw = f["opd1_h"], f["opd1_w"]
    if (f["res0_n"], f["res0_c"]) != (n, c):
        raise SimulationError(f"res0 (n, c) must equal opd0 (n, c) {(n, c)}, not {(f['res0_n'], f['res0_c'])}")
    if shape(f, "opd1") != (1, c, kh, kw):          # a constant weight keeps the weight's shape fields
        raise SimulationError(f"opd1 (weight) shape must be {(1, c, kh, kw)}, not {shape(f, 'opd1')}")
    wt = np.full((c, kh, kw), const(f), np.float32) if f["opt_opd1_const"] else read(m, f, "opd1")[0]
    res, win = _conv_input(m, f, kh, kw)
    acc = np.zeros(res, np.float32)
    for ky in range(kh):
        for kx in range(kw):
            acc += win[..., ky, kx] * wt[None, :, ky, kx, None, None]
    write(m, f, "res0", _relu(f, acc + _fp32_bias(m, f, c)))


KINDS = {"mul": _eltwise(np.multiply), "add": _eltwise(np.add), "sub": _eltwise(np.subtract),
         "max": _eltwise(np.maximum), "min": _eltwise(np.minimum), "mac": mac, "copy": copy,
         "max_pool": max_pool, "avg_pool": avg_pool, "lut": lut, "matrix_mac": matrix_mac, "min_pool": min_pool,
         "ge": ge, "conv": conv, "depthwise": depthwise}
