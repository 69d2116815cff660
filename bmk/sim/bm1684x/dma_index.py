"""GDMA classes beyond plain tensors: matrix, CW transpose, masked select, nonzero, gather, scatter.

Sources: isa-facts bm1684x-lowering.md (cmd_type codes), tpu-mlir
python/debugger/target_1684x/opparam.py `DMA_matrix_t_converter` (its table of the local and
global sides' shapes and strides; the address halves: `dma_addr(src_start_addr_l8,
src_start_addr_h32)` = l8 * 2**32 + h32, which the spec's composed rows encode),
`DMA_cw_transpose_t_converter`, `DMA_masked_select_t_converter`, `DMA_nonzero_t_converter`
(the index base dst_nstride_base_i_), `dma_gather_base` (gather / scatter shapes, the
constant), tpu-mlir third_party/ppl/runtime/checker/src/atomic_gdma.c (the firmware checks),
target_1684x/cmodel.py `get_dma_matrix_data` (the local matrix layout).

  dma.matrix, dma.matrix.transpose  a matrix between a local and a non-local side. The
        non-local side is the (H, W) array (X_hsize, X_wsize) with row stride X_hstride; the
        local side holds the (H, W) matrix (transpose: (W, H)) with X_wsize columns per
        channel: element (r, j) at n = r, channel j // X_wsize, position j % X_wsize, strides
        (X_nstride, X_cstride, -, 1). transpose: dst = src transposed. The short class names
        each field after both sides (src_hstride_dst_hstride is the non-local side's row
        stride, dst_nstride_src_nstride / dst_cstride_src_cstride the local side's, and so on).
  dma.cw_transpose  dst (N, W, H, C) = src (N, C, H, W), w strides 1.
  dma.masked_select  the src elements (N, C, H, W, aligned when local, else contiguous) whose
        mask element (mask_data_format, the same shape) is non-zero, in NCHW order, written
        contiguously from dst; the rest of dst keeps its bytes (bmk's assumption; the count
        goes to no memory the simulator models).
  dma.nonzero  the NCHW flat indices of src's non-zero elements plus the base
        dst_nstride_base_i_, as index_data_format integers, contiguously from dst (same
        assumptions).
  dma.gather  dst[0, c, i, :] = src[0, c', idx[0, c'', i, 0], :] for i < dst_hsize (src_hsize
        when nchw_copy), c' = c when src has C channels else 0 (broadcast), c'' likewise for
        the index's index_csize channels; idx uint32 with strides (index_cstride,
        index_hstride); an index past src_hsize writes constant_value.
  dma.scatter  dst[0, c, idx[0, c'', i, 0], :] = src[0, c, i, :] for i < src_hsize; indices
        past dst_hsize are refused.
Lane masks, stride_enable and decompress_enable as gdma.py. dma.gather with stride_enable 0
takes the default layouts (gdma.py `default_strides`: aligned from the start NPU in local
memory, contiguous elsewhere) of src (1, C, src_hsize, W), the index (1, index_csize, rows, 1)
of uint32 and dst (1, C, rows, W), the stride fields unread: the TPU-Kernel's
tpu_gdma_h_gather_S2L / _L2S / _L2L (tpu_kernel.c of the public TPU1686 sources) emit the
gather with stride_enable false and no strides when none is given, and with any given fill in
tpu_aligned_stride (local output, param, index as DT_UINT32) and tpu_continuous_stride (global
ones) with stride_enable true. tdl_models' topformer_seg_motion gathers fp16 rows so (global
src and L2 SRAM indices to local memory).
"""
import numpy as np

from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.gdma import (_RAW, Side, address, default_strides, element_bytes, flag_check,
                                  fill_bits, lane_mask, shape, strides)


def _local(m, addr):
    return m.space_of(addr)[0].lane_bytes is not None


def _matrix_fields(m, f):
    """The long class's field names for each role, or the short class's combined ones."""
    if "src_hstride_dst_hstride" in f:
        src_local = _local(m, address(m, f, "src"))
        loc, glob = ("src", "dst") if src_local else ("dst", "src")
        get = {
            f"{glob}_hstride": f.get("src_hstride_dst_hstride", 0), f"{loc}_nstride": f.get("dst_nstride_src_nstride", 0),
            f"{loc}_cstride": f.get("dst_cstride_src_cstride", 0), f"{glob}_hsize": f.get("src_hsize_dst_hsize", 0),
            f"{glob}_wsize": f.get("src_wsize_dst_wsize", 0), f"{loc}_wsize": f.get("dst_wsize_src_wsize", 0),
        }
        return {**f, **get}
    return f


