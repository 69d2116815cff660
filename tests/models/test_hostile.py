"""Damaged and hostile containers raise ModelError (a BmkError) naming the file, the byte offset
and the rule; never another exception, never work or memory out of proportion to the file."""
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bmk
from bmk.models import read_model
from bmk.text.model_info import info_dict
from tests.models import build
from tests.models import files as F

SMALL = F.HAND_184X.read_bytes()              # a 58 KB bmodel with every kind of table
CVI = F.HAND_181X.read_bytes()


def _exercise(data):
    """Everything a user does with a model: read, describe, decode every group."""
    m = read_model(data, "hostile.bmodel")
    info_dict(m)
    for g in m.groups():
        _ = g.payload
        if m.decodable:
            m.records(g)
    return m


def _error(data):
    with pytest.raises(bmk.ModelError) as e:
        _exercise(data)
    return str(e.value)


def _header(fb_size, bin_size, header_size=64, magic=0xFF55AAEE):
    return struct.pack("<IIIQ", magic, header_size, fb_size, bin_size) + bytes(44)


def test_header_rules_name_file_offset_and_rule():
    assert _error(b"") == ("hostile.bmodel: byte 0: not a compiled model: a bmodel starts with bytes ee aa 55 ff, "
                           "a cvimodel with 'CviModel'; this file starts with nothing")
    assert _error(SMALL[:63]) == "hostile.bmodel: byte 0: truncated bmodel header: 63 bytes, a header is 64"
    assert _error(struct.pack("<I", 0xFF55AAFF) + SMALL[4:]).endswith(
        "byte 0: a bmtap2 bmodel (magic 0xFF55AAFF) is an old format bmk does not read")
    assert _error(SMALL[:-1]) == ("hostile.bmodel: byte 4: truncated file: header_size 64 + flatbuffers_size 1720 + "
                                  "binary_size 56192 = 57976 must equal the file size 57975")
    assert _error(SMALL + b"\0").endswith("byte 4: trailing bytes: header_size 64 + flatbuffers_size 1720 + "
                                          "binary_size 56192 = 57976 must equal the file size 57977")
    assert _error(_header(0, 0)) == ("hostile.bmodel: byte 64: Model: truncated FlatBuffer: 0 bytes, its root offset "
                                     "alone is 4")
    assert _error(_header(4, 0) + struct.pack("<I", 1000)) == (
        "hostile.bmodel: byte 1064: Model: table offset 1000 must leave 4 bytes inside the 4-byte FlatBuffer")
    assert _error(_header(0, 0, header_size=8)) == "hostile.bmodel: byte 4: header_size must be at least 64, not 8"


def test_cvimodel_header_rules():
    assert _error(b"CviModel") == "hostile.bmodel: byte 0: truncated cvimodel header: 8 bytes, a header is 48"
    assert _error(CVI[:48] + b"x").startswith("hostile.bmodel: byte 8: truncated file: a 2888-byte FlatBuffer after")
    v10 = bytearray(CVI)
    v10[12:14] = b"\x01\x00"
    assert _error(bytes(v10)).endswith("byte 12: a version 1.0 cvimodel (0x20-byte header) is a layout bmk does not read")
    assert _error(CVI[:2936 + 100]).startswith("hostile.bmodel: byte ")        # sections past the end


def test_a_binary_outside_the_binary_area_is_named():
    group = {"bdc_num": 1, "gdma_num": 0, "bdc": (0, 128), "gdma": (128, 4096)}
    data = build.bmodel("BM1684", [{"name": "n", "stages": [{"inputs": [], "outputs": [],
                                                              "subnets": [{"groups": [group]}]}]}], bytes(256))
    msg = _error(data)
    assert "Model.net[0].parameter[0].sub_net[0].cmd_group[0].binary_gdma: bytes [128, 4224) must lie inside the " \
           "256-byte binary area" in msg and msg.startswith("hostile.bmodel: byte ")


def test_a_vector_longer_than_the_file_is_refused_before_anything_is_allocated():
    data = bytearray(build.bmodel("BM1684", [{"name": "n", "stages": []}]))
    # the net vector's length word: find the one-element vector of nets and claim 2^31 elements
    fb = read_model(bytes(data), "x")
    assert len(fb.nets) == 1
    for pos in range(64, len(data) - 4, 4):
        if struct.unpack_from("<I", data, pos)[0] == 1:
            trial = bytearray(data)
            struct.pack_into("<I", trial, pos, 1 << 31)
            try:
                read_model(bytes(trial), "x")
            except bmk.ModelError as e:
                if "a vector of 2147483648 4-byte elements must fit" in str(e):
                    return
    raise AssertionError("no vector length found to patch")


