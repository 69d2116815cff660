"""Local-memory allocation for the chips whose local tensors spread over NPUs (bm1684, bm1684x):
the `tl_*` calls of BMKernel (seed 002 4.7-4.11: tl_prealloc, tl_alloc, tl_alloc_bank, tl_free)
with the same names and the same stack discipline, for tensors that start on any NPU.

Placement (isa-facts bm1684-memory.md "Channels", bm1684x-memory.md "channel placement"): a
local address A is NPU `A // lane_bytes` (the start NPU s) at offset `A % lane_bytes`; channel c
lives on NPU (s + c) % npu_num in channel slot (s + c) // npu_num, so a tensor of C channels
takes ceil((s + C) / npu_num) slots (c-strides) of every NPU it reaches. It wraps: a 67-channel
tensor starting on NPU 10 puts channels 54..66 on NPUs 0..12, one c-stride further than its
first channel (the case that silently overwrote another buffer, issue 22 item 5).

Footprint (`lane_ranges`): per NPU, the lane bytes [lo, hi) from the first to the last byte the
tensor has there. An NPU below s holds no channel in slot 0, so its range starts one c-stride
later; an NPU past the last channel of the last slot ends one c-stride earlier; an NPU without
a channel has none. It is exact for N = 1 and the bounding range of the batches otherwise.

Allocation, as BMKernel's (seed 002 4.9-4.11), in lane offsets, the same on every NPU:
- `tl_alloc` takes the next offset of one stack (from lane byte 0; rounded up to the chip's
  `channel_align_bytes`, its EU alignment), `tl_alloc_bank` the next of bank k's own stack
  (`lmem_banks` banks of `lmem_bank_size` bytes); each stack frees last-allocated first
  (`tl_free`), and a stack's tensor reserves [offset, offset + size) on every NPU (size: the
  largest range end of its footprint), so stack tensors never share a byte;
- `tl_prealloc` places a tensor at an address the caller gives (the chip's own address and
  fit rules); it is live until `tl_free` (any order). Prealloc tensors may overlap each other
  (views of one buffer are the caller's business), never a live stack tensor;
- every refusal (does not fit, would overlap a live tensor, freed out of order or twice) is an
  AllocError naming the call, the argument, the value and the rule (bmk.errors.must), and
  changes nothing.
Every fact (npu_num, lane bytes, banks, alignment) comes from the Context's ChipSpec.
"""
import attrs

from bmk.checks import is_integer
from bmk.errors import AllocError, ArgumentError, Shown, must
from bmk.layout import align_up, dim4, lane_ranges, lanes_text, slots

PREALLOC = "prealloc"
ALLOC = "alloc"


@attrs.frozen(eq=False)
class LocalTensor:
    """A local tensor from tl_alloc / tl_alloc_bank / tl_prealloc: what the API calls take.

    addr: its local_addr_t (start_npu * lane bytes + offset), for the calls' *_addr arguments;
    shape, stride: dim4s for their shape and *_stride arguments (stride in the chip's stride
    units: bm1684 storage words, bm1684x elements); dtype as given; slots: channel slots per
    NPU, ceil((start_npu + C) / npu_num); size: lane bytes from offset to its last byte on any
    NPU; lanes: per NPU its (lo, hi) lane byte range or None (`lane_ranges`); alloc: "alloc",
    ("bank", k) or "prealloc"."""

    addr: int
    shape: dim4
    stride: dim4
    dtype: object
    start_npu: int
    offset: int
    slots: int
    size: int
    lanes: tuple = attrs.field(repr=False)
    alloc: object = PREALLOC
    owner: object = attrs.field(default=None, repr=False)

    @property
    def end(self):
        """The lane offset just past the tensor (offset + size)."""
        return self.offset + self.size

    def overlap(self, other):
        """(NPUs, lo, hi): where both tensors have bytes (the first NPU's common range), or None."""
        common, where = [], None
        for k, (a, b) in enumerate(zip(self.lanes, other.lanes)):
            if a is not None and b is not None and a[0] < b[1] and b[0] < a[1]:
                common.append(k)
                where = where or (max(a[0], b[0]), min(a[1], b[1]))
        return (tuple(common), *where) if common else None

    def __str__(self):
        how = self.alloc if isinstance(self.alloc, str) else f"bank {self.alloc[1]}"
        return (f"{self.shape!r} at 0x{self.addr:x} (NPU {self.start_npu}:0x{self.offset:x}, "
                f"{self.slots} c-stride(s), {how})")


