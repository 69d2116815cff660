"""CV18xx VLC decompression of a compressed TDMA load (compress_en 1), int8 and bf16 streams.

The stream format and decoder are the vendor's reference (sophgo/cvikernel
include/cvikernel/cvk_vlc_compress.h: cvk_vlc_dec_int8_ext, vlc_dec_header_ext,
vlc_gr_dec_block_data, inv_symbol_remapping), bits read LSB first:
- a 16-byte header: bits 0-23 the compressed block stream size in bytes, bit 28 signedness,
  bit 29 bf16, bits 32-39 bias0, bits 40-46 bias1, bit 47 zero guard;
- a k-map of one byte per 16-symbol block, padded to 16 bytes: k = byte >> 5 (7: the block is
  stored raw, 128 bits), ulen = byte & 0x1f; a coded block is 16 * k + ulen + 16 bits;
- the blocks, back to back: k bit planes of 16 bits (plane j, bit i: bit j of symbol i's low part),
  then a unary field of ulen + 16 bits whose 16 one-bits end the symbols (symbol i's high part =
  the zeros before its one); symbol = high << k | low, modulo 256;
- signed data (signedness 1) undo the symbol remapping: u -> s (odd u negative: -(u + 1) / 2,
  even u: u / 2), then the inverse two-side circular shift by bias0 (positive) / bias1 (negative).
Decoded size: the load's source tensor (src_n * src_c * src_h * src_w int8 elements), in its
logical order (cvikernel tdma.c check_tdma_compressed_tg: a compressed source is contiguous).

bf16 streams (header bit 29 set; cvk_vlc_dec_bf16_ext, merge_bf16_data, inv_center_shift): blocks of
16 bf16 elements. Each block is its 16 exponents (bits 14-7 of each element) coded as an int8 block
is, except that with the zero guard (header bit 47) a coded block of order k > 0 carries a 4-bit
zero count between its bit planes and its unary field (the k-map's size counts it), and that the
symbols are unmapped by the inverse center shift by bias0 (the header's signedness is not read);
then, right after it in the bit stream, one byte per element (sign << 7 | the 7 mantissa bits),
read only for the elements whose decoded exponent is not 0 when the zero guard is on (the others'
byte is 0), for all of them otherwise; the last block reads bytes for its real elements only.
The stream may hold at most get_out_bs_buf_size(2 * count, 1) bytes.
"""
import numpy as np

from bmk.errors import SimulationError

HEADER = 16
BLOCK = 16
UNARY_MAX = 47          # MAX_UNARY_FIELD_SIZE: ulen (5 bits) + 16


