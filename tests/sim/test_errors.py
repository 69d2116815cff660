"""Malformed instructions and deadlocks stop the run with a BmkError naming index and byte offset."""
import numpy as np
import pytest

import bmk
from bmk.errors import BmkError, DecodeError, SimulationError

from .test_sched import CHIP, tdma, tiu

HDR = 8
TIU_LEN, TDMA_LEN = HDR + 112, HDR + 64


def run(buf):
    sim = bmk.Simulator("bm1880")
    return sim, sim.run(buf)


def test_deadlock_cycle():
    buf = tiu(cmd_id_tpu=1, cmd_id_gdma=1) + tdma(cmd_id=1, wait_id_tpu=1)
    with pytest.raises(SimulationError, match=r"instruction 0 \(byte 0, tiu\): deadlock: waits for tdma id 1 "
                                              r"\(instruction 1\)"):
        run(buf)


def test_wait_for_missing_id():
    buf = tdma(cmd_id=1) + tiu(cmd_id_tpu=1, cmd_id_gdma=7)
    with pytest.raises(SimulationError, match=rf"instruction 1 \(byte {TDMA_LEN}, tiu\): deadlock: waits "
                                              r"\(cmd_id_gdma\) for tdma id 7"):
        run(buf)


def test_unknown_task_type():
    buf = tiu(cmd_id_tpu=1) + tiu(cmd_id_tpu=2, tsk_typ=7)
    with pytest.raises(SimulationError, match=rf"instruction 1 \(byte {TIU_LEN}, tiu\): fields must name a known "
                                              r"instruction kind, not .*tsk_typ=7"):
        run(buf)


def test_field_out_of_legal_range():
    with pytest.raises(SimulationError, match=r"instruction 0 \(byte 0, tdma\): vld must be 1, not 0"):
        run(tdma(cmd_id=1, vld=0))
    with pytest.raises(SimulationError, match=r"instruction 0 \(byte 0, tiu\): ps32_md must be 0, not 2"):
        run(tiu(cmd_id_tpu=1, ps32_md=2))


def test_address_outside_memory_keeps_memory_inspectable():
    # 1: copy lanes [0, 16) -> [0x100, 0x110); 2: res0 runs past the lane; 3: never runs
    buf = tiu(cmd_id_tpu=1) + tiu(cmd_id_tpu=2, res0_addr=0x7ff8) + tiu(cmd_id_tpu=3, res0_addr=0x200)
    sim = bmk.Simulator("bm1880")
    sim.lmem_write(0, bytes(range(16)))
    with pytest.raises(SimulationError, match=rf"instruction 1 \(byte {TIU_LEN}, tiu\): copy: res0 must fit in "
                                              r"its lmem lane"):
        sim.run(buf)
    assert sim.lmem_read(0x100, 16) == bytes(range(16))
    assert sim.lmem_read(0x200, 16) == bytes(16)


def test_gmem_address_must_be_encoded():
    with pytest.raises(SimulationError, match=r"instruction 0 \(byte 0, tdma\): load: src_addr must be a gmem "
                                              r"address encoded as"):
        run(tdma(cmd_id=1, src_base_addr_high=0))


def test_tdma_count_mismatch():
    with pytest.raises(SimulationError, match="dst_c \\* dst_h \\* dst_w must divide"):
        run(tdma(cmd_id=1, dst_w=15))


def test_duplicate_ids():
    with pytest.raises(SimulationError, match=r"instruction 1 .*cmd_id_tpu must be unique"):
        run(tiu(cmd_id_tpu=1) + tiu(cmd_id_tpu=1))


def test_bad_bytes_raise_decode_error():
    buf = tiu(cmd_id_tpu=1)
    with pytest.raises(DecodeError, match="byte 0"):
        run(buf[:50])
    assert issubclass(SimulationError, BmkError)


def test_memory_api():
    sim = bmk.Simulator("bm1880")
    sim.gmem_write(0xFFFFFFF0, np.arange(16, dtype=np.uint8))
    assert sim.gmem_read(0xFFFFFFF0, 16) == bytes(range(16))
    assert sim.gmem_read(0x12345678, 4) == bytes(4)                  # unwritten bytes read as zero
    sim.gmem_write((1 << 24) - 3, b"abcdef")                          # across a page boundary
    assert sim.gmem_read((1 << 24) - 3, 6) == b"abcdef"
    # a call's error in the call's own address convention (bm1880: gmem offsets), issue 22.7
    with pytest.raises(bmk.ArgumentError, match=r"^gmem_write: addr must be a gmem offset whose 2 bytes end inside "
                                               r"global memory \[0x0, 0xff00000000\), not 0xfeffffffff$"):
        sim.gmem_write(0xFF00000000 - 1, b"ab")        # gmem ends where the 40-bit address fields do
    with pytest.raises(bmk.ArgumentError, match=r"^lmem_read: addr must be a local address whose 2 bytes end inside "
                                               r"local memory \[0x0, 0x100000\), not 0xfffff$"):
        sim.lmem_read(32 * 32768 - 1, 2)
    assert CHIP.param("npu_num") == 32


def test_wrong_argument_types_are_argument_errors():
    sim = bmk.Simulator("bm1880")
    with pytest.raises(bmk.ArgumentError, match=r"run: cmdbuf must be bytes \(a command buffer\), \{engine: bytes\} \(raw streams\), a list of Records or a Program, not 'abc'"):
        sim.run("abc")
    with pytest.raises(bmk.ArgumentError, match=r"lmem_read_tensor: t must be a TensorLmem, not 'x'"):
        sim.lmem_read_tensor("x")
    with pytest.raises(bmk.ArgumentError, match=r"gmem_write: data must be bytes or a numpy array, not 'text'"):
        sim.gmem_write(0, "text")


def test_a_read_too_large_blames_its_size_and_never_escapes_as_memory_error(monkeypatch):
    """Issue 32.8: gmem_read(G, 1 << 40) names n, not addr; a read this machine cannot hold is an
    ArgumentError pointing at gmem_chunks / gmem_dump (was a bare MemoryError)."""
    import bmk
    G = 0x100000000
    sim = bmk.Simulator("bm1684")
    with pytest.raises(bmk.ArgumentError, match=r"gmem_read: n must be at most the 8589934592 bytes of global "
                                                r"memory, not 1099511627776"):
        sim.gmem_read(G, 1 << 40)
    with pytest.raises(bmk.ArgumentError, match=r"gmem_read: addr must be a global address whose 16 bytes end"):
        sim.gmem_read(G + (1 << 33) - 8, 16)

    def no_memory(addr, n, chunk):
        yield b"x"
        raise MemoryError
    monkeypatch.setattr(sim.gmem, "chunks", no_memory)
    with pytest.raises(bmk.ArgumentError, match=r"gmem_read: n must be a size this machine can hold .* not 8589934592"):
        sim.gmem_read(G, 1 << 33)
