"""The bm1880 Context: BMKernel 1880 system API (seed 002 ch. 3) and computation API (ch. 4).

The API functions are the rows of the op table (api.py), turned into methods by
`bmk.program.Program`, which also holds the one emission path, the ordering API and
acquisition. Here: what only bm1880 has, the chip check of `register`, chip_info and the
lmem tensor allocators (tl_*).
"""
import attrs

from bmk.bm1880 import api
from bmk.bm1880.checks.common import Check
from bmk.bm1880.constants import CTRL_AL, CTRL_NULL
from bmk.bm1880.tensor import FMT_I8, FMT_U8, TensorLmem, align_up, as_shape, default_lmem_stride, matrix_layout_shape
from bmk.errors import AllocError, ArgumentError, must
from bmk.isa import load_chip
from bmk.optable import Op, last_to_last
from bmk.program import Program
from bmk.util import is_int, plain

__all__ = ["Context", "Op"]


@attrs.frozen
class ChipInfo:
    """bmk1880_chip_info_t (seed 4.6)."""
    version: int
    npu_num: int
    eu_num: int
    lmem_size: int
    lmem_banks: int
    lmem_bank_size: int


class Context(Program):
    """bmk1880_context_t. Create with `bm1880.register(...)`."""

    OPS = api.OPS
    CHECK = Check
    # An Op is its last descriptor and add_dependency links last to last, as in the v2 encoder
    # (gdma_lrn_shift's handle is its fill descriptor).
    dependency_links = staticmethod(last_to_last)

    def __init__(self, chip_version=1880, cmdbuf_size=1 << 20):
        chip = load_chip("bm1880")
        if chip_version not in (chip.seed_chip_version, chip.version):
            raise ArgumentError(must("register", "chip_version",
                                     f"{chip.seed_chip_version} (or {chip.version})", chip_version))
        super().__init__(chip, cmdbuf_size)
        self.chip_version = chip_version
        self.npu_num = chip.param("npu_num")
        self.eu_num = chip.param("eu_num")
        self.lmem_size = chip.param("lmem_size")
        self.shape_max = chip.limit("tiu", "res0_c")       # the TIU shape fields' width
        self._stack = []          # tl_alloc / tl_alloc_bank tensors, allocation order
        self._stack_top = 0       # next tl_alloc address

    # -- chip and memory (seed 4.6-4.11) --------------------------------------------------------
    def chip_info(self):
        """bmk1880_chip_info (seed 4.6)."""
        p = self.chip.param
        return ChipInfo(self.chip_version, p("npu_num"), p("eu_num"), p("lmem_size"), p("lmem_banks"),
                        p("lmem_bank_size"))

    def _tensor(self, call, la, shape, fmt, aligned, alloc="prealloc"):
        la, fmt = plain(la), plain(fmt)
        try:
            shape = as_shape(shape)
        except ValueError as e:
            raise ArgumentError(f"{call}: {e}") from None
        for dim, value in zip(("n", "c", "h", "w") if shape.dim == 4 else ("row", "col"), shape.dims()):
            if not is_int(value) or not 1 <= value <= self.shape_max:
                raise ArgumentError(must(call, f"shape.{dim}", f"in [1, {self.shape_max}]", value))
        if not is_int(fmt) or fmt not in (FMT_I8, FMT_U8):
            raise ArgumentError(must(call, "fmt", "FMT_I8 (4) or FMT_U8 (9)", fmt))
        if shape.dim == 2:
            layout = matrix_layout_shape(shape.row, shape.col, self.eu_num, self.npu_num)
        else:
            layout = shape
        stride = default_lmem_stride(layout, aligned, self.eu_num, self.npu_num)
        if not is_int(la) or not 0 <= la < self.lmem_size:
            raise ArgumentError(must(call, "la", f"an lmem offset in [0, {self.lmem_size - 1}]", la))
        la, fmt = int(la), int(fmt)
        t = TensorLmem(la, fmt, shape, bool(aligned), layout, stride, self, alloc)
        if la + t.lane_bytes > self.lmem_size:
            raise ArgumentError(must(call, "la", f"such that la + {t.lane_bytes} bytes fit in the "
                                     f"{self.lmem_size}-byte lmem lane", la))
        return t

    def tl_prealloc(self, la, shape, fmt):
        """bmk1880_tl_prealloc (seed 4.7): a tensor at `la` with unaligned strides."""
        return self._tensor("tl_prealloc", la, shape, fmt, False)

    def tl_prealloc_align(self, la, shape, fmt):
        """bmk1880_tl_prealloc_align (seed 4.8): a tensor at `la` with aligned strides."""
        return self._tensor("tl_prealloc_align", la, shape, fmt, True)

    def _ctrl_aligned(self, call, ctrl):
        if ctrl not in (CTRL_NULL, CTRL_AL):
            raise ArgumentError(must(call, "ctrl", "CTRL_NULL or CTRL_AL", ctrl))
        return ctrl == CTRL_AL

    def _overlapping(self, start, end):
        for t in self._stack:
            if start < t.la + align_up(t.lane_bytes, self.eu_num) and t.la < end:
                return t
        return None

    def tl_alloc(self, shape, fmt, ctrl=CTRL_NULL):
        """bmk1880_tl_alloc (seed 4.9): the next address of the lmem stack (16-byte steps)."""
        aligned = self._ctrl_aligned("tl_alloc", ctrl)
        probe = self._tensor("tl_alloc", 0, shape, fmt, aligned, "alloc")
        size = align_up(probe.lane_bytes, self.eu_num)
        if self._stack_top + size > self.lmem_size:
            raise AllocError(f"tl_alloc: shape {probe.shape!r} needs {size} bytes per lane, only "
                             f"{self.lmem_size - self._stack_top} are free (lmem lane is {self.lmem_size} bytes)")
        clash = self._overlapping(self._stack_top, self._stack_top + size)
        if clash is not None:
            raise AllocError(f"tl_alloc: the stack would grow into {clash!r} allocated by tl_alloc_bank")
        t = probe.with_la(self._stack_top)
        self._stack.append(t)
        self._stack_top += size
        return t

    def tl_alloc_bank(self, bank_id, shape, fmt, ctrl=CTRL_NULL):
        """bmk1880_tl_alloc_bank (seed 4.10): allocate inside lmem bank `bank_id`.

        Each bank keeps its own stack from the bank's start; the tensor must fit in the bank
        and must not overlap live tl_alloc tensors. Freed with tl_free in LIFO order per bank.
        (The v2 library has no equivalent; this follows the seed's description.)
        """
        banks, bank_size = self.chip.param("lmem_banks"), self.chip.param("lmem_bank_size")
        bank_id = plain(bank_id)
        if not is_int(bank_id) or not 0 <= bank_id < banks:
            raise ArgumentError(must("tl_alloc_bank", "bank_id", f"in [0, {banks - 1}]", bank_id))
        aligned = self._ctrl_aligned("tl_alloc_bank", ctrl)
        probe = self._tensor("tl_alloc_bank", 0, shape, fmt, aligned, "bank")
        size = align_up(probe.lane_bytes, self.eu_num)
        live = [t for t in self._stack if t.alloc == ("bank", bank_id)]
        start = live[-1].la + align_up(live[-1].lane_bytes, self.eu_num) if live else bank_id * bank_size
        if start + size > (bank_id + 1) * bank_size:
            raise AllocError(f"tl_alloc_bank: shape {probe.shape!r} needs {size} bytes per lane, bank {bank_id} "
                             f"has {(bank_id + 1) * bank_size - start} free")
        if start < self._stack_top or self._overlapping(start, start + size) is not None:
            raise AllocError(f"tl_alloc_bank: bank {bank_id} at 0x{start:x} overlaps tensors from tl_alloc "
                             f"(stack top 0x{self._stack_top:x})")
        t = TensorLmem(start, probe.fmt, probe.shape, probe.aligned, probe.layout, probe.stride, self,
                       ("bank", bank_id))
        self._stack.append(t)
        return t

    def is_live(self, t):
        """A tl_prealloc tensor always is; a tl_alloc / tl_alloc_bank one until tl_free."""
        return t.alloc == "prealloc" or any(x is t for x in self._stack)

    def tl_free(self, t):
        """bmk1880_tl_free (seed 4.11): free in last-allocated, first-freed order."""
        if not isinstance(t, TensorLmem):
            raise ArgumentError(must("tl_free", "t", "a TensorLmem", t))
        if t.owner is not self:
            raise AllocError("tl_free: t must belong to this context, not to another one")
        if t.alloc == "prealloc":
            return
        same = [x for x in self._stack if x.alloc == t.alloc]
        if not any(x is t for x in same):
            raise AllocError(f"tl_free: t must be a live allocation, not {t!r} (already freed?)")
        if same[-1] is not t:
            raise AllocError(f"tl_free: tensors must be freed last-allocated first: free {same[-1]!r} "
                             f"before {t!r}")
        self._stack = [x for x in self._stack if x is not t]
        self.forget_lowered()     # memoized calls skip the checks: a freed tensor must meet them again
        if t.alloc == "alloc":
            self._stack_top = t.la
