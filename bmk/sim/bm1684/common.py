"""Operands shared by the bm1684 instruction semantics (isa-facts bm1684.json, bm1684-memory.md).

A TIU operand X (res0, opd0, opd1, opd2) is read from its fields:
- address X_addr: a device address; local memory is the window [local.base, + size) of the
  memory map (specs/bm1684/chip.toml), local_addr_t = X_addr - local.base;
- precision opt_X_prec (enum prec: int8, fp16, fp32, int16, int32) and sign opt_X_sign
  (res0 has no sign field: each kind says where its result's sign comes from);
- layout short_X_str (enum short_str): aligned -> 128-byte aligned strides derived from the
  shape and the start NPU; compact -> compact strides; free -> X_n_str, X_c_str, X_h_str,
  X_w_str; offset (per-channel) is interpreted by the kinds that use it;
- a constant: opt_X_const = 1 and X_addr holds the value's bits (fp32 bits for fp32).
8-bit local tensors are stored 4N and 16-bit ones 2N: their strides count 32-bit words
(bmk/bm1684/layout.py, bmk/sim/memory.py). 32-bit tensors are plain.
opt_relu: the vendor sets it to 1 on every command of its fp32 streams, also where no ReLU is
meant (yolov5s has none; retinaface's convolutions keep the negative values onnxruntime has
before each LeakyRelu), and so does the OKKernel lowering: 1 is executed as "no ReLU". The
vendor's int8 stream (face_detection_int8_b4) carries 0 on its integer commands, also where no
ReLU is meant: each int8 convolution is followed by its per-channel scale, bias and an explicit
max(x, 0) (arith.max with the constant 0), which a ReLU before the scale would break (the run
agrees with the fp32 twin, tests/chips/bm1684/sim/test_int8_network.py): 0 with an integer res0
is executed as "no ReLU" too; 0 with an fp32 res0, which no stream carries, is refused (storer).
"""

import numpy as np

from bmk import dtypes
from bmk import layout as chip_layout
from bmk.errors import SimulationError

WORD_BYTES = 4
INTEGER_PRECS = ("int8", "int16", "int32")


def member(m, field, value):
    """The enum member name of a TIU field's value (None: not a member), from the simulator's spec."""
    return m.chip.members("tiu", field).get(value)


def prec_name(m, f, slot):
    value = f[f"opt_{slot}_prec"]
    name = member(m, f"opt_{slot}_prec", value)
    if name is None:
        raise SimulationError(f"opt_{slot}_prec must be one of {sorted(m.chip.members('tiu', f'opt_{slot}_prec'))}, "
                              f"not {value}")
    return name


def dtype_of(m, f, slot, signed=None):
    """The DType of operand `slot`: its precision, and its sign field (or `signed` if given)."""
    sign = f[f"opt_{slot}_sign"] if signed is None else int(signed)
    return dtypes.of_precision(prec_name(m, f, slot), sign)


def pack_of(dtype):
    """Batches per 32-bit word in local memory: 4 for 8-bit (4N), 2 for 16-bit (2N), else 1."""
    return WORD_BYTES // dtype.itemsize if dtype.itemsize < WORD_BYTES else 1


def res0_shape(f):
    return (f["res0_n"], f["res0_c"], f["res0_h"], f["res0_w"])


def shape_of(f, slot):
    return (f[f"{slot}_n"], f[f"{slot}_c"], f[f"{slot}_h"], f[f"{slot}_w"])


def local_offset(m, f, slot):
    """local_addr_t of operand `slot` (SimulationError outside the local window). An address below
    the window's size is a local_addr_t itself (the window base left out): the vendor's int8
    stream writes two residual adds' res0 as 0x10000, which the next convolution reads at
    0x08010000 (face_detection_int8_b4, instructions 440 and 442; nothing else writes there)."""
    local = m.space("local")
    addr = f[f"{slot}_addr"]
    if 0 <= addr < local.size:
        return addr
    if not local.base <= addr < local.base + local.size:
        raise SimulationError(f"{slot}_addr must be a local address in [0x{local.base:x}, "
                              f"0x{local.base + local.size:x}), not 0x{addr:x}")
    return addr - local.base


class Static:
    """What `member`, `dtype_of`, `local_offset` and `strides` read of a Simulator, from the
    chip alone: a static check (before any run) lays operands out as the run will."""

    def __init__(self, chip):
        self.chip = chip
        self.npu_num = chip.param("npu_num")
        self.space = chip.space
        self.lmem = _Lanes(chip.space("local").lane_bytes)