def test_shared_sub_tables_cannot_multiply_the_work():
    """A vector of 20,000 offsets to one stage holding 20,000 offsets to one tensor: 4e8 tensors
    from 160 KB. Legal FlatBuffer, refused by the read budget."""
    w = build._Writer()
    t = build._bm_tensor(w, build.tensor("x", 0, (1,), 0))
    tensors = w.offsets([t] * 20000)
    stage = w.table({0: ("off", tensors)})
    stages = w.offsets([stage] * 20000)
    net = w.table({0: ("off", w.string("n")), 3: ("off", stages)})
    root = w.table({3: ("off", w.string("BM1684")), 4: ("off", w.offsets([net]))})
    fb = w.finish(root)
    msg = _error(_header(len(fb), 0) + fb)
    assert "the FlatBuffer references more data than its" in msg and "refused" in msg


def test_every_truncation_of_the_flatbuffer_is_a_model_error():
    fb_size = struct.unpack_from("<I", SMALL, 8)[0]
    for cut in range(0, fb_size, 7):
        data = _header(cut, 0) + SMALL[64:64 + cut]
        try:
            _exercise(data)
        except bmk.ModelError:
            pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_flatbuffers_raise_only_model_errors(data):
    base = data.draw(st.sampled_from([SMALL, CVI]))
    body = 48 + struct.unpack_from("<I", base, 8)[0] if base[:8] == b"CviModel" else \
        64 + struct.unpack_from("<I", base, 8)[0]
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 12))):
        pos = data.draw(st.integers(0, body - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    try:
        _exercise(bytes(buf))
    except bmk.BmkError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=36, max_size=36), st.sampled_from(["bmodel", "cvimodel"]))
