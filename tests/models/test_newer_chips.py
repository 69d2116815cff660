"""The newer chips on the vendor's own files (issue 23): BM1688 (1 and 2 cores), BM1690 (8 cores,
SDMA, HAU), CV184X bmodels and CV181X cvimodels decode with the file's own command counts and
re-encode to the same bytes, and BM1688/BM1690 carry the field values (.reg.test) and the
instruction order and op names (.mlir.test) the vendor's disassembler prints for them
(tpu-mlir test/TDB, FileCheck files beside the models). Records carry the family names (bm1684x's,
tools/facts/families.json); the vendor's spelling is the spec's `vendor` (Instruction/Field.spelling)."""
import json
import re
from collections import defaultdict

import pytest

import bmk
from bmk.encoders.framing import decode_stream
from bmk.isa import load_chip
from bmk.text import loading
from bmk.text.asm import kind_of, record_class
from tests.models import files as F

BMODELS = [F.YOLO_1688, F.YOLO_1688_CORE2, F.RESNET_1688, F.YOLO_1690, F.HAND_184X]
VENDOR_TEXT = [F.YOLO_1688, F.YOLO_1688_CORE2, F.RESNET_1688, F.YOLO_1690]
CVIMODELS = [F.HAND_181X, F.TOPFORMER_181X]
ENDS = ("sys.end", "dma.sys")           # family names of the vendor's system.end, dma.sys.chain_end


def cores(model):
    """[(label of the group's core-0 copy, [{engine: bytes} per core])] of every command group."""
    out = defaultdict(dict)
    for g in model.groups():
        out[(g.net, g.stage, g.subnet, g.index)][g.core] = g.streams
    return [(key, [by_core[c] for c in sorted(by_core)]) for key, by_core in out.items()]


@pytest.mark.parametrize("path", BMODELS, ids=lambda p: p.name)
def test_every_stream_decodes_with_the_files_counts_and_reencodes(path):
    m = bmk.load_model(path)
    spec = load_chip(m.chip)
    seen = defaultdict(int)
    for g in m.groups():
        streams = g.streams
        for engine, data in streams.items():
            recs = decode_stream(spec, engine, data)
            if engine in g.counts:                        # bdc_num / gdma_num count the end command
                assert len(recs) == g.counts[engine], (g.label, engine)
            if spec.engine(engine).opaque:
                assert [r.data for r in recs] == [data]
                continue
            assert all(r.kind is not None for r in recs), (g.label, engine)
            assert recs[-1].kind in ENDS and all(r.kind not in ENDS for r in recs[:-1])
            seen[engine] += len(recs)
        recs = bmk.decode(m.chip, streams)
        assert bmk.encode(m.chip, recs, raw=True) == streams      # end commands and zero padding too
    expected = {F.YOLO_1688: {"tiu": 385, "gdma": 161}, F.YOLO_1688_CORE2: {"tiu": 402, "gdma": 195},
                F.RESNET_1688: {"tiu": 1114, "gdma": 623},
                F.YOLO_1690: {"tiu": 9927, "gdma": 2684, "sdma": 968},
                F.HAND_184X: {"tiu": 19, "gdma": 22}}[path]
    assert dict(seen) == expected


@pytest.mark.parametrize("path", VENDOR_TEXT, ids=lambda p: p.name)
def test_program_order_and_op_names_follow_the_vendor_disassembler(path):
    """bmk's merge (sync ids within a core, messages across cores) gives the vendor's order."""
    m = bmk.load_model(path)
    ((_, per_core),) = cores(m)
    recs = bmk.decode(m.chip, per_core)
    assert bmk.encode(m.chip, recs, raw=True) == (per_core if len(per_core) > 1 else per_core[0])
    position, listed = defaultdict(int), []
    for r in recs:
        position[r.core, r.engine] += 1
        if r.engine in ("tiu", "gdma") and r.kind not in ENDS:       # what the vendor prints, as it spells it
            listed.append(("tiu" if r.engine == "tiu" else "gdma", position[r.core, r.engine], r.core,
                           kind_of(load_chip(m.chip), r)))
    ops = _mlir_ops(path)
    assert len(ops) == {F.YOLO_1688: 544, F.YOLO_1688_CORE2: 593, F.RESNET_1688: 1733, F.YOLO_1690: 12595}[path]
    assert listed == ops


_OP = re.compile(r'%([BD])(\d+)C(\d+)(?:, %msg\d+)? = "([^@"][^"]*)"')


def _mlir_ops(path):
    """[(engine, id, core, op name)] in the order the vendor's disassembler prints them."""
    out = []
    for line in open(f"{path}.mlir.test"):
        op = _OP.search(line)
        if op:
            out.append(("tiu" if op[1] == "B" else "gdma", int(op[2]), int(op[3]), op[4]))
    return out