class _Lanes:
    def __init__(self, lane_size):
        self.lane_size = lane_size


def strides(m, f, slot, shape, dtype, addr):
    """(n, c, h, w) strides of operand `slot`, in elements (32-bit words when packed)."""
    mode = member(m, f"short_{slot}_str", f[f"short_{slot}_str"])
    unit = max(dtype.itemsize, WORD_BYTES) if pack_of(dtype) > 1 else dtype.itemsize
    start = addr // m.lmem.lane_size
    if mode == "aligned":
        return chip_layout.aligned_stride(shape, unit, m.chip.param("channel_align_bytes"), m.npu_num, start)
    if mode == "compact":
        return chip_layout.compact_stride(shape, m.npu_num, start)
    if mode == "free":
        return (f[f"{slot}_n_str"], f[f"{slot}_c_str"], f[f"{slot}_h_str"], f[f"{slot}_w_str"])
    raise SimulationError(f"short_{slot}_str must be aligned, compact or free here, not "
                          f"{mode or f[f'short_{slot}_str']!r}")


def view(m, f, slot, dtype, shape, write=False, stride=None):
    """The TensorView of local operand `slot` with the given dtype and logical shape."""
    addr = local_offset(m, f, slot)
    if stride is None:
        stride = strides(m, f, slot, shape, dtype, addr)
    return m.lmem.tensor(slot, addr, shape, stride, m.log, write, dtype.numpy, pack_of(dtype))


def const(f, slot, dtype):
    """The constant of operand `slot` as a numpy scalar of dtype (its low bits reinterpreted)."""
    bits = f[f"{slot}_addr"] & ((1 << dtype.bits) - 1)
    return np.array(bits, np.dtype(f"u{dtype.itemsize}")).view(dtype.numpy)[()]


def read(m, f, slot, dtype, shape):
    """Operand `slot`: an (N, C, H, W) array, or a scalar when it is a constant."""
    if f.get(f"opt_{slot}_const"):
        return const(f, slot, dtype)
    return view(m, f, slot, dtype, shape).read()


def write(m, f, slot, dtype, values, shape=None):
    """Store values (wrapped to dtype's storage type) into operand `slot` (default res0's shape)."""
    shape = res0_shape(f) if shape is None else shape
    view(m, f, slot, dtype, shape, write=True).write(np.asarray(values).astype(dtype.numpy, copy=False))


# -- per-instruction plans: views made once, then only read and written ------------------------------
# A kind's semantics build, on an instruction's first run, closures over the memory views its
# fields name (views never move: the memories' arrays are fixed), kept in the plan's memo
# (Simulator.memo) and run again for every instruction equal to it. Each read or write logs its
# access-log entry for the race detector, as a fresh view would, through the Simulator's trail
# (m.trail.log is m.log): a closure keeps the trail, never the Simulator, which keeps the
# closure (a Simulator dropped by its caller is freed at once, not by the cyclic collector).
def _local_view(m, f, slot, dtype, shape, stride, write, pack=None):
    from bmk.sim.memory import AccessLog
    addr = local_offset(m, f, slot)
    if stride is None:
        stride = strides(m, f, slot, shape, dtype, addr)
    log = AccessLog()
    view = m.lmem.tensor(slot, addr, tuple(shape), tuple(stride), log, write, dtype.numpy,
                         pack_of(dtype) if pack is None else pack)
    return view, log.entries[0]


def reader(m, f, slot, dtype, shape, stride=None, pack=None):
    """() -> the values of local operand `slot` ((N, C, H, W) of dtype), logging the read.
    pack: 1 reads a batch-less 8/16-bit tensor (strides in elements: int8 kernels, int16 biases)
    instead of the 4N / 2N storage."""
    view, entry = _local_view(m, f, slot, dtype, shape, stride, False, pack)
    trail = m.trail

    def read():
        trail.log.entries.append(entry)
        return view.read()
    return read


def lane_enabled(m, f, slot, channels):
    """Per channel of a local operand: is its NPU's bit set in tsk_lane_num? None when every
    lane is (the vendor's value)."""
    mask = f["tsk_lane_num"]
    if mask == m.chip.all_lanes:
        return None
    start = local_offset(m, f, slot) // m.lmem.lane_size
    lanes = (start + np.arange(channels)) % m.npu_num
    return np.array([(mask >> int(lane)) & 1 for lane in lanes], bool).reshape(1, channels, 1, 1)


