"""The text tools on long inputs: lazy listings, streamed text, linear diff (issues 12.10, 13.4)."""
import time
import tracemalloc

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from bmk import bm1880
from bmk.bm1880 import CTRL_NULL, FMT_I8
from bmk.encoders import decode_cmdbuf
from bmk.isa import load_chip
from bmk.text import asm as asmtext, diff as diffing, loading
from tests.goldens import GOLDEN_BUFFERS, GOLDEN_IDS

CHIP = load_chip("bm1880")


def loop_kernel(n, extra_at=None, distinct=False):
    """A loop kernel of n instructions (load, load, mul, store); one more load at tile `extra_at`."""
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 26)
    s = bm1880.shape_t4(1, 32, 4, 4)
    a, b, r = (ctx.tl_prealloc(i * 64, s, FMT_I8) for i in range(3))
    for k in range(n // 4):
        g = 0x100000 + 0x1000 * k if distinct else 0x1000
        ctx.gdma_load(a, g, CTRL_NULL)
        ctx.gdma_load(b, g + 0x400, CTRL_NULL)
        ctx.tpu_mul(res_high=None, res_low=r, a=a, b=b, rshift_width=0)
        if k == extra_at:
            ctx.gdma_load(b, 0x3000, CTRL_NULL)
        ctx.gdma_store(r, g + 0x800, CTRL_NULL)
    return ctx.acquire_cmdbuf()


@pytest.fixture(scope="module")
def kernels():
    n = 20_000
    return n, loop_kernel(n), loop_kernel(n, extra_at=n // 8)


# ------------------------------------------------------------------------------------- reading

@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\ufeff"]),
                max_size=30).map("".join),
       st.lists(st.integers(0, 40), max_size=6))
def test_text_lines_is_splitlines_across_chunks(text, cuts):
    cuts = sorted(c for c in cuts if c <= len(text))
    chunks = [text[i:j] for i, j in zip([0] + cuts, cuts + [len(text)])]
    assert list(asmtext.text_lines(chunks)) == text.removeprefix("\ufeff").splitlines()


@pytest.mark.parametrize("name,buf,instructions", GOLDEN_BUFFERS, ids=GOLDEN_IDS)
def test_lazy_listing_is_the_decoded_records(name, buf, instructions):
    listing = loading.load(buf, CHIP)
    assert len(listing.records) == len(instructions)
    assert list(listing.records) == decode_cmdbuf(CHIP, buf)
    if buf:
        assert listing.records[-1] == decode_cmdbuf(CHIP, buf)[-1]
    assert listing.records[1:3] == tuple(decode_cmdbuf(CHIP, buf)[1:3])