def _matrix(transpose):
    kind = "dma.matrix" + (".transpose" if transpose else "")

    def run(m, f):
        f = _matrix_fields(m, f)
        e = element_bytes(m, f)
        src_addr, dst_addr = address(m, f, "src"), address(m, f, "dst")
        src_local = _local(m, src_addr) and not f.get("fill_constant_en", 0)
        loc, glob = ("src", "dst") if src_local else ("dst", "src")
        h, w = f.get(f"{glob}_hsize", 0), f.get(f"{glob}_wsize", 0)
        rows, cols = (w, h) if transpose else (h, w)
        per = f.get(f"{loc}_wsize", 0)
        if min(h, w, per) < 1:
            raise SimulationError(f"the matrix sizes and the local columns per channel must be >= 1, not "
                                  f"({h}, {w}), {per}")
        lshape = (rows, -(-cols // per), 1, per)
        lstrides = (f.get(f"{loc}_nstride", 0), f.get(f"{loc}_cstride", 0), 0, 1)
        gshape, gstrides = (1, 1, h, w), (0, 0, f.get(f"{glob}_hstride", 0), 1)
        mask = lane_mask(m, f)
        if src_local:
            parts = _matrix_parts(m, "src", src_addr, rows, cols, per, lstrides, e)
            mat = np.concatenate([side.read().reshape(rows, -1) for _, side in parts], axis=1)
            if transpose:
                mat = mat.T
            Side(m, "dst", dst_addr, gshape, gstrides, e).write(mat.reshape(gshape))
            return
        if f.get("fill_constant_en", 0):
            mat = np.full((h, w), fill_bits(f, e), _RAW[e])
        else:
            mat = Side(m, "src", src_addr, gshape, gstrides, e).read().reshape(h, w)
        if transpose:
            mat = mat.T
        for columns, side in _matrix_parts(m, "dst", dst_addr, rows, cols, per, lstrides, e, mask):
            side.write(mat[:, columns].reshape(side.shape))
    run.__name__ = kind.replace(".", "_")
    return run


def _matrix_parts(m, what, addr, rows, cols, per, lstrides, e, mask=None):
    """The local side of a (rows, cols) matrix as Sides over exactly its elements, each with its
    columns: its whole channels, then the part of the next one the matrix fills (the rest of
    that channel is no operand: not read, not written)."""
    whole, rest = divmod(cols, per)
    parts = []
    if whole:
        parts.append((slice(0, whole * per), Side(m, what, addr, (rows, whole, 1, per), lstrides, e, mask)))
    if rest:
        sp, off = m.space_of(addr)
        l0, in_lane = divmod(off, sp.lane_bytes)
        group, lane = divmod(l0 + whole, m.npu_num)
        at = sp.base + lane * sp.lane_bytes + in_lane + group * lstrides[1] * e
        parts.append((slice(whole * per, cols), Side(m, what, at, (rows, 1, 1, rest), lstrides, e, mask)))
    return parts


def cw_transpose(m, f):
    e = element_bytes(m, f)
    n, c, h, w = src_shape = shape(f, "src")
    dst = Side(m, "dst", address(m, f, "dst"), (n, w, h, c), strides(f, "dst", True), e, lane_mask(m, f))
    if f.get("fill_constant_en", 0):
        dst.write(np.full(dst.shape, fill_bits(f, e), _RAW[e]))
        return
    data = Side(m, "src", address(m, f, "src"), src_shape, strides(f, "src", True), e).read()
    dst.write(data.transpose(0, 3, 2, 1))


def _dense(m, f, side, shp, e):
    """A side read whole: aligned when local, contiguous otherwise."""
    n, c, h, w = shp
    addr = address(m, f, side)
    if _local(m, addr):
        eu = m.chip.param("eu_bytes") // e
        cs = -(-(h * w) // eu) * eu
        l0 = (addr - m.chip.space("local").base) // m.lmem.lane_size % m.npu_num
        st = (-(-(l0 + c) // m.npu_num) * cs, cs, w, 1)
    else:
        st = (c * h * w, h * w, w, 1)
    return Side(m, side, addr, shp, st, e)


def _linear_out(m, f, values, e):
    """values written contiguously from dst (a linear run of elements)."""
    if values.size == 0:
        return
    dst = Side(m, "dst", address(m, f, "dst"), (1, 1, 1, values.size), (0, 0, 0, 1), e, lane_mask(m, f))
    dst.write(values.reshape(dst.shape))


def _sized(m):
    """The run's access log learns that this instruction writes as many elements as it selects."""
    if m.log is not None:
        m.log.sized = True


def masked_select(m, f):
    _sized(m)
    e = element_bytes(m, f)
    shp = shape(f, "src")
    data = _dense(m, f, "src", shp, e).read().reshape(-1)
    me = element_bytes(m, f, "mask_data_format")
    mask = _dense(m, f, "mask", shp, me).read().reshape(-1) != 0
    _linear_out(m, f, data[mask], e)


def nonzero(m, f):
    _sized(m)
    e = element_bytes(m, f)
    shp = shape(f, "src")
    data = _dense(m, f, "src", shp, e).read().reshape(-1)
    ie = element_bytes(m, f, "index_data_format")
    idx = np.flatnonzero(data != 0).astype(np.int64) + f.get("dst_nstride_base_i_", 0)
    _linear_out(m, f, (idx & ((1 << (8 * ie)) - 1)).astype(_RAW[ie]), ie)


def _gather_shapes(f):
    c, h, w = (f.get(f"src_{d}size", 0) for d in "chw")
    return c, h, w, f.get("index_csize", 0)


def _index(m, f, ic, ih, implicit=False):
    a = address(m, f, "index")
    # CV184X's DMA_gather has no index_hstride: its index rows are contiguous (1 element apart)
    st = default_strides(m, a, (1, ic, ih, 1), 4) if implicit else \
        (0, f.get("index_cstride", 0), f.get("index_hstride", 1), 1)
    return Side(m, "index", a, (1, ic, ih, 1), st, 4).read().astype(np.int64)


def _side_strides(m, f, side, addr, shp, e, implicit):
    if implicit:
        return default_strides(m, addr, shp, e)
    return (0, f.get(f"{side}_cstride", 0), f.get(f"{side}_hstride", 0), 1)


def gather(m, f):
    e = element_bytes(m, f)
    c, h, w, ic = _gather_shapes(f)
    dh = h if f.get("nchw_copy", 0) else f.get("dst_hsize", 0)
    oc = max(c, ic)
    if min(c, h, w, ic, dh) < 1 or c not in (1, oc) or ic not in (1, oc):
        raise SimulationError(f"src_c/h/wsize, index_csize and the rows must be >= 1, src and index "
                              f"channels 1 or the same, not src ({c}, {h}, {w}), index_csize {ic}, rows {dh}")
    implicit = not f.get("stride_enable", 1)
    src_addr, dst_addr = address(m, f, "src"), address(m, f, "dst")
    src = Side(m, "src", src_addr, (1, c, h, w), _side_strides(m, f, "src", src_addr, (1, c, h, w), e, implicit),
               e).read()
    idx = np.broadcast_to(_index(m, f, ic, dh, implicit)[0, :, :, 0], (oc, dh))
    bad = (idx < 0) | (idx >= h)
    rows = np.take_along_axis(np.broadcast_to(src[0], (oc, h, w)), np.where(bad, 0, idx)[:, :, None], axis=1)
    rows = np.where(bad[:, :, None], np.asarray(fill_bits(f, e)).astype(rows.dtype), rows)
    dst = Side(m, "dst", dst_addr, (1, oc, dh, w), _side_strides(m, f, "dst", dst_addr, (1, oc, dh, w), e, implicit),
               e, lane_mask(m, f))
    dst.write(rows[None])


def scatter(m, f):
    e = element_bytes(m, f)
    c, h, w, ic = _gather_shapes(f)
    dh = f.get("dst_hsize", 0)
    if min(c, h, w, ic, dh) < 1 or ic not in (1, c):
        raise SimulationError(f"sizes must be >= 1 and index_csize 1 or src_csize, not src ({c}, {h}, "
                              f"{w}), index_csize {ic}, dst_hsize {dh}")
    src = Side(m, "src", address(m, f, "src"), (1, c, h, w), (0, f.get("src_cstride", 0), f.get("src_hstride", 0),
                                                              1), e).read()
    idx = np.broadcast_to(_index(m, f, ic, h)[0, :, :, 0], (c, h))
    if idx.size and (idx.min() < 0 or idx.max() >= dh):
        raise SimulationError(f"indices must be below dst_hsize {dh}, not {int(idx.max())}")
    dst = Side(m, "dst", address(m, f, "dst"), (1, c, dh, w), (0, f.get("dst_cstride", 0), f.get("dst_hstride", 0),
                                                               1), e, lane_mask(m, f))
    out = dst.read()
    cc = np.broadcast_to(np.arange(c)[:, None], (c, h))
    out[0, cc, idx, :] = src[0]
    dst.write(out)


KINDS = {"dma.matrix": _matrix(False), "dma.matrix.transpose": _matrix(True), "dma.cw_transpose": cw_transpose,
         "dma.masked_select": masked_select, "dma.nonzero": nonzero, "dma.gather": gather, "dma.scatter": scatter}

# nchw_copy (take dst's shape from src) changes nothing where the kind derives dst's shape
_FLAGS = {"stride_enable", "decompress_enable", "src_data_format", "localmem_mask_l32", "localmem_mask_h32",
          "nchw_copy"}
_SIDES = {f"{s}_start_addr_{p}" for s in ("src", "dst") for p in ("l32", "h8", "h13", "h32", "l8")}
_NCHW = {f"{s}_{d}{k}" for s in ("src", "dst") for d in "nchw" for k in ("size", "stride")}
FIELDS = {
    "dma.matrix": F.names(_FLAGS, _SIDES, _NCHW, {"fill_constant_en", "constant_value",
                                                 "src_hstride_dst_hstride", "dst_nstride_src_nstride",
                                                 "dst_cstride_src_cstride", "src_hsize_dst_hsize",
                                                 "src_wsize_dst_wsize", "dst_nsize_src_nsize",
                                                 "dst_csize_src_csize", "dst_wsize_src_wsize"}),
    "dma.cw_transpose": F.names(_FLAGS, _SIDES, _NCHW, {"fill_constant_en", "constant_value"}),
    "dma.masked_select": F.names(_FLAGS, _SIDES, {f"src_{d}size" for d in "nchw"},
                                 {"mask_data_format", "mask_start_addr_l32", "mask_start_addr_h8",
                                  "mask_start_addr_h13"}),
    "dma.nonzero": F.names(_FLAGS, _SIDES, {f"src_{d}size" for d in "nchw"},
                           {"index_data_format", "dst_nstride_base_i_"}),
    "dma.gather": F.names(_FLAGS, _SIDES, {"src_csize", "src_hsize", "src_wsize", "src_cstride", "src_hstride",
                                           "dst_hsize", "dst_cstride", "dst_hstride", "index_csize", "index_hsize",
                                           "index_cstride", "index_hstride", "index_start_addr_l32",
                                           "index_start_addr_h8", "index_start_addr_h13", "constant_value",
                                           "nchw_copy"}),
}
FIELDS["dma.gather"] = FIELDS["dma.gather"] | {"dst_csize", "dst_wsize"}
FIELDS["dma.matrix.transpose"] = FIELDS["dma.matrix"]
FIELDS["dma.scatter"] = FIELDS["dma.gather"] - {"constant_value", "nchw_copy"}
CHECKS = {k: flag_check(k, k not in ("dma.masked_select", "dma.nonzero")) for k in KINDS}


def _check_gather(chip, f, flags=CHECKS["dma.gather"]):
    """dst_csize, dst_wsize: 0 (BM1684X, BM1688: dst takes the channels of src or the index and
    src's width) or those values (CV184X's streams set them)."""
    flags(chip, f)
    for field, what, value in (("dst_csize", "the channels gathered", max(f.get("src_csize", 0),
                                                                         f.get("index_csize", 0))),
                               ("dst_wsize", "src_wsize", f.get("src_wsize", 0))):
        if f.get(field, 0) not in (0, value):
            raise F.refuse("dma.gather", field, f[field], f"must be 0 or {what} ({value})")


CHECKS["dma.gather"] = _check_gather
