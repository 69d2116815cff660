"""Semantics of the GDMA descriptors the OKKernel GDMA functions lower to (seed 003 "GDMA
Functions"; bmk/bm1684/lowering/gdma.py says how the fields are filled).

dma.tensor: dst(n, c, h, w) = src(n, c, h, w) over the (src_*size) shape, each side read at
its device address (local window -> local memory, else the memory-map space holding it)
with its explicit strides (stride_enable must be 1). Elements move bit for bit; 8- and
16-bit local sides are 4N / 2N with strides in 32-bit words. With sys_mem_type = matrix the
system side is a rows x cols matrix and the local side the Matrix Layout (rows, C, 1, w),
whose last channel holds the remaining cols - (C - 1) * w columns.
dma.constant: every element of the destination = the low bits of constant_value.
Other special functions (trans, lrn_shift, format, cw_trans, winograd, filter) are not
modelled: SimulationError names them.
"""
import numpy as np

from bmk import dtypes
from bmk.errors import SimulationError
from bmk.sim.bm1684.common import WORD_BYTES

# Bit-exact movers per data_format enum member (copies never convert).
_MOVER = {"float32": dtypes.UINT32, "int16": dtypes.UINT16, "uint8": dtypes.UINT8, "int8": dtypes.UINT8}


def _enum(m, field, value):
    name = m.chip.member("gdma", field, value)
    if name is None:
        raise SimulationError(f"{field} must be a member of its enum, not {value}")
    return name


def _mover(m, f):
    src, dst = _enum(m, "src_data_format", f["src_data_format"]), _enum(m, "dst_data_format", f["dst_data_format"])
    if src != dst:
        raise SimulationError(f"dst_data_format must equal src_data_format ({src}): format conversion is "
                              f"not modelled, not {dst}")
    if src not in _MOVER:
        raise SimulationError(f"src_data_format must be one of {sorted(_MOVER)}, not {src}")
    return _MOVER[src]


def _shape(f, prefix):
    return tuple(f[f"{prefix}_{d}size"] for d in "nchw")


def _strides(f, prefix):
    return tuple(f[f"{prefix}_{d}stride"] for d in "nchw")


def _space(m, f, prefix):
    """(memory space, offset in it) of side `prefix`'s device address (split over l32 / h8)."""
    return m.space_of(m.chip.compose("gdma", f"{prefix}_addr", f))


def _view(m, f, prefix, dtype, shape, strides, write):
    space, offset = _space(m, f, prefix)
    if space.name == "local":
        pack = WORD_BYTES // dtype.itemsize
        return m.lmem.tensor(prefix, offset, shape, strides, m.log, write, dtype.numpy, pack)
    return m.memories[space.name].tensor(prefix, offset, shape, strides, m.log, write, dtype.numpy)


def _check_common(f):
    if not f["stride_enable"]:
        raise SimulationError("stride_enable must be 1 (strides are explicit), not 0")


def tensor(m, f):
    _check_common(f)
    dt = _mover(m, f)
    src_shape, dst_shape = _shape(f, "src"), _shape(f, "dst")
    if _enum(m, "sys_mem_type", f["sys_mem_type"]) == "matrix":
        return _matrix(m, f, dt, src_shape, dst_shape)
    if src_shape != dst_shape:
        raise SimulationError(f"dst sizes must equal src sizes {src_shape} (reshaping copies are not "
                              f"modelled), not {dst_shape}")
    values = _view(m, f, "src", dt, src_shape, _strides(f, "src"), False).read().copy()
    _view(m, f, "dst", dt, dst_shape, _strides(f, "dst"), True).write(values)


def _matrix(m, f, dt, src_shape, dst_shape):
    direction = _enum(m, "direction", f["direction"])
    if direction not in ("S2L", "L2S"):
        raise SimulationError(f"direction of a matrix copy must be S2L or L2S, not {direction}")
    local, system = (dst_shape, src_shape) if direction == "S2L" else (src_shape, dst_shape)
    rows, cols = system[0], system[3]
    if local[0] != rows or local[2] != 1 or system[1:3] != (1, 1) or not (local[1] - 1) * local[3] < cols <= local[1] * local[3]:
        raise SimulationError(f"matrix sizes must be system (rows, 1, 1, cols) and local (rows, DIV_UP(cols, w), 1, w), "
                              f"not system {system} and local {local}")
    full = cols // local[3]                       # channels filled completely; then one partial
    sys_side = "src" if direction == "S2L" else "dst"
    loc_side = "dst" if direction == "S2L" else "src"
    sys_view = _view(m, f, sys_side, dt, system, _strides(f, sys_side), direction == "L2S")
    loc_strides = _strides(f, loc_side)
    if direction == "S2L":
        mat = sys_view.read().reshape(rows, cols)
        if full:
            _local(m, f, loc_side, dt, (rows, full, 1, local[3]), loc_strides, 0, True).write(
                mat[:, :full * local[3]].reshape(rows, full, 1, local[3]))
        if cols % local[3]:
            rest = cols % local[3]
            _local(m, f, loc_side, dt, (rows, 1, 1, rest), loc_strides, full, True).write(
                mat[:, full * local[3]:].reshape(rows, 1, 1, rest))
    else:
        out = np.empty((rows, cols), dt.numpy)
        if full:
            out[:, :full * local[3]] = _local(m, f, loc_side, dt, (rows, full, 1, local[3]), loc_strides, 0,
                                              False).read().reshape(rows, -1)
        if cols % local[3]:
            rest = cols % local[3]
            out[:, full * local[3]:] = _local(m, f, loc_side, dt, (rows, 1, 1, rest), loc_strides, full,
                                              False).read().reshape(rows, rest)
        sys_view.write(out.reshape(system))


def _local(m, f, prefix, dt, shape, strides, first_channel, write):
    """A view of channels [first_channel, first_channel + shape[1]) of the local side."""
    space, offset = _space(m, f, prefix)
    if space.name != "local":
        raise SimulationError(f"{prefix} of a matrix copy must be local memory, not {space.name}")
    lane = m.lmem.lane_size
    start = offset // lane + first_channel
    slot, npu = divmod(start, m.npu_num)
    offset = npu * lane + offset % lane + slot * strides[1] * dt.itemsize
    return m.lmem.tensor(prefix, offset, shape, strides, m.log, write, dt.numpy)


def constant(m, f):
    _check_common(f)
    dt = _mover(m, f)
    shape = _shape(f, "dst")
    value = np.array(f["constant_value"] & ((1 << dt.bits) - 1), dt.numpy)
    _view(m, f, "dst", dt, shape, _strides(f, "dst"), True).write(np.broadcast_to(value, shape))


KINDS = {("gdma", "dma.tensor"): tensor, ("gdma", "dma.constant"): constant}
