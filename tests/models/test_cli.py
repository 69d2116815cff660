"""The commands on compiled models: bmk info, bmk-disasm, bmk-diff, bmk extract, bmk-run."""
import hashlib
import json
import shutil

import attrs
import numpy as np
import pytest
from click.testing import CliRunner

import bmk
from bmk.cli.main import asm, bmk as bmk_cmd, diff, disasm, run
from bmk.models.chips import decodable
from bmk.models.decoding import split_engines
from tests.models import files as F

DECODABLE = [p for p in F.ALL if decodable(bmk.load_model(p).chip)]


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def _one_line(res, prog):
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"{prog}: "), res.stderr
    return res.stderr.strip()


def test_info_text(runner):
    res = runner.invoke(bmk_cmd, ["info", str(F.RETINAFACE)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == f"{F.RETINAFACE}: bmodel 2.2 for BM1684 (bmk chip bm1684: decodes, simulates)"
    assert "    input  input  fp32 (1, 3, 384, 640)  @0x1052eb000  1N scale 1" in lines
    assert ("  stage0: 1 core; coefficients @0x105100000 2007120 bytes sha256 ffe1ec32c60cd677... ok; neuron "
            "@0x1052eb000 5550080 bytes") in lines
    assert "      net0/stage0/subnet0/core0/group0: tiu 3122 (399616 bytes), gdma 803 (102784 bytes)" in lines


@pytest.mark.parametrize("path", F.ALL, ids=lambda p: p.name)
def test_info_json_has_the_api_keys(runner, path):
    res = runner.invoke(bmk_cmd, ["info", "--json", str(path)])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    m = bmk.load_model(path)
    assert d["chip"] == m.chip
    for net, nd in zip(m.nets, d["nets"]):
        assert nd["name"] == net.name
        for st, sd in zip(net.stages, nd["stages"]):
            for role in ("inputs", "outputs"):
                assert [(t["name"], t["dtype"], t["shape"], t["address"]) for t in sd[role]] == \
                    [(t.name, t.type.name, list(t.shape), t.address) for t in getattr(st, role)]
            assert [g["label"] for g in sd["groups"]] == [g.label for sn in st.subnets for g in sn.groups]
            for g in sd["groups"]:
                assert set(g) == {"label", "counts", "bytes"}
    assert (d["missing"] is None) == m.decodable


def test_a_model_without_a_decoder_is_listed_and_named(runner, monkeypatch):
    monkeypatch.setattr("bmk.isa.chips", lambda: ("bm1684", "bm1684x", "bm1880"))
    res = runner.invoke(bmk_cmd, ["info", str(F.YOLO_1690)])
    assert res.exit_code == 0
    assert ("note: bmk has no decoder for chip bm1690 (no specs/bm1690; chips with one: bm1684, bm1684x, bm1880): "
            "groups are listed with their byte sizes and the file's own counts") in res.output
    assert ("      net0/stage0/subnet0/core7/group0: tiu 1115 (62208 bytes), gdma 304 (19584 bytes), sdma ? (2048 "
            "bytes), hau ? (9600 bytes)") in res.output
    msg = _one_line(runner.invoke(disasm, [str(F.YOLO_1690)]), "disasm")
    assert msg == (f"disasm: {F.YOLO_1690}: model is for chip bm1690, which bmk cannot decode yet (chips with a "
                   "decoder: bm1684, bm1684x, bm1880)")
    res = runner.invoke(diff, [str(F.YOLO_1688), str(F.YOLO_1688_CORE2)])
    assert res.exit_code == 1
    assert "net0/stage0/subnet0/core0/group0: different (bytes compared: bmk has no decoder for bm1688)" in res.output
    assert "net0/stage0/subnet0/core1/group0: only in B" in res.output


def test_disasm_group_then_asm_gives_the_group_back(runner):
    label = "net0/stage0/subnet0/core0/group0"
    res = runner.invoke(disasm, [str(F.YOLO_1684X), "--group", label, "-o", "g.s"])
    assert res.exit_code == 0, res.output
    text = open("g.s").read()
    assert text.startswith(f".chip bm1684x\n# {F.YOLO_1684X} {label}: tiu 430, gdma 142\n")
    res = runner.invoke(asm, ["g.s", "--raw", "tiu", "t.bin", "--raw", "gdma", "d.bin"])
    assert res.exit_code == 0, res.output
    g = bmk.load_model(F.YOLO_1684X).group(label)
    assert open("t.bin", "rb").read() == g.streams["tiu"] and open("d.bin", "rb").read() == g.streams["gdma"]
    assert _one_line(runner.invoke(disasm, [str(F.YOLO_1684X), "--group", "nope"]), "disasm").startswith(
        f"disasm: {F.YOLO_1684X}: no command group 'nope' (groups: {label})")


@pytest.mark.parametrize("path", DECODABLE, ids=lambda p: p.name)
def test_extract_then_disasm_and_asm_round_trip(runner, path):
    res = runner.invoke(bmk_cmd, ["extract", str(path), "-o", "out"])
    assert res.exit_code == 0, res.output
    m = bmk.load_model(path)
    info = json.load(open("out/model.json"))
    for g in m.groups():
        files = info["files"]["groups"][g.label]
        stem = g.label.replace("/", ".")
        if g.cmdbuf is not None:                # a cvimodel group: one cmd_hdr_t buffer
            assert files == {"cmdbuf": f"{stem}.cmdbuf.bin"}
            res = runner.invoke(disasm, ["--chip", m.chip, f"out/{files['cmdbuf']}", "-o", "x.s"])
            assert res.exit_code == 0, res.output
            res = runner.invoke(asm, ["x.s", "-o", "x.bin"])
            assert res.exit_code == 0, res.output
            assert open("x.bin", "rb").read() == g.cmdbuf == open(f"out/{files['cmdbuf']}", "rb").read()
            continue
        assert files == {e: f"{stem}.{e}.bin" for e in g.streams}
        for e, data in g.streams.items():
            assert open(f"out/{files[e]}", "rb").read() == data
        known = split_engines(bmk.isa.load_chip(m.chip), g)[0]      # engines the chip's specs decode
        raw = [a for e in known for a in ("--raw", e, f"out/{files[e]}")]
        res = runner.invoke(disasm, ["--chip", m.chip, *raw, "-o", "x.s"])
        assert res.exit_code == 0, res.output
        res = runner.invoke(asm, ["x.s", *[a for e in known for a in ("--raw", e, f"{e}.bin")]])
        assert res.exit_code == 0, res.output
        for e in known:
            assert open(f"{e}.bin", "rb").read() == g.streams[e]
    for st in m.nets[0].stages:
        if st.coeff is not None:
            data = open(f"out/net0.stage{st.index}.coeff.bin", "rb").read()
            assert data == m.coefficients(st) and len(data) == st.coeff.size
            if st.coeff.check_code:                   # bmodels record the sha256 of their coefficients
                assert hashlib.sha256(data).hexdigest() == st.coeff.check_code


def test_extract_writes_the_kernel_module_and_cvimodel_buffers(runner):
    res = runner.invoke(bmk_cmd, ["extract", str(F.YUV2RGB), "-o", "k"])
    assert res.exit_code == 0, res.output
    assert open("k/kernel_module.libbm1684x_kernel_module.so", "rb").read(4) == b"\x7fELF"
    res = runner.invoke(bmk_cmd, ["extract", str(F.HAND_181X), "-o", "c"])
    assert res.exit_code == 0, res.output
    assert open("c/net0.stage0.subnet0.core0.group0.cmdbuf.bin", "rb").read() == \
        bmk.load_model(F.HAND_181X).groups()[0].cmdbuf


def test_diff_of_a_model_with_itself_is_exit_0(runner):
    shutil.copy(F.YOLO_1684, "copy.bmodel")
    res = runner.invoke(diff, [str(F.YOLO_1684), "copy.bmodel"])
    assert res.exit_code == 0, res.output
    assert "net0/stage0/subnet0/core0/group0: equal (1243 instructions)" in res.output.splitlines()


def test_diff_of_two_networks_is_exit_1_with_group_summaries(runner):
    res = runner.invoke(diff, [str(F.RETINAFACE), str(F.FACE_DETECTION)])
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    # a model's groups are raw streams: each engine's order aligned on its own (issue 22.2)
    assert ("net0/stage0/subnet0/core0/group0: 176 changed, 478 inserted, 3749 deleted, 172 dependencies changed; "
            "0 equal") in lines
    assert "~ net0/stage0 inputs[0] input shape: (1, 3, 384, 640) -> (1, 3, 320, 320)" in lines
    assert lines[-1] == f"{F.RETINAFACE} and {F.FACE_DETECTION} differ: 1 of 1 groups, 16 stage facts"
    res = runner.invoke(diff, [str(F.RETINAFACE), str(F.FACE_DETECTION), "--json"])
    assert res.exit_code == 1
    d = json.loads(res.output)
    assert d["equal"] is False and d["groups"][0]["diff"]["summary"] == {"changed": 176, "inserted": 478,
                                                                           "deleted": 3749, "dependencies": 172,
                                                                           "equal": 0}


def test_diff_of_a_changed_field_names_it(runner):
    data = bytearray(F.YOLO_1684.read_bytes())
    m = bmk.load_model(F.YOLO_1684)
    tiu = m.groups()[0].parts["tiu"]
    rec = m.records(m.groups()[0])
    first_tiu = next(r for r in rec if r.engine == "tiu")
    changed = dict(first_tiu.fields, res0_c=first_tiu.fields["res0_c"] + 1)
    body = bmk.encode("bm1684", [attrs.evolve(first_tiu, fields=changed)], raw=True)["tiu"]
    data[tiu.offset:tiu.offset + 128] = body[:128]
    open("changed.bmodel", "wb").write(data)
    res = runner.invoke(diff, [str(F.YOLO_1684), "changed.bmodel"])
    assert res.exit_code == 1, res.output
    assert "net0/stage0/subnet0/core0/group0: 1 changed, 0 inserted, 0 deleted; 1242 equal" in res.output
    assert f"    res0_c: {first_tiu.fields['res0_c']} -> {first_tiu.fields['res0_c'] + 1}" in res.output


def test_diff_of_a_model_and_a_buffer_is_refused(runner):
    open("g.s", "w").write(".chip bm1684\n")
    msg = _one_line(runner.invoke(diff, [str(F.YOLO_1684), "g.s"]), "diff")
    assert msg.startswith("diff: cannot compare a compiled model with a command buffer")


def test_run_a_model(runner):
    np.savez("in.npz", input=np.load(F.HERE / "bm1684" / "retinaface_face4_input.npz")["input"])
    res = runner.invoke(run, [str(F.RETINAFACE), "--input", "in.npz", "-o", "out.npz", "--trace", "t.json"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "net0/stage0/subnet0/core0/group0: chip bm1684: 3925 instructions, " \
                       f"{lines[0].split(', ')[-1]}"
    out = np.load("out.npz")
    assert sorted(out.files) == ["cls", "land", "loc"] and out["cls"].shape == (1, 10080, 2)
    want = bmk.load_model(F.RETINAFACE).run({"input": np.load("in.npz")["input"]})
    assert all(np.array_equal(out[k], v) for k, v in want.items())
    trace = json.load(open("t.json"))
    assert sum(e.get("ph") == "X" for e in trace["traceEvents"]) == 3925
    np.save("x.npy", np.load("in.npz")["input"])
    assert runner.invoke(run, [str(F.RETINAFACE), "--input", "input=x.npy"]).exit_code == 0


def test_run_refusals_are_one_line(runner, monkeypatch):
    from tests.models.test_run import without_trans
    without_trans(monkeypatch)
    msg = _one_line(runner.invoke(run, [str(F.FACE_DETECTION), "--input", "data=missing.npy"]), "run")
    assert "gdma kind 'dma.trans' must have simulator semantics" in msg     # said before the input file is looked for
    msg = _one_line(runner.invoke(run, [str(F.RETINAFACE), "--chip", "bm1684"]), "run")
    assert msg == "run: --chip does not apply to a model (it names its chip and places its own data)"
    msg = _one_line(runner.invoke(run, [str(F.RETINAFACE), "--input", "bad"]), "run")
    assert msg == "run: --input must be NAME=FILE.npy or FILE.npz, not 'bad'"


@pytest.mark.parametrize("argv", [["info"], ["extract", "-o", "d"], ["disasm"], ["run"], ["diff", "cut.bmodel"]])
def test_a_damaged_model_is_one_line_naming_file_and_offset(runner, argv):
    open("cut.bmodel", "wb").write(F.HAND_184X.read_bytes()[:1000])
    res = runner.invoke(bmk_cmd, argv[:1] + ["cut.bmodel"] + argv[1:])
    msg = _one_line(res, "bmk")
    assert msg == ("bmk: cut.bmodel: byte 4: truncated file: header_size 64 + flatbuffers_size 1720 + binary_size "
                   "56192 = 57976 must equal the file size 1000")


def test_a_stream_of_an_engine_the_specs_lack_is_named_not_decoded(runner):
    """bm1684 has no SDMA engine: a (synthetic) core's SDMA binary is listed by its size, left out
    of the listing with a comment, compared byte by byte by bmk-diff, refused by run."""
    from tests.models import build
    from tests.models.test_run import tiny_model
    m, _ = tiny_model()
    g = m.groups()[0]
    tiu, gdma = g.streams["tiu"], g.streams["gdma"]
    binary = tiu + gdma + b"\x01" * 96

    def model(sdma):
        core = {"groups": [{"bdc_num": g.counts["tiu"], "gdma_num": g.counts["gdma"], "bdc": (0, len(tiu)),
                            "gdma": (len(tiu), len(gdma))}], "sdma": [(len(tiu) + len(gdma), sdma)]}
        return build.bmodel("BM1684", [{"name": "n", "stages": [{"inputs": [], "outputs": [],
                                                                  "subnets": [{"cores": [core]}]}]}], binary)
    open("a.bmodel", "wb").write(model(96))
    open("b.bmodel", "wb").write(model(64))
    res = runner.invoke(bmk_cmd, ["info", "a.bmodel"])
    assert "      net0/stage0/subnet0/core0/group0: tiu 0 (0 bytes), gdma 1 (128 bytes), sdma ? (96 bytes)" \
        in res.output.splitlines()
    res = runner.invoke(disasm, ["a.bmodel"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1:4] == ["# a.bmodel net0/stage0/subnet0/core0/group0: tiu 0, gdma 1, sdma ?",
                                            "# sdma: 96 bytes not decoded (the bm1684 specs have no sdma engine)",
                                            ".group net0/stage0/subnet0/core0/group0"]
    assert "gdma.dma.tensor" in res.output.splitlines()[4]
    assert runner.invoke(diff, ["a.bmodel", "a.bmodel"]).exit_code == 0
    res = runner.invoke(diff, ["a.bmodel", "b.bmodel"])
    assert res.exit_code == 1
    assert "net0/stage0/subnet0/core0/group0: 0 changed, 0 inserted, 0 deleted; 1 equal; undecoded sdma bytes " \
           "differ" in res.output
    msg = _one_line(runner.invoke(run, ["a.bmodel"]), "run")
    assert msg == "run: a.bmodel: run: net0/stage0/subnet0/core0/group0 has sdma commands, which the bm1684 specs " \
                  "do not decode; nothing was run"
