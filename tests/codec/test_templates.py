"""codec.Template (per-kind packing: defaults and prefix pre-packed, only the given fields packed
per call) against the generic Codec.pack, for every instruction class of every chip."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bmk.encoders import codec_for
from bmk.errors import EncodeError
from bmk.isa import chips as spec_chips
from bmk.isa import load_chip

FORMATS = [(chip, fmt) for chip in spec_chips() for fmt in load_chip(chip).formats]


@pytest.mark.parametrize("chip, fmt", FORMATS, ids=[f"{c}.{f.name}" for c, f in FORMATS])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_template_packs_like_the_codec(chip, fmt, data):
    codec = codec_for(fmt)
    names = data.draw(st.permutations([f.name for f in fmt.fields]))
    keys = tuple(names[:data.draw(st.integers(0, len(names)))])
    cleared = data.draw(st.lists(st.sampled_from([f.name for f in fmt.fields]), max_size=3))
    clear = sum(fmt.by_name[n].max << fmt.by_name[n].bit for n in cleared)
    prefix = data.draw(st.binary(max_size=8))
    template = codec.template(keys, prefix, clear)
    for _ in range(3):        # one template, several value sets
        fields = {k: data.draw(st.integers(0, fmt.by_name[k].max)) for k in keys}
        expected = int.from_bytes(codec.pack(fields), "little") & ~clear
        assert template.pack(fields) == prefix + expected.to_bytes(fmt.nbytes, "little")


def test_template_errors_are_the_codecs():
    fmt = load_chip("bm1880").engine("tiu").format
    codec = codec_for(fmt)
    template = codec.template(("res0_c", "res0_h"))
    with pytest.raises(EncodeError, match=r"tiu.res0_c must be in \[0, 4095\], not 4096"):
        template.pack({"res0_c": 4096, "res0_h": 1})
    with pytest.raises(EncodeError, match=r"tiu.res0_h must be in \[0, 4095\], not -1"):
        template.pack({"res0_c": 1, "res0_h": -1})
    with pytest.raises(EncodeError, match=r"unknown fields \['nope'\]"):
        codec.template(("res0_c", "nope"))
