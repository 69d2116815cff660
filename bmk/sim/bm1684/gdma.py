"""Semantics of the GDMA descriptor (class dma_tensor; special_func picks the kind): dma.tensor,
dma.trans, dma.constant, dma.lrn_shift, dma.format, dma.cw_trans, dma.winograd, dma.filter.
Fields: bm1684_defs.py (tpu-mlir profile_helper, get_gdma_mem_record, which reads every
special function's operands), the OKKernel lowering (bmk/bm1684/lowering/gdma.py) and the
vendor's streams.

Sides: src and dst at their device addresses (src_start_addr_l32/h8, dst_...): the local
window -> local memory (8- and 16-bit local sides 4N / 2N, strides in 32-bit words, when
chw_copy = 0, the OKKernel lowering's copies; with chw_copy = 1 plain, strides in elements:
derived from face_detection_int8_b4, whose 55 int8-format copies, all chw_copy 1 and n = 1, load
conv weights that its convs read as 4IC words with opd1_c_str = bytes / 4 (36 bytes a channel,
c_str 9) and 3x3 depthwise kernels 9 bytes a channel with the next tensor 12 bytes on; a 4N
load of them would spread each byte over a word and overlap the next tensor), any other
space of the memory map -> that space. `direction` (S2L, L2S, S2S, L2L) must agree with the
spaces the addresses are in (SimulationError otherwise). Shapes (n, c, h, w) src_*size and
dst_*size; chw_copy = 1: the destination takes the source's sizes (bm1684_defs.py; dma.trans
swaps n and c). Strides: stride_enable = 1 -> the *stride fields (elements); 0 -> the automatic
ones (bm1684_defs.py): continuous (C*H*W, H*W, W, 1) on a system side, 128-byte aligned on a
local one. Elements move bit for bit in src_data_format's width; dst_data_format is read only by
dma.format (bm1684_defs.py converts only for FORMAT). acc_write_enable = 1: dst = dst + src
(float32 only). common_mode = 1: a linear move of src_nstride elements (bm1684_defs.py).
localmem_mask: a local destination's channels on NPUs whose bit is 0 keep their old values
(with any other destination, a mask that is not all ones is refused).

- dma.tensor: dst(n, c, h, w) = src(n, c, h, w). Sizes that differ with the same element count: a
  reshaping copy, the k-th source element in (n, c, h, w) order to the k-th destination one.
  Derived from face_detection_int8_b4 (its only reshaping copies, no public source): its first
  conv is a stride-2 3x3 convolution run as a 1x3 one over 9 channels, src (3, 3, 81, 320) with
  strides (102400 + 640 padded channel, 320 = one row, 640 = two rows, 1) -> dst (1, 9, 81, 320):
  input channel n, kernel row c to channel 3n + c; only this order makes the network agree with
  its fp32 twin (tests/chips/bm1684/sim/test_int8_network.py).
  sys_mem_type = matrix: the system side is a rows x cols matrix ((1, 1, rows, cols) with the
  row stride as h stride, bm1684_defs.py's and the OKKernel lowering's, or (rows, 1, 1, cols)
  with it as n stride), the local side the Matrix
  Layout (rows, ceil(cols / w), 1, w) whose last channel holds the remaining columns.
- dma.trans: the NC transpose: dst(c, n, h, w) = src(n, c, h, w) (face_detection's trans:
  src (1, 2, 200, 1) -> dst (2, 1, 200, 1)).
- dma.constant: every destination element = the low bits of constant_value.
- dma.cw_trans: dst(n, w, h, c) = src(n, c, h, w), the C/W transpose; bm1684_defs.py reads
  it with n = h = 1, and only that is simulated.
- dma.lrn_shift: local to local, the channels shifted by lrn_shift_num: dst(c) = src(c - k)
  (lrn_shift_dir 0) or src(c + k) (dir 1), zeros where that channel does not exist.
  Assumption (the direction's sign is not public); a real run would check with k = 1 on
  channels [1, 2, 3].
- dma.format: each element converted from src_data_format to dst_data_format: to float exact
  (float16 through numpy's IEEE half), float to integer rounded to nearest, ties to even, and
  saturated (an assumption: the rounding is not public), integer to integer saturated.
- dma.winograd, dma.filter: SimulationError (the winograd transform and the filter's mask
  semantics are not public; bm1684_defs.py gives their operands only).
Ignored everywhere: the control and sync fields (contract.py).
"""
import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1684.common import WORD_BYTES
from bmk.sim.bm1684.contract import contract, refused
from bmk.sim.memory import AccessLog, TensorView
from bmk.sim.semantics import planned

