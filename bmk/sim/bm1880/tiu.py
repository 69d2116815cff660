"""TIU instruction semantics, one function per instruction kind of specs/bm1880/tiu.toml.

Each function takes the machine `m` (memories, access log, chip parameters) and the decoded
field dict `f`, and computes what the seed's chapter 4 says the lowered API call computes
(field usage: isa-facts/bm1880-notes.md "Per-op encoding"). All work is numpy-vectorized.
"""
import attrs
import numpy as np
from numpy.lib.stride_tricks import as_strided

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1880.common import (const8, const16, npu_local, operand, planes, read, relu, rshift,
                                   same_shape, write)


# -- element-wise (tsk_typ 3) ------------------------------------------------------------------
def _ab(m, f, dtype=np.int32):
    """res0 operand, opd0 values and opd1 values (tensor or constant) of an element-wise op."""
    res = operand(m, f, "res0")
    a_op = operand(m, f, "opd0")
    same_shape(res, a_op)
    a = read(m, a_op, dtype=dtype)
    if f["opt_opd1_const"]:
        b = const8(f) if f["opt_opd1_int8"] else const16(f)
    else:
        b_op = operand(m, f, "opd1")
        same_shape(res, b_op)
        b = read(m, b_op, dtype=dtype)
    return res, a, b


def _finish(m, f, res, v):
    """ReLU (opt_relu), rounding right shift (opt_right_shift), saturating store."""
    if f["opt_relu"]:
        v = relu(f, v)
    if f["opt_right_shift"]:
        v = rshift(v, f["opt_right_shift"], f["opt_shift_typ"])
    write(m, res, v)


def mul(m, f):
    """res = (a * b) >> rshift (seed 4.19, 4.20)."""
    res, a, b = _ab(m, f)
    _finish(m, f, res, a * b)


def mac(m, f):
    """res = (a * b + (res << lshift)) >> rshift; res read as 16 bits (seed 4.21, 4.22)."""
    res, a, b = _ab(m, f, np.int64)
    v = a * b
    if f["opt_res_add"]:
        v = v + (read(m, res, int8=False, dtype=np.int64) << f["opt_left_shift"])
    _finish(m, f, res, v)


def add(m, f):
    """res = a + b, a and b 16-bit (seed 4.23, 4.24)."""
    res, a, b = _ab(m, f, None)
    _finish(m, f, res, np.add(a, b, dtype=np.int32))


def sub(m, f):
    """res = a - b (seed 4.25)."""
    res, a, b = _ab(m, f, None)
    _finish(m, f, res, np.subtract(a, b, dtype=np.int32))


def max_(m, f):
    """res = max(a, b); relu is max(a, 0) (seed 4.26, 4.40)."""
    res, a, b = _ab(m, f)
    write(m, res, np.maximum(a, b))


def min_(m, f):
    """res = min(a, b) (seed 4.27, 4.28)."""
    res, a, b = _ab(m, f)
    write(m, res, np.minimum(a, b))


def arith_shift(m, f):
    """res = a >> bits per element (bits in [-16, 16]; negative shifts left) (seed 4.29)."""
    res, a, bits = _ab(m, f, np.int64)
    right = np.maximum(bits, 0)
    rounded = (a + ((1 << right) >> 1)) >> right
    write(m, res, np.where(bits >= 0, rounded, a << np.maximum(-bits, 0)))


def _logic(m, f, op):
    res = operand(m, f, "res0")
    a_op, b_op = operand(m, f, "opd0"), operand(m, f, "opd1")
    same_shape(res, a_op)
    same_shape(res, b_op)
    a_planes, b_planes, r_planes = planes(m, a_op), planes(m, b_op), planes(m, res, write=True)
    if not len(a_planes) == len(b_planes) == len(r_planes):
        raise SimulationError("opt_res0_int8, opt_opd0_int8 and opt_opd1_int8 must be equal for a logic "
                              f"op, not {res.int8}, {a_op.int8}, {b_op.int8}")
    for a, b, r in zip(a_planes, b_planes, r_planes):
        r.write(op(a.read(), b.read()))


def and_(m, f):
    """res = a & b, 8- or 16-bit (seed 4.30, 4.31)."""
    _logic(m, f, np.bitwise_and)


def or_(m, f):
    """res = a | b (seed 4.32, 4.33)."""
    _logic(m, f, np.bitwise_or)


def xor(m, f):
    """res = a ^ b (seed 4.34, 4.35)."""
    _logic(m, f, np.bitwise_xor)


