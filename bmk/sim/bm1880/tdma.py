"""TDMA instruction semantics, one function per instruction kind of specs/bm1880/tdma.toml.

Fields (isa-facts/bm1880-notes.md "TDMA"): source (src_n, src_c, src_h, src_w) with strides
(src_n_stride, src_c_stride, src_h_stride, 1); destination (N, dst_c, dst_h, dst_w) with strides
(dst_n_stride, dst_c_stride, dst_h_stride, 1), N = src_n (src_c when N/C-transposing). The
data move in logical NCHW order, so source and destination shapes may differ as long as the
element counts agree (seed 4.12, 4.13). gmem addresses are stored as (addr & mask) + offset
(chip.toml [gmem_address]); lmem addresses are lane-qualified (lane * lmem_size + offset).
Matrices (sys_dtype 1): gmem side rows = src_n (or dst_c), cols = src_w (dst_w), row stride =
c stride; lmem side (R, C', 1, W), column k at (k // W, k % W); columns past the matrix keep
their bytes.
"""
import numpy as np

from bmk.errors import SimulationError
from bmk.sim.memory import GMEM, LMEM


def _addr(m, f, side, space):
    raw = m.formats["tdma"].compose(f"{side}_addr", f)
    if space == LMEM:
        return raw
    if raw < m.gmem_offset:
        raise SimulationError(f"{side}_addr must be a gmem address encoded as (addr & 0x{m.gmem_mask:x}) + "
                              f"0x{m.gmem_offset:x}, not 0x{raw:x}")
    regs = getattr(m, "base_regs", None)       # a CV18xx chip's region base registers (bmk/sim/cv181x)
    if regs is not None:
        return raw - m.gmem_offset + regs[f[f"{side}_base_reg_sel"]]
    return raw - m.gmem_offset


def _strides(m, f, side):
    return (f[f"{side}_n_stride"], m.formats["tdma"].compose(f"{side}_c_stride", f), f[f"{side}_h_stride"], 1)


def _view(m, f, side, space, shape, strides=None, write=False):
    mem = m.lmem if space == LMEM else m.gmem
    strides = _strides(m, f, side) if strides is None else strides
    return mem.tensor(f"{side} ({space})", _addr(m, f, side, space), shape, strides, m.log, write)


def _src_shape(f):
    return (f["src_n"], f["src_c"], f["src_h"], f["src_w"])