# Bit-exact movers per data_format enum member (copies never convert).
_MOVER = {"float32": dtypes.UINT32, "int16": dtypes.UINT16, "uint8": dtypes.UINT8, "int8": dtypes.UINT8,
          "float16": dtypes.UINT16}
_VALUE = {"float32": np.dtype("<f4"), "int16": np.dtype("<i2"), "uint8": np.dtype("u1"), "int8": np.dtype("i1"),
          "float16": np.dtype("<f2")}
DIRECTIONS = {"S2L": (False, True), "L2S": (True, False), "S2S": (False, False), "L2L": (True, True)}


def _enum(m, field, value):
    name = m.chip.member("gdma", field, value)
    if name is None:
        raise SimulationError(f"{field} must be a member of its enum, not {value}")
    return name


def _format(m, f, side):
    return _enum(m, f"{side}_data_format", f[f"{side}_data_format"])


def _mover(m, f):
    return _MOVER[_format(m, f, "src")]


def _space(m, f, side):
    """(MemorySpace, offset) of a side's address; kept in the plan's memo while it is built
    (a function of the fields: every helper asks)."""
    memo = m.memo
    where = memo.get(side) if memo is not None else None
    if where is None:
        where = m.space_of(m.chip.compose("gdma", f"{side}_addr", f))
        if memo is not None:
            memo[side] = where
    return where


def _check_direction(m, f, sides=("src", "dst")):
    direction = _enum(m, "direction", f["direction"])
    want = dict(zip(("src", "dst"), DIRECTIONS[direction]))
    if any((_space(m, f, side)[0].name == "local") != want[side] for side in sides):
        where = ", ".join(f"{side} in {_space(m, f, side)[0].name}" for side in sides)
        raise SimulationError(f"field direction = {direction} does not match the addresses ({where})")
    return direction


def _pack(f, dtype):
    """Batches per 32-bit word of an 8/16-bit local side: 4 / 2 (4N / 2N, strides in words) with
    chw_copy 0 (the OKKernel lowering's copies); 1 (plain, strides in elements) with chw_copy 1
    (module docstring)."""
    if dtype.itemsize >= WORD_BYTES or f["chw_copy"]:
        return 1
    return WORD_BYTES // dtype.itemsize


def _auto_strides(m, f, side, shape, dtype):
    space, offset = _space(m, f, side)
    if space.name != "local":
        return chip_layout.continuous_stride(shape)
    unit = WORD_BYTES if _pack(f, dtype) > 1 else dtype.itemsize
    start = offset // m.lmem.lane_size
    return chip_layout.aligned_stride(shape, unit, m.chip.param("channel_align_bytes"), m.npu_num, start)


def _strides(m, f, side, shape, dtype):
    if f["stride_enable"]:
        return tuple(f[f"{side}_{d}stride"] for d in "nchw")
    return tuple(_auto_strides(m, f, side, shape, dtype))


def _sizes(f, side):
    return tuple(f[f"{side}_{d}size"] for d in "nchw")


