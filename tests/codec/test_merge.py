"""Program order of raw streams (bmk.encoders.merge): implicit ids, wait masks, waits lent by
the next command, and messages across cores. Built from text, checked by position."""
import copy

from hypothesis import given, settings, strategies as st

import bmk
from bmk.encoders.merge import MessageLog, Queue, merge_order
from bmk.isa import load_chip
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


def rule_order(queues, where):
    """The module docstring's rule taken literally, one command at a time (what merge_runs does a
    run at a time): (queue, index) of each command."""
    waits = []
    for qu in queues:
        eng, cols = qu.eng, []
        for (other, _), values in zip(eng.wait_for, qu.waits):
            out, lent = [0] * len(values), 0
            for i in range(len(values) - 1, -1, -1):
                v = values[i]
                if v < 0:
                    out[i] = lent if eng.missing_wait == "next" else 0
                else:
                    out[i] = lent = v & eng.wait_mask if eng.wait_mask is not None else v
            cols.append((where.get((qu.core, other)), out))
        waits.append(cols)
    heads, done, sent, got = [0] * len(queues), [0] * len(queues), {}, []
    senders = {}
    for q, qu in enumerate(queues):
        for m, n in qu.msgs[2].items():
            senders.setdefault(m, []).append((q, n))

    def ready(q):
        i = heads[q]
        if any(values[i] > (done[other] if other is not None else 0) for other, values in waits[q]):
            return False
        m, k = queues[q].msgs[0].get(i, (None, 0))
        return m is None or all(sent.get((s, m), 0) >= k for s, n in senders.get(m, ()) if n >= k)

    while len(got) < sum(qu.n for qu in queues):
        live = [q for q, qu in enumerate(queues) if heads[q] < qu.n]
        p = next((q for q in live if ready(q)), live[0])
        i = heads[p]
        got.append((p, i))
        heads[p] += 1
        own = queues[p].own
        done[p] = i + 1 if queues[p].eng.implicit_ids else max(own[i], 0) if own is not None else 0
        if i in queues[p].msgs[1]:
            sent[(p, queues[p].msgs[1][i])] = sent.get((p, queues[p].msgs[1][i]), 0) + 1
    return got


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["bm1684x", "bm1880", "bm1688", "bm1690", "cv184x"]), st.integers(1, 3), st.randoms())
def test_runs_follow_the_rule_command_by_command(chip_name, cores, rnd):
    """merge_order (merge_runs' runs spelled out) gives the order the rule gives picking one
    command at a time, on random id columns of the chip's engines: ids that go back, classes
    without the own or wait field (-1), messages on several cores, waits that never resolve."""
    chip = load_chip(chip_name)
    queues, where = [], {}
    for core in range(cores):
        for eng in chip.encoded_engines + tuple(e for e in chip.engines if e.opaque):
            n = rnd.choice([0, 1, rnd.randint(2, 40)])
            if not n:
                continue

            def column():
                out, v = [], 0
                for _ in range(n):
                    v = v + rnd.choice([0, 1, 1, 2]) if rnd.random() < 0.9 else rnd.randint(0, 4)
                    out.append(-1 if rnd.random() < 0.15 else v | (rnd.random() < 0.2) << 20)
                return out
            own = column() if eng.own_id and not eng.implicit_ids else None
            log = MessageLog(eng.messages) if eng.messages is not None else None
            for i in range(n if log else 0):
                r = rnd.random()
                if r < 0.2:
                    (log.send if r < 0.1 else log.wait)(i, rnd.randint(0, 2))
            msgs = log.result() if log else ({}, {}, {})
            where[(core, eng.name)] = len(queues)
            queues.append(Queue(core, eng, n, own, [column() for _ in eng.wait_for], msgs))
    want = rule_order(copy.deepcopy(queues), where)
    order_q, order_j = merge_order(queues, where)
    assert list(zip(order_q, order_j)) == want
