"""Lowering of the Data Type Converting functions (seed 003 "Data Type Converting Functions").

- okk_bdc_fp32_to_int32 (`fp32_to_int32`): one md_sfu fp32_to_int (the vendor's command: opd0
  fp32, res0 int32, aligned operands, shape in res0). Rounding: to nearest, ties to even
  (bmk/sim/bm1684/sfu.py).
- okk_bdc_lookup_int32_to_fp32 (`lookup_int32_to_fp32`): one lut through the int2float table
  of L2 SRAM (the vendor's second lut of its SiLU sequence: opd0 left at the default fp32
  precision, whose word the lut reads as an integer; opd1_addr = the table's L2 SRAM offset;
  opd1_h = 8 index bits, so the [-128, 127] of the remark index the 256 entries).
- okk_bdc_4N_int8_to_fp32 (`int8_4n_to_fp32`): one lut, opd0 the 4N int8 (is_signed:
  int2float table and signed opd0) or uint8 (uint2float table) source, res0 the fp32
  destination, both in the aligned or the compact layout (is_aligned_layout). The lut reads
  int8 indices directly, so the work tensor is not needed: work_addr is checked as the
  remarks say and left untouched.
- okk_bdc_int8_to_fp32 (`int8_1n_to_fp32`; 1N int8: one byte per element, strides in bytes):
  the source is not 4N, so the TIU reads it as storage words, four consecutive (h, w) bytes
  per word: the view (4, C, N, M) of 4N int8 whose batch axis is the byte in the word, c the
  channel, h the batch n and w the word (M = ceil(H*W / 4)). That is why each channel must
  start on a word: C stride ALIGN(H*W, 4) bytes in the compact layout (the remark's
  "approximate compact layout"), and ALIGN(H*W, 128) bytes in the 128-byte aligned one.
  Sequence:
    1. arith.copy  work <- src, the (1, C, N, M) int32 words (so dst may overlap src);
    2. lut         dst  <- table[work], bytes 0..3 of the H*W // 4 whole words, dst written with
                   strides (1, c, n, 4) fp32 elements (byte i of word j is element 4j + i);
    3. lut         the H*W % 4 bytes of the last word, if any (a partial 4N group: only its
                   first H*W % 4 "batches" are read and written).
"""
from bmk.bm1684 import geometry as g
from bmk.bm1684.lowering import common as lo
from bmk.checks import as_int
from bmk.layout import dim4


def table_lookup(chip, f, table):
    """A lut whose operands are in f, reading `table` (a param name): its L2 SRAM offset in
    opd1_addr and the index bits in opd1_h, as the vendor fills them."""
    f["opd1_addr"] = chip.param(table)
    f["opd1_h"] = chip.param("lookup_table_index_bits")
    return lo.tiu(chip, "lut", **f)


def int2float(signed):
    return "l2_sram_int2float_table" if signed else "l2_sram_uint2float_table"


def addrs(p, *names):
    """Address arguments as the ints the lowering computes with."""
    return tuple(as_int(getattr(p, name)) for name in names)


def fp32_to_int32(chip, p):
    dst, src = addrs(p, "dst_addr", "src_addr")
    f = lo.tensor(chip, {}, "res0", dst, None, prec="int32", shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", src, None)
    return (lo.tiu(chip, "md_sfu.fp32_to_int", **f),)


def lookup_int32_to_fp32(chip, p):
    dst, src = addrs(p, "dst_addr", "src_addr")
    f = lo.tensor(chip, {}, "res0", dst, None, shape=lo.shape4(p.shape))
    lo.tensor(chip, f, "opd0", src, None)
    return (table_lookup(chip, f, "l2_sram_int2float_table"),)


def int8_4n_to_fp32(chip, p):
    dst, src = addrs(p, "dst_addr", "src_addr")
    shape, aligned, signed = lo.shape4(p.shape), bool(p.is_aligned_layout), bool(p.is_signed)
    f = lo.tensor(chip, {}, "res0", dst, g.aligned_or_compact(chip, dst, shape, aligned), shape=shape)
    # 4N int8 strides count storage words: the 32-bit ones of the same shape (geometry.py)
    lo.tensor(chip, f, "opd0", src, g.aligned_or_compact(chip, src, shape, aligned), prec="int8", signed=signed)
    return (table_lookup(chip, f, int2float(signed)),)


def int8_1n_to_fp32(chip, p):
    dst, src, work = addrs(p, "dst_addr", "src_addr", "work_addr")
    n, c, h, w = shape = lo.shape4(p.shape)
    aligned, signed = bool(p.is_aligned_layout), bool(p.is_signed)
    word = g.word_bytes(chip)
    src_stride, dst_stride = g.int8_1n(chip, src, shape, aligned), g.aligned_or_compact(chip, dst, shape, aligned)
    whole, tail = h * w // word, h * w % word
    words = dim4(src_stride.n // word, src_stride.c // word, src_stride.n // word, 1)   # (-, c, n, word)
    copy = lo.tensor(chip, {"tsk_opd_num": 1}, "res0", work, words, prec="int32", shape=(1, c, n, whole + bool(tail)))
    lo.tensor(chip, copy, "opd0", src, words, prec="int32")
    cmds = [lo.tiu(chip, "arith.copy", **copy)]
    out = dim4(1, dst_stride.c, dst_stride.n, word)          # byte i of word j -> element 4j + i
    for first, count, batches in ((0, whole, word), (whole, 1, tail)):
        if count and batches:
            f = lo.tensor(chip, {}, "res0", dst + word * word * first, out, shape=(batches, c, n, count))
            lo.tensor(chip, f, "opd0", work + word * first, words, prec="int8", signed=signed)
            cmds.append(table_lookup(chip, f, int2float(signed)))
    return tuple(cmds)
