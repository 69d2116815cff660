"""Lowering of the Data Type Converting functions (seed 003 "Data Type Converting Functions").

- okk_bdc_fp32_to_int32: one md_sfu fp32_to_int (the vendor's command: opd0 fp32, res0 int32,
  aligned operands, shape in res0). Rounding: to nearest, ties to even (bmk/sim/bm1684/sfu.py).
- okk_bdc_lookup_int32_to_fp32: one lut through the int2float table of L2 SRAM (the vendor's
  second lut of its SiLU sequence: opd0 left at the default fp32 precision, whose word the lut
  reads as an integer; opd1_addr = the table's L2 SRAM offset; opd1_h = 8 index bits, so the
  [-128, 127] of the remark index the 256 entries).
- okk_bdc_4N_int8_to_fp32: one lut, opd0 the 4N int8 (is_signed: int2float table and signed
  opd0) or uint8 (uint2float table) source, res0 the fp32 destination, both in the aligned or
  the compact layout (is_aligned_layout). The lut reads int8 indices directly, so the work
  tensor is not needed: work_addr is checked as the remarks say and left untouched.
- okk_bdc_int8_to_fp32 (1N int8: one byte per element, strides in bytes): the source is not 4N,
  so the TIU reads it as 32-bit words, four consecutive (h, w) bytes per word: the view
  (4, C, N, M) of 4N int8 whose batch axis is the byte in the word, c the channel, h the batch
  n and w the word (M = ceil(H*W / 4)). That is why each channel must start on a word: C stride
  ALIGN(H*W, 4) bytes in the compact layout (the remark's "approximate compact layout"), and
  ALIGN(H*W, 128) bytes in the 128-byte aligned one. Sequence:
    1. arith.copy  work <- src, the (1, C, N, M) int32 words (so dst may overlap src);
    2. lut         dst  <- table[work], bytes 0..3 of the H*W // 4 whole words, dst written with
                   strides (1, c, n, 4) fp32 elements (byte i of word j is element 4j + i);
    3. lut         the H*W % 4 bytes of the last word, if any (a partial 4N group: only its
                   first H*W % 4 "batches" are read and written).
"""
from bmk import layout as chip_layout
from bmk.bm1684 import layout
from bmk.bm1684.lowering import common as lo
from bmk.bm1684.types import dim4
from bmk.templates import as_int

WORD = 4


def _table(name):
    return layout.chip().param(name)


def table_lookup(f, table):
    """A lut whose operands are in f, reading `table` (a param name): its L2 SRAM offset in
    opd1_addr and the index bits in opd1_h, as the vendor fills them."""
    f["opd1_addr"] = _table(table)
    f["opd1_h"] = _table("lookup_table_index_bits")
    return lo.tiu("lut", **f)


def int2float(signed):
    return "l2_sram_int2float_table" if signed else "l2_sram_uint2float_table"


def fp32_strides(addr, shape, aligned):
    """(n, c, h, w) fp32-element strides of a local tensor: 128-byte aligned or compact."""
    start = addr // layout.local_mem_size_per_npu()
    if aligned:
        return dim4(*chip_layout.aligned_stride(shape, WORD, layout.chip().param("channel_align_bytes"),
                                                layout.npu_num(), start))
    return dim4(*chip_layout.compact_stride(shape, layout.npu_num(), start))


def int8_1n_strides(addr, shape, aligned):
    """(n, c, h, w) byte strides of a 1N int8 local tensor (okk_bdc_int8_to_fp32's source and
    work): channels start on 128 bytes (aligned) or on a 32-bit word (the approximate compact
    layout: C stride ALIGN(H*W, 4))."""
    n, c, h, w = shape
    start = addr // layout.local_mem_size_per_npu()
    align = layout.chip().param("channel_align_bytes") if aligned else WORD
    cs = chip_layout.align_up(h * w, align)
    return dim4(cs * chip_layout.slots(c, layout.npu_num(), start), cs, w, 1)


def addrs(r, *names):
    """Address arguments as Python ints (numpy integer scalars are accepted by the checks)."""
    return tuple(as_int(getattr(r, name)) for name in names)


def bdc_fp32_to_int32(chip, r):
    dst, src = addrs(r, "dst_addr", "src_addr")
    f = {}
    lo.tensor(f, "res0", dst, None, prec="int32", shape=lo.shape4(r.shape))
    lo.tensor(f, "opd0", src, None)
    return (lo.tiu("md_sfu.fp32_to_int", **f),)


def bdc_lookup_int32_to_fp32(chip, r):
    dst, src = addrs(r, "dst_addr", "src_addr")
    f = {}
    lo.tensor(f, "res0", dst, None, shape=lo.shape4(r.shape))
    lo.tensor(f, "opd0", src, None)
    return (table_lookup(f, "l2_sram_int2float_table"),)


def bdc_4N_int8_to_fp32(chip, r):
    dst, src = addrs(r, "dst_addr", "src_addr")
    shape, aligned, signed = lo.shape4(r.shape), bool(r.is_aligned_layout), bool(r.is_signed)
    f = {}
    lo.tensor(f, "res0", dst, fp32_strides(dst, shape, aligned), shape=shape)
    # 4N int8 strides count 32-bit words: the 32-bit ones of the same shape (bm1684 layout.py)
    lo.tensor(f, "opd0", src, fp32_strides(src, shape, aligned), prec="int8", signed=signed)
    return (table_lookup(f, int2float(signed)),)


def bdc_int8_to_fp32(chip, r):
    dst, src, work = addrs(r, "dst_addr", "src_addr", "work_addr")
    n, c, h, w = shape = lo.shape4(r.shape)
    aligned, signed = bool(r.is_aligned_layout), bool(r.is_signed)
    src_stride, dst_stride = int8_1n_strides(src, shape, aligned), fp32_strides(dst, shape, aligned)
    whole, tail = divmod(h * w, WORD)
    words = dim4(src_stride.n // WORD, src_stride.c // WORD, src_stride.n // WORD, 1)   # (-, c, n, word)
    copy = {"tsk_opd_num": 1}
    lo.tensor(copy, "res0", work, words, prec="int32", shape=(1, c, n, whole + bool(tail)))
    lo.tensor(copy, "opd0", src, words, prec="int32")
    cmds = [lo.tiu("arith.copy", **copy)]
    out = dim4(1, dst_stride.c, dst_stride.n, WORD)          # byte i of word j -> element 4j + i
    for first, count, batches in ((0, whole, WORD), (whole, 1, tail)):
        if count and batches:
            f = {}
            lo.tensor(f, "res0", dst + WORD * WORD * first, out, shape=(batches, c, n, count))
            lo.tensor(f, "opd0", work + WORD * first, words, prec="int8", signed=signed)
            cmds.append(table_lookup(f, int2float(signed)))
    return tuple(cmds)
