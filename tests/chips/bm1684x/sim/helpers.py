"""Helpers of the bm1684x simulator tests: Records of either class, programs with sync ids,
local tensors in the seed's layouts, and numpy references written from seed 001's formulas
and the memory facts (bm1684x-memory.md), independently of bmk.sim.bm1684x."""
import attrs
import numpy as np

import bmk
from bmk import dtypes
from bmk.encoders import Record
from bmk.isa import load_chip

CHIP = load_chip("bm1684x")
NPU, LANE = 64, 262144
LOCAL_BASE, GLOBAL_BASE = 0x8000000, 0x100000000
INTS = (dtypes.INT8, dtypes.UINT8, dtypes.INT16, dtypes.UINT16, dtypes.INT32, dtypes.UINT32)
FLOATS = (dtypes.FP16, dtypes.FP32, dtypes.BF16)
PREC = {"int8": "int8", "uint8": "int8", "int16": "int16", "uint16": "int16", "int32": "int32",
        "uint32": "int32", "fp16": "fp16", "fp32": "fp32", "bf16": "bf16"}
SHORT = {"AR": "sAR", "CMP": "sCMP", "VC": "sVC"}


def prec(dt):
    return CHIP.engine("tiu").cls("AR").field("res0_prec").enum_value(PREC[dt.name])


def sign(dt):
    return int(dt.signed)


def rec(engine, cls, kind, **fields):
    """A Record of class `cls`: its defaults, selector keys, kind match, then `fields` (those
    the class has; others are dropped, so one field set serves a long class and its short form)."""
    c = CHIP.engine(engine).cls(cls)
    f = c.defaults
    f.update(dict(c.keys[0]))
    f.update(dict(c.instruction(kind).match))
    if "tsk_lane_num" in c.by_name:              # a long TIU class: every NPU, as a short one
        f["tsk_lane_num"] = c.by_name["tsk_lane_num"].max
    f.update({k: v for k, v in fields.items() if k in c.by_name})
    return Record(engine, cls, kind, f)


def program(records):
    """Serial sync ids: each engine counts its commands from 1, and each command waits for the
    other engine's last command before it (so the program runs in list order)."""
    last = {"tiu": 0, "gdma": 0}
    out = []
    for r in records:
        other = "gdma" if r.engine == "tiu" else "tiu"
        last[r.engine] += 1
        f = dict(r.fields)
        if "cmd_id" in f:
            f["cmd_id"] = last[r.engine]
            f["cmd_id_dep"] = last[other]
        out.append(attrs.evolve(r, fields=f))
    return out


def run(records, sim=None, raw=False):
    """Encode (cmd_hdr_t, or raw streams) and simulate; returns (sim, report)."""
    sim = sim or bmk.Simulator("bm1684x")
    recs = program(records)
    data = bmk.encode(CHIP, recs, raw=raw)
    return sim, sim.run(data)


def aligned(start_npu, shape, dt, compact=False):
    """The 64-byte aligned (compact) layout's strides in elements (bm1684x-memory.md)."""
    n, c, h, w = shape
    eu = 64 // dt.itemsize
    cs = h * w if compact else -(-(h * w) // eu) * eu
    return (-(-(start_npu + c) // NPU) * cs, cs, w, 1)


def to_storage(values, dt):
    v = np.asarray(values)
    if dt.name == "bf16":
        return (np.asarray(v, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dt.is_float:
        return v.astype(dt.numpy)
    return v.astype(np.int64).astype(dt.numpy)          # int -> int casts wrap modulo 2**bits


def from_storage(raw, dt):
    if dt.name == "bf16":
        return (np.asarray(raw).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(raw).astype(np.float64 if dt.is_float else np.int64)


def put(sim, addr, values, dt, strides=None):
    strides = strides or aligned(addr // LANE, np.shape(values), dt)
    sim.lmem_write_array(addr, to_storage(values, dt), strides, dt)


def get(sim, addr, shape, dt, strides=None):
    strides = strides or aligned(addr // LANE, shape, dt)
    return from_storage(sim.lmem_read_array(addr, shape, strides, dt), dt)


def rand(rng, shape, dt):
    """Random values of dt with its extremes planted at the first two places."""
    if dt.is_float:
        v = rng.standard_normal(shape) * 100
        v = from_storage(to_storage(v, dt), dt)
    else:
        v = rng.integers(dt.min, dt.max, shape, endpoint=True, dtype=np.int64)
    flat = v.reshape(-1)
    if flat.size >= 2 and not dt.is_float:
        flat[0], flat[1] = dt.min, dt.max
    return v


def wrap(v, dt):
    v = np.asarray(v, np.int64) & ((1 << dt.bits) - 1)
    return v - (1 << dt.bits) * (v >= (1 << (dt.bits - 1))) if dt.signed else v


def sat(v, dt):
    return np.clip(np.asarray(v), dt.min, dt.max)


def bits_of(value, dt):
    """The bit pattern a scalar of dt carries in a 32-bit constant field."""
    if dt.name == "fp32":
        return int(np.array([value], np.float32).view(np.uint32)[0])
    if dt.is_float:
        return int(to_storage(np.array([value]), dt).view(np.uint16)[0])
    return int(value) & ((1 << dt.bits) - 1)


def round_shift(x, n, mode):
    """x / 2**n rounded by rounding_mode_t `mode`, from the table of bm1684x-memory.md §4."""
    x = int(x)
    if n == 0:
        return x
    f, r, half = x >> n, x - ((x >> n) << n), 1 << (n - 1)
    up = {0: r > half or (r == half and f & 1), 1: r > half or (r == half and x >= 0),
          2: x < 0 and r != 0, 3: False, 4: r != 0, 5: r >= half, 6: r > half}[mode]
    return f + int(bool(up))
