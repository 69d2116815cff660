"""No silent field (issue 21 item 1) and what a fresh chip holds.

Every kind of every class: each field the kind does not execute (bmk.sim.bm1684x.EXECUTES),
set on its own to a non-zero value, is refused by name before anything runs; the fields it
executes, and the head fields (sync ids, selectors, power step, interrupt), are not (a value
of an executed field may be refused by the kind's own static check, CHECKS, with its rule).
"""
import re

import numpy as np
import pytest

import bmk
from bmk.errors import SimulationError
from bmk.sim.bm1684x import EXECUTES, SEMANTICS
from bmk.sim.bm1684x.fields import head
from tests.chips.bm1684x.sim.helpers import CHIP

CASES = [(e.name, c.name, ins.name) for e in CHIP.encoded_engines for c in e.classes for ins in c.instructions]


def _base(engine, cls, kind):
    """Every field 0 but those whose 0 the kind's static check (CHECKS) refuses: stride_enable 1
    where the kind executes it (a strided GDMA kind refuses implicit strides), a dequantize's
    float result."""
    c = CHIP.engine(engine).cls(cls)
    f = {fld.name: 0 for fld in c.fields}
    if "stride_enable" in EXECUTES.get((engine, kind), ()):
        f["stride_enable"] = 1
    if kind in ("quant.dq0", "quant.dq2"):
        f["res0_prec"] = c.field("res0_prec").enum_value("fp32")
    f.update(dict(c.keys[0]))
    f.update(dict(c.instruction(kind).match))
    return c, f


def test_every_kind_has_semantics_and_a_field_list():
    assert SEMANTICS.missing(CHIP) == []
    assert set(EXECUTES) == set(SEMANTICS.kinds) and len(SEMANTICS.kinds) == 163


@pytest.mark.parametrize("engine,cls,kind", CASES, ids=[f"{c}-{k}" for _, c, k in CASES])
def test_a_field_the_kind_does_not_execute_is_refused_by_name(engine, cls, kind):
    c, base = _base(engine, cls, kind)
    SEMANTICS.check(CHIP, engine, base)                  # all zero: nothing to refuse
    done = EXECUTES[(engine, kind)]
    refused = 0
    for fld in c.fields:
        if fld.reserved or fld.name in head(CHIP, engine) or fld.name in base and fld.name in dict(c.keys[0]):
            continue
        f = dict(base, **{fld.name: 1})
        if c.instruction_of(f) is None or c.instruction_of(f).name != kind:
            continue                                      # the field selects another kind
        if fld.name in done:
            try:
                SEMANTICS.check(CHIP, engine, f)
            except SimulationError as e:          # the kind's static check of a value it refuses
                assert re.match(rf"^{re.escape(kind)}: \w+ ", str(e)), str(e)
            continue
        with pytest.raises(SimulationError, match=rf"^{re.escape(kind)} \({re.escape(cls)}\): {fld.name} must be 0 "
                                                  rf"\(bmk's {re.escape(kind)} does not execute it"):
            SEMANTICS.check(CHIP, engine, f)
        refused += 1
    if engine == "tiu" and c.nbytes == 128:          # a long TIU class carries every family's fields
        assert refused


def test_the_refusal_names_the_instruction_in_a_run():
    c, f = _base("tiu", "AR", "arith.add")
    f.update(res0_n=1, res0_c=1, res0_h=1, res0_w=1, tsk_opd_num=2, tsk_lane_num=CHIP.all_lanes, relu=1)
    r = bmk.encoders.Record("tiu", "AR", "arith.add", f)
    with pytest.raises(SimulationError, match=r"instruction 0 \(byte 0, tiu\): arith.add \(AR\): relu must be 0"):
        bmk.Simulator("bm1684x").run(bmk.encode(CHIP, [r]))


# tpu-mlir python/debugger/target_1684x/cmodel.py gen_lookup_table: the words the vendor's cmodel
# writes in static memory (a sample of each table bmk writes), as they are listed there.
EXP_TABLE_HEAD = [0x1, 0x4, 0xA, 0x1B, 0x48, 0xC4, 0x215, 0x5A9, 0xF64, 0x29D6, 0x71B9]
EXP_TABLE_AT_103 = 0x3F800000
EXP_TABLE_LAST = 0x7EF882B7                     # entry 191
EXP_COEFF = [0x3F800000, 0x3F800000, 0x3F000000, 0x3E2AAAAB, 0x3D2AAAAB, 0x3C088889, 0x3AB60B61, 0x39500D01,
             0x37D00D01, 0x3638EF1D, 0x3493F27E, 0x32D7322B, 0x310F76C7, 0x2F309231, 0x2D49CBA5, 0x2B573F9F,
             0x29573F9F, 0x274A963C, 0x253413C3, 0x2317A4DA, 0x20F2A15D, 0x1EB8DC78, 0x1C8671CB, 0x1A3B0DA1,
             0x17F96781, 0x159F9E67, 0x13447430, 0x10E8D58E, 0xE850C51, 0xC12CFCC, 0x99C9963, 0x721A697]
LOG_COEFF_HEAD = [0x0, 0x3F800000, 0xBF000000, 0x3EAAAAAB, 0xBE800000, 0x3E4CCCCD, 0xBE2AAAAB, 0x3E124925,
                  0xBE000000, 0x3DE38E39, 0xBDCCCCCD, 0x3DBA2E8C]
LOG_COEFF_LAST = 0x3C820821                     # entry 63


def _static_words(sim, offset, n):
    return np.frombuffer(sim.memories["static"].load(offset, 4 * n).tobytes(), "<u4").tolist()


def test_static_memory_holds_the_vendors_lookup_tables():
    sim = bmk.Simulator("bm1684x")
    p = CHIP.param
    exp = _static_words(sim, p("static_exp_table"), 256)
    assert exp[:11] == EXP_TABLE_HEAD and exp[103] == EXP_TABLE_AT_103 and exp[191] == EXP_TABLE_LAST
    assert exp[192:] == [0] * 64
    assert _static_words(sim, p("static_exp_coeff_table"), 32) == EXP_COEFF
    log = _static_words(sim, p("static_log_coeff_table"), 64)
    assert log[:12] == LOG_COEFF_HEAD and log[63] == LOG_COEFF_LAST
    assert _static_words(sim, p("static_seq_table"), 64) == list(range(64))
    assert p("static_seq_table") == 1472          # where the golden yolov5s stream's s_distribute reads


def test_every_kind_has_a_reference_test():
    """Each kind of the spec is run against a numpy reference in tests/sim/bm1684x: named in a
    test module, or covered by a test parametrized over its class (LAR against AR for every
    op of test_ar_kinds.LAR_KINDS; every SYSID kind in test_data_kinds)."""
    import pathlib
    from bmk.sim.semantics import spec_kinds
    from tests.chips.bm1684x.sim.test_ar_kinds import LAR_KINDS
    text = "\n".join(p.read_text() for p in pathlib.Path(__file__).parent.glob("test_*.py"))
    sysid = {i.name for i in CHIP.engine("tiu").cls("SYSID").instructions}
    missing = [k for _, k in spec_kinds(CHIP) if f'"{k}"' not in text and k not in sysid
               and not (k.startswith("lar.") and k[4:] in LAR_KINDS)]
    assert missing == []