def _view(m, f, side, dtype, shape, strides, write, first_channel=0):
    """(view, access entry) of one side; first_channel: start that many channels later (local)."""
    space, offset = _space(m, f, side)
    log = AccessLog()
    if space.name == "local":
        pack = _pack(f, dtype)
        if first_channel:
            lane = m.lmem.lane_size
            slot, npu = divmod(offset // lane + first_channel, m.npu_num)
            unit = WORD_BYTES if pack > 1 else dtype.itemsize
            offset = npu * lane + offset % lane + slot * strides[1] * unit
        view = m.lmem.tensor(side, offset, tuple(shape), tuple(strides), log, write, dtype.numpy, pack)
    else:
        view = m.memories[space.name].tensor(side, offset, tuple(shape), tuple(strides), log, write, dtype.numpy)
    return view, log.entries[0]


def _lane_keep(m, f, shape):
    """Per channel of a local destination: False where localmem_mask disables its NPU; None when
    every NPU is enabled (the vendor's value) or the destination is not local."""
    mask = m.chip.compose("gdma", "localmem_mask", f)
    space, offset = _space(m, f, "dst")
    if mask & m.chip.all_lanes == m.chip.all_lanes:
        return None
    if space.name != "local":
        raise SimulationError(f"field localmem_mask = {mask:#x} is modelled for a local destination only (what it "
                              f"does to a local source is not public), not a {space.name} one")
    lanes = (offset // m.lmem.lane_size + np.arange(shape[1])) % m.npu_num
    return np.array([(mask >> int(lane)) & 1 for lane in lanes], bool).reshape(1, shape[1], 1, 1)


def _same(values):
    return values


def _mover_run(m, f, kind, src_shape, dst_shape, src_dt, dst_dt, transform=_same):
    """run(m): read src, transform(values) -> dst values, accumulate, mask, write. A plain move
    (no transform, accumulation or mask) into one strided array is one numpy assignment, from
    the source's memory to the destination's (numpy copies first when the two overlap)."""
    src, src_entry = _view(m, f, "src", src_dt, src_shape, _strides(m, f, "src", src_shape, src_dt), False)
    dst_strides = _strides(m, f, "dst", dst_shape, dst_dt)
    dst, dst_entry = _view(m, f, "dst", dst_dt, dst_shape, dst_strides, True)
    keep = _lane_keep(m, f, dst_shape)
    acc = f["acc_write_enable"]
    if acc and _format(m, f, "dst" if kind == "dma.format" else "src") != "float32":
        raise SimulationError(f"{kind}: field acc_write_enable = 1 is modelled for float32 data only")
    old = _view(m, f, "dst", dst_dt, dst_shape, dst_strides, False) if (acc or keep is not None) else None
    direct = dst.array if transform is _same and old is None and isinstance(dst, TensorView) else None
    if direct is not None:
        def move(m):
            m.log.entries.append(src_entry)
            m.log.entries.append(dst_entry)
            direct[...] = src.read()
        return move

    def run(m):
        m.log.entries.append(src_entry)
        values = transform(np.array(src.read()))
        if old is not None:
            m.log.entries.append(old[1])
            before = np.array(old[0].read())
            if acc:
                with np.errstate(all="ignore"):
                    values = (before.view(np.float32) + values.view(np.float32)).view(dst_dt.numpy)
            if keep is not None:
                values = np.where(keep, values, before)
        m.log.entries.append(dst_entry)
        dst.write(values)
    return run


def _common_mode(m, f, kind):
    dt = _mover(m, f)
    count = f["src_nstride"]
    if count < 1:
        raise SimulationError(f"{kind}: common_mode moves src_nstride elements, which must be at least 1, not {count}")
    g = {**f, "stride_enable": 1, "src_nstride": count, "src_cstride": count, "src_hstride": count,
         "src_wstride": 1, "dst_nstride": count, "dst_cstride": count, "dst_hstride": count, "dst_wstride": 1}
    shape = (1, 1, 1, count)
    return _mover_run(m, g, kind, shape, shape, dt, dt)


def _build_tensor(m, f):
    _check_direction(m, f)
    if f["common_mode"]:
        return _common_mode(m, f, "dma.tensor")
    dt = _mover(m, f)
    src_shape = _sizes(f, "src")
    dst_shape = src_shape if f["chw_copy"] else _sizes(f, "dst")
    if _enum(m, "sys_mem_type", f["sys_mem_type"]) == "matrix":
        return _matrix(m, f, dt, src_shape, dst_shape)
    if src_shape != dst_shape:
        count = int(np.prod(src_shape))
        if int(np.prod(dst_shape)) != count:
            raise SimulationError(f"dma.tensor: dst sizes {dst_shape} must hold as many elements as src sizes "
                                  f"{src_shape} ({count})")
        return _mover_run(m, f, "dma.tensor", src_shape, dst_shape, dt, dt, lambda v: v.reshape(dst_shape))
    return _mover_run(m, f, "dma.tensor", src_shape, dst_shape, dt, dt)


def _matrix(m, f, dt, src_shape, dst_shape):
    direction = _enum(m, "direction", f["direction"])
    if direction not in ("S2L", "L2S"):
        raise SimulationError(f"direction of a matrix copy must be S2L or L2S, not {direction}")
    if f["acc_write_enable"] or not f["stride_enable"]:
        raise SimulationError("a matrix copy is modelled with stride_enable = 1 and acc_write_enable = 0 only")
    if _lane_keep(m, f, dst_shape) is not None:
        raise SimulationError("a matrix copy is modelled with every localmem_mask bit set only")
    local, system = (dst_shape, src_shape) if direction == "S2L" else (src_shape, dst_shape)
    sys_side = "src" if direction == "S2L" else "dst"
    loc_side = "dst" if direction == "S2L" else "src"
    n, c1, h, cols = system
    if c1 != 1 or (n != 1 and h != 1):
        raise SimulationError(f"matrix sizes must be system (rows, 1, 1, cols) or (1, 1, rows, cols), not {system}")
    rows = n * h
    sys_strides = _strides(m, f, sys_side, system, dt)
    row_stride = sys_strides[0] if n != 1 else sys_strides[2]
    if local[0] != rows or local[2] != 1 or not (local[1] - 1) * local[3] < cols <= local[1] * local[3]:
        raise SimulationError(f"matrix sizes must be system (rows, 1, 1, cols) and local (rows, DIV_UP(cols, w), 1, w), "
                              f"not system {system} and local {local}")
    mat_shape, mat_strides = (rows, 1, 1, cols), (row_stride, cols, cols, sys_strides[3])
    sys_view, sys_entry = _view(m, f, sys_side, dt, mat_shape, mat_strides, direction == "L2S")
    loc_strides = _strides(m, f, loc_side, local, dt)
    w = local[3]
    full, rest = divmod(cols, w)
    pieces = []
    if full:
        pieces.append((slice(0, full * w), _view(m, f, loc_side, dt, (rows, full, 1, w), loc_strides,
                                                   direction == "S2L"), (rows, full, 1, w)))
    if rest:
        pieces.append((slice(full * w, cols), _view(m, f, loc_side, dt, (rows, 1, 1, rest), loc_strides,
                                                      direction == "S2L", first_channel=full), (rows, 1, 1, rest)))

    def run(m):
        m.log.entries.append(sys_entry)
        if direction == "S2L":
            mat = np.array(sys_view.read()).reshape(rows, cols)
            for cols_of, (view, entry), shape in pieces:
                m.log.entries.append(entry)
                view.write(mat[:, cols_of].reshape(shape))
        else:
            out = np.empty((rows, cols), dt.numpy)
            for cols_of, (view, entry), shape in pieces:
                m.log.entries.append(entry)
                out[:, cols_of] = np.array(view.read()).reshape(rows, -1)
            sys_view.write(out.reshape(mat_shape))
    return run


def _build_trans(m, f):
    _check_direction(m, f)
    if f["common_mode"] or _enum(m, "sys_mem_type", f["sys_mem_type"]) != "tensor":
        raise SimulationError("dma.trans is modelled for tensors (sys_mem_type tensor, common_mode 0) only")
    dt = _mover(m, f)
    n, ch, h, w = _sizes(f, "src")
    dst_shape = (ch, n, h, w)
    if not f["chw_copy"] and _sizes(f, "dst") != dst_shape:
        raise SimulationError(f"dma.trans: dst sizes must be the src sizes with n and c swapped {dst_shape}, "
                              f"not {_sizes(f, 'dst')}")
    return _mover_run(m, f, "dma.trans", (n, ch, h, w), dst_shape, dt, dt, lambda v: v.transpose(1, 0, 2, 3))


def _build_cw_trans(m, f):
    _check_direction(m, f)
    if f["common_mode"] or _enum(m, "sys_mem_type", f["sys_mem_type"]) != "tensor":
        raise SimulationError("dma.cw_trans is modelled for tensors (sys_mem_type tensor, common_mode 0) only")
    dt = _mover(m, f)
    n, ch, h, w = _sizes(f, "src")
    if (n, h) != (1, 1):
        raise SimulationError(f"dma.cw_trans is modelled with n = h = 1 (bm1684_defs.py), not src sizes {(n, ch, h, w)}")
    dst_shape = (1, w, 1, ch)
    if not f["chw_copy"] and _sizes(f, "dst") != dst_shape:
        raise SimulationError(f"dma.cw_trans: dst sizes must be {dst_shape}, not {_sizes(f, 'dst')}")
    return _mover_run(m, f, "dma.cw_trans", (1, ch, 1, w), dst_shape, dt, dt, lambda v: v.transpose(0, 3, 2, 1))


def _build_lrn_shift(m, f):
    if _check_direction(m, f) != "L2L":
        raise SimulationError(f"dma.lrn_shift: direction must be L2L, not {_enum(m, 'direction', f['direction'])}")
    dt = _mover(m, f)
    shape = _sizes(f, "src")
    k, back = f["lrn_shift_num"], f["lrn_shift_dir"]
    g = {**f, **{f"dst_{d}stride": f[f"src_{d}stride"] for d in "nchw"}}   # bm1684_defs.py: dst uses src's

    def shift(v):
        out = np.zeros_like(v)
        ch = v.shape[1]
        if k < ch:
            if back:
                out[:, :ch - k] = v[:, k:]
            else:
                out[:, k:] = v[:, :ch - k]
        return out
    return _mover_run(m, g, "dma.lrn_shift", shape, shape, dt, dt, shift)


def _build_format(m, f):
    _check_direction(m, f)
    if f["common_mode"] or _enum(m, "sys_mem_type", f["sys_mem_type"]) != "tensor":
        raise SimulationError("dma.format is modelled for tensors (sys_mem_type tensor, common_mode 0) only")
    src_fmt, dst_fmt = _format(m, f, "src"), _format(m, f, "dst")
    src_shape = _sizes(f, "src")
    dst_shape = src_shape if f["chw_copy"] else _sizes(f, "dst")
    if src_shape != dst_shape:
        raise SimulationError(f"dma.format: dst sizes must equal src sizes {src_shape}, not {dst_shape}")
    src_dt, dst_dt = _MOVER[src_fmt], _MOVER[dst_fmt]
    src_np, dst_np = _VALUE[src_fmt], _VALUE[dst_fmt]

    def convert(v):
        x = v.view(src_np)
        if dst_np.kind == "f":
            with np.errstate(all="ignore"):
                out = x.astype(dst_np)
        elif src_np.kind == "f":
            out = numerics.to_int(x.astype(np.float32), dtypes.integer(dst_np.itemsize * 8, dst_np.kind == "i"))
            out = np.asarray(out).astype(dst_np)
        else:
            info = np.iinfo(dst_np)
            out = np.clip(x.astype(np.int64), info.min, info.max).astype(dst_np)
        return out.view(dst_dt.numpy)
    return _mover_run(m, f, "dma.format", src_shape, dst_shape, src_dt, dst_dt, convert)


def _build_constant(m, f):
    _check_direction(m, f, ("dst",))
    if _enum(m, "sys_mem_type", f["sys_mem_type"]) != "tensor":
        raise SimulationError("dma.constant is modelled for tensors (sys_mem_type tensor) only")
    dt = _mover(m, f)
    if f["acc_write_enable"]:
        raise SimulationError("dma.constant: field acc_write_enable = 1 is not modelled")
    if f["common_mode"]:
        count = f["src_nstride"]
        shape, strides = (1, 1, 1, count), (count, count, count, 1)
    else:
        shape = _sizes(f, "dst")
        strides = _strides(m, f, "dst", shape, dt)
    value = np.array(f["constant_value"] & ((1 << dt.bits) - 1), dt.numpy)
    dst, entry = _view(m, f, "dst", dt, shape, strides, True)
    keep = _lane_keep(m, f, shape)
    old = _view(m, f, "dst", dt, shape, strides, False) if keep is not None else None

    def run(m):
        values = np.broadcast_to(value, shape)
        if old is not None:
            m.log.entries.append(old[1])
            values = np.where(keep, values, old[0].read())
        m.log.entries.append(entry)
        dst.write(values)
    return run


def _refuse(kind, why):
    def fn(m, f):
        raise SimulationError(f"{kind}: not simulated: {why}")
    return refused(fn)


ADDR = {"src_start_addr_l32", "src_start_addr_h8", "dst_start_addr_l32", "dst_start_addr_h8"}
SIZES = {f"{s}_{d}size" for s in ("src", "dst") for d in "nchw"}
STRIDES = {f"{s}_{d}stride" for s in ("src", "dst") for d in "nchw"}
MOVE = ADDR | SIZES | STRIDES | {"direction", "stride_enable", "chw_copy", "acc_write_enable", "common_mode",
                                 "sys_mem_type", "src_data_format", "localmem_mask_l32", "localmem_mask_h32"}
NOT_FORMAT = "read only by dma.format (bm1684_defs.py converts only for FORMAT)"
NOT_LRN = "read only by dma.lrn_shift"
NOT_CONST = "read only by dma.constant"
MOVE_IGNORES = {"dst_data_format": NOT_FORMAT, "lrn_shift_num": NOT_LRN, "lrn_shift_dir": NOT_LRN,
                "constant_value": NOT_CONST}

tensor = contract(reads=MOVE, ignores=MOVE_IGNORES)(planned(_build_tensor))
trans = contract(reads=MOVE, ignores=MOVE_IGNORES)(planned(_build_trans))
cw_trans = contract(reads=MOVE, ignores=MOVE_IGNORES)(planned(_build_cw_trans))
lrn_shift = contract(reads=MOVE | {"lrn_shift_num", "lrn_shift_dir"},
                     ignores={"dst_data_format": NOT_FORMAT, "constant_value": NOT_CONST,
                              **{f"dst_{d}stride": "the destination uses the source's strides (bm1684_defs.py)"
                                 for d in "nchw"}})(planned(_build_lrn_shift))
fmt = contract(reads=MOVE | {"dst_data_format"}, ignores={"lrn_shift_num": NOT_LRN, "lrn_shift_dir": NOT_LRN,
                                                         "constant_value": NOT_CONST})(planned(_build_format))
NO_SOURCE = "a constant has no source"
constant = contract(reads={"dst_start_addr_l32", "dst_start_addr_h8"} | {f"dst_{d}size" for d in "nchw"} | {f"dst_{d}stride" for d in "nchw"} |
                    {"direction", "stride_enable", "acc_write_enable", "common_mode", "sys_mem_type",
                     "src_data_format", "constant_value", "localmem_mask_l32", "localmem_mask_h32", "src_nstride"},
                    ignores={"dst_data_format": NOT_FORMAT, "lrn_shift_num": NOT_LRN, "lrn_shift_dir": NOT_LRN,
                             "chw_copy": "a constant has no source sizes to copy",
                             "src_start_addr_l32": NO_SOURCE, "src_start_addr_h8": NO_SOURCE,
                             **{f"src_{d}size": NO_SOURCE for d in "nchw"},
                             **{f"src_{d}stride": NO_SOURCE for d in "chw"}})(planned(_build_constant))

KINDS = {
    ("gdma", "dma.tensor"): tensor,
    ("gdma", "dma.trans"): trans,
    ("gdma", "dma.constant"): constant,
    ("gdma", "dma.cw_trans"): cw_trans,
    ("gdma", "dma.lrn_shift"): lrn_shift,
    ("gdma", "dma.format"): fmt,
    ("gdma", "dma.winograd"): _refuse("dma.winograd", "the winograd transform is not public (bm1684_defs.py "
                                                     "reads its operands only)"),
    ("gdma", "dma.filter"): _refuse("dma.filter", "the filter's mask semantics are not public (bm1684_defs.py "
                                                 "reads its operands only)"),
}
