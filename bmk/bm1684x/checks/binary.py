"""Checks of the element-wise binary functions (seed 001: and, or, xor, min, max and their _C
forms). Remarks: the operands start on the same NPU; shape in [1, 65535]; NULL stride =
aligned layout, else free; C in the range of dtype; dst is each source in place or apart
(issue 32.14).

dtype (`allowed`, from the op table): the seed leaves it open; bmk takes the integer types
for the bitwise functions (AND, OR, XOR of floats is not a formula of the seed) and every
8/16/32-bit type for min/max.
"""


def tensors(c, p, allowed):
    shape = c.shape("shape", p.shape)
    dtype = c.dtype("dtype", p.dtype, allowed)
    dst = c.local("dst_addr", p.dst_addr, shape, p.dst_stride, dtype)
    src0 = c.local("src0_addr", p.src0_addr, shape, p.src0_stride, dtype)
    src1 = c.local("src1_addr", p.src1_addr, shape, p.src1_stride, dtype)
    c.same_npu(src0, dst)
    c.same_npu(src1, dst)
    c.in_place_or_apart(dst.view, src0.view, src1.view)


def const(c, p, allowed):
    shape = c.shape("shape", p.shape)
    dtype = c.dtype("dtype", p.dtype, allowed)
    dst = c.local("dst_addr", p.dst_addr, shape, p.dst_stride, dtype)
    src = c.local("src_addr", p.src_addr, shape, p.src_stride, dtype)
    c.same_npu(src, dst)
    c.in_place_or_apart(dst.view, src.view)
    c.scalar("C", p.C, dtype)
