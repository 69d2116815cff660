"""Raw-stream text tools in flat memory (issue 24 item 2): bmk-asm writes raw streams as it parses;
bmk-disasm and bmk-diff read raw streams as columns (bmk/text/raw.py), Records made one at a time."""
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import asm, diff, disasm
from bmk.encoders import decode_stream, merge_streams
from bmk.encoders.framing import PAD, StreamWriter, encode_stream, frame_stream, pack
from bmk.errors import BmkError
from bmk.isa import load_chip
from bmk.text import asm as asmtext, diff as diffing, loading, raw

CHIP = load_chip("bm1684x")
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "bm1684x"
YOLO = {e: (GOLDEN / f"yolov5s_bm1684x_int8_sym.{e}.bin").read_bytes() for e in ("tiu", "gdma")}


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


@pytest.mark.parametrize("copies", [1, 3])
def test_stream_writer_frames_as_encode_stream(copies):
    """Closed streams back to back, and padding (PAD) after some commands: inner padding after its
    command, the last command's at the end, as encode_stream frames them."""
    import attrs
    for engine, data in YOLO.items():
        recs = bmk.decode("bm1684x", {engine: data * copies})
        padded = [attrs.evolve(r, header={PAD: 64 * (k % 3)}) if k % 50 == 7 else r for k, r in enumerate(recs)]
        padded[-1] = attrs.evolve(padded[-1], header={PAD: 5})
        for rs in (recs, padded):
            out = []
            w = StreamWriter(CHIP.engine(engine).stream, out.append)
            for r in rs:
                w.add(pack(CHIP, r), r.header.get(PAD))
            w.close()
            assert b"".join(out) == encode_stream(CHIP, engine, rs)
        assert encode_stream(CHIP, engine, recs) == data * copies


def test_empty_stream_writer_is_the_empty_stream():
    out = []
    w = StreamWriter(CHIP.engine("tiu").stream, out.append)
    w.close()
    assert b"".join(out) == frame_stream(CHIP.engine("tiu").stream, []) == b""


def _listing(runner, copies=1):
    for e, data in YOLO.items():
        open(f"in.{e}", "wb").write(data * copies)
    res = runner.invoke(disasm, ["--chip", "bm1684x", "--raw", "tiu", "in.tiu", "--raw", "gdma", "in.gdma",
                                 "-o", "in.s"])
    assert res.exit_code == 0, res.stderr
    return open("in.s").read()


