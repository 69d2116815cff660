"""GDMA (DMA_tensor, DMA_general, sDMA_general, sDMA_sys): tensor copies in every direction,
their special functions, linear copies, constant fills, sys commands.

Sources: isa-facts bm1684x-lowering.md ("GDMA": no direction field, 40-bit addresses matched
against the memory map, constant fill = fill_constant_en with constant_value), tpu-mlir
python/debugger/target_1684x/opparam.py `dma_reg_fmt_base`, `DMA_tensor_0x000__t_converter`,
`DMA_general_t_converter` (shapes per special function, w strides 1 for the special
functions, nchw_copy, the lane mask, the 4-bank forms), target_1684x/cmodel.py
(`get_dma4bank_data`: four copies one bank apart; `_lane_mask_filter`), seed 001 (gdma_cpy_*),
the golden yolov5s and Yuv2rgb streams (dma.tensor in every direction, dma.tensor.broadcast
of an image row block to 6 NPUs).

Addresses: each side's device address is composed from its parts as the spec's `composed`
rows say (X_start_addr_l32 + X_start_addr_h8) and looked up in the chip's memory map. A
local side (0x08000000 + NPU * 256 KiB + offset) is a tensor placed across NPUs from its
start NPU (channel c on NPU (s + c) % 64, group (s + c) // 64, as TIU operands); any other
space (global, L2 SRAM, static) is a plain strided array. Strides count elements of
src_data_format (the TIU prec codes); the bytes move as they are (every whole-byte format
copies alike, fp8 where the chip has it; int4 is refused: its nibble packing in DMA is not
public).

dma.tensor: src (src_n/c/h/wsize, src_*stride) -> dst (dst_*size, or the source shape when
nchw_copy is set; dst_*stride), in logical NCHW order (the element counts must agree);
fill_constant_en writes constant_value's low bytes instead of reading.
Special functions (cmd_special_function; their w strides are 1, opparam):
  transpose     dst (C, N, H, W) = src (N, C, H, W) transposed
  collect       dst (N, W, H, C) = src (N, C, H, W) with C and W swapped (the CW transpose
                "from lmem to gmem")
  distribute    the same swap (the CW transpose "from gmem to lmem")
  broadcast     src (N, 1, H, W) copied to each of dst_csize channels
  4bank_copy    dst as dma.tensor, written four times, each copy one local memory bank
                (lmem_bank_size) further (cmodel `get_dma4bank_data`)
  4bank_broadcast  broadcast, written four times one bank apart
dma.general: src_cstride_move_length_ elements from src to dst, both linear (a local side stays
in its NPU); fill_constant_en fills. dma.general.broadcast: the linear data copied to
dst_csize NPUs (the same offset in NPUs s, s + 1, ...: opparam's stride (lane_bytes, 1)).
dma.sys, dma.sys.nop: ordering only.

The lane mask (localmem_mask_l32 / _h32, a 64-bit mask) selects the NPUs a local destination
is written in (cmodel `_lane_mask_filter`); other NPUs keep their bytes. decompress_enable
must be 0 (the compressed format is not public).

stride_enable: 1 takes the strides of the fields. 0 (the implicit strides) is executed for
dma.tensor.broadcast (and dma.gather, below) only, as the default layouts: a local side is 64-byte aligned from its
start NPU (w 1, h W, c ALIGN(H * W, eu_num), n ceil((s + C) / npu_num) * c; for the source C
= 1), a global side contiguous over its own shape (the source's (N, 1, H, W)), the stride
fields unread. Source: the TPU-Kernel implementation of tpu_gdma_channel_bcast_S2L / _L2L
(tpu_kernel.c of the public TPU1686 sources): with no strides given it emits the broadcast with
stride_enable false and no strides, and with either stride NULL it fills in exactly these
(tpu_aligned_stride for the local destination, tpu_continuous_stride of (N, 1, H, W) for a
global source, tpu_aligned_stride for a local one) and stride_enable true, so the two forms of
one API call must move the same data. The real networks (tdl_models cls_attribute_face,
hand_keypoint_cls, cls_sound_babay_cry: a (1, 1, 1, W) row of a global weight broadcast to 64
NPUs) carry it. dma.gather (dma_index.py) takes the same default layouts, from the same
source's tpu_gdma_h_gather_S2L / _L2S / _L2L. Other kinds with stride_enable 0 are refused
(bmk's `check`, before any run): no public source gives them a meaning.
"""
import math