def blocks_and_kmap(count):
    """(blocks, bytes of the k-map: one byte a block, in 16-byte units) of a stream of `count` symbols."""
    blocks = -(-count // BLOCK)
    return blocks, -(-blocks // 16) << 4


def stream_size(count):
    """Bytes the vendor allows a stream of `count` int8 symbols (get_out_bs_buf_size)."""
    blocks, kmap = blocks_and_kmap(count)
    return blocks * BLOCK + kmap + 16


def span(head, count, bf16):
    """Bytes a load reads for the stream whose header is `head`: header, k-map and its data, at
    most the vendor's limit for `count` int8 symbols or bf16 elements."""
    limit = bf16_stream_size(count) if bf16 else stream_size(count)
    return HEADER + blocks_and_kmap(count)[1] + min(header(head)[0], limit)


def header(buf):
    """(block stream bytes, signedness, bf16, bias0, bias1, zero guard) of a stream's header."""
    h = int.from_bytes(bytes(buf[:8]), "little")
    return (h & 0xFFFFFF, h >> 28 & 1, h >> 29 & 1, h >> 32 & 0xFF, h >> 40 & 0x7F, h >> 47 & 1)


def decode_int8(buf, count):
    """The `count` decoded bytes of the VLC stream `buf` (a bytes-like of at least its length)."""
    buf = np.frombuffer(bytes(buf), np.uint8)
    size, signed, bf16, bias0, bias1, _ = header(buf)
    if bf16:
        raise SimulationError("an int8 load's VLC stream must not have its bf16 header bit set "
                              "(a bf16 stream is a bf16 load's)")
    if size > stream_size(count):
        raise SimulationError(f"a VLC stream of {count} symbols must hold at most {stream_size(count)} bytes, "
                              f"but its header says {size}")
    blocks, kmap_size = _layout(buf, count, size)
    kinfo = buf[HEADER:HEADER + blocks].astype(np.int64)
    bits = np.unpackbits(buf[HEADER + kmap_size:HEADER + kmap_size + size], bitorder="little")
    raw = (kinfo >> 5) == 7
    k = np.where(raw, 0, kinfo >> 5)
    ulen = kinfo & 0x1F
    nbits = np.where(raw, 128, 16 * k + ulen + 16)
    start = np.concatenate(([0], np.cumsum(nbits)[:-1]))
    if blocks and start[-1] + nbits[-1] > bits.size:
        raise SimulationError(f"a VLC stream's blocks need {int(start[-1] + nbits[-1])} bits, its header "
                              f"gives {bits.size}")
    out = np.zeros((blocks, BLOCK), np.int64)
    lanes = np.arange(BLOCK)
    if raw.any():
        idx = start[raw, None] + np.arange(128)[None, :]
        out[raw] = np.packbits(bits[idx].reshape(-1, BLOCK, 8), axis=2, bitorder="little")[..., 0]
    coded = ~raw
    if coded.any():
        s, kk, ul = start[coded], k[coded], ulen[coded]
        low = np.zeros((s.size, BLOCK), np.int64)
        for j in range(int(kk.max()) + 1):          # bit plane j of the blocks with k > j
            has = kk > j
            low[has] |= bits[s[has, None] + 16 * j + lanes[None, :]].astype(np.int64) << j
        ustart = s + 16 * kk
        pos = np.arange(UNARY_MAX)
        idx = np.minimum(ustart[:, None] + pos[None, :], bits.size - 1)
        ones = (bits[idx] == 1) & (pos[None, :] < (ul + 16)[:, None])
        if np.any(ones.sum(axis=1) != BLOCK):
            bad = int(np.flatnonzero(coded)[np.flatnonzero(ones.sum(axis=1) != BLOCK)[0]])
            raise SimulationError(f"VLC block {bad}: its unary field must end 16 symbols")
        ends = np.nonzero(ones)[1].reshape(-1, BLOCK)
        high = np.diff(ends, axis=1, prepend=-1) - 1
        out[coded] = ((high << kk[:, None]) + low) & 0xFF
    sym = out.reshape(-1)[:count]
    if signed:
        sym = _unmap(sym, bias0, bias1)
    return sym.astype(np.uint8)


def _unmap(u, bias0, bias1):
    """inv_symbol_remapping of signed data: unsign_to_sign, then inv_two_side_circular_shift."""
    neg = (u & 1) == 1
    mag = (u + 1) >> 1
    s = np.where(neg, -mag, mag)
    s = ((s + 128) & 0xFF) - 128                    # the uint8 -> int8 cast of unsign_to_sign
    neg = s < 0
    a = np.abs(s) + np.where(neg, bias1, bias0)
    minus = a - (127 + neg)
    lsb = np.where(minus <= 0, a, minus) & 0xFF
    return np.where(s == 0, 0, np.where(neg, -lsb, lsb)) & 0xFF


_DECODED = {}                   # (bf16, stream bytes, count) -> decoded array (read-only)
_DECODED_BYTES = [0]
_MAX_DECODED_BYTES = 1 << 26    # streams kept: a model's compressed weights, decoded once per process


def decode(stream, count, bf16):
    """decode_bf16 or decode_int8 of `stream`, kept by content: a model run again decodes nothing
    (the result is a pure function of the bytes and the count; read-only)."""
    key = (bool(bf16), bytes(stream), count)
    hit = _DECODED.get(key)
    if hit is None:
        hit = decode_bf16(key[1], count) if bf16 else decode_int8(key[1], count)
        hit.flags.writeable = False
        if _DECODED_BYTES[0] + len(key[1]) > _MAX_DECODED_BYTES:
            _DECODED.clear()
            _DECODED_BYTES[0] = 0
        _DECODED[key] = hit
        _DECODED_BYTES[0] += len(key[1])
    return hit


def bf16_stream_size(count):
    """Bytes the vendor allows a stream of `count` bf16 elements (get_out_bs_buf_size(2 * count, 1))."""
    blocks, kmap = blocks_and_kmap(count)
    return (blocks << 5) + kmap + 16


def _unsign_to_sign(u):
    """cvk_vlc_compress.h unsign_to_sign: odd u -> -(u + 1) / 2, even u -> u / 2 (an int8)."""
    mag = (u + 1) >> 1
    return ((np.where(u & 1, -mag, mag) + 128) & 0xFF) - 128


def center_table(bias, zero_guard):
    """inv_center_shift(val, bias, zero_guard) for every val 0..255 (uint8 arithmetic as the C)."""
    val = np.arange(256, dtype=np.int64)
    u = (val - zero_guard) & 0xFF
    rng = bias if bias <= 128 else 255 - bias
    shifted = (_unsign_to_sign(u) + bias) & 0xFF
    if bias <= 128:
        out = np.where(val >= rng << 1, val, shifted)
    else:
        out = np.where(u > rng << 1, (rng + bias - val + zero_guard) & 0xFF, shifted)
    if zero_guard:
        out[0] = 0
    return out


def _layout(buf, count, size):
    """(blocks, k-map bytes) of a stream of `count` symbols whose header gives `size` data bytes;
    the stream must hold its header, k-map and data."""
    blocks, kmap_size = blocks_and_kmap(count)
    if buf.size < HEADER + kmap_size + size:
        raise SimulationError(f"a VLC stream needs {HEADER + kmap_size + size} bytes, only {buf.size} are there")
    return blocks, kmap_size


def decode_bf16(buf, count):
    """The `count` decoded bf16 elements (uint16) of the VLC stream `buf` (module docstring)."""
    buf = np.frombuffer(bytes(buf), np.uint8)
    size, _, bf16, bias0, _, zg = header(buf)
    if not bf16:
        raise SimulationError("a bf16 load's VLC stream must have its bf16 header bit set")
    if size > bf16_stream_size(count):
        raise SimulationError(f"a VLC stream of {count} bf16 elements must hold at most "
                              f"{bf16_stream_size(count)} bytes, but its header says {size}")
    blocks, kmap_size = _layout(buf, count, size)
    kinfo = buf[HEADER:HEADER + blocks].tolist()
    data = buf[HEADER + kmap_size:HEADER + kmap_size + size].tobytes() + bytes(48)
    total = 8 * size
    table = center_table(bias0, zg).tolist()
    exps = np.zeros(blocks * BLOCK, np.int64)
    fracs = np.zeros(blocks * BLOCK, np.int64)
    pos = 0
    for b in range(blocks):
        ki = kinfo[b]
        k, ulen = ki >> 5, ki & 0x1F
        win = int.from_bytes(data[pos >> 3:(pos >> 3) + 48], "little") >> (pos & 7)
        if k == 7:                                          # stored raw: 16 bytes
            syms = [(win >> (8 * i)) & 0xFF for i in range(BLOCK)]
            used = 128
        else:
            low = [0] * BLOCK
            for j in range(k):                              # bit plane j: bit j of each low part
                plane = (win >> (16 * j)) & 0xFFFF
                for i in range(BLOCK):
                    low[i] |= ((plane >> i) & 1) << j
            zn = 4 if zg and k > 0 else 0
            ubits = ulen + 16
            unary = (win >> (16 * k + zn)) & ((1 << ubits) - 1)
            ends = [i for i in range(ubits) if (unary >> i) & 1]
            if len(ends) != BLOCK:
                raise SimulationError(f"VLC block {b}: its unary field must end 16 symbols, not {len(ends)}")
            high = [ends[0]] + [ends[i] - ends[i - 1] - 1 for i in range(1, BLOCK)]
            syms = [((h << k) + lo) & 0xFF for h, lo in zip(high, low)]
            used = 16 * k + zn + ubits
        e = [table[s] for s in syms]
        n_out = min(BLOCK, count - b * BLOCK)
        base = b * BLOCK
        exps[base:base + BLOCK] = e
        for i in range(n_out):
            if not zg or e[i]:
                fracs[base + i] = (win >> used) & 0xFF
                used += 8
        pos += used
        if pos > total:
            raise SimulationError(f"a VLC stream's blocks need more than the {total} bits its header gives "
                                  f"(block {b})")
    out = ((fracs >> 7) << 15) | (exps << 7) | (fracs & 0x7F)
    return out[:count].astype(np.uint16)
