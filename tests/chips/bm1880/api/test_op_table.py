"""The bm1880 op table against the spec: rows name kinds that exist, lowerings emit only the
kinds their row declares, and every row (and alias) is a generated Context method. Its shape:
rows carry family check and lowering functions, which read every fact from the chip they are
given."""
import functools
import tomllib
from importlib import resources

import attrs
import pytest

from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8, api, shape_t4
from bmk.bm1880.checks.common import Check
from bmk.errors import ArgumentError
from bmk.isa import load_chip
from bmk.isa.spec import build_chip
from bmk.optable import POSITIONAL
from tests.goldens import load_cases, run_calls

CHIP = load_chip("bm1880")
ROWS = {row.name: row for row in api.OPS}


def spec_kind(engine, fields):
    ins = CHIP.engine(engine).format.instruction_of(fields)
    return f"{engine}.{ins.name if ins else '?'}"


class Recording(bm1880.Context):
    """A Context that notes the kinds each row's lowering emits."""

    emitted = {}

    def _pack(self, call, descriptors):
        if call in ROWS:
            self.emitted.setdefault(call, set()).update(spec_kind(e, f) for e, f in descriptors)
        return super()._pack(call, descriptors)


@pytest.fixture(scope="module")
def emitted():
    """Every golden case replayed through a Recording context: {row name: kinds emitted}."""
    Recording.emitted = {}
    register = bm1880.register
    bm1880.register = lambda **kw: Recording(**kw)
    try:
        for case in load_cases().values():
            run_calls(case)
    finally:
        bm1880.register = register
    # No vendor encoding exists for these two, so no golden calls them (good calls of
    # tests/chips/bm1880/api/test_errors_conv.py).
    ctx = Recording()
    t4 = ctx.tl_prealloc_align
    ctx.tpu_winograd(ifmap=t4(0, shape_t4(1, 16, 8, 8), FMT_I8),
                     weight=ctx.tl_prealloc(2048, shape_t4(16, 32, 3, 3), FMT_I8),
                     ofmap=t4(4096, shape_t4(1, 32, 8, 8), FMT_I8), pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
    ctx.tpu_matrix_mac_2(res=t4(16384, shape_t4(1, 256, 1, 256), FMT_I8), left=t4(0, shape_t4(1, 256, 1, 256), FMT_I8),
                         right=t4(8192, shape_t4(256, 16, 1, 16), FMT_I8))
    return Recording.emitted


def test_table_shape():
    """(Every chip's rows: tests/chips/test_op_tables.py.) bm1880's positional rows are its gdma calls."""
    assert {row.name for row in api.OPS if row.call == POSITIONAL} == {n for n in ROWS if n.startswith("gdma_")}


@pytest.mark.parametrize("row", api.OPS, ids=[row.name for row in api.OPS])
def test_lowering_emits_only_declared_kinds(emitted, row):
    assert row.name in emitted, f"no golden case calls {row.name}"
    assert emitted[row.name] <= set(row.kinds), f"{row.name} emitted {sorted(emitted[row.name])}"


def test_every_declared_kind_is_emitted_by_some_golden(emitted):
    declared = {k for row in api.OPS for k in row.kinds}
    seen = set().union(*emitted.values())
    # no golden stores with CTRL_TP, no golden gmem-to-gmem transposes (the v2 encoder has neither)
    assert declared - seen <= {"tdma.store_tp", "tdma.copy_gmem_tp"}, sorted(declared - seen)


@pytest.mark.parametrize("row", api.OPS, ids=[row.name for row in api.OPS])
def test_every_name_is_an_api_name_citing_seed_chapter_4(row):
    assert row.c_name == f"bmk1880_{row.name}" and row.seed.startswith("4.")
    assert set(row.names) <= set(bm1880.API_NAMES)


def test_docstring_example():
    assert bm1880.Context.tpu_mul.__doc__ == "bmk1880_tpu_mul (seed 4.19): res = (a * b) >> rshift_width."


def test_api_md_names_are_all_in_the_table():
    # API.md, "bm1880": every computation function of the seed's chapter 4, and the gdma calls.
    listed = """tpu_mul tpu_mul_const tpu_mac tpu_mac_const tpu_add tpu_add_const tpu_sub tpu_max tpu_min
        tpu_min_const tpu_arith_shift tpu_and_int8 tpu_and_int16 tpu_or_int8 tpu_or_int16 tpu_xor_int8
        tpu_xor_int16 tpu_copy tpu_copy_with_stride tpu_mdsum tpu_lut tpu_relu tpu_conv tpu_winograd
        tpu_depthwise tpu_max_pooling tpu_avg_pooling tpu_matrix_mac tpu_matrix_mac_2 gdma_load gdma_store
        gdma_load_stride gdma_store_stride gdma_copy_gmem gdma_copy_lmem gdma_lrn_shift""".split()
    assert set(listed) == set(ROWS)
    for alias in ("tl_load", "tl_store", "tl_and_int8"):
        assert alias in api.NAMES


def test_api_names_are_derived():
    ctx = bm1880.register()
    for name in bm1880.API_NAMES:
        assert callable(getattr(ctx, name)), name
    assert set(api.NAMES) <= set(bm1880.API_NAMES)


# -- the shape of the table: family functions, facts from the chip given ---------------------------
def _family(fn):
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return fn.__module__.rsplit(".", 1), fn.__name__


@pytest.mark.parametrize("row", api.OPS, ids=[row.name for row in api.OPS])
def test_rows_carry_family_check_and_lowering(row):
    """No one-line wrapper named after the API function: the row holds a family function of
    checks/<family>.py and one of lowering/<family>.py (the same family), with its parameters."""
    (check_package, check_family), check_name = _family(row.check)
    (lower_package, lower_family), lower_name = _family(row.lower)
    assert (check_package, lower_package) == ("bmk.bm1880.checks", "bmk.bm1880.lowering")
    assert check_family == lower_family in ("dma", "eltwise", "conv", "matrix")
    assert row.name not in (check_name, lower_name)


def _spec_files():
    root = resources.files("bmk.specs").joinpath("bm1880")
    return {name: tomllib.loads(root.joinpath(name).read_text()) for name in ("chip.toml", "tiu.toml", "tdma.toml")}


def _variant(edit):
    """The bm1880 spec rebuilt from its files after edit(files) changed them."""
    files = _spec_files()
    edit(files)
    return build_chip("bm1880", files["chip.toml"], files.__getitem__)


def _renumbered(files):
    """Other codes for the kinds, the short_*_str enum, the TDMA directions and sys_dtype."""
    tiu, tdma = files["tiu.toml"], files["tdma.toml"]
    for ins in tiu["instructions"]:
        if ins["name"] == "mul":
            ins["match"]["tsk_eu_typ"] = 0x42
    tiu["enums"]["short_str"] = {"aligned": 3, "weight": 2, "bias": 1, "explicit": 0}
    for ins in tdma["instructions"]:
        ins["match"]["trans_dir"] = 3 - ins["match"]["trans_dir"]
    tdma["enums"]["sys_dtype"] = {"tensor": 1, "matrix": 0}
    files["chip.toml"]["memory"]["global"]["base"] = 0x200000000


def test_lowering_reads_the_chip_it_is_given():
    chip = _variant(_renumbered)
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, shape_t4(1, 32, 4, 4), FMT_I8)
    row = ROWS["tpu_mul"]
    (_, f), = row.lower(chip, row.record(res_high=None, res_low=t, a=t, b=t, rshift_width=3))
    assert (f["tsk_typ"], f["tsk_eu_typ"], f["short_res0_str"], f["short_opd2_str"]) == (3, 0x42, 0, 0)
    (_, g), = row.lower(CHIP, row.record(res_high=None, res_low=t, a=t, b=t, rshift_width=3))
    assert (g["tsk_typ"], g["tsk_eu_typ"], g["short_res0_str"], g["short_opd2_str"]) == (3, 0, 3, 3)
    row = ROWS["gdma_load"]
    (_, f), = row.lower(chip, row.record(t, 0x1000, CTRL_NULL))
    assert (f["trans_dir"], f["spec_func"], f["sys_dtype"]) == (3, 0, 1)
    assert chip.compose("tdma", "src_addr", f) == 0x200001000
    (_, g), = row.lower(CHIP, row.record(t, 0x1000, CTRL_NULL))
    assert (g["trans_dir"], g["spec_func"], g["sys_dtype"]) == (0, 0, 0)
    assert CHIP.compose("tdma", "src_addr", g) == 0x100001000


