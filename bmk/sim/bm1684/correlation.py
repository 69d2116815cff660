"""Semantics of the correlation TIU classes: cc_op (cc.*, conv correlation) and vc_op (vc.*,
vector correlation). Operands and shapes: bm1684_defs.py (tpu-mlir profile_helper,
CONV_CORRELATION and VECTOR_CORRELATION); every operand in the aligned layout there, the cc
output compact. fp32 (vc logic ops: any 32-bit precision, on the bits).

- cc.mul: out(i, o, y, x) = sum over (p, q) of in(i, y * sy + p, x * sx + q) * w(o, p, q): every
  input channel i (of res0_n, input (1, res0_n, opd0_h, opd0_w)) correlated with every kernel
  o (of res0_c, kernel (1, res0_c, opd1_h, opd1_w)), output (res0_n, res0_c, res0_h, res0_w);
  zero padding opd0_{up,dn,lf,rt}_pad, strides res_op_{y,x}_str. Sum exact (float64), rounded
  once. cc.mac: the old output + that. Assumption: the profiler gives the operands and shapes,
  not the formula; "correlation" with a kernel per output channel reads as this. A real run
  would check a 1-channel 3x3 input against a 2x2 kernel of ones (sums of 2x2 blocks).
  Other eu types on cc_op: SimulationError (no meaning in any source).
- vc.<op>: out(i, j) = L(i) op R(j), L the vector of L_col = (opd0_c - 1) * opd0_w + opd1_w
  elements in the matrix layout (1, opd0_c, 1, opd0_w), R the res0_c * res0_w elements of
  (1, res0_c, 1, res0_w), out (L_col, res0_c, 1, res0_w); op one of add, sub, mul, divide, max,
  min, and, or, xor (the profiler's list); other eu types: SimulationError.
opt_res_add (fp32), opt_relu (1 = no ReLU) and tsk_lane_num as elementwise.py.
"""
import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk.errors import SimulationError
from bmk.sim.bm1684 import common as c
from bmk.sim.bm1684.contract import contract, refused
from bmk.sim.semantics import planned

FP32 = dtypes.FP32
CC_EU = ("mul", "mac")
VC_FP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "divide": np.divide, "max": np.maximum,
         "min": np.minimum}
VC_BITS = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
EU_ALL = ("mul", "mac", "add", "sub", "max", "min", "shift", "and", "or", "xor", "select_gt", "select_eq",
          "divide", "taylor", "fp32_to_int", "int_normalize", "fp32_normalize", "rsqrt", "add_tree", "copy",
          "square_sum", "square_diff", "cmp", "select", "cmp_select")
FP32_SIGN = "fp32 has no sign mode"
UNREAD = "not an operand of this kind"


def _fp32(m, f, kind, *slots):
    for slot in slots:
        if c.prec_name(m, f, slot) != "fp32":
            raise SimulationError(f"{kind}: opt_{slot}_prec must be fp32, not {c.prec_name(m, f, slot)}")


def _refuse(kind, what):
    def fn(m, f):
        raise SimulationError(f"{kind}: field tsk_eu_typ = {f['tsk_eu_typ']} has no public meaning on {what}")
    return refused(fn)


