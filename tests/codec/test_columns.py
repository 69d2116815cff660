"""Raw streams decoded by columns (bmk.encoders.columns, issue 24 item 1) give exactly the Records
and the errors of the command-by-command path (decode_stream + merge_cores): on the vendor's
streams of every chip (one core and several, implicit ids, messages, an opaque engine), on
streams concatenated after their padding, and on mutated streams; Records are made lazily."""
import copy
import pickle
import random
from collections import defaultdict

import pytest

import bmk
from bmk.encoders import columns, framing
from bmk.isa import load_chip
from bmk.models.decoding import model_spec
from tests.models import files as F
from tests.vectors import vendor


def exact(chip, cores):
    """The command-by-command decoder: Records, or the DecodeError's message."""
    try:
        return framing.merge_streams(chip, [{e: framing.decode_stream(chip, e, d, core) for e, d in streams.items()}
                                            for core, streams in enumerate(cores)])
    except bmk.DecodeError as e:
        return str(e)


def by_columns(chip, cores):
    try:
        return list(framing.decode_raw_streams(chip, cores))
    except bmk.DecodeError as e:
        return str(e)


def model_cores(path):
    m = bmk.load_model(path)
    out = defaultdict(dict)
    for g in m.groups():
        out[(g.net, g.stage, g.subnet, g.index)][g.core] = dict(g.streams)
    return model_spec(m), [[by_core[c] for c in sorted(by_core)] for by_core in out.values()]   # its build's waits


@pytest.mark.parametrize("chip", vendor.CHIPS)
@pytest.mark.parametrize("copies", [1, 3])
def test_vendor_streams_give_the_same_records(chip, copies):
    spec = load_chip(chip)
    streams = {e: d * copies for e, d in vendor.streams(chip).items()}
    recs = columns.decode_streams(spec, [streams])
    assert isinstance(recs, columns.StreamRecords)
    assert list(recs) == exact(spec, [streams]) and len(recs) == len(exact(spec, [streams]))
    assert recs[-1] == exact(spec, [streams])[-1] and recs[3:5] == exact(spec, [streams])[3:5]


@pytest.mark.parametrize("path", [p for p in F.ALL if p.suffix == ".bmodel"], ids=lambda p: p.name)
def test_every_vendor_model_gives_the_same_records(path):
    """Every raw stream of every vendor bmodel in tests/models: BM1684 and BM1684X, and the newer
    chips' implicit ids, waits of classes without the field, several cores and their messages,
    and BM1690's opaque HAU stream."""
    spec, groups = model_cores(path)
    for cores in groups:
        got = framing.decode_raw_streams(spec, cores)
        assert isinstance(got, columns.StreamRecords)
        want = exact(spec, cores)
        assert len(got) == len(want) and list(got) == want
        assert [type(r) for r in got] == [type(r) for r in want]        # Records, not look-alikes
    m = bmk.load_model(path)
    for g in m.groups():                # what a model gives its users (listings, runs): the same Records
        got = m.records(g)
        assert isinstance(got, columns.StreamRecords) and list(got) == exact(spec, [dict(g.streams)])


def _mutate(rng, data):
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["flip", "set", "cut", "zeros", "truncate"])
        pos = rng.randrange(len(buf)) if buf else 0
        if op == "flip" and buf:
            buf[pos] ^= 1 << rng.randrange(8)
        elif op == "set" and buf:
            buf[pos] = rng.randrange(256)
        elif op == "cut":
            del buf[pos:pos + rng.choice([1, 16, 64, 200])]
        elif op == "zeros":
            buf[pos:pos] = bytes(rng.choice([16, 112, 128, 256, 300]))
        else:
            del buf[pos:]
    return bytes(buf)


def _source(chip):
    """Raw streams of one core of `chip`: the golden ones, or a vendor model's first group."""
    if chip in vendor.CHIPS:
        return vendor.streams(chip)
    path = {"bm1688": F.YOLO_1688, "cv184x": F.HAND_184X}[chip]
    return dict(next(iter(bmk.load_model(path).groups())).streams)


@pytest.mark.parametrize("chip", ["bm1684", "bm1684x", "bm1688", "cv184x"])
def test_mutated_streams_give_the_same_records_or_the_same_error(chip):
    """Flipped, set, cut, inserted and truncated bytes (BM1688 and CV184X: the alternate heads,
    implicit ids) decode to the same Records or raise the same DecodeError by both paths."""
    spec = load_chip(chip)
    rng = random.Random(f"columns-{chip}")
    base = {e: d[:next((r.offset for r in bmk.decode(chip, {e: d}) if r.offset >= 3000), len(d))]
            for e, d in _source(chip).items()}          # each cut at a command boundary
    outcomes = set()
    for _ in range(150):
        streams = {e: _mutate(rng, d) if rng.random() < 0.6 else d for e, d in base.items()}
        want, got = exact(spec, [streams]), by_columns(spec, [streams])
        assert got == want, (streams, got if isinstance(got, str) else len(got))
        outcomes.add(type(want).__name__)
    assert outcomes == {"list", "str"}


