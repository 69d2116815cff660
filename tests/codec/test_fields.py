"""A decoded Record's fields (bmk/encoders/fields.py, issue 34 item 3): a mapping read from the
command's bytes that behaves as the {field: value} dict it replaced, on every format of every
chip; values read against the formula of the register facts (field = the command's
little-endian integer >> bit, width bits)."""
import copy
import pickle
import re

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bmk
from bmk.encoders import codec_for
from bmk.encoders.fields import Fields, as_dict
from bmk.errors import EncodeError
from bmk.isa import chips as spec_chips
from bmk.isa import load_chip
from tests.vectors import vendor

FORMATS = [(chip, fmt) for chip in spec_chips() for fmt in load_chip(chip).formats + (load_chip(chip).header,)]


def expected(fmt, data):
    """{field: value} of a command's bytes, from the facts: bits [bit, bit + width) of its
    little-endian integer, in the codec's order (descending bit)."""
    word = int.from_bytes(data, "little")
    return {f.name: word >> f.bit & f.max for f in sorted(fmt.fields, key=lambda f: f.bit, reverse=True)}


@pytest.mark.parametrize("chip, fmt", FORMATS, ids=[f"{c}.{f.name}" for c, f in FORMATS])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_fields_read_every_value_as_the_facts_say(chip, fmt, data):
    raw = data.draw(st.binary(min_size=fmt.nbytes, max_size=fmt.nbytes))
    fields = codec_for(fmt).unpack(raw)
    want = expected(fmt, raw)
    assert type(fields) is Fields and len(fields) == len(want) and list(fields) == list(want)
    assert {k: fields[k] for k in want} == want and {k: fields.get(k) for k in want} == want
    assert list(fields.values()) == list(want.values()) and list(fields.items()) == list(want.items())
    assert fields.copy() == want and type(fields.copy()) is dict and list(fields.copy()) == list(want)
    assert fields == want and want == fields and not fields != want
    assert set(fields.keys()) == set(want) and all(k in fields for k in want) and "no such field" not in fields
    assert fields.get("no such field", -1) == -1
    assert codec_for(fmt).pack(fields) == raw == codec_for(fmt).pack(dict(want))


def test_decoded_records_read_as_their_dicts():
    """Every Record of the vendor's streams: its Fields equal the dict of the facts' formula, and
    the Record equals one made with that dict."""
    for chip in ("bm1684", "bm1684x"):
        spec = load_chip(chip)
        streams = vendor.streams(chip)
        for r in bmk.decode(chip, streams):
            fmt = spec.fmt(r.engine, r.cls)
            want = expected(fmt, streams[r.engine][r.offset:r.offset + fmt.nbytes])
            assert r.fields == want and r == attrs.evolve(r, fields=want)
            assert repr(r.fields) == repr(want) and as_dict(r.fields) == want


def bm1684x_conv():
    recs = bmk.decode("bm1684x", vendor.streams("bm1684x"))
    return recs, next(i for i, r in enumerate(recs) if r.cls == "sCONV")


def test_a_value_set_in_place_is_read_back_and_encoded():
    recs, i = bm1684x_conv()
    r = recs[i]
    fmt = load_chip("bm1684x").fmt("tiu", r.cls)
    name = "opd0_addr"
    field = fmt.by_name[name]
    before = r.fields.copy()
    r.fields[name] = field.max
    r.fields["opd1_addr"] = np.uint32(5)            # numpy integers are integers
    assert r.fields[name] == field.max and r.fields["opd1_addr"] == 5
    assert r.fields == before | {name: field.max, "opd1_addr": 5}
    again = bmk.decode("bm1684x", bmk.encode("bm1684x", recs, raw=True))
    assert again[i].fields == r.fields and again == recs


@pytest.mark.parametrize("value", [-1, 1 << 32, 1.0, "3", True])
def test_a_value_out_of_its_field_is_refused_at_once(value):
    recs, i = bm1684x_conv()
    fields = recs[i].fields
    before = fields.copy()
    with pytest.raises(EncodeError, match=rf"sCONV\.opd0_addr must be in \[0, 4294967295\], not {value!r}"):
        fields["opd0_addr"] = value
    assert fields == before


def test_fields_are_never_removed_or_added():
    recs, i = bm1684x_conv()
    fields = recs[i].fields
    before = fields.copy()
    with pytest.raises(KeyError, match="has no field 'nope'"):
        fields["nope"] = 1
    for remove in (lambda: fields.pop("opd0_addr"), lambda: fields.__delitem__("opd0_addr"),
                   fields.clear, fields.popitem):
        with pytest.raises(TypeError, match="every field of its class"):
            remove()
    assert fields == before and len(fields) == len(before)


def test_copies_pickles_and_unions():
    recs, i = bm1684x_conv()
    fields = recs[i].fields
    want = fields.copy()
    for other in (copy.copy(fields), copy.deepcopy(fields)):
        assert type(other) is Fields and other == fields
        other["opd0_addr"] = want["opd0_addr"] ^ 1         # a copy is its own
        assert other != fields and fields == want
    loaded = pickle.loads(pickle.dumps(fields))
    assert type(loaded) is dict and loaded == want
    assert fields | {"opd0_addr": 7} == want | {"opd0_addr": 7}
    assert {"opd0_addr": 7, "extra": 1} | fields == {"opd0_addr": 7, "extra": 1} | want
    assert {**fields} == want and dict(fields) == want and list(reversed(fields)) == list(reversed(want))
    other = copy.copy(fields)
    other |= {"opd0_addr": 7}                   # in place, as a dict's |=
    assert type(other) is Fields and other == want | {"opd0_addr": 7}
    with pytest.raises(TypeError):
        hash(fields)


@pytest.mark.parametrize("fields", [None, [1, 2], 3])
def test_a_record_without_a_mapping_of_fields_is_refused_by_name(fields):
    """A hand-made Record whose fields are not a mapping: encode, check and the simulator name
    the record and the rule (they let a TypeError out of their first field read before)."""
    recs = list(bmk.decode("bm1684x", vendor.streams("bm1684x")))
    recs[3] = attrs.evolve(recs[3], fields=fields)
    rule = re.escape(f"records[3].fields must be a mapping {{field name: int}}, not {fields!r}")
    for raw in (False, True):
        with pytest.raises(EncodeError, match=rf"encode: {rule}"):
            bmk.encode("bm1684x", recs, raw=raw)
    with pytest.raises(bmk.ArgumentError, match=rf"check: source\[3\]\.fields must be a mapping"):
        bmk.check(recs, "bm1684x")
    with pytest.raises(bmk.ArgumentError, match=rf"run: cmdbuf\[3\]\.fields must be a mapping"):
        bmk.Simulator("bm1684x").run(recs)


def test_made_from_bytes_as_the_codec_unpacks_them():
    codec = codec_for(load_chip("bm1684").engine("tiu").format)
    data = bytes(range(codec.nbytes))
    assert Fields(codec.layout, data) == codec.unpack(data) == expected(codec.format, data)
    with pytest.raises(bmk.DecodeError, match=f"must be {codec.nbytes} bytes, not 3"):
        Fields(codec.layout, b"abc")