def test_a_hostile_100_byte_file_allocates_little(tail, kind):
    if kind == "bmodel":
        data = _header(36, 0) + tail
    else:
        data = b"CviModel" + struct.pack("<IBB", 52, 1, 4) + bytes(34) + tail + bytes(16)
    assert len(data) == 100
    tracemalloc.start()
    try:
        _exercise(data)
    except bmk.BmkError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_control_characters_in_names_are_escaped_in_text_and_kept_out_of_file_names(tmp_path):
    """Issue 32.5: a NUL in the kernel module's name made `bmk extract` die with an internal
    ValueError; newlines passed into `bmk info` lines and into extracted file names."""
    from click.testing import CliRunner
    from bmk.cli.main import bmk as bmk_cmd
    stage = {"inputs": [build.tensor("in\nput\x1b[2J", 0, (1, 1, 1, 1), 0x100000000, size=4)], "outputs": [],
             "subnets": []}
    path = tmp_path / "names.bmodel"
    path.write_bytes(build.bmodel("BM1684", [{"name": "n\0et", "stages": [stage]}], b"\x7fELF",
                                  kernel=("../lib\0\n.so", (0, 4))))
    res = CliRunner().invoke(bmk_cmd, ["info", str(path)])
    assert res.exit_code == 0, res.output
    assert "in\\nput\\x1b[2J" in res.output and "\x1b" not in res.output and "\0" not in res.output
    assert all(line.isprintable() for line in res.output.splitlines())
    out = tmp_path / "out"
    res = CliRunner().invoke(bmk_cmd, ["extract", str(path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in out.iterdir())
    assert "kernel_module.lib__.so" in names and all(n.isprintable() and "/" not in n for n in names)
    assert (out / "kernel_module.lib__.so").read_bytes() == b"\x7fELF"


def test_an_io_shape_is_checked_against_its_size_field_and_region_at_load():
    """Issue 32.1 and 32.2: one flipped bit (face_detection fp32 byte 2978 ^= 0x40) made an output
    (1, 4, 4194314, 10) and m.run returned a 671 MB array; retinaface b1 bytes 1284:1288 = 21
    gave 'loc' 21 dimensions whose byte size wrapped to 0 in 64 bits (a ValueError out of
    m.run). Both are ModelErrors at load naming the tensor, both numbers and the byte offset."""
    data = bytearray(F.FACE_DETECTION.read_bytes())
    data[2978] ^= 0x40
    with pytest.raises(bmk.ModelError, match=r"^f.bmodel: byte 2908: Model.net\[0\].parameter\[0\].output_tensor\[0\] "
                                             r"'face_rpn_cls_prob_reshape_stride32': shape \(1, 4, 4194314, 10\) 1N "
                                             r"fp32 takes 671090240 bytes, more than its size field 1600$"):
        read_model(bytes(data), "f.bmodel")
    data = bytearray(F.RETINAFACE.read_bytes())
    data[1284:1288] = (21).to_bytes(4, "little")
    with pytest.raises(bmk.ModelError, match=r"r.bmodel: byte 1236: .*'loc': shape \(1, 10080, 4, .*\(21 dimensions\) "
                                             r"1N fp32 takes about 2\*\*555 bytes, more than its size field 161280"):
        read_model(bytes(data), "r.bmodel")


def test_an_io_tensor_outside_its_neuron_memory_is_refused_at_load():
    stage = {"inputs": [build.tensor("x", 0, (1, 4, 1, 1), 0x100000000 + 0x1000, size=16)], "outputs": [],
             "ctx_addr": 0x100000000, "ctx_size": 0x1008, "subnets": []}
    data = build.bmodel("BM1684", [{"name": "n", "stages": [stage]}])
    with pytest.raises(bmk.ModelError, match=r"input_tensor\[0\] 'x': \[0x100001000, \+16 bytes\) must lie inside the "
                                             r"stage's neuron memory \[0x100000000, 0x100001008\)"):
        read_model(data, "x.bmodel")
    stage["ctx_size"] = 0x1010
    assert read_model(build.bmodel("BM1684", [{"name": "n", "stages": [stage]}]), "x.bmodel").nets[0].stages[0].inputs


def test_coefficients_are_verified_against_the_sha256_the_file_records(tmp_path):
    """Issue 32.3: one flipped weight bit: bmk-diff said "equal" (it compared the recorded
    hashes), m.run ran on the damaged weights, bmk info said nothing."""
    import numpy as np
    from click.testing import CliRunner
    from bmk.cli.main import bmk as bmk_cmd
    good = F.FACE_DETECTION.read_bytes()
    m = bmk.load_model(F.FACE_DETECTION)
    st = m.nets[0].stages[0]
    assert m.verified(st) is True
    bad = bytearray(good)
    bad[st.coeff.blob.offset + 1000] ^= 0x01
    path = tmp_path / "bad.bmodel"
    path.write_bytes(bytes(bad))
    run = CliRunner()
    info = run.invoke(bmk_cmd, ["info", str(path)]).output
    assert "sha256 fd09a52199c389e7... MISMATCH (the bytes hash to " in info
    assert "sha256 fd09a52199c389e7... ok" in run.invoke(bmk_cmd, ["info", str(F.FACE_DETECTION)]).output
    res = run.invoke(bmk_cmd, ["diff", str(F.FACE_DETECTION), str(path)])
    assert res.exit_code == 1 and "coefficient sha256" in res.output and "the file records fd09a52199c389e7" \
        in res.output
    damaged = bmk.load_model(path)
    x = {"data": np.zeros((1, 3, 320, 320), np.float32)}
    with pytest.raises(bmk.ModelError, match=r"bad.bmodel: stage 0: the coefficients' sha256 [0-9a-f]{16}\.\.\. must "
                                             r"be the fd09a52199c389e7\.\.\. the file records"):
        damaged.run(x)
    out = damaged.run(x, verify=False)                 # when asked, it runs on what is there
    assert set(out) == set(m.run(x))
    res = run.invoke(bmk_cmd, ["extract", str(path), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "must be the fd09a52199c389e7" in res.stderr and not (tmp_path / "o").exists()
    res = run.invoke(bmk_cmd, ["extract", str(path), "-o", str(tmp_path / "o"), "--no-verify"])
    assert res.exit_code == 0 and (tmp_path / "o" / "net0.stage0.coeff.bin").read_bytes() == \
        bytes(bad[st.coeff.blob.offset:st.coeff.blob.offset + st.coeff.blob.size])
    assert bmk.load_model(path).coefficients(st) == (tmp_path / "o" / "net0.stage0.coeff.bin").read_bytes()