def _tensor_move(m, f, src_space, dst_space, transpose=False):
    src_shape = _src_shape(f)
    size = src_shape[0] * src_shape[1] * src_shape[2] * src_shape[3]
    chw = f["dst_c"] * f["dst_h"] * f["dst_w"]
    if chw == 0 or size % chw:      # checked before any data moves
        raise SimulationError(f"dst_c * dst_h * dst_w must divide the {size} source elements, "
                              f"not {f['dst_c']} * {f['dst_h']} * {f['dst_w']}")
    data = _view(m, f, "src", src_space, src_shape).read()
    if transpose:
        data = data.transpose(1, 0, 2, 3)
    shape = (size // chw, f["dst_c"], f["dst_h"], f["dst_w"])
    dst = _view(m, f, "dst", dst_space, shape, write=True)
    dst.write(np.ascontiguousarray(data).reshape(shape))


def _matrix_to_lmem(m, f, values, dst_view=None):
    """Store a (rows, cols) matrix into the lmem matrix layout (rows, dst_c, 1, dst_w);
    dst_view(shape): the destination's view (default bm1880's; CV18xx passes its bf16-aware one)."""
    rows, cols = values.shape
    if cols > f["dst_c"] * f["dst_w"]:
        raise SimulationError(f"dst_c * dst_w must hold the {cols} matrix columns, not "
                              f"{f['dst_c']} * {f['dst_w']}")
    shape = (rows, f["dst_c"], 1, f["dst_w"])
    dst = _view(m, f, "dst", LMEM, shape, write=True) if dst_view is None else dst_view(shape)
    buf = np.array(dst.read()).reshape(rows, -1)
    buf[:, :cols] = values
    dst.write(buf.reshape(dst.shape))


def _gmem_matrix(m, f, side, rows, cols, write=False):
    stride = m.formats["tdma"].compose(f"{side}_c_stride", f)
    return _view(m, f, side, GMEM, (rows, 1, 1, cols), (stride, 0, 0, 1), write)


def _lmem_matrix(m, f):
    src = _view(m, f, "src", LMEM, (f["src_n"], f["src_c"], 1, f["src_w"]))
    return src.read().reshape(f["src_n"], -1)


def load(m, f):
    """gmem -> lmem (seed 4.14, 4.16)."""
    if f["sys_dtype"]:
        _matrix_to_lmem(m, f, _gmem_matrix(m, f, "src", f["src_n"], f["src_w"]).read().reshape(f["src_n"], -1))
    else:
        _tensor_move(m, f, GMEM, LMEM)


def load_tp(m, f):
    """gmem -> lmem with N/C (tensor) or row/column (matrix) transposition (CTRL_TP)."""
    if f["sys_dtype"]:
        values = _gmem_matrix(m, f, "src", f["src_n"], f["src_w"]).read().reshape(f["src_n"], -1)
        _matrix_to_lmem(m, f, values.T)
    else:
        _tensor_move(m, f, GMEM, LMEM, transpose=True)


def store(m, f):
    """lmem -> gmem (seed 4.15, 4.17)."""
    if f["sys_dtype"]:
        values = _lmem_matrix(m, f)
        rows, cols = f["dst_c"], f["dst_w"]
        if rows != values.shape[0] or cols > values.shape[1]:
            raise SimulationError(f"dst_c, dst_w (gmem matrix rows, cols) must be {values.shape[0]}, <= "
                                  f"{values.shape[1]}, not {rows}, {cols}")
        _gmem_matrix(m, f, "dst", rows, cols, write=True).write(values[:, :cols].reshape(rows, 1, 1, cols))
    else:
        _tensor_move(m, f, LMEM, GMEM)


def store_tp(m, f):
    """lmem -> gmem with N/C (tensor) or row/column (matrix) transposition."""
    if f["sys_dtype"]:
        values = _lmem_matrix(m, f)
        rows, cols = f["dst_c"], f["dst_w"]
        if cols != values.shape[0] or rows > values.shape[1]:
            raise SimulationError(f"dst_c, dst_w (gmem matrix rows, cols) must be <= {values.shape[1]}, "
                                  f"{values.shape[0]}, not {rows}, {cols}")
        _gmem_matrix(m, f, "dst", rows, cols, write=True).write(
            np.ascontiguousarray(values[:, :rows].T).reshape(rows, 1, 1, cols))
    else:
        _tensor_move(m, f, LMEM, GMEM, transpose=True)


def fill(m, f):
    """lmem (src_n, dst_c, dst_h, dst_w) <- const_val (the zero fill of gdma_lrn_shift)."""
    shape = (f["src_n"], f["dst_c"], f["dst_h"], f["dst_w"])
    _view(m, f, "dst", LMEM, shape, write=True).write(np.uint8(f["const_val"] & 0xFF))


def copy_gmem(m, f):
    """gmem -> gmem (seed 4.12)."""
    _tensor_move(m, f, GMEM, GMEM)


def copy_gmem_tp(m, f):
    """gmem -> gmem with N/C transposition (seed 4.12, CTRL_TP): the source (N, C, H, W) is moved
    in the logical order of its transpose (C, N, H, W) into the destination's shape."""
    _tensor_move(m, f, GMEM, GMEM, transpose=True)


def copy_lmem(m, f):
    """lmem -> lmem (seed 4.13; also the shifted copy of gdma_lrn_shift, 4.18)."""
    _tensor_move(m, f, LMEM, LMEM)


KINDS = {"load": load, "load_tp": load_tp, "store": store, "store_tp": store_tp, "fill": fill,
         "copy_gmem": copy_gmem, "copy_gmem_tp": copy_gmem_tp, "copy_lmem": copy_lmem}
