"""`argmax_v3`: the host half of a CV18xx ArgMax, in numpy.

Facts: cviruntime src/common/cpu_function/argmax_v3.cpp (ArgMaxV3Func::setup, run, argmax<T>)
and tpu-mlir lib/Conversion/TopToTpu/CV18xx/Arg.cpp (LoweringArg: what the compiler hands it).
The TPU first reduces the last axis in tiles of 256 (the `_trans1` tensor, one max per tile);
the CPU then, for each of the `outer` rows (the product of the dims before `axis`; `inner` =
shape[axis]; tiles = ceil(inner / 256)):
- takes the first tile whose max is largest (strictly greater replaces: ties keep the first);
- in that tile, the index of the first element equal to that max (0 when none is equal: the
  row's index is then the tile's start);
- writes the index + tile start as fp32 to outputs[0] and, when there is a second output, the
  max as fp32: int8 max * `scale` (fp32 product), a 16-bit max read as bf16 bits.
Parameters: `axis` (int, required), `scale` (float, default 1.0; the compiler writes
threshold / 127 for an int8 ArgMax with values). Element types: int8 is compared as int8, any
other type as int16 (the C++ `else argmax<int16_t>()`): bf16 maxima compare as their bit
patterns read as int16, exactly as the runtime does. A type that is neither one byte int8 nor
two bytes (the C++ would read past a uint8 buffer) is refused. The data are read flat, row i at
i * inner, as the C++ does (the compiler only emits axis = the last dim).
"""
import math

import attrs
import numpy as np

from bmk import dtypes
from bmk.errors import ModelError
from bmk.models.cpu.params import get

TILE = 256          # elements per tile of the TPU's partial max (argmax_v3.cpp, setup: _tile_num)


@attrs.frozen
class Config:
    outer: int
    inner: int
    tiles: int
    scale: float
    int8: bool
    values: bool


def setup(function, inputs, outputs, path, where):
    """The checks of ArgMaxV3Func::setup, on the routine's tensors -> Config."""
    if len(inputs) != 2 or not 1 <= len(outputs) <= 2:
        raise ModelError(f"{where}: argmax_v3 takes 2 inputs (data, tile maxima) and 1 or 2 outputs (indices, "
                         f"values), not {len(inputs)} and {len(outputs)}", path)
    axis = get(function, "axis", "int", path, where)
    scale = get(function, "scale", "float", path, where, default=1.0)
    data, tmax = inputs
    if not 0 <= axis < len(data.shape):
        raise ModelError(f"{where}: argmax_v3 parameter 'axis' must be in [0, {len(data.shape) - 1}] for input "
                         f"{data.name!r} {tuple(data.shape)}, not {axis}", path, function.args_offset)
    if data.type != dtypes.INT8 and data.type.numpy.itemsize != 2:
        raise ModelError(f"{where}: argmax_v3 input {data.name!r} must be int8 or a 2-byte type (bf16), not "
                         f"{data.type.name}", path)
    if tmax.type != data.type:
        raise ModelError(f"{where}: argmax_v3 input {tmax.name!r} (tile maxima) must be {data.type.name} like "
                         f"{data.name!r}, not {tmax.type.name}", path)
    outer, inner = math.prod(data.shape[:axis]), data.shape[axis]
    tiles = -(-inner // TILE)
    if math.prod(tmax.shape) < outer * tiles:
        raise ModelError(f"{where}: argmax_v3 input {tmax.name!r} {tuple(tmax.shape)} must hold {outer} x {tiles} "
                         "tile maxima", path)
    for t in outputs:
        if t.type != dtypes.FP32 or math.prod(t.shape) != outer:
            raise ModelError(f"{where}: argmax_v3 output {t.name!r} must be fp32 with {outer} elements (one per "
                             f"row), not {t.type.name} {tuple(t.shape)}", path)
    return Config(outer, inner, tiles, float(scale), data.type == dtypes.INT8, len(outputs) == 2)


def run(config, arrays):
    """[data, tile maxima] -> [indices] or [indices, values] (fp32, one per row), as argmax<T>."""
    c = config
    kind = np.int8 if c.int8 else np.int16
    data = np.ascontiguousarray(arrays[0]).reshape(-1).view(kind)[:c.outer * c.inner].reshape(c.outer, c.inner)
    tmax = np.ascontiguousarray(arrays[1]).reshape(-1).view(kind)[:c.outer * c.tiles].reshape(c.outer, c.tiles)
    rows = np.arange(c.outer)
    tile = np.argmax(tmax, axis=1)                  # the first of equal maxima, as the strict '>' scan
    best = tmax[rows, tile]
    start = tile * TILE
    if c.tiles == 1:                                # the whole row is the tile
        equal = data == best[:, None]
    else:
        padded = np.zeros((c.outer, c.tiles * TILE), kind)
        padded[:, :c.inner] = data
        window = padded.reshape(c.outer, c.tiles, TILE)[rows, tile]
        inside = np.arange(TILE)[None, :] < np.minimum(c.inner - start, TILE)[:, None]
        equal = (window == best[:, None]) & inside
    index = np.where(equal.any(axis=1), np.argmax(equal, axis=1), 0) + start
    out = [index.astype(np.float32)]
    if c.values:
        if c.int8:
            values = best.astype(np.float32) * np.float32(c.scale)
        else:                                       # BF16(): the 16 bits above a zero low half
            values = (best.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        out.append(values)
    return out
