"""Checks of the Memory functions (seed 003 "Memory Functions"): okk_bdc_32bit_cpy and
okk_bdc_32bit_set_C (`copy` also checks okk_bdc_reciprocal and okk_bdc_neg, whose signature
and remarks are the same)."""


def copy(c, p):
    """Remarks: 32-bit data; same start NPU; addresses divisible by 4; shape ranges; NULL
    stride = 128-byte aligned layout; dst is src in place or apart (issue 32.14)."""
    dst = c.address("dst_addr", p.dst_addr)
    src = c.address("src_addr", p.src_addr)
    shape = c.shape(p.shape)
    dst_stride = c.stride("dst_stride", p.dst_stride)
    src_stride = c.stride("src_stride", p.src_stride)
    c.same_start_npu("dst_addr", dst, src_addr=src)
    c.fits("dst_addr", dst, shape, dst_stride)
    c.fits("src_addr", src, shape, src_stride)
    c.in_place_or_apart(c.view("dst_addr", dst, shape, dst_stride), c.view("src_addr", src, shape, src_stride))


def set_C(c, p):      # noqa: N802 (the seed's name)
    """Remarks: 32-bit data; dst_addr divisible by 4; shape ranges; C an x32."""
    dst = c.address("dst_addr", p.dst_addr)
    shape = c.shape(p.shape)
    c.bits("C", p.C, 32)
    c.fits("dst_addr", dst, shape, c.stride("dst_stride", p.dst_stride))