def test_checks_read_the_chip_they_are_given():
    ctx = bm1880.register()
    chip = attrs.evolve(CHIP, params=tuple({**dict(CHIP.params), "npu_num": 16}.items()),
                        memory=tuple(attrs.evolve(m, size=0x10000) if m.name == "global" else m for m in CHIP.memory))
    table = ctx.tl_prealloc_align(0, shape_t4(1, 32, 16, 16), FMT_I8)
    t = ctx.tl_prealloc_align(0x1000, shape_t4(1, 32, 4, 4), FMT_I8)
    lut = ROWS["tpu_lut"]
    record = lut.record(ofmap=t, ifmap=t, table=table)
    lut.check(Check(CHIP, "tpu_lut", ctx), record)
    with pytest.raises(ArgumentError, match=r"tpu_lut: table.shape must be \(1, 16, 16, 16\)"):
        lut.check(Check(chip, "tpu_lut", ctx), record)
    load = ROWS["gdma_load"]
    load.check(Check(CHIP, "gdma_load", ctx), load.record(t, 0x10000, CTRL_NULL))
    with pytest.raises(ArgumentError, match=r"gdma_load: gaddr must be an integer in \[0, 65535\]"):
        load.check(Check(chip, "gdma_load", ctx), load.record(t, 0x10000, CTRL_NULL))


def test_field_limits_come_from_the_spec():
    """Shifts, window fields and TDMA strides are refused past their fields' widths."""
    def narrow(files):
        for f in files["tiu.toml"]["fields"]:
            if f["name"] == "opt_right_shift":      # 5 bits -> 4, the freed bit reserved
                f["width"] = 4
        files["tiu.toml"]["fields"].append({"name": "rsvd_test", "bit": 55, "width": 1, "reserved": True})
    chip = _variant(narrow)
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, shape_t4(1, 32, 4, 4), FMT_I8)
    mul = ROWS["tpu_mul"]
    record = mul.record(res_high=None, res_low=t, a=t, b=t, rshift_width=20)
    mul.check(Check(CHIP, "tpu_mul", ctx), record)
    with pytest.raises(ArgumentError, match=r"tpu_mul: rshift_width must be an integer in \[0, 15\], not 20"):
        mul.check(Check(chip, "tpu_mul", ctx), record)
    assert CHIP.limit("tdma", "src_c_stride") == 0xFFFFFFFF and CHIP.limit("tdma", "src_addr") == (1 << 40) - 1