import numpy as np

from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import max_elements

_RAW = {1: np.dtype(np.uint8), 2: np.dtype("<u2"), 4: np.dtype("<u4")}


def memo(m, key, compute):
    """A value derived from the fields alone, kept in the plan's memo (computed once per plan;
    each time where there is none: between instructions, or the cost model's ChipView)."""
    if getattr(m, "memo", None) is None:
        return compute()
    v = m.memo.get(key)
    if v is None:
        v = m.memo[key] = compute()
    return v


def cls_name(m, f):
    def compute():
        cls = m.chip.engine("gdma").class_for(f)
        if cls is None:                     # fields of no class: cannot come from the decoder
            raise SimulationError("gdma fields must select an instruction class")
        return cls.name
    return memo(m, "cls", compute)


def address(m, f, side):
    """The device address of `side` (src, dst, mask, index) from its composed parts."""
    return memo(m, f"{side}_addr", lambda: m.chip.compose("gdma", f"{side}_addr", f, cls_name(m, f)))


def element_bytes(m, f, field="src_data_format"):
    """Bytes per element of a format field (src_data_format, mask_data_format,
    index_data_format: all in the TIU prec codes, opparam's DType(code))."""
    code = f.get(field, 0)
    name = m.chip.member("gdma", "src_data_format", code, cls_name(m, f))
    if name not in _BYTES or (name == "fp8" and not m.chip.param("fp8", 0)):      # fp8: BM1690's params
        raise SimulationError(f"{field} must be a whole-byte format ({', '.join(_BYTES)}), not "
                              f"{code!r}" + (f" ({name})" if name else ""))
    return _BYTES[name]


_BYTES = {"int8": 1, "fp8": 1, "fp16": 2, "bf16": 2, "int16": 2, "fp32": 4, "int32": 4}   # by format name


def count(m, what, shape):
    if min(shape) < 1:
        raise SimulationError(f"{what} shape must be positive in every dimension, not {tuple(shape)}")
    n = math.prod(int(d) for d in shape)
    if n > max_elements(m):
        raise SimulationError(f"{what} must move at most {max_elements(m)} elements, not {n} (shape {tuple(shape)})")
    return n


def lane_mask(m, f):
    mask = m.chip.compose("gdma", "localmem_mask", f, cls_name(m, f)) if "localmem_mask_l32" in f else None
    return None if mask is None or mask == m.chip.all_lanes else mask


class Side:
    """One side of a copy: a strided (N, C, H, W) array of `e`-byte elements at a device
    address; a local destination honours the lane mask."""

    def __init__(self, m, what, addr, shape, strides, e, mask=None):
        self.m, self.what, self.shape, self.strides, self.e = m, what, tuple(shape), tuple(strides), e
        count(m, what, shape)
        sp, off = m.space_of(addr)
        self.mem = m.memories[sp.name]
        self.local = sp.lane_bytes is not None
        self.off, self.mask = off, (mask if self.local else None)

    def _view(self, write, off=None):
        return self.mem.tensor(self.what, self.off if off is None else off, self.shape, self.strides, self.m.log,
                               write, _RAW[self.e])

    def read(self):
        return np.array(self._view(False).read())

    def write(self, values, off=None):
        values = np.broadcast_to(np.asarray(values).astype(_RAW[self.e]), self.shape)
        if self.mask is not None:
            l0 = (self.off if off is None else off) // self.mem.lane_size
            lanes = (l0 + np.arange(self.shape[1])) % self.m.npu_num
            keep = np.array([not (self.mask >> int(x)) & 1 for x in lanes], bool)
            if keep.any():
                old = np.array(self.mem.tensor(self.what, self.off if off is None else off, self.shape,
                                               self.strides, None, False, _RAW[self.e]).read())
                values = np.where(keep[None, :, None, None], old, values)
        self._view(True, off).write(values)