@pytest.mark.parametrize("path", VENDOR_TEXT, ids=lambda p: p.name)
def test_reg_test_commands_match_field_by_field(path):
    """Every command the vendor lists (the first of each op name, all its fields, by position)."""
    m = bmk.load_model(path)
    spec = load_chip(m.chip)
    ((_, per_core),) = cores(m)
    text = open(f"{path}.reg.test").read()
    doc = json.loads("\n".join(line.split("CHECK:", 1)[1] for line in text.splitlines() if "CHECK:" in line))
    checked = 0
    for label, engines in doc.items():
        core = int(re.match(r"core\((\d+)\)", label)[1])
        for cmd_type, cmds in engines.items():
            engine = {"tiu": "tiu", "dma": "gdma"}[cmd_type]
            recs = decode_stream(spec, engine, per_core[core][engine])
            for c in cmds:
                rec = recs[c["extra"]["cmd_id"] - 1]            # ids are positions
                assert kind_of(spec, rec) == c["name"]          # the vendor's spelling of the family kind
                family = record_class(spec, rec).by_vendor
                assert {k: rec.fields[family.get(k, k)] for k in c["cmd"]} == c["cmd"], \
                    (label, engine, c["extra"]["cmd_id"])
                checked += 1
    assert checked == {F.YOLO_1688: 12, F.YOLO_1688_CORE2: 16, F.RESNET_1688: 18, F.YOLO_1690: 22}[path]


def test_message_waits_show_in_the_listing():
    m = bmk.load_model(F.YOLO_1688_CORE2)
    ((_, per_core),) = cores(m)
    text = bmk.text.asm.disassemble(load_chip("bm1688"), bmk.decode("bm1688", per_core))
    lines = text.splitlines()
    assert lines[1] == "tiu.system.send_msg id=1 wait.gdma=0 send.msg=30 msg.count=4 tsk_typ=SYS"
    assert lines[3] == ".core 1"
    assert "tiu.system.wait_msg id=2 wait.gdma=1 wait.msg=30 msg.count=4 tsk_typ=SYS" in lines
    again = bmk.text.asm.parse(text).records
    assert bmk.encode("bm1688", again, raw=True) == per_core


@pytest.mark.parametrize("path", CVIMODELS, ids=lambda p: p.name)
def test_cvimodel_buffers_are_cv181x_by_their_magic(path):
    """Issue 18 item 6: a real CV181X cmd_hdr_t buffer (vendor magic 0xA7, once also bmk's
    bm1684x magic) is read as cv181x; its ids count from 1 per engine; it re-encodes exactly."""
    (g,) = bmk.load_model(path).groups()
    listing = loading.load(g.cmdbuf)
    assert listing.chip.name == "cv181x" and g.cmdbuf[0] == 0xA7
    recs = list(listing.records)
    assert bmk.encode("cv181x", recs) == g.cmdbuf
    counts = {e: sum(r.engine == e for r in recs) for e in ("tiu", "tdma")}
    assert counts == {F.HAND_181X: {"tiu": 24, "tdma": 37}, F.TOPFORMER_181X: {"tiu": 438, "tdma": 586}}[path]
    for engine, own in (("tiu", "cmd_id_tpu"), ("tdma", "cmd_id")):
        assert [r.fields[own] for r in recs if r.engine == engine] == list(range(1, counts[engine] + 1))
    assert all(r.kind is not None for r in recs)
    with pytest.raises(bmk.DecodeError, match="unknown engine id 2"):
        loading.load(g.cmdbuf, "bm1684x")          # named as the old bm1684x magic's chip: not its buffer


def test_zero_bytes_past_the_padded_end_are_kept():
    """A closed, padded stream with a few more zero bytes: all of it is the end command's
    padding, and encode gives every byte back (found by tests/cli/test_fuzz_newer.py)."""
    data = bmk.load_model(F.YOLO_1690).groups()[0].streams["sdma"] + bytes(17)
    recs = decode_stream(load_chip("bm1690"), "sdma", data)
    assert recs[-1].kind == "dma.sys" and recs[-1].header["pad"] == 112 + 17
    assert bmk.encode("bm1690", recs, raw=True) == {"sdma": data}


def test_each_vendor_magic_picks_its_chip():
    """cvikernel bm_kernel.h: 0xA6 CV182X, 0xA7 CV181X, 0xA8 CV180X (the same layouts), and 0xA5
    BM1880v2 = CV183X, which is bm1880's magic too: read as bm1880 unless cv183x is named."""
    cmdbuf = bmk.load_model(F.HAND_181X).groups()[0].cmdbuf
    offsets = loading.load(cmdbuf).records.offsets
    for magic, chip in ((0xA6, "cv182x"), (0xA7, "cv181x"), (0xA8, "cv180x")):
        buf = bytearray(cmdbuf)
        for off in offsets:
            buf[off] = magic
        listing = loading.load(bytes(buf))
        assert listing.chip.name == chip and bmk.encode(chip, list(listing.records)) == bytes(buf)
    bm1880 = loading.load(bytes.fromhex("a5400200000000000000") + bytes(62))
    assert bm1880.chip.name == "bm1880"
    assert loading.load(bytes.fromhex("a5400200000000000000") + bytes(62), "cv183x").chip.name == "cv183x"
