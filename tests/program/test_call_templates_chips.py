"""Call templates on bm1684 (OKKernel) and bm1684x (TPU-Kernel): every API function called
repeatedly with addresses (and some constants) that change is served by a call template
(bmk.templates), and gives the bytes of the ordinary path (templates switched off); a value
the checks reject still raises their error after a template exists."""
import collections

import attrs
import pytest

import bmk
import bmk.templates
from bmk import bm1684, bm1684x, program
from bmk.bm1684 import api as api84
from bmk.bm1684x import api as api84x

G = 0x100000000
CALLS = 5            # per function: the 2nd is traced, the 3rd on come from the template


def templates(ctx):
    """{call name: its templates} of a context's call shapes that got at least one."""
    return {k[0]: v for k, v in ctx._templates.learned().items()}


# -- bm1684: arguments by C parameter name -----------------------------------------------------------
S84 = (1, 8, 4, 4)
FIXED_84 = dict(shape=S84, input_shape=(1, 3, 8, 8), select_val=7, op_type=bm1684.S8_OP_S8_TO_S8,
                mul_type=bm1684.S16_MUL_S8_TO_S16, rshift=1, lshift=2, is_origin_dst_signed=True, num_series=8,
                is_signed=True, is_aligned_layout=True, output_c=4, kernel_h=3, kernel_w=3, using_bias=True,
                result_add=False, scale=0.25, rows=3, cols=10, cols_per_channel=4, row_stride=12, left_rows=5,
                left_cols=30, right_cols=9, left_cols_per_channel=16, right_cols_per_channel=4)

OVERRIDES_84 = {"bdc_fixed_point_packed_mac": dict(op_type=bm1684.S8_OP_S8_TO_S16),
                "bdc_fixed_point_packed_mac_C": dict(op_type=bm1684.S8_OP_S8_TO_S16)}


def _bm1684_args(row, k):
    """Arguments of one call `k`: each address at its own place, moved by k (system addresses
    of the GDMA functions by 64 bytes, local ones by 128); NULL strides; C an int for the
    integer functions and a float for the fp32 ones."""
    name = row.name
    system = set()
    if name.startswith("gdma_"):
        direction = name.rsplit("_", 1)[1]
        if direction in ("system", "local"):
            system = {"dst_addr"} if direction == "system" else set()
        else:
            system = {side for side, letter in (("src_addr", direction[0]), ("dst_addr", direction[2]))
                      if letter == "S"}
    fixed = {**FIXED_84, **OVERRIDES_84.get(name, {})}
    integer = "32bit" in name or "fixed_point" in name or name.startswith("gdma_")
    out = {}
    for i, field in enumerate(attrs.fields(row.record)):
        f = field.name
        if f in system:
            out[f] = G + 0x100000 * i + 64 * k
        elif f.endswith("_addr"):
            out[f] = 0x10000 * i + 128 * k
        elif f == "C":
            out[f] = 3 if integer else 0.5
        elif (f.endswith("stride") and f != "row_stride") or f in ("padding", "dilation"):
            out[f] = None
        else:
            out[f] = fixed[f]
    return out


# -- bm1684x: arguments by op record ------------------------------------------------------------------
S = bm1684x.dim4(1, 8, 4, 4)
I8, I16, U16 = bm1684x.DT_INT8, bm1684x.DT_INT16, bm1684x.DT_UINT16


def _bm1684x_args(row, k):
    r = row.record.__name__
    t = U16 if "logical" in row.name else I16
    a = 64 * k
    return {
        "Binary": lambda: (a, 0x1000, 0x2000 + a, S, None, None, None, I16),
        "BinaryC": lambda: (a, 0x1000, 5 + k, S, None, None, I16),
        "Shift": lambda: (a, 0x1000, 0x2000, S, None, None, None, t, t, I8, bm1684x.RM_HALF_UP),
        "ShiftC": lambda: (a, 0x1000, k - 3, S, None, None, t, t, bm1684x.RM_HALF_UP),
        "Compare": lambda: (a, 0x1000, 0x2000, k, S, None, None, None, I8, I16),
        "CompareC": lambda: (a, 0x1000, 7 * k, k, S, None, None, I8, I16),
        "VcBinary": lambda: (0x8000, 0x4000 + a, 0x6000, 64, 100 + k, 16, 16, I8),
        "VcCompare": lambda: (0x8000, 0x4000 + a, 0x6000, 1, 64, 100 + k, 16, 16, I8, I8),
        "GdmaCpy": lambda: {"S2L": (a, G + a, S, None, None, I16), "L2S": (G + a, a, S, None, None, I16),
                            "L2L": (a, 0x4000 + a, S, None, (64, 16, 4, 1), I16),
                            "S2S": (G + a, G + 0x100000 + 2 * k, S, (256, 16, 4, 1), None, I16)}[row.name[-3:]],
    }[r]()


