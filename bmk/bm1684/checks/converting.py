"""Checks of the Data Type Converting functions (seed 003 "Data Type Converting Functions").

Remarks that are about the data (lookup_int32_to_fp32: "the elements of the source tensor are
in [-128, 127]") cannot be checked at the call: the lookup uses the low 8 bits of each
element (bmk/sim/bm1684/sfu.py). 32-bit local tensors start on a 32-bit word, so addresses
are checked to be divisible by 4 even where the remark only names the aligned layout.
"""
from bmk.bm1684.checks import common as c
from bmk.bm1684.lowering.converting import fp32_strides, int8_1n_strides

def aligned_pair(call, r):
    """dst and src: aligned-layout 32-bit tensors on the same start NPU; the shape ranges."""
    dst = c.local_addr(call, "dst_addr", r.dst_addr)
    src = c.local_addr(call, "src_addr", r.src_addr)
    shape = c.shape(call, r.shape)
    c.same_npu(call, dst_addr=dst, src_addr=src)
    c.fits_local(call, "dst_addr", dst, shape, None)
    c.fits_local(call, "src_addr", src, shape, None)
    return dst, src, shape


def bdc_fp32_to_int32(ctx, r, call="bdc_fp32_to_int32"):
    """Remarks: aligned layout; fp32 source, int32 destination; same start NPU; shape ranges."""
    aligned_pair(call, r)


def bdc_lookup_int32_to_fp32(ctx, r, call="bdc_lookup_int32_to_fp32"):
    """Remarks: aligned layout; int32 source in [-128, 127] (data: not checkable); same start
    NPU; shape ranges."""
    aligned_pair(call, r)


def _int8_common(call, r):
    dst = c.local_addr(call, "dst_addr", r.dst_addr)
    src = c.local_addr(call, "src_addr", r.src_addr)
    work = c.local_addr(call, "work_addr", r.work_addr)
    shape = c.shape(call, r.shape)
    c.flag(call, "is_signed", r.is_signed)
    aligned = c.flag(call, "is_aligned_layout", r.is_aligned_layout)
    c.same_npu(call, dst_addr=dst, src_addr=src, work_addr=work)
    c.distinct(call, "dst_addr", dst, "work_addr", work)
    c.fits_local(call, "dst_addr", dst, shape, fp32_strides(dst, shape, aligned))
    return dst, src, work, shape, aligned


def bdc_4N_int8_to_fp32(ctx, r, call="bdc_4N_int8_to_fp32"):
    """Remarks: dst, src and work in the aligned or the compact layout together
    (is_aligned_layout); int8/uint8 4N source and work, fp32 destination; same start NPU;
    addresses divisible by 4; shape ranges; dst_addr = work_addr is not allowed."""
    dst, src, work, shape, aligned = _int8_common(call, r)
    for name, addr in (("src_addr", src), ("work_addr", work)):
        c.fits_local(call, name, addr, shape, fp32_strides(addr, shape, aligned), pack=4)


def bdc_int8_to_fp32(ctx, r, call="bdc_int8_to_fp32"):
    """Remarks: as okk_bdc_4N_int8_to_fp32 with a 1N source and work, whose C stride is
    ALIGN(H*W, 4) bytes in the compact layout (the approximate compact layout) and ALIGN(H*W,
    128) in the aligned one. (The lowering puts a channel's ceil(H*W / 4) words in one TIU w
    dimension of 16 bits: the fp32 destination fitting its NPU keeps H*W <= 131072, so they fit.)"""
    dst, src, work, shape, aligned = _int8_common(call, r)
    for name, addr in (("src_addr", src), ("work_addr", work)):
        c.fits_local(call, name, addr, shape, int8_1n_strides(addr, shape, aligned), itemsize=1)