def _cc(kind, accumulate):
    def build(m, f):
        _fp32(m, f, kind, "res0", "opd0", "opd1")
        ic, oc, oh, ow = c.res0_shape(f)
        ih, iw, kh, kw = f["opd0_h"], f["opd0_w"], f["opd1_h"], f["opd1_w"]
        sy, sx = f["res_op_y_str"], f["res_op_x_str"]
        up, dn, lf, rt = f["opd0_up_pad"], f["opd0_dn_pad"], f["opd0_lf_pad"], f["opd0_rt_pad"]
        if min(sy, sx, kh, kw) < 1 or (kh - 1) + (oh - 1) * sy + 1 > up + ih + dn or \
                (kw - 1) + (ow - 1) * sx + 1 > lf + iw + rt:
            raise SimulationError(f"{kind}: res0 ({oh}, {ow}) does not fit the padded input with kernel "
                                  f"({kh}, {kw}) and strides ({sy}, {sx})")
        if ic * oc * oh * ow * kh * kw > 1 << 31:
            raise SimulationError(f"{kind}: the command must take at most 2^31 multiply-adds to be simulated")
        x = c.reader(m, f, "opd0", FP32, (1, ic, ih, iw))
        w = c.reader(m, f, "opd1", FP32, (1, oc, kh, kw))
        out = (ic, oc, oh, ow)
        out_stride = chip_layout.compact_stride(out, m.npu_num, c.local_offset(m, f, "res0") // m.lmem.lane_size)

        def compute():
            xp = np.pad(np.asarray(x()[0], np.float64), ((0, 0), (up, dn), (lf, rt)))
            s = xp.strides
            win = np.lib.stride_tricks.as_strided(xp, (ic, oh, ow, kh, kw), (s[0], s[1] * sy, s[2] * sx, s[1], s[2]))
            acc = np.tensordot(win, np.asarray(w()[0], np.float64), axes=([3, 4], [1, 2]))   # (ic, oh, ow, oc)
            return FP32, acc.transpose(0, 3, 1, 2).astype(np.float32)
        g = {**f, "opt_res_add": 1} if accumulate else f
        store = c.storer(m, g, kind, compute, stride=out_stride)
        return store
    return contract(reads={"res0_n", "res0_c", "res0_h", "res0_w", "opd0_h", "opd0_w", "opd1_h", "opd1_w",
                           "res_op_y_str", "res_op_x_str", "opd0_up_pad", "opd0_dn_pad", "opd0_lf_pad",
                           "opd0_rt_pad", "opt_res_add", "opt_relu", "tsk_lane_num",
                           "res0_addr", "opt_res0_prec", "opd0_addr", "opt_opd0_prec", "opt_opd0_const",
                           "short_opd0_str", "opd0_n_str", "opd0_c_str", "opd0_h_str", "opd0_w_str",
                           "opd1_addr", "opt_opd1_prec", "opt_opd1_const", "short_opd1_str", "opd1_n_str",
                           "opd1_c_str", "opd1_h_str", "opd1_w_str"},
                    unread_slots={"opd2": UNREAD, "opd3": UNREAD, "res1": UNREAD},
                    ignores={"tsk_opd_num": "two operands, fixed by the kind", "opt_shift_typ": "fp32",
                             "opt_opd0_sign": FP32_SIGN, "opt_opd1_sign": FP32_SIGN, "opt_opd2_sign": FP32_SIGN,
                             "opd0_n": "the input is (1, res0_n, h, w)", "opd0_c": "the input channels are res0_n",
                             "opd1_n": "the kernel is (1, res0_c, kh, kw)", "opd1_c": "the kernels are res0_c",
                             "short_res0_str": "the output is compact (bm1684_defs.py)",
                             "res0_n_str": "the output is compact", "res0_c_str": "the output is compact",
                             "res0_h_str": "the output is compact", "res0_w_str": "the output is compact"})(
        planned(build))


def _vc(kind, eu):
    def build(m, f):
        lc, lw, last = f["opd0_c"], f["opd0_w"], f["opd1_w"]
        if not 1 <= last <= lw:
            raise SimulationError(f"{kind}: opd1_w (the left's last channel's columns) must be in [1, {lw}], not {last}")
        rc, rw = f["res0_c"], f["res0_w"]
        n = (lc - 1) * lw + last
        prec = c.prec_name(m, f, "res0")
        if eu in VC_FP:
            _fp32(m, f, kind, "res0")
            dt = FP32
        elif prec in ("fp32", "int32"):
            dt = dtypes.UINT32
        else:
            raise SimulationError(f"{kind}: opt_res0_prec must be 32-bit for a logic op, not {prec}")
        if n * rc * rw > m.lmem.size // 4:
            raise SimulationError(f"{kind}: the output ({n} x {rc * rw}) must fit local memory to be simulated")
        left = c.reader(m, f, "opd0", dt, (1, lc, 1, lw))
        right = c.reader(m, f, "opd1", dt, (1, rc, 1, rw))
        op = VC_FP.get(eu) or VC_BITS[eu]
        g = {**f, "res0_n": n}

        def compute():
            lv = np.asarray(left()).reshape(-1)[:n].reshape(n, 1, 1, 1)
            rv = np.asarray(right()).reshape(1, rc, 1, rw)
            with np.errstate(all="ignore"):
                return dt, np.asarray(op(lv, rv), dt.numpy)
        return c.storer(m, g, kind, compute)
    prec_note = "vc reads every operand in res0's precision (bm1684_defs.py: op_format = res0_prec)"
    return contract(reads={"res0_c", "res0_w", "opd0_c", "opd0_w", "opd1_w", "opt_res_add", "opt_relu",
                           "tsk_lane_num", "res0_addr", "opt_res0_prec", "short_res0_str", "res0_n_str",
                           "res0_c_str", "res0_h_str", "res0_w_str", "opd0_addr", "short_opd0_str", "opd0_n_str",
                           "opd0_c_str", "opd0_h_str", "opd0_w_str", "opd1_addr", "short_opd1_str",
                           "opd1_n_str", "opd1_c_str", "opd1_h_str", "opd1_w_str"},
                    unread_slots={"opd2": UNREAD, "opd3": UNREAD, "res1": UNREAD},
                    ignores={"tsk_opd_num": "two operands, fixed by the kind", "opt_shift_typ": "nothing is shifted",
                             "opt_opd0_prec": prec_note, "opt_opd1_prec": prec_note, "opt_opd0_sign": prec_note,
                             "opt_opd1_sign": prec_note, "opt_opd2_sign": prec_note,
                             "res0_n": "the rows are L_col (bm1684_defs.py)", "res0_h": "vectors have h = 1",
                             "opd0_n": "vectors are (1, C, 1, W)", "opd0_h": "vectors have h = 1",
                             "opd1_n": "vectors are (1, C, 1, W)", "opd1_c": "R has res0_c channels",
                             "opd1_h": "vectors have h = 1",
                             "opt_opd0_const": "vectors are tensors (bm1684_defs.py reads both)",
                             "opt_opd1_const": "vectors are tensors (bm1684_defs.py reads both)"})(planned(build))


def _kinds():
    out = {}
    for eu in EU_ALL:
        out[("tiu", f"cc.{eu}")] = _cc(f"cc.{eu}", eu == "mac") if eu in CC_EU else _refuse(f"cc.{eu}", "cc_op")
    for eu in EU_ALL[:21]:
        ok = eu in VC_FP or eu in VC_BITS
        out[("tiu", f"vc.{eu}")] = _vc(f"vc.{eu}", eu) if ok else _refuse(f"vc.{eu}", "vc_op")
    return out


KINDS = _kinds()
