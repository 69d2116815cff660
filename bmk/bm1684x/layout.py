"""BM1684X local and global memory as TPU-Kernel sees it (API.md section bm1684x,
isa-facts/bm1684x-memory.md): `dim4`, the chip queries and the stride helpers.

A `local_addr_t` is npu * local_mem_size_per_npu() + offset; a tensor of C channels starting
on NPU s puts channel c on NPU (s + c) % 64 in channel slot (s + c) // 64. Strides count
elements. The aligned layout (a NULL local stride) is cs = ALIGN(H*W, eu_num(dtype)),
ns = ceil((s + C) / 64) * cs: the start NPU counts, for TIU and GDMA alike (the memory
notes' caveat: the vendor's gdma helpers assume s = 0; bmk uses one rule everywhere).
"""

from bmk import layout
from bmk.layout import dim4
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES, dtype_name, dtype_of
from bmk.errors import ArgumentError, must
from bmk.isa import load_chip
from bmk.templates import as_int, fixed
from bmk.util import is_int as _is_int


def is_int(value):
    """bmk.util.is_int, with a fast path for plain ints (the common case of every call)."""
    return type(value) is int or _is_int(value)

CHIP = load_chip("bm1684x")
NPU_NUM = CHIP.param("npu_num")
LANE_BYTES = CHIP.space("local").lane_bytes
LOCAL_SIZE = NPU_NUM * LANE_BYTES
ALIGN_BYTES = CHIP.param("channel_align_bytes")
GLOBAL = CHIP.space("global")
SHAPE_MAX = 65535          # seed 001: every shape field is in [1, 65535]


def npu_num():
    """tpu_npu_num(): the NPUs (lanes) of BM1684X."""
    return NPU_NUM


def local_mem_size_per_npu():
    """tpu_local_mem_size_per_npu(): bytes of local memory in each NPU."""
    return LANE_BYTES


def start_npu_index(addr):
    """tpu_npu_index(addr): the NPU a local address starts on (addr // local_mem_size_per_npu())."""
    local_address("start_npu_index", "addr", addr)
    return int(addr) // LANE_BYTES


def aligned_stride(start_idx, shape, dtype):
    """tpu_aligned_stride: the 64-byte aligned layout's strides (elements) of `shape` starting
    on NPU `start_idx`."""
    call = "aligned_stride"
    s = as_dim4(call, "shape", shape)
    code = dtype_code(call, "dtype", dtype, WHOLE_BYTE_DTYPES)
    return dim4(*layout.aligned_stride(s, dtype_of(code).itemsize, ALIGN_BYTES, NPU_NUM,
                                       npu_index(call, "start_idx", start_idx)))


def compact_stride(start_idx, shape):
    """tpu_compact_stride: channels packed without alignment (cs = H*W)."""
    call = "compact_stride"
    s = as_dim4(call, "shape", shape)
    return dim4(*layout.compact_stride(s, NPU_NUM, npu_index(call, "start_idx", start_idx)))


def continuous_stride(shape):
    """tpu_continuous_stride: row-major NCHW strides (the NULL stride of a global tensor)."""
    return dim4(*layout.continuous_stride(as_dim4("continuous_stride", "shape", shape)))


# -- argument helpers shared by the module functions and the checks --------------------------------
# They compute with integer arguments and never read them another way (as_int, not int(); an
# enum code through `fixed`), so call templates (bmk.templates) can trace the checks.
def as_dim4(call, name, value):
    """A dim4 of integers in [1, 65535] (seed 001: shape ranges)."""
    try:
        n, c, h, w = value
    except (TypeError, ValueError):
        raise ArgumentError(must(call, name, "a dim4 (n, c, h, w)", value)) from None
    for dim, v in zip("nchw", (n, c, h, w)):
        if not is_int(v) or not 1 <= v <= SHAPE_MAX:
            raise ArgumentError(must(call, f"{name}.{dim}", f"in [1, {SHAPE_MAX}]", v))
    return dim4(int(n), int(c), int(h), int(w))


def as_stride(call, name, value, maximum):
    """A free-layout stride: a dim4 of integers in [0, maximum] (elements)."""
    try:
        n, c, h, w = value
    except (TypeError, ValueError):
        raise ArgumentError(must(call, name, "None (the default layout) or a dim4 stride", value)) from None
    for dim, v in zip("nchw", (n, c, h, w)):
        if not is_int(v) or not 0 <= v <= maximum:
            raise ArgumentError(must(call, f"{name}.{dim}", f"an integer in [0, {maximum}]", v))
    return dim4(int(n), int(c), int(h), int(w))


def dtype_code(call, name, value, allowed):
    value = fixed(value)        # a code selects: a call template serves one dtype
    if not is_int(value) or int(value) not in allowed:
        names = ", ".join(dtype_name(d) for d in allowed)
        raise ArgumentError(must(call, name, f"one of {names}", value))
    return int(value)


def npu_index(call, name, value):
    if not is_int(value) or not 0 <= value < NPU_NUM:
        raise ArgumentError(must(call, name, f"an NPU index in [0, {NPU_NUM - 1}]", value))
    return as_int(value)


def local_address(call, name, value):
    if not is_int(value) or not 0 <= value < LOCAL_SIZE:
        raise ArgumentError(must(call, name, f"a local address in [0, 0x{LOCAL_SIZE:x})", value))
    return as_int(value)


def global_address(call, name, value):
    end = GLOBAL.base + GLOBAL.size
    if not is_int(value) or not GLOBAL.base <= value < end:
        raise ArgumentError(must(call, name, f"a global address in [0x{GLOBAL.base:x}, 0x{end:x})", value))
    return as_int(value)


def extent(shape, stride, itemsize):
    """Bytes from a tensor's first element to just past its last one, strides in elements
    (a local tensor's stride counts channel slots, so c is the slot count there)."""
    return itemsize * (1 + sum((d - 1) * s for d, s in zip(shape, stride)))
