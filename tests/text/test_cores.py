"""Records of several cores in one listing (`.core N`): the core survives text -> records, and
bmk-diff tells a record moved to another core from an equal one."""
import bmk
from bmk.text import asm, diff, loading

TWO = ".chip bm1688\ntiu.arith.add cmd_short=1\n.core 1\ntiu.arith.add cmd_short=1\n"
ONE = ".chip bm1688\ntiu.arith.add cmd_short=1\ntiu.arith.add cmd_short=1\n"


def test_core_lines_give_records_their_core():
    recs = asm.parse(TWO).records
    assert [r.core for r in recs] == [0, 1]
    text = asm.disassemble(asm.parse(TWO).chip, recs)
    assert text.splitlines()[1:] == ["tiu.arith.add    id=1 wait.gdma=0 cmd_short=1 tsk_typ=AR", ".core 1",
                                     "tiu.arith.add    id=1 wait.gdma=0 cmd_short=1 tsk_typ=AR"]
    assert asm.parse(text).records == recs
    assert [len(s["tiu"]) for s in bmk.encode("bm1688", recs, raw=True)] == [128, 128]   # one stream per core


def test_diff_sees_the_core():
    a, b = loading.load_text([TWO], None, "a.s"), loading.load_text([ONE], None, "b.s")
    d = diff.diff_listings(a, b)
    assert not d.equal and d.entries[0].fields == (("core", 1, 0),)
    assert "    core: 1 -> 0" in list(d.iter_text())
    assert diff.diff_listings(a, loading.load_text([TWO], None, "c.s")).equal
