"""Shapes, strides and tensors of the BMKernel programming model (seed 002, ch. 2 and 4.2-4.5).

A tensor is (N, C, H, W); a matrix (R, Cm) is `dim == 2` with `row`/`col` in the h/w slots,
as in the seed's `shape_t` union. In lmem a matrix is laid out as the tensor
(R, C', 1, W) of seed 2.3 (`layout_shape`).
"""
import attrs

from bmk.errors import ArgumentError
from bmk.layout import align_up, ceil_div  # noqa: F401  (re-exported: bm1880 code imports them from here)
from bmk.util import plain

FMT_I8 = 4  # seed 4.1
FMT_U8 = 9
FMT_NAMES = {FMT_I8: "FMT_I8", FMT_U8: "FMT_U8"}


@attrs.frozen
class _Dims:
    """The n, c, h, w of shape_t / stride_t; a matrix (dim 2) keeps row/col in the h/w union."""

    n: int = attrs.field(converter=plain)
    c: int = attrs.field(converter=plain)
    h: int = attrs.field(converter=plain)
    w: int = attrs.field(converter=plain)
    dim: int = 4
    _c_name = ""

    @property
    def row(self):
        return self.h

    @property
    def col(self):
        return self.w

    def dims(self):
        return (self.row, self.col) if self.dim == 2 else (self.n, self.c, self.h, self.w)

    def __repr__(self):
        return f"{self._c_name}{self.dim}{self.dims()}"


@attrs.frozen(repr=False)
class Shape(_Dims):
    """shape_t (seed 4.2)."""

    _c_name = "shape_t"

    @property
    def count(self):
        return self.h * self.w if self.dim == 2 else self.n * self.c * self.h * self.w


@attrs.frozen(repr=False)
class Stride(_Dims):
    """stride_t (seed 4.3), in elements (= bytes for 8-bit data)."""

    _c_name = "stride_t"


def shape_t4(n, c, h, w):
    return Shape(n, c, h, w, 4)


def shape_t2(row, col):
    return Shape(1, 1, row, col, 2)


def stride_t4(n, c, h, w):
    return Stride(n, c, h, w, 4)


def stride_t2(row, col):
    return Stride(1, 1, row, col, 2)


def _dims(value, kind):
    """A 4- or 2-sequence; anything else is a ValueError that callers name the call in."""
    try:
        dims = tuple(value)
    except TypeError:
        dims = ()
    if len(dims) not in (2, 4) or isinstance(value, (str, bytes)):
        raise ValueError(f"{kind} must be a {kind}_t4 or {kind}_t2 (4 or 2 integers), not {value!r}")
    return dims


def as_shape(value):
    """Accept a Shape or a 4-/2-sequence (tensor / matrix)."""
    if isinstance(value, Shape):
        return value
    dims = _dims(value, "shape")
    return shape_t4(*dims) if len(dims) == 4 else shape_t2(*dims)


def as_stride(value):
    """Accept None (default strides), a Stride or a 4-/2-sequence."""
    if value is None or isinstance(value, Stride):
        return value
    dims = _dims(value, "stride")
    return stride_t4(*dims) if len(dims) == 4 else stride_t2(*dims)


def _gmem_converter(convert):
    def checked(value):
        try:
            return convert(value)
        except ValueError as e:
            raise ArgumentError(f"TensorGmem: {e}") from None
    return checked


def matrix_layout_shape(rows, cols, eu_num, npu_num):
    """A matrix (R, Cm) in lmem is the tensor (R, C', 1, W) (seed 2.3; v2 choice of W)."""
    w = cols if cols < eu_num else eu_num * ceil_div(cols, eu_num * npu_num)
    return Shape(rows, ceil_div(cols, w), 1, w)


def default_lmem_stride(layout, aligned, eu_num, npu_num):
    """Seed 2.4: unaligned / aligned lmem strides of a (layout) shape."""
    c_stride = layout.h * layout.w
    if aligned:
        c_stride = align_up(c_stride, eu_num)
    return Stride(c_stride * ceil_div(layout.c, npu_num), c_stride, layout.w, 1)


def default_gmem_stride(shape):
    """Seed 2.4: gmem default strides (tensor: dense NCHW; matrix: row stride = col)."""
    if shape.dim == 2:
        return stride_t2(shape.col, 1)
    return Stride(shape.c * shape.h * shape.w, shape.h * shape.w, shape.w, 1)


@attrs.frozen(eq=False)
class TensorLmem:
    """tensor_lmem (seed 4.4): a tensor or matrix in lmem.

    la is the byte offset inside each NPU lane; `layout` is the 4-D shape the data has in
    lmem (the tensor itself, or a matrix's (R, C', 1, W)); `stride` its lmem strides.
    """

    la: int
    fmt: int
    shape: Shape
    aligned: bool
    layout: Shape
    stride: Stride
    owner: object = attrs.field(default=None, repr=False)   # the allocating context
    alloc: str = "prealloc"                                   # prealloc | alloc | bank

    @property
    def is_matrix(self):
        return self.shape.dim == 2

    @property
    def signed(self):
        return self.fmt == FMT_I8

    @property
    def lane_bytes(self):
        """Bytes this tensor spans in one lane, from la."""
        return self.stride.n * self.layout.n

    def with_la(self, la):
        return attrs.evolve(self, la=la)

    def __repr__(self):
        return (f"TensorLmem(la=0x{self.la:x}, shape={self.shape!r}, fmt={FMT_NAMES.get(self.fmt, self.fmt)}, "
                f"aligned={self.aligned})")


@attrs.frozen
class TensorGmem:
    """tensor_gmem (seed 4.5): a tensor or matrix in gmem; stride None = default strides."""

    addr: int = attrs.field(converter=plain)
    shape: Shape = attrs.field(converter=_gmem_converter(as_shape))
    stride: "Stride | None" = attrs.field(default=None, converter=_gmem_converter(as_stride))

    @property
    def effective_stride(self):
        return self.stride if self.stride is not None else default_gmem_stride(self.shape)