def copy(m, f):
    """res = a, bytes as they are; strides from both operands (seed 4.36, 4.37)."""
    res, a_op = operand(m, f, "res0"), operand(m, f, "opd0")
    same_shape(res, a_op)
    src, dst = planes(m, a_op), planes(m, res, write=True)
    for s, d in zip(src, dst):
        d.write(s.read().copy())


def mdsum(m, f):
    """res[c] = sum over n, h, w of a[n, c, h, w] (seed 4.38). opd0 is read through its stride
    fields, which the v2 encoder writes for mdsum (leaving short_opd0_str at its reset value)."""
    a_op = operand(m, f, "opd0", mode="explicit")
    res = operand(m, f, "res0")
    if res.shape != (1, a_op.shape[1], 1, 1):
        raise SimulationError(f"res0 shape must be (1, opd0_c, 1, 1) = {(1, a_op.shape[1], 1, 1)}, "
                              f"not {res.shape}")
    v = read(m, a_op, dtype=np.int64).sum(axis=(0, 2, 3), keepdims=True)
    _finish(m, f, res, v)


def lut(m, f):
    """res = table[lane of idx][idx // 16][idx % 16], table (1, npu_num, 16, 16) (seed 4.39)."""
    res, idx_op = operand(m, f, "res0"), operand(m, f, "opd0")
    same_shape(res, idx_op)
    table = operand(m, f, "opd1")
    if table.shape != (1, m.npu_num, 16, 16):
        raise SimulationError(f"opd1 (table) shape must be (1, {m.npu_num}, 16, 16), not {table.shape}")
    m.lmem.tensor("opd1", table.addr, table.shape, table.strides, m.log)   # checks and logs the table
    idx = read(m, idx_op, int8=True, signed=False, dtype=None)
    lane = m.lmem.lanes_of(idx_op.addr, idx_op.shape[1])                      # lane of each channel
    t_l0, t_off = divmod(table.addr, m.lmem.lane_size)
    t_ch = t_l0 + lane                                                         # table channel c_t = lane
    t_base = (t_ch % m.npu_num) * m.lmem.lane_size + t_off + (t_ch // m.npu_num) * table.strides[1]
    k = np.arange(256)
    rows = m.lmem.data[t_base[:, None] + (k // 16) * table.strides[2] + (k % 16) * table.strides[3]]  # (C, 256)
    flat = idx + (np.arange(len(t_base)) * 256)[None, :, None, None]          # each channel's own row
    write(m, res, rows.reshape(-1)[flat], int8=True, signed=False)


# -- convolution, depthwise, pooling (tsk_typ 0, 1) -------------------------------------------
def _ins_val(f):
    v = f["opd0_ins_val"] & 0xFF
    return v - 256 if f["opt_opd0_sign"] and v >= 128 else v


def _padded(f, x, fill):
    """ifmap after zero (ins_val) insertion and padding (seed 4.41)."""
    n, c, h, w = x.shape
    sy, sx = f["conv_opd0_y_ins0"] + 1, f["conv_opd0_x_ins0"] + 1
    hi = (h - 1) * sy + 1 + f["conv_opd0_y_ins0_last"]
    wi = (w - 1) * sx + 1 + f["conv_opd0_x_ins0_last"]
    pt, pb, pl, pr = (f["conv_opd0_up_pad"], f["conv_opd0_dn_pad"], f["conv_opd0_lf_pad"],
                      f["conv_opd0_rt_pad"])
    p = np.full((n, c, pt + hi + pb, pl + wi + pr), fill, x.dtype)
    p[:, :, pt:pt + (h - 1) * sy + 1:sy, pl:pl + (w - 1) * sx + 1:sx] = x
    return p


def _windows(f, p, kh, kw, ho, wo):
    """(N, C, Ho, Wo, kh, kw) strided view of the padded input (stride, dilation)."""
    sy, sx = f["conv_op_y_str"], f["conv_op_x_str"]
    if sy < 1 or sx < 1:
        raise SimulationError(f"conv_op_y_str and conv_op_x_str must be >= 1, not {sy!r}, {sx!r}")
    dy, dx = f["conv_opd1_y_ins0"] + 1, f["conv_opd1_x_ins0"] + 1
    need_h, need_w = (ho - 1) * sy + (kh - 1) * dy + 1, (wo - 1) * sx + (kw - 1) * dx + 1
    if need_h > p.shape[2] or need_w > p.shape[3]:
        raise SimulationError(f"res0 (h, w) must fit the padded, inserted input {p.shape[2:]} with kernel "
                              f"{(kh, kw)}, stride {(sy, sx)}, dilation {(dy, dx)}, not {(ho, wo)}")
    s = p.strides
    return as_strided(p, (p.shape[0], p.shape[1], ho, wo, kh, kw),
                      (s[0], s[1], s[2] * sy, s[3] * sx, s[2] * dy, s[3] * dx), writeable=False)


def _bias(m, f, cout, shape_c=None):
    """(1, C, 1, 1) 16-bit bias from opd2 when tsk_opd_num is 3, else 0."""
    if f["tsk_opd_num"] != 3:
        return 0
    op = operand(m, f, "opd2")
    if op.shape != (1, cout, 1, 1):
        raise SimulationError(f"opd2 (bias) shape must be {(1, cout, 1, 1)}, not {op.shape}")
    return read(m, op, dtype=np.int64)


def conv(m, f):
    """ofmap = conv(ifmap, weight) + bias, relu, >> rshift (seed 4.41); weight and bias on the
    output channels' NPUs (common.npu_local)."""
    f = npu_local(m, f)
    res, acc = conv_acc(m, f)
    _finish(m, f, res, acc + _bias(m, f, res.shape[1]))


def conv_acc(m, f):
    """(res0 operand, int64 conv(ifmap, weight)): the sums before bias, relu and shift (seed 4.41);
    the weight on the output channels' NPUs (common.npu_local)."""
    f = npu_local(m, f, ("opd1",))
    x_op, w_op, res = operand(m, f, "opd0"), operand(m, f, "opd1"), operand(m, f, "res0")
    n, cin, _, _ = x_op.shape
    wcin, cout, kh, kw = w_op.shape
    if wcin != cin or cout != res.shape[1] or res.shape[0] != n:
        raise SimulationError(f"opd1 (weight) shape (Cin, Cout, kh, kw) must be ({cin}, {res.shape[1]}, kh, kw) "
                              f"and res0_n must be {n}, not {w_op.shape} and {res.shape[0]}")
    x, wt, fill = read(m, x_op, dtype=None), read(m, w_op, dtype=None), _ins_val(f)
    # One matrix product over (kh, kw, Cin), the order the weight has in lmem (seed 4.41), so
    # the weight goes to BLAS transposed, without a copy; every partial sum is an integer that
    # the float type holds exactly (numerics.exact_sum_type), whatever the order of summation.
    work = numerics.exact_sum_type((x, np.array([fill])), wt, kh * kw * cin)
    x, wt = x.astype(work), wt.astype(work)
    win = _windows(f, _padded(f, x, fill), kh, kw, res.shape[2], res.shape[3])
    ho, wo = res.shape[2], res.shape[3]
    cols = win.transpose(0, 2, 3, 4, 5, 1).reshape(n * ho * wo, kh * kw * cin)
    acc = cols @ wt.transpose(1, 2, 3, 0).reshape(cout, kh * kw * cin).T
    acc = acc.reshape(n, ho, wo, cout).transpose(0, 3, 1, 2).astype(np.int64)
    return res, acc


def depthwise(m, f):
    """Per-channel conv with weight (1, C, kh, kw), bias, >> rshift (seed 4.43)."""
    res, acc = depthwise_acc(m, f)
    _finish(m, f, res, acc + _bias(m, f, res.shape[1]))


def depthwise_acc(m, f):
    """(res0 operand, int64 per-channel sums before bias, relu and shift) of a depthwise conv (seed 4.43)."""
    x_op, w_op, res = operand(m, f, "opd0"), operand(m, f, "opd1"), operand(m, f, "res0")
    n, c, _, _ = x_op.shape
    _, wc, kh, kw = w_op.shape
    if wc != c or res.shape[:2] != (n, c):
        raise SimulationError(f"opd1 and res0 channels must equal opd0_c {c} and res0_n opd0_n {n}, "
                              f"not {wc}, {res.shape[:2]}")
    x = read(m, x_op, dtype=np.int64)
    wt = read(m, w_op, dtype=np.int64)[0]
    win = _windows(f, _padded(f, x, _ins_val(f)), kh, kw, res.shape[2], res.shape[3])
    acc = np.zeros(res.shape, np.int64)
    for ky in range(kh):
        for kx in range(kw):
            acc += win[..., ky, kx] * wt[None, :, ky, kx, None, None]
    return res, acc


def _pool_windows(m, f):
    x_op, res = operand(m, f, "opd0"), operand(m, f, "res0")
    if res.shape[:2] != x_op.shape[:2]:
        raise SimulationError(f"res0 (n, c) must equal opd0 (n, c) {x_op.shape[:2]}, not {res.shape[:2]}")
    x = read(m, x_op, dtype=np.int64)
    kh, kw = f["opd1_h"], f["opd1_w"]
    return res, _windows(f, _padded(f, x, _ins_val(f)), kh, kw, res.shape[2], res.shape[3])


def max_pool(m, f):
    """ofmap = max over each kh x kw window; padding takes opd0_ins_val (seed 4.44)."""
    res, win = _pool_windows(m, f)
    write(m, res, win.max(axis=(4, 5)))


def avg_pool(m, f):
    """ofmap = (window sum * avg_pooling_const) >> rshift (seed 4.45)."""
    res, win = _pool_windows(m, f)
    if not f["opt_opd1_const"]:
        raise SimulationError(f"opt_opd1_const must be 1 for avg_pool, not {f['opt_opd1_const']!r}")
    _finish(m, f, res, win.sum(axis=(4, 5)) * const8(f))


# -- matrix (tsk_typ 2) -----------------------------------------------------------------------
def matrix_acc(m, f):
    """(res0 operand, int64 (R, C'*W) left @ right): the sums before bias, RA, relu and shift (seed 4.46)."""
    res = operand(m, f, "res0")
    r, cr, h, w = res.shape
    if h != 1:
        raise SimulationError(f"res0_h must be 1 for a matrix (lmem layout (R, C', 1, W), seed 2.3), not {h}")
    k = f["opd1_n"]
    left = operand(m, f, "opd0")
    if left.shape[0] != r:
        raise SimulationError(f"opd0_n must equal res0_n {r}, not {left.shape[0]}")
    right = operand(m, f, "opd1", shape=(k, f["opd1_c"], 1, w))
    if f["opd1_c"] != cr:
        raise SimulationError(f"opd1_c must equal res0_c {cr}, not {f['opd1_c']}")
    lv = read(m, left, dtype=np.float64).reshape(r, -1)
    if lv.shape[1] < k:
        raise SimulationError(f"opd1_n (K) must be <= the left matrix width {lv.shape[1]}, not {k}")
    rv = read(m, right, dtype=np.float64).reshape(k, -1)
    return res, (lv[:, :k] @ rv).astype(np.int64)


def matrix_bias(m, f, res):
    """The matrix bias operand opd2, (1, C', 1, W) with C'*W = res0's; its 8-bit planes (2 for
    bm1880's 16-bit bias) are one row, strides[0], apart (seed 4.46)."""
    _, cr, _, w = res.shape
    bias = operand(m, f, "opd2")
    if bias.shape[1] * bias.shape[3] != cr * w or bias.shape[0] != 1:
        raise SimulationError(f"opd2 (bias) must be (1, C', 1, W) with C'*W = {cr * w}, not {bias.shape}")
    return bias


def matrix_mac(m, f):
    """res = left @ right + bias, then RA (res << lshift added) or relu, >> rshift (seed 4.46).

    A matrix (R, Cm) is the lmem tensor (R, C', 1, W). A 16-bit matrix is its low rows then its
    high rows (the (2R, Cm) res and (2, Cm) bias of the seed): planes one block of rows apart.
    """
    res, acc = matrix_acc(m, f)
    r = res.shape[0]
    if f["tsk_opd_num"] == 3:
        bias = matrix_bias(m, f, res)
        bias = attrs.evolve(bias, b_str=bias.strides[0], int8=False)
        acc = acc + read(m, bias, dtype=np.int64).reshape(1, -1)
    out = attrs.evolve(res, b_str=r * res.strides[0])
    if f["opt_res_add"]:
        acc = acc + (read(m, out, int8=False, dtype=np.int64).reshape(r, -1) << f["opt_left_shift"])
    v = rshift(relu(f, acc), f["opt_right_shift"], f["opt_shift_typ"])
    write(m, out, v.reshape(res.shape))


KINDS = {"mul": mul, "mac": mac, "add": add, "sub": sub, "max": max_, "min": min_, "arith_shift": arith_shift,
         "and": and_, "or": or_, "xor": xor, "copy": copy, "mdsum": mdsum, "lut": lut, "conv": conv,
         "depthwise": depthwise, "max_pool": max_pool, "avg_pool": avg_pool, "matrix_mac": matrix_mac}