def strides(f, side, unit_w=False):
    return tuple(f.get(f"{side}_{d}stride", 0) for d in "nch") + (1 if unit_w else f.get(f"{side}_wstride", 0),)


def shape(f, side):
    return tuple(f.get(f"{side}_{d}size", 0) for d in "nchw")


def fill_bits(f, e):
    return f.get("constant_value", 0) & ((1 << (8 * e)) - 1)


# the kinds whose stride_enable = 0 (implicit strides) bmk executes
IMPLICIT_STRIDES = frozenset({"dma.tensor.broadcast", "dma.gather"})


def flag_check(kind, strided):
    """The kind's static check (CHECKS, before any run; its function relies on it): implicit
    strides only where IMPLICIT_STRIDES executes them (`strided`: a kind that has strides),
    no compression."""
    def check(chip, f):
        if strided and not f.get("stride_enable", 1) and kind not in IMPLICIT_STRIDES:
            raise F.refuse(kind, "stride_enable", 0, "must be 1 (the hardware's implicit strides are public only "
                           f"for {' and '.join(sorted(IMPLICIT_STRIDES))})")
        if f.get("decompress_enable", 0):
            raise F.refuse(kind, "decompress_enable", f["decompress_enable"], "must be 0 (the compressed format "
                           "is not public)")
    check.__name__ = "check_" + kind.replace(".", "_")
    return check


