"""Checks of the Data Type Converting functions (seed 003 "Data Type Converting Functions").

Remarks that are about the data (lookup_int32_to_fp32: "the elements of the source tensor are
in [-128, 127]") cannot be checked at the call: the lookup uses the low 8 bits of each
element (bmk/sim/bm1684/sfu.py). 32-bit local tensors start on a storage word, so addresses
are checked to be divisible by 4 even where the remark only names the aligned layout.
"""
from bmk.bm1684 import geometry as g


def aligned_pair(c, p):
    """Remarks of fp32_to_int32, lookup_int32_to_fp32 (and of the unary rsqrt, sqrt,
    lookup_exp, taylor_exp): dst and src aligned-layout 32-bit tensors on the same start NPU;
    the shape ranges; dst is src in place or apart (issue 32.14). (lookup_int32_to_fp32's
    int32 source in [-128, 127] is data.)"""
    dst = c.address("dst_addr", p.dst_addr)
    src = c.address("src_addr", p.src_addr)
    shape = c.shape(p.shape)
    c.same_start_npu("dst_addr", dst, src_addr=src)
    c.fits("dst_addr", dst, shape, None)
    c.fits("src_addr", src, shape, None)
    c.in_place_or_apart(c.view("dst_addr", dst, shape, None), c.view("src_addr", src, shape, None))
    return dst, src, shape


def int8_to_fp32(c, p, n_packed):
    """Remarks of okk_bdc_4N_int8_to_fp32 (n_packed: a 4N source) and okk_bdc_int8_to_fp32 (a
    1N source): dst, src and work in the aligned or the compact layout together
    (is_aligned_layout); int8/uint8 source and work, fp32 destination; same start NPU;
    addresses divisible by 4; shape ranges; dst_addr = work_addr is not allowed, nor any overlap
    of work with dst or src (issue 22.8); a 4N source (one lut, element by element) and dst,
    of other layouts, may not overlap at all (issue 32.14: never in place), a 1N one may (its
    sequence reads src into work before it writes dst). A 1N source's
    C stride is ALIGN(H*W, 4) bytes in the compact layout (the approximate compact layout) and
    ALIGN(H*W, 128) in the aligned one. (The 1N lowering puts a channel's ceil(H*W / 4) words in
    one TIU w dimension of 16 bits: the fp32 destination fitting its NPU keeps H*W <= 131072,
    so they fit.)"""
    dst = c.address("dst_addr", p.dst_addr)
    src = c.address("src_addr", p.src_addr)
    work = c.address("work_addr", p.work_addr)
    shape = c.shape(p.shape)
    c.flag("is_signed", p.is_signed)
    aligned = c.flag("is_aligned_layout", p.is_aligned_layout)
    c.same_start_npu("dst_addr", dst, src_addr=src, work_addr=work)
    c.distinct("dst_addr", dst, "work_addr", work)
    dst_stride = g.aligned_or_compact(c.chip, dst, shape, aligned)
    c.fits("dst_addr", dst, shape, dst_stride)
    spans = {"dst_addr": c.span(dst, shape, dst_stride)}
    layouts = {}
    for name, addr in (("src_addr", src), ("work_addr", work)):
        if n_packed:
            layout = dict(stride=g.aligned_or_compact(c.chip, addr, shape, aligned),
                          pack=g.word_bytes(c.chip))      # 4N: one int8 batch per byte of the word
        else:
            layout = dict(stride=g.int8_1n(c.chip, addr, shape, aligned), itemsize=1)
        c.fits(name, addr, shape, **layout)
        spans[name] = c.span(addr, shape, **layout)
        layouts[name] = layout
    for other in ("dst_addr", "src_addr"):        # no overlap at all (issue 22.8), not only dst = work
        c.disjoint("work_addr", work, spans["work_addr"], other, spans[other],
                   "the conversion goes through work between src and dst")
    if n_packed:        # the 1N sequence copies src into work first: its dst may overlap src
        c.in_place_or_apart(c.view("dst_addr", dst, shape, dst_stride),
                            c.view("src_addr", src, shape, **layouts["src_addr"]))