def writer(m, f, slot, dtype, shape, stride=None):
    """(values) -> None: store values (wrapped to dtype) into local operand `slot`, keeping the
    old values of channels on lanes tsk_lane_num disables."""
    view, entry = _local_view(m, f, slot, dtype, shape, stride, True)
    enabled = lane_enabled(m, f, slot, shape[1])
    npd = dtype.numpy
    trail = m.trail
    if enabled is not None:
        old_view, old_entry = _local_view(m, f, slot, dtype, shape, stride, False)

    def write(values):
        values = np.asarray(values)
        if values.dtype != npd:
            values = values.astype(npd)
        if enabled is not None:
            trail.log.entries.append(old_entry)
            values = np.where(enabled, values, old_view.read())
        trail.log.entries.append(entry)
        view.write(values)
    return write


def storer(m, f, kind, compute, slot="res0", shape=None, stride=None, into=None):
    """run(m): compute() -> (DType, values); then opt_res_add (fp32: old res0 + values) and the
    store into res0 (writer). opt_relu must be 1 (no ReLU: module docstring).

    into: (DType, fill) where fill(out) computes the same values straight into `out`, the
    result's memory (writing nothing else, reading its operands before it writes, as numpy's
    ufuncs do even when out overlaps them): taken when nothing else is done at the store (no
    opt_res_add, every lane enabled) and res0 is one plain strided array (TensorView.array);
    no copy of the result is made then. fill None: compute()'s values (of that DType) are
    assigned to out."""
    relu = f["opt_relu"]
    if relu != 1 and not (relu == 0 and prec_name(m, f, "res0") in INTEGER_PRECS):
        raise SimulationError(f"{kind}: field opt_relu = {relu} is not modelled (1, the value of every "
                              f"vendor and OKKernel command, is executed as no ReLU; 0 only with an integer res0)")
    shape = tuple(res0_shape(f) if shape is None else shape)
    add = f["opt_res_add"]
    if into is not None and not add and lane_enabled(m, f, slot, shape[1]) is None:
        dt, fill = into
        view, entry = _local_view(m, f, slot, dt, shape, stride, True)
        out = view.array
        if out is not None:
            if fill is None:
                def fill(out):
                    out[...] = compute()[1]

            def run_into(m):
                fill(out)
                m.log.entries.append(entry)
            return run_into
    writers = {}

    def run(m):
        dt, values = compute()
        w = writers.get(dt)
        if w is None:
            if add and not dt.is_float:
                raise SimulationError(f"{kind}: opt_res_add with an integer result is not modelled")
            w = writers[dt] = (writer(m, f, slot, dt, shape, stride),
                               reader(m, f, slot, dt, shape, stride) if add else None)
        if add:
            with np.errstate(all="ignore"):
                values = np.asarray(w[1]() + values, dt.numpy)
        if getattr(values, "shape", None) != shape:
            values = np.broadcast_to(values, shape)
        w[0](values)
    return run


def operand(m, f, slot, dtype, shape=None):
    """A reader () -> values of operand `slot` as dtype: a constant, a per-channel (1, C, 1, 1)
    array or an (N, C, H, W) array of res0's shape (bmk/sim/bm1684/elementwise.py's docstring; compare.py
    and linear.py read their operands the same way)."""
    shape = res0_shape(f) if shape is None else shape
    if f.get(f"opt_{slot}_const"):
        value = const(f, slot, dtype)
        return lambda: value
    if f.get(f"{slot}_neq1"):
        # one batch, read by every batch of res0: (1, C, H, W) with the operand's own strides (in
        # the 4N / 2N storage the element of batch 0, the low byte / half of each word), broadcast
        one = (1,) + tuple(shape[1:])
        read = reader(m, f, slot, dtype, one)
        return read
    if member(m, f"short_{slot}_str", f[f"short_{slot}_str"]) == "offset":
        per_channel = (1, shape[1], 1, 1)
        start = local_offset(m, f, slot) // m.lmem.lane_size
        stride = chip_layout.compact_stride(per_channel, m.npu_num, start)
        return reader(m, f, slot, dtype, per_channel, stride)
    return reader(m, f, slot, dtype, shape)
