"""The lookup tables a BM1684X (and BM1688) holds in static memory before any command runs (placed by the
simulator, as the vendor's cmodel does before a run).

Where: the static memory space of the memory map (specs/bm1684x/chip.toml [memory.static]), at
the byte offsets the chip's params name (`static_*_table`, with `*_len` entries), from tpu-mlir
python/debugger/target_1684x/cmodel.py `gen_lookup_table` (the tables' order and padding; the
golden yolov5s stream's tsbc.s_distribute reads the sequence table at offset 1472). Contents,
computed here and checked against the cmodel's listed words (tests/chips/bm1684x/sim):
- exp table: fp32 e^(i - 103), i < its length (e^-103 is the smallest subnormal, e^88 the
  largest finite power);
- exp coefficients: fp32 1 / k!; BM1690's fp16 ones: fp16 1 / k! (TPU1686 EXP_FP16_COEFF);
  CV184X's bf16 ones: bf16 1 / k! (EXP_BF16_COEFF);
- log coefficients: 0, then fp32 (-1)^(k+1) / k;
- sequence: int32 k; CV184X's int16 one: int16 k (TPU1686 mars3 memmap.h SERIAL_INT16_NUMBER).
The cmodel's other tables (erf, sin, cos, arcsin, tan, the fp16/bf16 log coefficients, the
fp16/bf16 exp ones where a chip's params do not place them) are not written: bmk reads them
as zeros (no public stream reads them; their listed words are not all derivable from a
formula).
"""
import math

import numpy as np


# (table, fp32 / int32 values of its first n entries); a chip's params name the tables it has
_CONTENTS = {
    "exp": lambda n: np.array([math.exp(i - 103) for i in range(n)], np.float64).astype(np.float32),
    "exp_coeff": lambda n: np.array([1 / math.factorial(k) for k in range(n)], np.float64).astype(np.float32),
    "log_coeff": lambda n: np.array([0.0] + [(-1) ** (k + 1) / k for k in range(1, n)],
                                    np.float64).astype(np.float32),
    "exp_fp16_coeff": lambda n: np.array([1 / math.factorial(k) for k in range(n)], np.float64).astype("<f2"),
    "seq": lambda n: np.arange(n, dtype="<i4"),
    "seq16": lambda n: np.arange(n, dtype="<i2"),
    "exp_bf16_coeff": lambda n: _bf16([1 / math.factorial(k) for k in range(n)]),
}


def _bf16(values):
    """bf16 bits (uint16) of values, rounded to nearest even from fp32 (the vendor's tables:
    1/6 is 0x3E2B, 1/120 0x3C09)."""
    bits = np.array(values, np.float64).astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")


def _tables(chip):
    """(offset, values) of every table the chip's params place (static_<table>_table[_len]):
    BM1684X has the four, BM1688 no exp table, CV184X the bf16 exp coefficients and the int32
    and int16 sequences (specs/<chip>/chip.toml)."""
    return tuple((chip.param(f"static_{t}_table"), make(chip.param(f"static_{t}_table_len")))
                 for t, make in _CONTENTS.items() if chip.param(f"static_{t}_table", None) is not None)


def load(m):
    """Write the tables into the simulator's static memory (a chip whose params place none has
    nothing to load)."""
    tables = _tables(m.chip)
    if not tables:
        return
    mem = m.memories[m.chip.space("static").name]
    for offset, values in tables:
        mem.store(offset, np.ascontiguousarray(values).view(np.uint8))
