"""CV18xx TDMA moves with a bf16 side (src_fmt or dst_fmt bf16).

Facts (sophgo/cvikernel src/cv181x/tdma.c): the fmt enum (specs/cv181x/tdma.toml: bf16, fix8b, an
8-bit integer); fill_g2l_fmt / fill_l2g_fmt / fill_l2l_fmt set int8_sign from the 8-bit side
(CVK_FMT_I8: signed); a bf16 tensor's shape counts elements and its strides are bytes (the
cvk_tl_t / cvk_tg_t strides; w stride = the element size, 2). An 8-bit source becomes bf16 exactly
(int8 -> bf16 loads, tdma_g2l_bf16_tensor_copy); a bf16 source stored to an 8-bit destination is
rounded by int8_rnd_mode (cvikernel.h: "0 is round to nearest even, 1 is toward zero") and
saturated to int8 or uint8 (int8_sign). bf16 -> bf16 copies the 2-byte elements.
mv_lut_idx 1 on a bf16 local copy writes each element's exponent index, the index of the exponent
table of a bf16 exponent/mantissa lookup (reciprocal, rsqrt, power: `exponent_index`); mv_lut_base is
refused.
The data move in logical NCHW order as bm1880's do (bmk/sim/bm1880/tdma.py).
"""
import numpy as np

from bmk import numerics
from bmk.errors import SimulationError
from bmk.sim.bm1880 import tdma as base
from bmk.sim.cv181x import vlc
from bmk.sim.memory import GMEM, LMEM

_SPACES = {"load": (GMEM, LMEM), "store": (LMEM, GMEM), "copy_gmem": (GMEM, GMEM), "copy_lmem": (LMEM, LMEM)}


def is_bf16(chip, f, side):
    """Whether the `side` ("src", "dst") format is bf16 (the fmt enum, specs/cv181x/tdma.toml)."""
    return chip.member("tdma", f"{side}_fmt", f[f"{side}_fmt"]) == "bf16"


def exponent_index(bits):
    """The exponent index mv_lut_idx writes for bf16 `bits`, in both bytes of each element (tpu-mlir
    CV18xx TgLutKernel: "Get exponent index, set low and height bits with idx at same time").
    tpu-mlir's model of the exponent/mantissa lookup (Support LutFunc bf16_lut_mantissa, "align
    cmodel") indexes the exponent table by floor(log2(x)) + 63 for x > 0, floor(log2(-x)) + 191 for
    x < 0, 0 for x == 0 (its tables start at 2^-62, index 1; bf16_gen_reciprocal), the mantissa table
    by the bf16's low byte: for a normal bf16 of biased exponent E, E - 64 plus 128 when negative.
    Exponents below the table's (E < 64, where that formula goes negative) read index 0, as zeros
    and subnormals do, and those above it (E > 191) index 127: bmk's choice, no public source says."""
    bits = np.asarray(bits).astype(np.int64) & 0xFFFF
    e = (bits >> 7) & 0xFF
    idx = np.where(e <= 64, 0, np.minimum(e - 64, 127) | ((bits >> 8) & 0x80))
    return (idx | (idx << 8)).astype(np.uint16)


def has_bf16(chip, f):
    return is_bf16(chip, f, "src") or is_bf16(chip, f, "dst")