class LocalAllocation:
    """The tl_* calls of a Context (mixed into bm1684 / bm1684x `Context`). The chip gives
    `_local_layout(call, addr, shape, dtype, stride, start_npu)` -> (shape, stride, unit, pack,
    dtype): its checks of the arguments, its strides (None: its aligned layout) and its storage
    unit; everything else is here."""

    def _tl_state(self):
        state = self.__dict__.get("_tl_live")
        if state is None:
            state = self.__dict__["_tl_live"] = []     # live tensors, allocation order
        return state

    def _tl_make(self, call, offset, start_npu, shape, dtype, stride, alloc):
        lane = self.chip.space("local").lane_bytes
        npu_num = self.chip.param("npu_num")
        shape, stride, unit, pack, dtype = self._local_layout(call, start_npu * lane + offset, shape, dtype,
                                                              stride, start_npu)
        lanes = lane_ranges(npu_num, start_npu, offset, shape, stride, unit, pack)
        size = max(r[1] for r in lanes if r is not None) - offset
        return LocalTensor(start_npu * lane + offset, dim4(*shape), dim4(*stride), dtype, start_npu, offset,
                           slots(shape[1], npu_num, start_npu), size, lanes, alloc, self)

    def _tl_clash(self, call, t):
        """The first live tensor sharing a byte with t (a prealloc tensor: of the stacks only)."""
        for other in self._tl_state():
            if t.alloc == PREALLOC and other.alloc == PREALLOC:
                continue
            hit = t.overlap(other)
            if hit is not None:
                lanes, lo, hi = hit
                raise AllocError(must(call, "shape" if t.alloc != PREALLOC else "addr",
                                      f"such that the tensor overlaps no live tensor, but on {lanes_text(lanes)} "
                                      f"lane bytes [0x{lo:x}, 0x{hi:x}) are also {other}",
                                      Shown(str(t))))

    def _tl_start_npu(self, call, start_npu):
        last = self.chip.param("npu_num") - 1
        if not is_integer(start_npu) or not 0 <= start_npu <= last:
            raise ArgumentError(must(call, "start_npu", f"an NPU index in [0, {last}]", start_npu))
        return int(start_npu)

    def _tl_stack(self, call, region, lo, hi, shape, dtype, stride, start_npu):
        start_npu = self._tl_start_npu(call, start_npu)
        live = [t for t in self._tl_state() if t.alloc == region]
        align = self.chip.param("channel_align_bytes")
        offset = align_up(live[-1].end if live else lo, align)
        if offset >= hi:
            raise AllocError(must(call, "shape", f"a tensor that fits the free lane bytes [0x{offset:x}, 0x{hi:x})"
                                                 f" (none is free)", shape))
        t = self._tl_make(call, offset, start_npu, shape, dtype, stride, region)
        if t.end > hi:
            raise AllocError(must(call, "shape", f"a tensor that fits the free lane bytes [0x{offset:x}, 0x{hi:x}) "
                                                 f"of every NPU ({hi - offset} bytes), but it needs {t.size} bytes "
                                                 f"({t.slots} c-stride(s) from NPU {start_npu})", t.shape))
        self._tl_clash(call, t)
        self._tl_state().append(t)
        return t

    def tl_alloc(self, shape, dtype, stride=None, start_npu=0):
        """bmk1880_tl_alloc (seed 002 4.9) for this chip: a tensor at the next offset of the
        local-memory stack, starting on NPU `start_npu`; stride None: the chip's aligned
        layout. Returns a LocalTensor (its addr, shape, stride for the API calls)."""
        return self._tl_stack("tl_alloc", ALLOC, 0, self.chip.space("local").lane_bytes, shape, dtype, stride,
                              start_npu)

    def tl_alloc_bank(self, bank_id, shape, dtype, stride=None, start_npu=0):
        """bmk1880_tl_alloc_bank (seed 002 4.10) for this chip: the next offset of bank
        `bank_id`'s own stack; the tensor fits the bank on every NPU it reaches."""
        banks, bank_size = self.chip.param("lmem_banks"), self.chip.param("lmem_bank_size")
        if not is_integer(bank_id) or not 0 <= bank_id < banks:
            raise ArgumentError(must("tl_alloc_bank", "bank_id", f"a bank index in [0, {banks - 1}]", bank_id))
        bank_id = int(bank_id)
        return self._tl_stack("tl_alloc_bank", ("bank", bank_id), bank_id * bank_size, (bank_id + 1) * bank_size,
                              shape, dtype, stride, start_npu)

    def tl_prealloc(self, addr, shape, dtype, stride=None):
        """bmk1880_tl_prealloc (seed 002 4.7) for this chip: a tensor at local address `addr`
        (the chip's address rules), live until tl_free; it may not overlap a live tl_alloc /
        tl_alloc_bank tensor (nor they it)."""
        lane = self.chip.space("local").lane_bytes
        self._local_layout("tl_prealloc", addr, shape, dtype, stride, None)     # addr checked first
        t = self._tl_make("tl_prealloc", addr % lane, addr // lane, shape, dtype, stride, PREALLOC)
        self._tl_clash("tl_prealloc", t)
        self._tl_state().append(t)
        return t

    def tl_free(self, t):
        """bmk1880_tl_free (seed 002 4.11): a stack's tensors are freed last-allocated first;
        a tl_prealloc tensor at any time."""
        live = self._tl_state()
        if not isinstance(t, LocalTensor):
            raise ArgumentError(must("tl_free", "t", "a LocalTensor (from tl_alloc, tl_alloc_bank or tl_prealloc)", t))
        if t.owner is not self:
            raise AllocError(must("tl_free", "t", "a tensor of this context", Shown(str(t))))
        if not any(x is t for x in live):
            raise AllocError(must("tl_free", "t", "a live tensor (freed already?)", Shown(str(t))))
        if t.alloc != PREALLOC:
            top = [x for x in live if x.alloc == t.alloc][-1]
            if top is not t:
                raise AllocError(must("tl_free", "t", f"the last live tensor of its stack ({top}): free last-"
                                                      "allocated first", Shown(str(t))))
        live[:] = [x for x in live if x is not t]

    def tl_live(self):
        """The live tensors, in allocation order."""
        return tuple(self._tl_state())