def test_records_are_made_when_asked_for():
    spec = load_chip("bm1684x")
    streams = {e: d * 50 for e, d in vendor.streams("bm1684x").items()}
    made = []
    recs = columns.decode_streams(spec, [streams])
    real = recs._make
    recs._make = lambda n, values: made.extend([1] * n) or real(n, values)
    assert len(recs) == 50 * 572 and not made and all(s._kinds is None for s in recs.streams)
    assert recs[10000].engine in ("tiu", "gdma") and len(made) == 1
    assert sum(1 for _ in recs.transient()) == len(recs) and len(made) == len(recs)
    assert sum(1 for _ in recs) == len(recs) and len(made) == 2 * len(recs) - 1     # kept from now on
    assert list(recs) == list(recs) and all(a is b for a, b in zip(recs, recs))
    assert len(made) == 2 * len(recs) - 1


def test_records_behave_as_a_list_of_them():
    """What a user of the list bmk.decode gave before does: change a Record's fields in place,
    change the sequence, concatenate, compare, print."""
    chip = "bm1684x"
    streams = vendor.streams(chip)
    want = exact(load_chip(chip), [streams])
    recs = bmk.decode(chip, streams)
    assert recs == want and want == recs and recs != tuple(want) and repr(recs) == repr(want)
    value = want[3].fields["constant_value"] ^ 1
    recs[3].fields["constant_value"] = value
    assert recs[3].fields["constant_value"] == value and recs[3] is recs[3] and recs != want
    again = bmk.decode(chip, streams)
    next(r for i, r in enumerate(again) if i == 3).fields["constant_value"] = value     # changed while iterating
    decoded = bmk.decode(chip, bmk.encode(chip, again, raw=True))
    assert decoded[3].fields["constant_value"] == value and decoded == again == recs     # the change is encoded
    recs = bmk.decode(chip, streams)
    for copied in (pickle.loads(pickle.dumps(recs)), copy.copy(recs), copy.deepcopy(recs)):
        assert type(copied) is list and copied == want
    extra = want[0]
    both = recs + [extra]
    assert isinstance(both, list) and both[-1] is extra and [extra] + recs == [extra] + want
    recs.append(extra)
    recs.insert(0, extra)
    del recs[1]
    assert len(recs) == len(want) + 1 and recs[0] is extra and recs[-1] is extra and recs[1:-1] == want[1:]
    recs.sort(key=lambda r: r.offset)
    assert [r.offset for r in recs] == sorted(r.offset for r in want + [extra]) and recs.copy() == list(recs)


def test_records_made_a_block_at_a_time_are_the_records_record_makes():
    """records.records sets Record's slots a column at a time, skipping attrs' __init__: valid
    while Record has no validator, converter, factory-only default or post-init hook to run."""
    import attrs
    from bmk.encoders.records import Record, records
    assert all(a.validator is None and a.converter is None for a in attrs.fields(Record))
    assert not hasattr(Record, "__attrs_post_init__") and not hasattr(Record, "__attrs_pre_init__")
    values = [("tiu", "CONV", "conv", {"a": 1}, "tiu", 16, {}, 0, None),
              ("gdma", "DMA_tensor", None, {}, None, 0, {"pad": 32}, 1, b"\x01")]
    made = records(2, list(zip(*values)))
    assert made == [Record(*v) for v in values] and all(type(r) is Record for r in made)
    assert [repr(r) for r in made] == [repr(Record(*v)) for v in values]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made[0].kind = "x"


def test_a_block_of_scattered_commands_gives_the_same_records():
    """Commands far apart in a stream (each unpacked from its own copy, not from one window of
    the block's span), near each other in any order, and the stream's last (its window cut at
    the stream's end) give the Records the exact decoder gives."""
    import numpy as np
    spec = load_chip("bm1684x")
    streams = {e: d * 20 for e, d in vendor.streams("bm1684x").items()}
    recs = columns.decode_streams(spec, [streams])
    want = {(r.engine, r.offset): r for r in exact(spec, [streams])}
    for s in recs.streams:
        n = len(s)
        for js in ([0, n - 1], [n - 1, 3, 0, n // 2], [5, 2, 3, 0, 9], list(range(n - 5, n))[::-1]):
            got = s.make_records(np.array(js), recs._make)
            assert got == [want[(s.engine.name, int(s.offsets[j]))] for j in js]
