"""Program order of raw streams (bmk.encoders.merge): implicit ids, wait masks, waits lent by
the next command, and messages across cores. Built from text, checked by position."""
import bmk
from bmk.text import asm


def order(chip, text):
    """(core, engine, position) of each record of `text`'s streams after decode's merge."""
    recs = asm.parse(text, chip).records
    streams = bmk.encode(chip, recs, raw=True)
    merged = bmk.decode(chip, streams)
    seen, out = {}, []
    for r in merged:
        seen[r.core, r.engine] = seen.get((r.core, r.engine), 0) + 1
        out.append((r.core, r.engine, seen[r.core, r.engine]))
    return out


def test_implicit_ids_and_the_wait_mask():
    """BM1690: a TIU command waits for the GDMA command at the position its cmd_id_dep names, of
    which only the low 20 bits count (bit 20 is set on most real commands)."""
    text = """
    gdma.dma.tensor
    gdma.dma.tensor
    tiu.arith.add cmd_short=1 cmd_id_dep=0x100002
    tiu.system.end wait.gdma=0
    gdma.dma.sys.chain_end cmd_short=1
    """
    # without the mask the wait (0x100002) would never resolve and the chain end would go first
    assert order("bm1690", text) == [(0, "gdma", 1), (0, "gdma", 2), (0, "tiu", 1), (0, "tiu", 2), (0, "gdma", 3)]


def test_a_class_without_the_wait_field_waits_as_the_next_command():
    """SYS_TR_ACC has no cmd_id_dep: it goes with the command it prepares (missing_wait = next)."""
    text = """
    gdma.dma.tensor
    tiu.system_tr_wr.wr_imm tsk_typ=SYS_TR_ACC
    tiu.arith.add cmd_short=1 wait.gdma=2
    gdma.dma.tensor
    """
    assert order("bm1688", text) == [(0, "gdma", 1), (0, "gdma", 2), (0, "tiu", 1), (0, "tiu", 2)]


def test_a_message_wait_comes_after_the_send_of_every_stream_that_sends():
    """Two cores meet at message 30: core 0 stops at its wait until core 1's TIU has sent; then
    core 0 runs on (it has priority), core 1 follows: the vendor's segments."""
    text = """
    tiu.system.send_msg send.msg=30 msg.count=2
    tiu.system.wait_msg wait.msg=30 msg.count=2
    tiu.arith.add cmd_short=1
    .core 1
    tiu.arith.add cmd_short=1
    tiu.system.send_msg send.msg=30 msg.count=2
    tiu.system.wait_msg wait.msg=30 msg.count=2
    tiu.arith.sub cmd_short=1
    """
    assert order("bm1688", text) == [(0, "tiu", 1), (1, "tiu", 1), (1, "tiu", 2), (0, "tiu", 2), (0, "tiu", 3),
                                     (1, "tiu", 3), (1, "tiu", 4)]


def test_a_reused_message_id_is_a_new_round():
    """The k-th wait on an id needs the k-th send of every sender, not just any k sends."""
    text = """
    tiu.system.send_msg send.msg=31 msg.count=2
    tiu.system.wait_msg wait.msg=31 msg.count=2
    tiu.system.send_msg send.msg=31 msg.count=2
    tiu.system.wait_msg wait.msg=31 msg.count=2
    tiu.arith.add cmd_short=1
    .core 1
    tiu.arith.add cmd_short=1
    tiu.system.send_msg send.msg=31 msg.count=2
    tiu.system.wait_msg wait.msg=31 msg.count=2
    tiu.arith.add cmd_short=1
    tiu.system.send_msg send.msg=31 msg.count=2
    tiu.system.wait_msg wait.msg=31 msg.count=2
    """
    got = order("bm1688", text)
    assert got.index((0, "tiu", 4)) > got.index((1, "tiu", 5))      # core 0's 2nd wait after core 1's 2nd send
    assert got.index((0, "tiu", 2)) < got.index((1, "tiu", 4))      # its 1st wait needs only the 1st round
    assert got.index((1, "tiu", 3)) > got.index((0, "tiu", 1))


def test_opaque_streams_come_last_and_keep_their_bytes():
    text = """
    hau.data size=4 hex=01020304
    tiu.arith.add cmd_short=1
    """
    recs = asm.parse(text, "bm1690").records
    streams = bmk.encode("bm1690", recs, raw=True)
    assert streams["hau"] == bytes([1, 2, 3, 4])
    merged = bmk.decode("bm1690", streams)
    assert [r.engine for r in merged] == ["tiu", "hau"] and merged[1].data == bytes([1, 2, 3, 4])
    assert bmk.encode("bm1690", merged, raw=True) == streams
    buf = bmk.encode("bm1690", merged)           # cmd_hdr_t: the bytes' length is in mask
    assert bmk.decode("bm1690", buf)[1].data == bytes([1, 2, 3, 4])
