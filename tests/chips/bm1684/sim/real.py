"""Commands cut from the real compiled BM1684 networks of tests/models/bm1684/ (the vendor
compiler's output), to replay on the simulator with operands a test writes itself.

`records(path)` decodes a model's only group (program order, cached); `cut(records)` makes
the chosen commands a stand-alone stream (TIU ids 1..n, GDMA ids 1..m, each command waiting
for every command of the other engine before it: they run in the order given).
"""
import functools

import numpy as np

import bmk
from bmk.encoders import Record
from tests.models import files as F

LOCAL = 0x8000000


@functools.lru_cache(maxsize=None)
def records(path=F.RETINAFACE):
    m = bmk.load_model(path)
    (g,) = m.groups()
    return tuple(bmk.decode(m.chip, g.streams))


def cut(recs):
    out, ids = [], {"tiu": 0, "gdma": 0}
    for r in recs:
        ids[r.engine] += 1
        f = dict(r.fields)
        if r.engine == "tiu":
            f.update(cmd_id_tpu=ids["tiu"], cmd_id_gdma=ids["gdma"])
        else:
            f.update(cmd_id=ids["gdma"], eng0_sync_id=ids["tiu"])
        out.append(Record(r.engine, r.cls, r.kind, f, r.stream, r.offset, r.header))
    return out


def first(recs, kind, **fields):
    """The position of the first record of `kind` whose fields have the given values."""
    return next(i for i, r in enumerate(recs) if r.kind == kind and all(r.fields[k] == v for k, v in fields.items()))


def shape(f, slot):
    return tuple(f[f"{slot}_{d}"] for d in "nchw")


def cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
