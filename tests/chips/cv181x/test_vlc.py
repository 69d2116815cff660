"""VLC-compressed loads (bmk/sim/cv181x/vlc.py): streams built here by the vendor's encoder rules
(sophgo/cvikernel include/cvikernel/cvk_vlc_compress.h: vlc_enc_header, symbol_remapping with
two_side_circular_shift and sign_to_unsign, vlc_gr_enc_block_data's bit planes and unary field),
decoded by bmk to the original bytes, alone and through a tdma.load with compress_en 1."""
import attrs
import numpy as np
import pytest

import bmk
from bmk.errors import SimulationError
from bmk.sim.cv181x import vlc


def _two_side(v, b0, b1):
    """two_side_circular_shift of one int8 value."""
    if v == 0:
        return 0
    neg = v < 0
    a = abs(v) - (b1 if neg else b0)
    a += (127 + neg) if a <= 0 else 0
    return -a if neg else a


def _sign_to_unsign(v):
    return (abs(v) << 1) - (1 if v < 0 else 0)


class Bits:
    def __init__(self):
        self.bits = []

    def put(self, value, n):
        self.bits += [(value >> i) & 1 for i in range(n)]

    def bytes(self, size=None):
        b = self.bits + [0] * ((-len(self.bits)) % 8)
        out = np.packbits(np.array(b, np.uint8).reshape(-1, 8), axis=1, bitorder="little").reshape(-1)
        return out.tobytes() + bytes((size or 0) - out.size if size else 0)