def _side(m, f, side, space, shape, write=False, st=None):
    """The view of one side; `st` its (n, c, h) byte strides (default: the side's fields)."""
    bf16 = is_bf16(m.chip, f, side)
    st = base._strides(m, f, side)[:3] if st is None else st
    addr = base._addr(m, f, side, space)
    if bf16:
        if any(s % 2 for s, d in zip(st, shape) if d > 1) or addr % 2:     # a size-1 dimension's stride is not read
            raise SimulationError(f"{side}: a bf16 side's address and strides must be even (2-byte elements), "
                                  f"not address 0x{addr:x} strides {st}")
        strides, dtype = tuple(s // 2 for s in st) + (1,), np.dtype("<u2")
    else:
        strides, dtype = st + (1,), None
    mem = m.lmem if space == LMEM else m.gmem
    return mem.tensor(f"{side} ({space})", addr, shape, strides, m.log, write, dtype)


def convert(values, src_bf16, dst_bf16, signed, rnd_mode):
    """The element conversion between an 8-bit integer side and a bf16 side (module docstring)."""
    if src_bf16 == dst_bf16:
        return values
    if dst_bf16:                               # 8-bit -> bf16, exact
        v = values.view(np.int8) if signed else values
        return numerics.fp32_to_bf16(v.astype(np.float32))
    x = numerics.bf16_to_fp32(values).astype(np.float64)
    x = np.trunc(x) if rnd_mode else np.rint(x)              # np.rint: nearest, ties to even
    lo, hi = (-128, 127) if signed else (0, 255)
    x = np.clip(np.nan_to_num(x, nan=0.0), lo, hi)
    return x.astype(np.int16).astype(np.uint8)


def move(m, f, kind):
    """A tensor move (load, store, copy_gmem, copy_lmem) with a bf16 side."""
    src_space, dst_space = _SPACES[kind]
    if f["sys_dtype"]:
        if kind not in ("load", "store"):
            raise SimulationError(f"tdma.{kind}: a bf16 matrix move (sys_dtype 1) is modelled for load and store only")
        _matrix(m, f, kind)
        return
    src_shape = base._src_shape(f)
    size = src_shape[0] * src_shape[1] * src_shape[2] * src_shape[3]
    chw = f["dst_c"] * f["dst_h"] * f["dst_w"]
    if chw == 0 or size % chw:
        raise SimulationError(f"dst_c * dst_h * dst_w must divide the {size} source elements, "
                              f"not {f['dst_c']} * {f['dst_h']} * {f['dst_w']}")
    data = np.asarray(_side(m, f, "src", src_space, src_shape).read())
    if f["mv_lut_idx"]:
        if not (is_bf16(m.chip, f, "src") and is_bf16(m.chip, f, "dst")) or kind != "copy_lmem":
            raise SimulationError(f"tdma.{kind}: mv_lut_idx 1 is modelled for a bf16 copy_lmem only")
        data = exponent_index(data)
    out = convert(data, is_bf16(m.chip, f, "src"), is_bf16(m.chip, f, "dst"), f["int8_sign"], f["int8_rnd_mode"])
    shape = (size // chw, f["dst_c"], f["dst_h"], f["dst_w"])
    _side(m, f, "dst", dst_space, shape, write=True).write(np.ascontiguousarray(out).reshape(shape))


def _convert(m, f, data):
    return convert(np.asarray(data), is_bf16(m.chip, f, "src"), is_bf16(m.chip, f, "dst"), f["int8_sign"],
                   f["int8_rnd_mode"])


def _matrix(m, f, kind):
    """A matrix load or store with a bf16 side, as bm1880's (bmk/sim/bm1880/tdma.py: gmem rows
    src_n / dst_c of src_w / dst_w columns, row stride the c stride; lmem (R, C', 1, W)), the
    elements converted as a tensor move's."""
    fmt = m.formats["tdma"]
    if kind == "load":
        rows, cols = f["src_n"], f["src_w"]
        row = fmt.compose("src_c_stride", f)
        data = _side(m, f, "src", GMEM, (rows, 1, 1, cols), st=(row, 0, 0)).read()
        values = _convert(m, f, data).reshape(rows, cols)
        base._matrix_to_lmem(m, f, values, lambda shape: _side(m, f, "dst", LMEM, shape, write=True))
        return
    src = _side(m, f, "src", LMEM, (f["src_n"], f["src_c"], 1, f["src_w"])).read()
    values = _convert(m, f, src).reshape(f["src_n"], -1)
    rows, cols = f["dst_c"], f["dst_w"]
    if rows != values.shape[0] or cols > values.shape[1]:
        raise SimulationError(f"dst_c, dst_w (gmem matrix rows, cols) must be {values.shape[0]}, <= "
                              f"{values.shape[1]}, not {rows}, {cols}")
    row = fmt.compose("dst_c_stride", f)
    _side(m, f, "dst", GMEM, (rows, 1, 1, cols), write=True, st=(row, 0, 0)).write(
        np.ascontiguousarray(values[:, :cols]).reshape(rows, 1, 1, cols))


def load_compressed(m, f):
    """A VLC-compressed load (compress_en 1; cvikernel tdma.c tdma_g2l_tensor_copy_decompressed,
    tdma_g2l_matrix_copy_decompressed): the int8 or bf16 stream at the source address decoded (vlc.py) into
    the source's elements in their logical order (a tensor's N, C, H, W; a matrix's src_n rows of
    src_w columns), stored into the destination as an uncompressed load would."""
    bf16 = is_bf16(m.chip, f, "src")
    if bf16 != is_bf16(m.chip, f, "dst"):
        raise SimulationError("tdma.load: a compressed load's src_fmt and dst_fmt must be equal (no conversion "
                              "is modelled for one)")
    n, c, h, w = base._src_shape(f)
    count = n * w if f["sys_dtype"] else n * c * h * w
    chw = f["dst_c"] * f["dst_h"] * f["dst_w"]
    if not f["sys_dtype"] and (chw == 0 or count % chw):
        raise SimulationError(f"dst_c * dst_h * dst_w must divide the {count} source elements, "
                              f"not {f['dst_c']} * {f['dst_h']} * {f['dst_w']}")
    addr = base._addr(m, f, "src", GMEM)
    size = vlc.span(m.gmem.load(addr, vlc.HEADER), count, bf16)
    m.gmem.check_range("src (gmem)", addr, size)
    if m.log is not None:
        m.log.charge("src (gmem)", size)
    data = vlc.decode(m.gmem.load(addr, size), count, bf16)

    def dst(shape):             # a bf16 side's view (2-byte elements), else bm1880's
        if bf16:
            return _side(m, f, "dst", LMEM, shape, write=True)
        return base._view(m, f, "dst", LMEM, shape, write=True)
    if f["sys_dtype"]:
        base._matrix_to_lmem(m, f, data.reshape(n, w), dst)
        return
    shape = (count // chw, f["dst_c"], f["dst_h"], f["dst_w"])
    dst(shape).write(data.reshape(shape))


KINDS = {kind: (lambda kind: lambda m, f: move(m, f, kind))(kind) for kind in _SPACES}