def program_of(chip, long_form=False):
    """Every function of the chip, CALLS times each with changing arguments; the context and its bytes."""
    if chip == "bm1684":
        ctx = bm1684.Context()
        for row in api84.OPS:
            for k in range(CALLS):
                getattr(ctx, row.name)(**_bm1684_args(row, k))
    else:
        ctx = bm1684x.Context(long_form=long_form)
        for row in api84x.OPS:
            for k in range(CALLS):
                getattr(ctx, row.name)(*_bm1684x_args(row, k))
    return ctx, ctx.acquire_cmdbuf()


@pytest.mark.parametrize("chip, long_form", [("bm1684", False), ("bm1684x", False), ("bm1684x", True)])
def test_every_function_with_changing_addresses_uses_a_template(chip, long_form, monkeypatch):
    served = collections.Counter()
    from_template = bmk.templates.CallTemplates.lowered

    def counting(self, name, style, arguments):
        lowered = from_template(self, name, style, arguments)
        served[name] += lowered is not None
        return lowered
    monkeypatch.setattr(bmk.templates.CallTemplates, "lowered", counting)
    ctx, buf = program_of(chip, long_form)
    rows = api84.OPS if chip == "bm1684" else api84x.OPS
    assert set(templates(ctx)) == {row.name for row in rows}
    # the first call is seen, the second traced, every later one encoded by the template
    assert served == {row.name: CALLS - 2 for row in rows}
    monkeypatch.setattr(bmk.templates, "PER_SHAPE", 0)
    ordinary, again = program_of(chip, long_form)
    assert not templates(ordinary)
    assert again == buf


def test_bm1684_a_rejected_address_after_a_template_raises_the_ordinary_error():
    ctx = bm1684.Context()
    for k in range(3):
        ctx.gdma_32bit_cpy_S2L(0, G + 64 * k, S84, None, None)
    assert "gdma_32bit_cpy_S2L" in templates(ctx)
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match=r"gdma_32bit_cpy_S2L: src_addr must be a system address in "
                                                r"\[0x100000000, 0x[0-9a-f]+\), not 0xfff"):
        ctx.gdma_32bit_cpy_S2L(0, 4095, S84, None, None)
    with pytest.raises(bmk.ArgumentError, match=r"gdma_32bit_cpy_S2L: dst_addr must be divisible by 4, not 0x2 \(NPU 0:0x2\)"):
        ctx.gdma_32bit_cpy_S2L(2, G, S84, None, None)
    assert ctx.acquire_cmdbuf() == before


def _copies(ctx):
    for k in range(3):
        ctx.gdma_cpy_S2L(64 * k, G + 64 * k, S, None, None, I16)
    ctx.gdma_cpy_S2L(0, G, S, None, None, I8)          # another dtype: the int16 template must not serve it
    ctx.gdma_cpy_S2L(0, G, S, None, None, bm1684x.DT_FP32)
    return ctx.acquire_cmdbuf()


def test_bm1684x_a_template_serves_one_dtype_and_rejects_what_the_checks_reject(monkeypatch):
    ctx = bm1684x.Context()
    buf = _copies(ctx)
    assert "gdma_cpy_S2L" in templates(ctx)
    formats = [r.fields["src_data_format"] for r in bmk.decode("bm1684x", buf) if r.engine == "gdma"]
    assert len(set(formats[:3])) == 1 and len(set(formats[2:])) == 3
    monkeypatch.setattr(bmk.templates, "PER_SHAPE", 0)
    assert _copies(bm1684x.Context()) == buf
    monkeypatch.undo()
    before = ctx.acquire_cmdbuf()
    with pytest.raises(bmk.ArgumentError, match=r"gdma_cpy_S2L: dst_addr must be 64-byte aligned in its NPU"):
        ctx.gdma_cpy_S2L(32, G, S, None, None, I16)
    assert ctx.acquire_cmdbuf() == before