def test_asm_raw_gives_the_streams_back(runner):
    _listing(runner, copies=2)
    res = runner.invoke(asm, ["in.s", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin", "-o", "c.bin"])
    assert res.exit_code == 0, res.stderr
    assert open("t.bin", "rb").read() == YOLO["tiu"] * 2
    assert open("g.bin", "rb").read() == YOLO["gdma"] * 2
    assert [(r.engine, r.fields) for r in bmk.decode("bm1684x", open("c.bin", "rb").read())] == \
        [(r.engine, r.fields) for r in bmk.decode("bm1684x", {e: d * 2 for e, d in YOLO.items()})]
    assert sorted(os.listdir(".")) == ["c.bin", "g.bin", "in.gdma", "in.s", "in.tiu", "t.bin"]   # no temporaries


def test_asm_failure_late_in_the_text_leaves_the_outputs_untouched(runner):
    text = _listing(runner)
    open("in.s", "w").write(text + "tiu.nonsense x=1\n")
    open("t.bin", "wb").write(b"old")
    os.chmod("t.bin", 0o640)
    res = runner.invoke(asm, ["in.s", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin"])
    assert res.exit_code == 2
    assert f"in.s:{text.count(chr(10)) + 1}" in res.stderr
    assert open("t.bin", "rb").read() == b"old"
    assert not os.path.exists("g.bin")
    assert sorted(os.listdir(".")) == ["in.gdma", "in.s", "in.tiu", "t.bin"]
    res = runner.invoke(asm, ["in.s", "--raw", "tpu", "t.bin"])     # an unknown engine: after the text is read
    assert res.exit_code == 2 and "tiu.nonsense" in res.stderr
    open("in.s", "w").write(text)
    res = runner.invoke(asm, ["in.s", "--raw", "tiu", "t.bin"])
    assert res.exit_code == 0, res.stderr
    assert open("t.bin", "rb").read() == YOLO["tiu"] and os.stat("t.bin").st_mode & 0o777 == 0o640
    res = runner.invoke(asm, ["in.s", "--raw", "tpu", "t.bin"])
    assert res.exit_code == 2 and "--raw: engine must be one of" in res.stderr


def test_asm_raw_to_stdout(runner):
    _listing(runner)
    res = runner.invoke(asm, ["in.s", "--raw", "gdma", "-"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout_bytes == YOLO["gdma"]


def test_asm_memory_does_not_grow_with_the_text(runner):
    """The streams are written as the text is parsed: 4x the text, about the same peak."""
    peaks = []
    for copies in (4, 16):
        _listing(runner, copies)

        def run():
            res = runner.invoke(asm, ["in.s", "--raw", "tiu", "t.bin", "--raw", "gdma", "g.bin", "-o", "c.bin"])
            assert res.exit_code == 0, res.stderr
        tracemalloc.start()
        try:
            run()
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert open("t.bin", "rb").read() == YOLO["tiu"] * copies
    # 16 copies: 560 kB of streams, 1.7 MB of text; held whole they would add ~1 MB
    assert peaks[1] < peaks[0] + 300_000, peaks


# ------------------------------------------------------------------------- raw streams as columns

BM1684 = {e: (GOLDEN.parent / "bm1684" / f"yolov5s_bm1684_f32.{e}.bin").read_bytes() for e in ("tiu", "gdma")}


def _load(tmp_path, chip, streams, copies=1):
    paths = []
    for e, data in streams.items():
        p = tmp_path / f"s.{e}"
        p.write_bytes(data * copies)
        paths.append((e, str(p)))
    return loading.load_raw(paths, chip)


@pytest.mark.parametrize("chip, streams", [("bm1684x", YOLO), ("bm1684", BM1684)])
@pytest.mark.parametrize("copies", [1, 3])
def test_raw_listing_is_the_records_merged_record_by_record(tmp_path, chip, streams, copies):
    """Columns, merged by their ids, give the Records decode_stream + merge_streams give (ids restart
    at each copy), made one at a time; locations sized from the offsets alone."""
    spec = load_chip(chip)
    listing = _load(tmp_path, chip, streams, copies)
    want = merge_streams(spec, {e: decode_stream(spec, e, d * copies) for e, d in streams.items()})
    got = listing.records
    assert isinstance(got, raw.RawRecords) and not isinstance(got, (list, tuple))
    assert len(got) == len(want) and list(got) == want
    assert [got[k] for k in (0, 7, len(want) - 1, -1)] == [want[k] for k in (0, 7, len(want) - 1, -1)]
    assert got.where_width() == max(len(f"{r.stream}+{r.offset:#x}") for r in want)
    frames = list(got.frames())
    assert [(eng.name, cls.name, body, header) for _, eng, cls, body, header in frames] == \
        [(r.engine, r.cls, pack(spec, r), r.header) for r in want]
    assert listing.where(len(want) - 1) == f"{tmp_path / ('s.' + want[-1].stream)}: {want[-1].stream} stream " \
                                           f"byte {want[-1].offset}"


def test_merge_order_of_columns_is_merge_cores():
    """merge_cores is merge_order over the Records' id columns: the vendor's order (DMA first on ties)."""
    spec = load_chip("bm1684x")
    streams = {e: decode_stream(spec, e, d) for e, d in YOLO.items()}
    order = merge_streams(spec, streams)
    assert [r.engine for r in order[:3]] == ["gdma", "gdma", "gdma"]
    # every instruction after the ones it waits for, each stream in its order
    done = {"tiu": 0, "gdma": 0}
    for r in order:
        eng = spec.engine(r.engine)
        for other, fname in eng.wait_for:
            assert r.fields[fname] <= done[other], r
        done[r.engine] = r.fields[eng.own_id]
    assert [r for r in order if r.engine == "tiu"] == streams["tiu"]


def test_swapped_and_broken_streams_name_file_and_byte(tmp_path):
    """Errors as decode_raw gave them: one line naming the file and the byte offset in its stream."""
    with pytest.raises(BmkError) as e:
        _load(tmp_path, "bm1684x", {"tiu": YOLO["gdma"], "gdma": YOLO["tiu"]})
    assert str(e.value).startswith(f"{tmp_path / 's.tiu'}: tiu stream byte ")
    cut = YOLO["tiu"][:-4000] + b"\xff" * 7
    with pytest.raises(BmkError) as e:
        _load(tmp_path, "bm1684x", {"tiu": cut, "gdma": YOLO["gdma"]})
    assert str(e.value).startswith(f"{tmp_path / 's.tiu'}: tiu stream byte ")


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_raw_disasm_and_diff_hold_columns_not_records(tmp_path):
    """Per instruction a listing keeps ~10 bytes of columns (the stream bytes are read from
    the file, not Python memory) and a diff ~30 more a side: 16 more copies of the vendor streams
    (9152 instructions) on both sides cost ~75 bytes each, not a Record each (~3.5 kB)."""
    peaks = []
    for copies in (1, 4, 20):             # the first: specs and memos made outside the measure
        sides = []
        for side in ("a", "b"):
            (tmp_path / side).mkdir()
            for e, data in YOLO.items():
                (tmp_path / side / f"s.{e}").write_bytes(data * copies)
            sides.append([(e, str(tmp_path / side / f"s.{e}")) for e in YOLO])

        def run():
            la, lb = (loading.load_raw(paths, "bm1684x") for paths in sides)
            for _ in asmtext.iter_disassembly(la.chip, la.records, locations=True):
                pass
            assert diffing.diff_listings(la, lb).equal
        peaks.append(_peak(run))
        for side in ("a", "b"):
            shutil.rmtree(tmp_path / side)
    extra = 16 * 572
    assert peaks[2] - peaks[1] < 120 * extra, (peaks, (peaks[2] - peaks[1]) / extra)


def test_a_file_that_shrinks_while_read_is_one_line_not_a_signal(tmp_path, runner, monkeypatch):
    """Issue 32 item 6: another process cuts the stream file after bmk-disasm has scanned it. A
    memory map then died of SIGBUS (no message, partial output); the file is read with pread, so
    the short read is exit 2 and one line naming the file and the byte."""
    big = YOLO["tiu"] * 4
    assert len(big) > raw.WINDOW                   # read a window at a time, not whole
    for e, data in (("tiu", big), ("gdma", YOLO["gdma"])):
        (tmp_path / f"s.{e}").write_bytes(data)
    load = raw.load_streams

    def load_then_cut(*args):
        listing = load(*args)
        os.truncate(tmp_path / "s.tiu", len(big) // 2)
        return listing
    monkeypatch.setattr(raw, "load_streams", load_then_cut)
    res = runner.invoke(disasm, ["--chip", "bm1684x", "--raw", "tiu", "s.tiu", "--raw", "gdma", "s.gdma",
                                 "-o", "out.s"])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "s.tiu changed while it was read" in lines[0], lines
    assert f"was {len(big)} bytes when opened and now ends at byte {len(big) // 2}" in lines[0]


def test_file_bytes_index_and_slice_as_bytes(tmp_path):
    """FileBytes reads as the bytes it holds, across its windows."""
    data = bytes(range(256)) * (3 * raw.WINDOW // 256 + 7)
    (tmp_path / "f").write_bytes(data)
    fb = raw.read_stream(tmp_path / "f")
    assert isinstance(fb, raw.FileBytes) and len(fb) == len(data)
    for a, b in ((0, 10), (raw.WINDOW - 3, raw.WINDOW + 5), (5, 3 * raw.WINDOW), (len(data) - 9, len(data) + 40)):
        assert fb[a:b] == data[a:b]
    assert [fb[k] for k in (0, raw.WINDOW, -1)] == [data[0], data[raw.WINDOW], data[-1]]
    fb.close()
    small = tmp_path / "g"
    small.write_bytes(b"\x01" * 100)
    assert raw.read_stream(small) == b"\x01" * 100


def test_a_stream_of_zero_bytes_only_is_refused_not_dropped(tmp_path, runner):
    """Issue 32 item 11: 128 zero bytes came back from bmk-disasm then bmk-asm as 0 bytes, and
    bmk-diff called them equal to an empty stream. Padding lives on the command before it; with
    no command it cannot be kept, so such a stream is refused by name, by every reader."""
    zeros = bytes(128)
    with pytest.raises(bmk.DecodeError, match="no command in the tiu stream, only 128 zero bytes"):
        decode_stream(CHIP, "tiu", zeros)
    with pytest.raises(bmk.DecodeError, match="only 128 zero bytes"):
        bmk.decode("bm1684x", {"tiu": zeros, "gdma": YOLO["gdma"]})
    assert decode_stream(CHIP, "tiu", b"") == []
    (tmp_path / "z.tiu").write_bytes(zeros)
    (tmp_path / "e.tiu").write_bytes(b"")
    res = runner.invoke(disasm, ["--chip", "bm1684x", "--raw", "tiu", "z.tiu", "-o", "z.s"])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "z.tiu: tiu stream byte 0: no command, only 128 zero bytes" in res.stderr, res.stderr
    res = runner.invoke(diff, ["--chip", "bm1684x", "--raw", "tiu", "z.tiu", "e.tiu"])
    assert res.exit_code == 2 and "z.tiu" in res.stderr and "only 128 zero bytes" in res.stderr, res.output