def encode(data, ks, signed=True, bias0=0, bias1=0):
    """A stream of int8 `data`, block b coded with order ks[b] or the next one whose unary field fits
    (-1: stored raw)."""
    syms = [_sign_to_unsign(_two_side(int(v), bias0, bias1)) if signed else int(v) & 0xFF
            for v in np.asarray(data, np.int8)] if signed else [int(v) for v in np.asarray(data, np.uint8)]
    blocks = -(-len(syms) // 16)
    syms += [0] * (blocks * 16 - len(syms))
    kmap, body = [], Bits()
    for b in range(blocks):
        blk, k = syms[16 * b:16 * b + 16], ks[b]
        while 0 <= k and sum(s >> k for s in blk) > 31:     # the unary field holds 31 + 16 bits
            k = k + 1 if k < 5 else -1
        if k < 0:
            for s in blk:
                body.put(s, 8)
            kmap.append(0xE0)
            continue
        for j in range(k):                          # bit planes of the low parts
            body.put(sum(((s >> j) & 1) << i for i, s in enumerate(blk)), 16)
        ulen = sum(s >> k for s in blk)
        for s in blk:                               # unary high parts: zeros, then a one
            body.put(1 << (s >> k), (s >> k) + 1)
        kmap.append((k << 5) + ulen)
    size = -(-((len(body.bits) + 7) >> 3) // 16) << 4
    head = Bits()
    head.put(size, 24)
    head.put(0, 4)
    head.put(int(signed), 1)
    head.put(0, 3)
    head.put(bias0, 8)
    head.put(bias1, 7)
    head.put(0, 1)
    kmap_size = -(-blocks // 16) << 4
    return head.bytes(16) + bytes(kmap) + bytes(kmap_size - blocks) + body.bytes(size)


@pytest.mark.parametrize("signed, bias0, bias1", [(True, 0, 0), (True, 3, 2), (False, 0, 0)])
def test_decode_returns_what_the_vendors_encoder_rules_coded(signed, bias0, bias1):
    rng = np.random.default_rng(bias0)
    data = np.clip(np.round(rng.normal(0, 3, 16 * 6 + 5)), -128, 127).astype(np.int8)
    # the biases move magnitudes down (the encoder's two-side shift): data just above them code small
    data = np.where(data > 0, data + bias0, np.where(data < 0, data - bias1, 0)).astype(np.int8)
    data[16:32] = rng.integers(-128, 128, 16)       # a block no order codes: stored raw
    if not signed:
        data = np.abs(data) // 2
    ks = [1, -1, 2, 3, 2, 1, 3]
    got = vlc.decode_int8(encode(data, ks, signed, bias0, bias1), data.size)
    np.testing.assert_array_equal(got.view(np.int8), data)


def test_a_stream_whose_unary_field_does_not_end_16_symbols_is_refused():
    data = np.zeros(16, np.int8)
    stream = bytearray(encode(data, [0]))
    stream[16] = (0 << 5) + 1                       # ulen 1: 17 unary bits, 16 ones and a stray one
    stream[32 + 2] |= 0x01
    with pytest.raises(SimulationError, match="unary field must end 16 symbols"):
        vlc.decode_int8(bytes(stream), 16)


def test_a_compressed_tdma_load_decodes_into_lmem():
    """The hand-gesture model's compressed (matrix) load made a tensor load: its source a
    (1, 2, 3, 16) int8 stream at gmem 0x1000, its destination lmem 0x100 with channel stride 64."""
    from tests.chips.cv181x.test_sim import _hand_record
    rec = _hand_record("tdma.load")
    model_loads = [r for r in _all_loads() if r.fields["compress_en"]]
    assert model_loads, "the hand-gesture model has compressed loads"
    f = dict(model_loads[0].fields, wait_id_tpu=0, sys_dtype=0, intra_cmd_paral=0, src_base_reg_sel=0,
             dst_base_reg_sel=0, src_n=1, src_c=2, src_h=3, src_w=16, dst_c=2, dst_h=3, dst_w=16, src_n_stride=96,
             src_c_stride_low=48, src_c_stride_high=0, src_h_stride=16, dst_n_stride=128,
             dst_c_stride_low=64, dst_c_stride_high=0, dst_h_stride=16, src_base_addr_low=0x1000,
             src_base_addr_high=0, dst_base_addr_low=0x100, dst_base_addr_high=0)
    data = np.random.default_rng(9).integers(-6, 7, 96).astype(np.int8)
    m = bmk.Simulator("cv181x")
    m.gmem_write(0x1000, encode(data, [2] * 6, True, 1, 1))
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(0x100, (1, 2, 3, 16), (128, 64, 16, 1), "int8")
    np.testing.assert_array_equal(got.reshape(-1), data)


def _all_loads():
    from tests.models.files import HAND_181X
    model = bmk.load_model(HAND_181X)
    return [r for g in model.groups() for r in model.records(g) if r.name == "tdma.load"]


def test_a_compressed_matrix_load_decodes_rows_into_the_matrix_layout():
    """The hand-gesture model's first compressed load as it is (a 42 x 64 matrix into lmem
    (42, 4, 1, 16)), its stream replaced by one coded here."""
    (rec, *_) = [r for r in _all_loads() if r.fields["compress_en"]]
    f = dict(rec.fields, wait_id_tpu=0, src_base_reg_sel=0)
    assert (f["sys_dtype"], f["src_n"], f["src_w"], f["dst_c"], f["dst_w"]) == (1, 42, 64, 4, 16)
    data = np.random.default_rng(4).integers(-20, 21, (42, 64)).astype(np.int8)
    m = bmk.Simulator("cv181x")
    src = f["src_base_addr_low"]
    m.gmem_write(src, encode(data.reshape(-1), [3] * 168, True, 0, 0))
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(f["dst_base_addr_low"], (42, 4, 1, 16), (16, 16, 16, 1), "int8")
    np.testing.assert_array_equal(got.reshape(42, 64), data)


# -- bf16 streams (vlc.decode_bf16) ---------------------------------------------------------------
def _center_shift(val, bias, zg):
    """cvk_vlc_compress.h center_shift, uint8 arithmetic."""
    if val == 0 and zg:
        return 0
    rng = bias if bias <= 128 else 255 - bias
    s = ((val - bias + 128) & 0xFF) - 128                   # (int8) of the int16 difference
    u = (_sign_to_unsign(s) + zg) & 0xFF
    if bias <= 128:
        return val if val >= rng << 1 else u
    return (rng + bias - val + zg) & 0xFF if val < bias - rng else u


def encode_bf16(bits, ks, bias0, zg):
    """A bf16 stream coded by the vendor's encoder rules (cvk_vlc_enc_bf16): per block of 16, the
    exponents center-shifted and coded with order ks[b] (-1 raw; a 4-bit zero count after the bit
    planes when zg and k > 0), then a sign-and-mantissa byte per element (only for nonzero exponents
    when zg)."""
    bits = [int(b) for b in bits]
    blocks = -(-len(bits) // 16)
    bits += [0] * (blocks * 16 - len(bits))
    kmap, body = [], Bits()
    for b in range(blocks):
        blk = bits[16 * b:16 * b + 16]
        exps = [(v >> 7) & 0xFF for v in blk]
        fracs = [((v >> 15) << 7) | (v & 0x7F) for v in blk]
        syms = [_center_shift(e, bias0, zg) for e in exps]
        k = ks[b]
        while 0 <= k and sum(s >> k for s in syms) > 31:
            k = k + 1 if k < 5 else -1
        if k < 0:
            for s in syms:
                body.put(s, 8)
            kmap.append(0xE0)
        else:
            for j in range(k):
                body.put(sum(((s >> j) & 1) << i for i, s in enumerate(syms)), 16)
            if zg and k > 0:
                body.put(sum(s == 0 for s in syms), 4)
            for s in syms:
                body.put(1 << (s >> k), (s >> k) + 1)
            kmap.append((k << 5) + sum(s >> k for s in syms))
        for e, fr in zip(exps, fracs):
            if not zg or e:
                body.put(fr, 8)
    size = -(-((len(body.bits) + 7) >> 3) // 16) << 4
    head = Bits()
    head.put(size, 24)
    head.put(0, 5)
    head.put(1, 1)                                  # bit 29: bf16
    head.put(0, 2)
    head.put(bias0, 8)
    head.put(0, 7)
    head.put(zg, 1)
    kmap_size = -(-blocks // 16) << 4
    return head.bytes(16) + bytes(kmap) + bytes(kmap_size - blocks) + body.bytes(size)


def _bf16_weights(seed, count):
    from bmk.numerics import fp32_to_bf16
    rng = np.random.default_rng(seed)
    v = rng.normal(0, 0.05, count).astype(np.float32)
    v[rng.random(count) < 0.2] = 0                   # zero exponents: the zero guard skips their bytes
    v[16:32] = rng.normal(0, 1e6, 16) * np.where(rng.random(16) < 0.5, 1e-30, 1)   # exponents no order codes
    return fp32_to_bf16(v)


@pytest.mark.parametrize("bias0, zg", [(120, 1), (120, 0), (131, 1), (0, 0)])
def test_bf16_decode_returns_what_the_vendors_encoder_rules_coded(bias0, zg):
    bits = _bf16_weights(bias0 + zg, 16 * 6 + 7)
    ks = [2, -1, 0, 3, 1, 4, 2]
    got = vlc.decode_bf16(encode_bf16(bits, ks, bias0, zg), bits.size)
    np.testing.assert_array_equal(got, bits)


def test_a_compressed_bf16_tdma_load_decodes_2_byte_elements_into_lmem():
    """A compressed load with src_fmt and dst_fmt bf16 (the license-plate model's weights): a
    (1, 2, 3, 16) bf16 stream at gmem 0x1000 into lmem 0x100, channel stride 128 bytes."""
    (rec, *_) = [r for r in _all_loads() if r.fields["compress_en"]]
    bf16 = load_chip_code("bf16")
    f = dict(rec.fields, wait_id_tpu=0, sys_dtype=0, intra_cmd_paral=0, src_base_reg_sel=0, dst_base_reg_sel=0,
             src_fmt=bf16, dst_fmt=bf16, src_n=1, src_c=2, src_h=3, src_w=16, dst_c=2, dst_h=3, dst_w=16,
             src_n_stride=192, src_c_stride_low=96, src_c_stride_high=0, src_h_stride=32, dst_n_stride=256,
             dst_c_stride_low=128, dst_c_stride_high=0, dst_h_stride=32, src_base_addr_low=0x1000,
             src_base_addr_high=0, dst_base_addr_low=0x100, dst_base_addr_high=0)
    bits = _bf16_weights(5, 96)
    m = bmk.Simulator("cv181x")
    m.gmem_write(0x1000, encode_bf16(bits, [3] * 6, 118, 1))
    m.run([attrs.evolve(rec, fields=f)], races=False)
    got = m.lmem_read_array(0x100, (1, 2, 3, 16), (128, 64, 16, 1), "uint16")
    np.testing.assert_array_equal(got.reshape(-1), bits)
    with pytest.raises(SimulationError, match="dst_fmt must be src_fmt"):
        bmk.Simulator("cv181x").run([attrs.evolve(rec, fields=dict(f, dst_fmt=load_chip_code("fix8b")))],
                                    races=False)


def load_chip_code(member):
    from bmk.isa import load_chip
    return load_chip("cv181x").code("tdma", "src_fmt", member)


def test_the_license_plate_models_compressed_loads_are_bf16():
    """Every compressed load of the MIX license-plate model is a bf16 load (src_fmt = dst_fmt = bf16;
    its streams have the zero guard on and off, raw and coded blocks); the model runs them all
    (tests/chips/cv181x/test_models.py)."""
    from tests.models.files import PLATE_181X
    model = bmk.load_model(PLATE_181X)
    loads = [r for g in model.groups() for r in model.records(g) if r.name == "tdma.load" and r.fields["compress_en"]]
    assert len(loads) == 102 and all(r.fields["src_fmt"] == r.fields["dst_fmt"] == load_chip_code("bf16")
                                      for r in loads)