def default_strides(m, side_addr, shape, e):
    """The implicit strides (stride_enable 0): aligned from the start NPU in local memory,
    contiguous elsewhere."""
    sp, off = m.space_of(side_addr)
    n, c, h, w = shape
    if sp.lane_bytes is None:
        return (c * h * w, h * w, w, 1)
    eu = m.chip.param(f"eu_num_{8 * e}bit")
    cs = -(-(h * w) // eu) * eu
    return (-(-((off // sp.lane_bytes) % m.npu_num + c) // m.npu_num) * cs, cs, w, 1)


def _tensor_copy(special):
    kind = "dma.tensor" + (f".{special}" if special else "")

    def run(m, f):
        e = element_bytes(m, f)
        src_shape = shape(f, "src")
        dst_shape = src_shape if f.get("nchw_copy", 0) else shape(f, "dst")
        unit_w = special is not None
        bc = special in ("broadcast", "4bank_broadcast")
        if special == "transpose":
            dst_shape = (src_shape[1], src_shape[0]) + src_shape[2:]
        elif special in ("collect", "distribute"):
            dst_shape = (src_shape[0], src_shape[3], src_shape[2], src_shape[1])
        elif bc:
            src_shape = (src_shape[0], 1) + src_shape[2:]
            dst_shape = (src_shape[0], f.get("dst_csize", 0)) + src_shape[2:]
        mask = lane_mask(m, f)
        implicit = not f.get("stride_enable", 1)
        dst_addr = address(m, f, "dst")
        dst_st = default_strides(m, dst_addr, dst_shape, e) if implicit else strides(f, "dst", unit_w)
        dst = Side(m, "dst", dst_addr, dst_shape, dst_st, e, mask)
        if implicit and not dst.local:
            raise SimulationError(f"{kind} with implicit strides (stride_enable 0) must write local memory, not "
                                  f"{dst.mem.name}")
        if f.get("fill_constant_en", 0):
            data = np.full(dst.shape, fill_bits(f, e), _RAW[e])
        else:
            src_addr = address(m, f, "src")
            src_st = default_strides(m, src_addr, src_shape, e) if implicit else strides(f, "src", unit_w)
            data = Side(m, "src", src_addr, src_shape, src_st, e).read()
            if special == "transpose":
                data = data.transpose(1, 0, 2, 3)
            elif special in ("collect", "distribute"):
                data = data.transpose(0, 3, 2, 1)
            elif bc:
                data = np.broadcast_to(data, dst_shape)
            elif data.size != math.prod(dst_shape):
                raise SimulationError(f"dst shape {dst_shape} must hold the {data.size} source elements "
                                      f"(src shape {src_shape})")
            data = np.ascontiguousarray(data).reshape(dst_shape)
        if special and special.startswith("4bank"):
            if not dst.local:
                raise SimulationError(f"the destination must be local memory (four banks), not "
                                      f"{dst.mem.name}")
            bank = m.chip.param("lmem_bank_size")
            for k in range(4):
                if (dst.off % m.lmem.lane_size) + k * bank >= m.lmem.lane_size:
                    raise SimulationError(f"copy {k} lies past the end of the NPU's local memory")
                dst.write(data, dst.off + k * bank)
            return
        dst.write(data)
    run.__name__ = kind.replace(".", "_")
    return run


def general(m, f):
    """A linear copy of src_cstride_move_length_ elements (or a constant fill)."""
    e = element_bytes(m, f)
    n = f.get("src_cstride_move_length_", 0)
    shp, st = (1, 1, 1, n), (0, 0, 0, 1)
    dst = Side(m, "dst", address(m, f, "dst"), shp, st, e, lane_mask(m, f))
    if f.get("fill_constant_en", 0):
        dst.write(np.full(shp, fill_bits(f, e), _RAW[e]))
        return
    dst.write(Side(m, "src", address(m, f, "src"), shp, st, e).read())


def general_broadcast(m, f):
    """The linear data copied to dst_csize NPUs at the destination's offset."""
    e = element_bytes(m, f)
    n, c = f.get("src_cstride_move_length_", 0), f.get("dst_csize", 0)
    dst_addr = address(m, f, "dst")
    if m.space_of(dst_addr)[0].lane_bytes is None:
        raise SimulationError("the destination must be local memory")
    dst = Side(m, "dst", dst_addr, (1, c, 1, n), (0, 0, 0, 1), e, lane_mask(m, f))
    if dst.off // m.lmem.lane_size + c > m.npu_num:
        raise SimulationError(f"the start NPU + dst_csize must be at most {m.npu_num}, not "
                              f"{dst.off // m.lmem.lane_size} + {c}")
    if f.get("fill_constant_en", 0):
        data = np.full((1, 1, 1, n), fill_bits(f, e), _RAW[e])
    else:
        data = Side(m, "src", address(m, f, "src"), (1, 1, 1, n), (0, 0, 0, 1), e).read()
    dst.write(np.broadcast_to(data, dst.shape))


def no_effect(m, f):
    """dma.sys (the stream's end) and dma.sys.nop: ordering only."""


KINDS = {"dma.tensor": _tensor_copy(None), "dma.tensor.transpose": _tensor_copy("transpose"),
         "dma.tensor.collect": _tensor_copy("collect"), "dma.tensor.broadcast": _tensor_copy("broadcast"),
         "dma.tensor.distribute": _tensor_copy("distribute"), "dma.tensor.4bank_copy": _tensor_copy("4bank_copy"),
         "dma.tensor.4bank_broadcast": _tensor_copy("4bank_broadcast"),
         "dma.general": general, "dma.general.broadcast": general_broadcast,
         "dma.sys": no_effect, "dma.sys.nop": no_effect}

# an address's high part: 8 bits (BM1684X, BM1688), 13 (CV184X: a 5-bit tag above 40 bits)
_ADDR = {"src_start_addr_l32", "src_start_addr_h8", "dst_start_addr_l32", "dst_start_addr_h8",
         "src_start_addr_h13", "dst_start_addr_h13",
         "localmem_mask_l32", "localmem_mask_h32", "stride_enable", "decompress_enable", "fill_constant_en",
         "constant_value", "src_data_format"}
_TENSOR = F.names(_ADDR, {f"{s}_{d}{k}" for s in ("src", "dst") for d in "nchw" for k in ("size", "stride")},
                  {"nchw_copy"})
FIELDS = {k: _TENSOR for k in KINDS if k.startswith("dma.tensor")}
FIELDS["dma.general"] = F.names(_ADDR, {"src_cstride_move_length_"})
FIELDS["dma.general.broadcast"] = F.names(_ADDR, {"src_cstride_move_length_", "dst_csize"})
FIELDS["dma.sys"] = FIELDS["dma.sys.nop"] = F.names()
CHECKS = {k: flag_check(k, k.startswith("dma.tensor")) for k in KINDS if not k.startswith("dma.sys")}
