"""bmk-diff: alignment, field differences, --ignore, --json, exit codes 0/1/2."""
import json

import pytest
from click.testing import CliRunner

from bmk.text import asm as asmtext
from bmk.cli.main import diff
from bmk.encoders import decode_cmdbuf, encode_record
from bmk.isa import load_chip
from tests.goldens import golden

CHIP = load_chip("bm1880")
BASE = golden("sched_parallel_seed_example")       # 8 records: tdma tdma tiu tdma tdma tdma tiu tdma


def rebuild(buf, edit=None, insert=None, delete=None):
    """Re-encode buf's records, editing fields of one, inserting one (index, engine, fields), deleting one."""
    recs = [(r.engine, dict(r.fields), dict(r.header)) for r in decode_cmdbuf(CHIP, buf)]
    if edit:
        index, changes = edit
        recs[index][1].update(changes)
    if delete is not None:
        del recs[delete]
    if insert:
        index, engine, fields = insert
        recs.insert(index, (engine, fields, {}))
    return b"".join(encode_record(CHIP, e, f, h) for e, f, h in recs)


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def invoke(a, b, *args):
        open("a.cmdbuf", "wb").write(a)
        open("b.cmdbuf", "wb" if isinstance(b, bytes) else "w").write(b)
        return CliRunner().invoke(diff, ["a.cmdbuf", "b.cmdbuf", *args])
    return invoke


def test_equal(run):
    res = run(BASE, BASE)
    assert res.exit_code == 0 and res.stderr == ""
    assert res.stdout == "a.cmdbuf and b.cmdbuf are equal (8 instructions)\n"      # says so (issue 22.2)


def test_equal_binary_against_its_disassembly(run):
    text = asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, BASE))
    res = run(BASE, text)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_one_changed_field(run):
    res = run(BASE, rebuild(BASE, edit=(2, {"res0_addr": 0x140})))
    assert res.exit_code == 1
    assert res.stdout == (
        "--- a.cmdbuf\n"
        "+++ b.cmdbuf\n"
        "~ A#2 B#2 tiu.add (a.cmdbuf: byte 144 | b.cmdbuf: byte 144)\n"
        "    res0_addr: 0x1000 -> 0x140\n"
        "a.cmdbuf and b.cmdbuf differ: 1 changed, 0 inserted, 0 deleted; 7 equal\n")


def test_one_inserted_instruction_is_one_insertion(run):
    """Inserting a TIU instruction shifts every later TIU id, so ignore sync ids to see just the insertion."""
    b = rebuild(BASE, insert=(3, "tiu", {"tsk_typ": 3, "tsk_eu_typ": 10, "res0_c": 4}))
    res = run(BASE, b, "--ignore", "sync")
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    assert lines[2] == "+ B#3 (b.cmdbuf: byte 264)"
    assert lines[3] == "    tiu.copy         id=0 wait.tdma=0 res0_c=4"
    assert lines[-1] == "a.cmdbuf and b.cmdbuf differ: 0 changed, 1 inserted, 0 deleted; 8 equal"


def test_one_deleted_instruction(run):
    res = run(BASE, rebuild(BASE, delete=4))
    assert res.exit_code == 1
    assert res.stdout.splitlines()[2] == "- A#4 (a.cmdbuf: byte 336)"
    assert res.stdout.splitlines()[-1] == "a.cmdbuf and b.cmdbuf differ: 0 changed, 0 inserted, 1 deleted; 7 equal"


def test_ignore(run):
    b = rebuild(BASE, edit=(2, {"res0_addr": 0x140, "cmd_id_gdma": 1}))
    assert run(BASE, b).exit_code == 1
    res = run(BASE, b, "--ignore", "res0_addr")
    assert res.exit_code == 1
    assert "    wait.tdma: 2 -> 1\n" in res.stdout and "res0_addr" not in res.stdout     # the disassembly's name
    assert run(BASE, b, "--ignore", "res0_addr", "--ignore", "cmd_id_gdma").exit_code == 0
    assert run(BASE, b, "--ignore", "res0_addr", "--ignore", "wait").exit_code == 0
    res = run(BASE, b, "--ignore", "res0_adr")
    assert res.exit_code == 2
    assert res.stderr.startswith("diff: --ignore: 'res0_adr' is not a field of bm1880")


def test_header_difference_and_ignore(run):
    recs = decode_cmdbuf(CHIP, BASE)
    b = b"".join(encode_record(CHIP, r.engine, r.fields, {"flags": 1} if i == 0 else r.header)
                 for i, r in enumerate(recs))
    res = run(BASE, b)
    assert res.exit_code == 1 and "    hdr.flags: 0x0 -> 0x1\n" in res.stdout
    assert run(BASE, b, "--ignore", "hdr.flags").exit_code == 0