def test_text_file_listing_is_the_parsed_program(tmp_path):
    text = (".chip bm1880\n\n# a comment\n tdma.load dst_c=2 hdr.flags=0x3\r\n"
            "tiu.add res0_c=7 hdr.len=0 hdr.mask=0x70\ntiu.mul stream.pad=16\ntdma.store\n")
    (tmp_path / "k.s").write_text(text, newline="")
    listing = loading.load_path(tmp_path / "k.s")
    prog = asmtext.parse(text)
    assert listing.source == "text" and list(listing.records) == list(prog.records)
    assert [listing.where(i) for i in range(4)] == [f"{tmp_path / 'k.s'}:{n}" for n in (4, 5, 6, 7)]


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_disasm_and_diff_memory_is_the_buffer_not_the_records(tmp_path):
    """A listing is its bytes plus a few bytes a record, not a field dict per record (~3 kB each)."""
    n = 4000
    a, b = loop_kernel(n), loop_kernel(n, extra_at=n // 8)
    limit = 4 * len(a) + 2_000_000         # 3.3 MB; a dict per record would be 12 MB

    def disasm():
        for r in loading.load(a).records:
            asmtext.format_record(CHIP, r)
    assert _peak(disasm) < limit
    assert _peak(lambda: diffing.diff_listings(loading.load(a), loading.load(b), ["sync"])) < 2 * limit
    (tmp_path / "a.s").write_text(asmtext.disassemble(CHIP, loading.load(a).records))
    assert _peak(lambda: loading.load_path(tmp_path / "a.s")) < limit


# ---------------------------------------------------------------------------------------- diff

def _cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def test_ignore_sync_is_as_fast_as_without(kernels):
    """A loop kernel with one load more: was quadratic under --ignore sync (20k: 10 s of CPU)."""
    n, a, b = kernels
    la, lb = loading.load(a), loading.load(b)
    t_plain, plain = _cpu(lambda: diffing.diff_listings(la, lb))
    t_sync, sync = _cpu(lambda: diffing.diff_listings(la, lb, ["sync"]))
    assert sync.counts() == {"changed": 0, "inserted": 1, "deleted": 0, "equal": n}
    assert [(e.op, e.b_index) for e in sync.entries] == [("inserted", n // 2 + 3)]
    # without --ignore every sync id after the insertion differs: the pairs show as changed
    assert plain.counts() == {"changed": n // 2 - 3, "inserted": 1, "deleted": 0, "equal": n // 2 + 3}
    assert t_sync <= 2 * t_plain + 0.3 and t_sync < 3.0, (t_sync, t_plain)


def test_one_insertion_one_change_one_deletion_at_scale():
    base = decode_cmdbuf(CHIP, loop_kernel(8000, distinct=True))
    edited = list(base)
    edited[6000] = attrs.evolve(base[6000], fields={**base[6000].fields, "src_base_addr_low": 0x40})
    del edited[7000]
    edited.insert(100, base[5])
    d = diffing.diff_listings(loading.Listing(CHIP, tuple(base), "binary", "a"),
                              loading.Listing(CHIP, tuple(edited), "binary", "b"))
    assert [(e.op, e.a_index, e.b_index) for e in d.entries] == \
        [("inserted", None, 100), ("changed", 6000, 6001), ("deleted", 7000, None)]
    assert d.entries[1].fields == (("src_base_addr_low", base[6000].fields["src_base_addr_low"], 0x40),)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=300), st.data())
def test_linear_alignment_is_a_valid_alignment(monkeypatch_module, a, data):
    """Forced onto the linear path with small windows: opcodes cover both sides in order, equal
    blocks are equal, and a few edits of a long sequence cost about that many differences."""
    b = list(a)
    edits = data.draw(st.integers(0, 3))
    for _ in range(edits):
        op = data.draw(st.sampled_from(["insert", "delete", "change"]))
        at = data.draw(st.integers(0, len(b)))
        if op == "insert":
            b.insert(at, data.draw(st.integers(0, 5)))
        elif at < len(b):
            if op == "delete":
                del b[at]
            else:
                b[at] = 9
    ops = list(diffing.opcodes(a, b))
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j) and i2 >= i1 and j2 >= j1
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    differing = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
    assert differing <= 3 * edits + (2 * diffing.WINDOW if edits else 0)
    if edits == 0:
        assert all(tag == "equal" for tag, *_ in ops)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    mp.setattr(diffing, "SMALL", 0)
    mp.setattr(diffing, "WINDOW", 24)
    mp.setattr(diffing, "RUN", 3)
    mp.setattr(diffing, "NEAR", 3)
    yield mp
    mp.undo()


def test_shifted_sync_ids_stay_one_insertion_across_windows(monkeypatch):
    """Without --ignore, one load more shifts every later sync id: no window finds a point of
    agreement, and each must continue the last one's alignment (not one insert/delete pair each)."""
    monkeypatch.setattr(diffing, "WINDOW", 64)
    n = 4000
    a, b = loading.load(loop_kernel(n)), loading.load(loop_kernel(n, extra_at=10))
    d = diffing.diff_listings(a, b)
    assert d.counts() == {"changed": n - 43, "inserted": 1, "deleted": 0, "equal": 43}
    assert [e.b_index for e in d.entries if e.op == "inserted"] == [43]
