"""disasm -> asm gives back the same bytes: every golden buffer, and random valid instructions."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bmk.text import asm as asmtext
from bmk.encoders import decode_cmdbuf, encode_record
from bmk.isa import load_chip
from tests.goldens import GOLDEN_BUFFERS, GOLDEN_IDS

CHIP = load_chip("bm1880")


@pytest.mark.parametrize("mode", asmtext.FIELD_MODES)
@pytest.mark.parametrize("name,buf,instructions", GOLDEN_BUFFERS, ids=GOLDEN_IDS)
def test_golden_round_trip(name, buf, instructions, mode):
    text = asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, buf), mode)
    assert asmtext.assemble(text) == buf


@pytest.mark.parametrize("name,buf,instructions", GOLDEN_BUFFERS, ids=GOLDEN_IDS)
def test_nonzero_listing_matches_golden_fields(name, buf, instructions):
    """`--fields nonzero` prints exactly the golden's non-zero fields (sync ids as id=/wait.X=)."""
    prog = asmtext.parse(asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, buf), "nonzero"))
    got = [{"engine": r.engine, "fields": {k: v for k, v in r.fields.items() if v}} for r in prog.records]
    assert got == instructions


def test_golden_buffers_present():
    assert len(GOLDEN_BUFFERS) >= 50


def _records():
    def for_engine(name):
        fmt = CHIP.engine(name).format
        values = st.fixed_dictionaries({f.name: st.one_of(st.just(f.default), st.just(0), st.just(f.max),
                                                          st.integers(0, f.max)) for f in fmt.fields})
        header = st.one_of(
            st.just({}),
            st.fixed_dictionaries({"flags": st.integers(0, 255), "mask": st.integers(0, 2**32 - 1),
                                   "deprecated": st.integers(0, 15)}),
            st.builds(lambda flags: {"len": 0, "mask": fmt.nbytes, "flags": flags}, st.integers(0, 255)))
        return st.tuples(st.just(name), values, header)
    return st.one_of(for_engine("tiu"), for_engine("tdma"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records(), min_size=1, max_size=4), st.sampled_from(asmtext.FIELD_MODES))
def test_random_instructions_round_trip(records, mode):
    buf = b"".join(encode_record(CHIP, e, f, h) for e, f, h in records)
    text = asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, buf), mode)
    assert asmtext.assemble(text) == buf
    # and the text is a fixed point of disasm . asm
    assert asmtext.disassemble(CHIP, asmtext.parse(text).records, mode) == text
