"""Checks of the Memory functions (seed 003 "Memory Functions")."""
from bmk.bm1684.checks import common as c


def bdc_32bit_cpy(ctx, r, call="bdc_32bit_cpy"):
    """Remarks: 32-bit data; same start NPU; addresses divisible by 4; shape ranges; NULL
    stride = 128-byte aligned layout."""
    dst = c.local_addr(call, "dst_addr", r.dst_addr)
    src = c.local_addr(call, "src_addr", r.src_addr)
    shape = c.shape(call, r.shape)
    dst_stride = c.stride(call, "dst_stride", r.dst_stride)
    src_stride = c.stride(call, "src_stride", r.src_stride)
    c.same_npu(call, dst_addr=dst, src_addr=src)
    c.fits_local(call, "dst_addr", dst, shape, dst_stride)
    c.fits_local(call, "src_addr", src, shape, src_stride)


def bdc_32bit_set_C(ctx, r, call="bdc_32bit_set_C"):
    """Remarks: 32-bit data; dst_addr divisible by 4; shape ranges; C an x32."""
    dst = c.local_addr(call, "dst_addr", r.dst_addr)
    shape = c.shape(call, r.shape)
    c.bits(call, "C", r.C, 32)
    c.fits_local(call, "dst_addr", dst, shape, c.stride(call, "dst_stride", r.dst_stride))
