"""Raw-stream text tools in flat memory (issue 24 item 2): bmk-asm writes raw streams as it parses."""
import os
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import asm, disasm
from bmk.encoders.framing import PAD, StreamWriter, encode_stream, frame_stream, pack
from bmk.isa import load_chip

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