def test_json(run):
    b = rebuild(rebuild(BASE, edit=(2, {"res0_addr": 0x140})), insert=(8, "tdma", {"const_val": 3}))
    res = run(BASE, b, "--json")
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert doc["equal"] is False and doc["chip"] == "bm1880"
    assert doc["summary"] == {"changed": 1, "inserted": 1, "deleted": 0, "equal": 7}
    changed, inserted = doc["entries"]
    assert changed == {"op": "changed", "engine": "tiu", "class": "tiu", "a_index": 2, "a_where": "a.cmdbuf: byte 144",
                       "a_kind": "add", "b_index": 2, "b_where": "b.cmdbuf: byte 144", "b_kind": "add",
                       "fields": {"res0_addr": {"a": 0x1000, "b": 0x140}}}
    assert inserted["op"] == "inserted" and inserted["b_index"] == 8 and inserted["b_kind"] == "load"
    assert inserted["text"].startswith("tdma.load")
    res = run(BASE, BASE, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["equal"] is True


def test_kind_change_is_shown(run):
    res = run(BASE, rebuild(BASE, edit=(2, {"tsk_eu_typ": 3})))
    assert res.exit_code == 1
    assert "~ A#2 B#2 tiu.add -> tiu.sub" in res.stdout and "    tsk_eu_typ: 2 -> 3\n" in res.stdout


@pytest.mark.parametrize("bad", [b"\xa5\x40\x02", BASE[:-1], b"\x00" * 72])
def test_corrupt_input_exit_2(run, bad):
    for a, b in ((bad, BASE), (BASE, bad)):
        res = run(a, b)
        assert res.exit_code == 2
        assert res.stdout == "" and len(res.stderr.splitlines()) == 1 and " byte " in res.stderr


def test_bad_text_exit_2(run):
    res = run(BASE, ".chip bm1880\ntiu.nope\n")
    assert res.exit_code == 2
    assert res.stderr.startswith("diff: b.cmdbuf:2:1: unknown mnemonic 'tiu.nope'")


def test_lcs_alignment_is_not_positional():
    """Library level: an insertion at the front is one insertion, not N changes."""
    from bmk.text import diff as diffing, loading
    b = rebuild(BASE, insert=(0, "tdma", {"const_val": 9}))
    d = diffing.diff_listings(loading.load(BASE), loading.load(b), ignore=["sync"])
    assert [(e.op, e.b_index) for e in d.entries] == [("inserted", 0)]
    assert d.equal_count == 8


def test_raw_streams(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from bmk.cli.main import asm
    runner = CliRunner()
    open("k.s", "w").write(asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, BASE)))
    assert runner.invoke(asm, ["k.s", "--raw", "gdma", "a.bin"]).exit_code == 0
    open("k2.s", "w").write(open("k.s").read().replace("src_base_addr_low=0x1000", "src_base_addr_low=0x1100", 1))
    assert runner.invoke(asm, ["k2.s", "--raw", "tdma", "b.bin"]).exit_code == 0
    assert runner.invoke(diff, ["--chip", "bm1880", "--raw", "tdma", "a.bin", "a.bin"]).exit_code == 0
    res = runner.invoke(diff, ["--chip", "bm1880", "--raw", "gdma", "a.bin", "b.bin"])
    assert res.exit_code == 1
    assert "~ A#0 B#0 tdma.load (a.bin: tdma stream byte 0 | b.bin: tdma stream byte 0)" in res.stdout
    assert "    src_base_addr_low: 0x10000 -> 0x11000" in res.stdout


def test_text_with_bom_and_crlf(run):
    text = "\ufeff" + asmtext.disassemble(CHIP, decode_cmdbuf(CHIP, BASE)).replace("\n", "\r\n")
    assert run(BASE, text).exit_code == 0


def test_a_changed_field_with_a_vendor_spelling(tmp_path, monkeypatch):
    """bm1688's opd1_sign is listed as the vendor's opt_opd1_sign: the diff names and shows it so
    (it raised KeyError: a mutated CV184X yolov8n model found it, tests/models/test_fuzz_models.py)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.s").write_text(".chip bm1688\ntiu.arith.add cmd_short=1\n")
    (tmp_path / "b.s").write_text(".chip bm1688\ntiu.arith.add cmd_short=1 opt_opd1_sign=1\n")
    res = CliRunner().invoke(diff, ["a.s", "b.s"])
    assert res.exit_code == 1, res.output
    assert "    opt_opd1_sign: 0 -> 1" in res.output.splitlines()
