"""The bm1880 Context: BMKernel 1880 system API (seed 002 ch. 3) and computation API (ch. 4).

A call checks its arguments (checks.py), builds an op record (params.py), lowers it to
descriptors (lowering.py), packs them (encoders/) and hands them to the scheduler;
nothing is recorded until every step has succeeded, so a failing call changes nothing.
"""
import contextlib

import attrs

from bmk.bm1880 import checks, lowering, params
from bmk.bm1880.constants import CTRL_AL, CTRL_NULL
from bmk.encoders.codec import Patcher, codec_for
from bmk.encoders.framing import encode_header
from bmk.errors import AllocError, ArgumentError, CmdbufOverflowError, EncodeError, ScheduleError, must
from bmk.isa import load_chip
from bmk.scheduler import Scheduler
from bmk.tensor import (FMT_I8, FMT_U8, Shape, TensorLmem, align_up, as_shape, default_lmem_stride,
                        matrix_layout_shape)

SHAPE_MAX = 4095   # TIU shape fields (res0_c, opd0_h, ...) are 12 bits wide


class Op:
    """Handle returned by a computation call (bmk1880_op_t): names its last descriptor."""

    __slots__ = ("context", "generation", "index", "call")

    def __init__(self, context, generation, index, call):
        self.context, self.generation, self.index, self.call = context, generation, index, call

    def __repr__(self):
        return f"<Op {self.call} #{self.index}>"


class Context:
    """bmk1880_context_t. Create with `bm1880.register(...)`."""

    def __init__(self, chip_version=1880, cmdbuf_size=1 << 20):
        self.chip = load_chip("bm1880")
        if chip_version not in (self.chip.seed_chip_version, self.chip.version):
            raise ArgumentError(must("register", "chip_version",
                                     f"{self.chip.seed_chip_version} (or {self.chip.version})", chip_version))
        if isinstance(cmdbuf_size, bool) or not isinstance(cmdbuf_size, int) or cmdbuf_size < 0:
            raise ArgumentError(must("register", "cmdbuf_size", "a non-negative integer", cmdbuf_size))
        self.chip_version = chip_version
        self.cmdbuf_size = cmdbuf_size
        self.npu_num = self.chip.param("npu_num")
        self.eu_num = self.chip.param("eu_num")
        self.lmem_size = self.chip.param("lmem_size")
        self._engines = {e.name: e for e in self.chip.engines if e.format is not None}
        self._codecs = {name: codec_for(e.format) for name, e in self._engines.items()}
        self._headers = {name: encode_header(self.chip, e, e.format.nbytes) for name, e in self._engines.items()}
        # Per engine: the sync-id fields (enable flags, own id, waits) written at acquisition.
        self._sync_plan = {}
        for name, e in self._engines.items():
            names = [f for f, _ in e.enable] + [e.own_id] + [f for _, f in e.wait_for]
            self._sync_plan[name] = (Patcher(self._codecs[name], names), tuple(v for _, v in e.enable),
                                     tuple(other for other, _ in e.wait_for))
        self._stack = []          # tl_alloc / tl_alloc_bank tensors, allocation order
        self._stack_top = 0       # next tl_alloc address
        self._cleaned = False
        self._generation = 0
        self._start()

    def _start(self):
        self._bodies = []         # header + packed descriptor (Patcher-prepared, no sync ids), in order
        self._nbytes = 0
        self._sched = Scheduler()
        self._lowered = {}        # (call, arguments, their types) -> (((engine, body), ...), size)
        self._generation += 1

    # -- chip and memory (seed 4.6-4.11) --------------------------------------------------------
    def chip_info(self):
        """bmk1880_chip_info (seed 4.6)."""
        from bmk.bm1880 import ChipInfo
        p = self.chip.param
        return ChipInfo(self.chip_version, p("npu_num"), p("eu_num"), p("lmem_size"), p("lmem_banks"),
                        p("lmem_bank_size"))

    def _tensor(self, call, la, shape, fmt, aligned, alloc="prealloc"):
        try:
            shape = as_shape(shape)
        except ValueError as e:
            raise ArgumentError(f"{call}: {e}") from None
        for dim, value in zip(("n", "c", "h", "w") if shape.dim == 4 else ("row", "col"), shape.dims()):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= SHAPE_MAX:
                raise ArgumentError(must(call, f"shape.{dim}", f"in [1, {SHAPE_MAX}]", value))
        if fmt not in (FMT_I8, FMT_U8):
            raise ArgumentError(must(call, "fmt", "FMT_I8 (4) or FMT_U8 (9)", fmt))
        if shape.dim == 2:
            layout = matrix_layout_shape(shape.row, shape.col, self.eu_num, self.npu_num)
        else:
            layout = shape
        stride = default_lmem_stride(layout, aligned, self.eu_num, self.npu_num)
        if isinstance(la, bool) or not isinstance(la, int) or not 0 <= la < self.lmem_size:
            raise ArgumentError(must(call, "la", f"an lmem offset in [0, {self.lmem_size - 1}]", la))
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
        if isinstance(bank_id, bool) or not isinstance(bank_id, int) or not 0 <= bank_id < banks:
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
        if t.alloc == "alloc":
            self._stack_top = t.la

    # -- emission -------------------------------------------------------------------------------
    def _emit(self, call, make_record, key):
        """Check, lower, pack, then record: the one path of every computation call.

        Lowering is a pure function of the call's arguments, so its packed result is memoized
        per context under `key`: the call name, its arguments and their types (1 == 1.0 ==
        True, but only some of them pass the checks). An unhashable argument skips the memo.
        """
        if self._cleaned:
            raise ArgumentError(f"{call}: the context was cleaned up (cleanup)")
        try:
            lowered = self._lowered.get(key)
        except TypeError:
            lowered = key = None
        if lowered is None:
            record = make_record()
            getattr(checks, call)(self, record)
            descriptors = getattr(lowering, call)(self.chip, record)
            try:
                packed = [(engine, self._codecs[engine].pack(fields)) for engine, fields in descriptors]
            except EncodeError as e:
                raise ArgumentError(f"{call}: the arguments do not fit the bm1880 encoding: {e}") from None
            size = sum(len(self._headers[engine]) + len(body) for engine, body in packed)
            lowered = (tuple((engine, self._sync_plan[engine][0].prepare(body, self._headers[engine]))
                             for engine, body in packed), size)
            if key is not None:
                self._lowered[key] = lowered
        descriptors, size = lowered
        if self._nbytes + size > self.cmdbuf_size:
            raise CmdbufOverflowError(f"{call}: the command buffer would grow to {self._nbytes + size} "
                                      f"bytes, past cmdbuf_size {self.cmdbuf_size}")
        add, bodies = self._sched.add, self._bodies
        for engine, prepared in descriptors:
            index = add(engine)
            bodies.append(prepared)
        self._nbytes += size
        return Op(self, self._generation, index, call)

    def _compute(self, call, record_class, p, fields):
        """A tpu_* call: keyword fields of the C struct, or one record of `record_class`."""
        if p is None:
            def make():
                try:
                    return record_class(**fields)
                except (TypeError, ValueError) as e:
                    raise ArgumentError(f"{call}: {e}") from None
            return self._emit(call, make, (call, *fields.items(), *map(type, fields.values())))
        if fields:
            raise ArgumentError(f"{call}: pass either one {record_class.__name__} or keyword fields, not both")
        if not isinstance(p, record_class):
            raise ArgumentError(must(call, "p", f"a {record_class.__name__}", p))
        values = attrs.astuple(p, recurse=False)
        return self._emit(call, lambda: p, (call, *values, *map(type, values)))

    def _dma(self, call, record_class, *args):
        """A gdma_* call: positional arguments, as in C."""
        def make():
            try:
                return record_class(*args)
            except (TypeError, ValueError) as e:
                raise ArgumentError(f"{call}: {e}") from None
        return self._emit(call, make, (call, *args, *map(type, args)))

    # -- data movement (seed 4.12-4.18) ---------------------------------------------------------
    def gdma_copy_gmem(self, dst, src, ctrls=CTRL_NULL):
        """bmk1880_gdma_copy_gmem (seed 4.12). Like the v2 encoder, the handle cannot be used
        with add_dependency."""
        self._dma("gdma_copy_gmem", params.GdmaCopyGmem, dst, src, ctrls)
        return None

    def gdma_copy_lmem(self, dst, src):
        """bmk1880_gdma_copy_lmem (seed 4.13)."""
        return self._dma("gdma_copy_lmem", params.GdmaCopyLmem, dst, src)

    def gdma_load(self, t, gaddr, ctrls=CTRL_NULL):
        """bmk1880_gdma_load (seed 4.14)."""
        return self._dma("gdma_load", params.GdmaLoad, t, gaddr, ctrls)

    def gdma_store(self, t, gaddr, ctrls=CTRL_NULL):
        """bmk1880_gdma_store (seed 4.15)."""
        return self._dma("gdma_store", params.GdmaStore, t, gaddr, ctrls)

    def gdma_load_stride(self, t, gaddr, stride, ctrls=CTRL_NULL):
        """bmk1880_gdma_load_stride (seed 4.16)."""
        return self._dma("gdma_load_stride", params.GdmaLoadStride, t, gaddr, stride, ctrls)

    def gdma_store_stride(self, t, gaddr, stride, ctrls=CTRL_NULL):
        """bmk1880_gdma_store_stride (seed 4.17)."""
        return self._dma("gdma_store_stride", params.GdmaStoreStride, t, gaddr, stride, ctrls)

    def gdma_lrn_shift(self, dst, src, right_shift, lrn_step):
        """bmk1880_gdma_lrn_shift (seed 4.18). The handle names the second (zero-fill) descriptor."""
        return self._dma("gdma_lrn_shift", params.GdmaLrnShift, dst, src, right_shift, lrn_step)

    # tl_load / tl_store: the seed's section-3 spellings.
    tl_load = gdma_load
    tl_store = gdma_store

    # -- computation (seed 4.19-4.47): keywords of the C struct, or one record ---------------------
    def tpu_mul(self, p=None, /, **fields):
        """bmk1880_tpu_mul (seed 4.19): res = (a * b) >> rshift_width."""
        return self._compute("tpu_mul", params.MulParam, p, fields)

    def tpu_mul_const(self, p=None, /, **fields):
        """bmk1880_tpu_mul_const (seed 4.20)."""
        return self._compute("tpu_mul_const", params.MulConstParam, p, fields)

    def tpu_mac(self, p=None, /, **fields):
        """bmk1880_tpu_mac (seed 4.21): res = (a * b + (res << lshift_width)) >> rshift_width."""
        return self._compute("tpu_mac", params.MacParam, p, fields)

    def tpu_mac_const(self, p=None, /, **fields):
        """bmk1880_tpu_mac_const (seed 4.22)."""
        return self._compute("tpu_mac_const", params.MacConstParam, p, fields)

    def tpu_add(self, p=None, /, **fields):
        """bmk1880_tpu_add (seed 4.23): res = a + b (a, b 16-bit)."""
        return self._compute("tpu_add", params.AddParam, p, fields)

    def tpu_add_const(self, p=None, /, **fields):
        """bmk1880_tpu_add_const (seed 4.24)."""
        return self._compute("tpu_add_const", params.AddConstParam, p, fields)

    def tpu_sub(self, p=None, /, **fields):
        """bmk1880_tpu_sub (seed 4.25): res = a - b, signed result."""
        return self._compute("tpu_sub", params.SubParam, p, fields)

    def tpu_max(self, p=None, /, **fields):
        """bmk1880_tpu_max (seed 4.26)."""
        return self._compute("tpu_max", params.MaxParam, p, fields)

    def tpu_min(self, p=None, /, **fields):
        """bmk1880_tpu_min (seed 4.27)."""
        return self._compute("tpu_min", params.MinParam, p, fields)

    def tpu_min_const(self, p=None, /, **fields):
        """bmk1880_tpu_min_const (seed 4.28)."""
        return self._compute("tpu_min_const", params.MinConstParam, p, fields)

    def tpu_arith_shift(self, p=None, /, **fields):
        """bmk1880_tpu_arith_shift (seed 4.29): res = a >> bits."""
        return self._compute("tpu_arith_shift", params.ArithShiftParam, p, fields)

    def tpu_and_int8(self, p=None, /, **fields):
        """bmk1880_tpu_and_int8 (seed 4.30)."""
        return self._compute("tpu_and_int8", params.AndInt8Param, p, fields)

    tl_and_int8 = tpu_and_int8   # the seed's heading spells it so

    def tpu_and_int16(self, p=None, /, **fields):
        """bmk1880_tpu_and_int16 (seed 4.31)."""
        return self._compute("tpu_and_int16", params.AndInt16Param, p, fields)

    def tpu_or_int8(self, p=None, /, **fields):
        """bmk1880_tpu_or_int8 (seed 4.32)."""
        return self._compute("tpu_or_int8", params.OrInt8Param, p, fields)

    def tpu_or_int16(self, p=None, /, **fields):
        """bmk1880_tpu_or_int16 (seed 4.33)."""
        return self._compute("tpu_or_int16", params.OrInt16Param, p, fields)

    def tpu_xor_int8(self, p=None, /, **fields):
        """bmk1880_tpu_xor_int8 (seed 4.34)."""
        return self._compute("tpu_xor_int8", params.XorInt8Param, p, fields)

    def tpu_xor_int16(self, p=None, /, **fields):
        """bmk1880_tpu_xor_int16 (seed 4.35)."""
        return self._compute("tpu_xor_int16", params.XorInt16Param, p, fields)

    def tpu_copy(self, p=None, /, **fields):
        """bmk1880_tpu_copy (seed 4.36)."""
        return self._compute("tpu_copy", params.CopyParam, p, fields)

    def tpu_copy_with_stride(self, p=None, /, **fields):
        """bmk1880_tpu_copy_with_stride (seed 4.37)."""
        return self._compute("tpu_copy_with_stride", params.CopyWithStrideParam, p, fields)

    def tpu_mdsum(self, p=None, /, **fields):
        """bmk1880_tpu_mdsum (seed 4.38): per-channel sum over N, H, W."""
        return self._compute("tpu_mdsum", params.MdsumParam, p, fields)

    def tpu_lut(self, p=None, /, **fields):
        """bmk1880_tpu_lut (seed 4.39): table lookup per lmem slice."""
        return self._compute("tpu_lut", params.LutParam, p, fields)

    def tpu_relu(self, p=None, /, **fields):
        """bmk1880_tpu_relu (seed 4.40): res = max(0, a)."""
        return self._compute("tpu_relu", params.ReluParam, p, fields)

    def tpu_conv(self, p=None, /, **fields):
        """bmk1880_tpu_conv (seed 4.41)."""
        return self._compute("tpu_conv", params.ConvParam, p, fields)

    def tpu_winograd(self, p=None, /, **fields):
        """bmk1880_tpu_winograd (seed 4.42): a 3x3 convolution (see lowering.tpu_winograd)."""
        return self._compute("tpu_winograd", params.WinogradParam, p, fields)

    def tpu_depthwise(self, p=None, /, **fields):
        """bmk1880_tpu_depthwise (seed 4.43)."""
        return self._compute("tpu_depthwise", params.DepthwiseParam, p, fields)

    def tpu_max_pooling(self, p=None, /, **fields):
        """bmk1880_tpu_max_pooling (seed 4.44)."""
        return self._compute("tpu_max_pooling", params.MaxPoolingParam, p, fields)

    def tpu_avg_pooling(self, p=None, /, **fields):
        """bmk1880_tpu_avg_pooling (seed 4.45)."""
        return self._compute("tpu_avg_pooling", params.AvgPoolingParam, p, fields)

    def tpu_matrix_mac(self, p=None, /, **fields):
        """bmk1880_tpu_matrix_mac (seed 4.46)."""
        return self._compute("tpu_matrix_mac", params.MatrixMacParam, p, fields)

    def tpu_matrix_mac_2(self, p=None, /, **fields):
        """bmk1880_tpu_matrix_mac_2 (seed 4.47): (1,256,1,256) x (256,16,1,16) (see lowering)."""
        return self._compute("tpu_matrix_mac_2", params.MatrixMac2Param, p, fields)

    # -- ordering (seed 3.5-3.10) ----------------------------------------------------------------
    def parallel_enable(self):
        """bmk1880_parallel_enable (seed 3.5)."""
        self._sched.parallel_enable()

    def parallel_disable(self):
        """bmk1880_parallel_disable (seed 3.6)."""
        self._sched.parallel_disable()

    @contextlib.contextmanager
    def parallel(self):
        """`with ctx.parallel(): ...` is parallel_enable() ... parallel_disable()."""
        self.parallel_enable()
        try:
            yield self
        finally:
            self.parallel_disable()

    def create_streams(self, nr_streams):
        """bmk1880_create_streams (seed 3.7)."""
        self._sched.create_streams(nr_streams)

    def set_stream(self, i):
        """bmk1880_set_stream (seed 3.9)."""
        self._sched.set_stream(i)

    def destroy_streams(self):
        """bmk1880_destroy_streams (seed 3.8)."""
        self._sched.destroy_streams()

    def add_dependency(self, before, after):
        """bmk1880_add_dependency (seed 3.10): `before` must finish before `after` starts."""
        for name, op in (("before", before), ("after", after)):
            if not isinstance(op, Op):
                raise ScheduleError(must("add_dependency", name, "an Op returned by a computation call", op))
            if op.context is not self:
                raise ScheduleError(f"add_dependency: {name} must be an Op of this context, not of another one")
            if op.generation != self._generation:
                raise ScheduleError(f"add_dependency: {name} must be an Op issued since the last reset, "
                                    f"not {op!r} from before it")
        if before.index >= after.index:
            raise ScheduleError(f"add_dependency: before ({before!r}) must be issued earlier than after ({after!r})")
        self._sched.link(before.index, after.index)

    # -- the command buffer (seed 3.1-3.4) ------------------------------------------------------------
    def acquire_cmdbuf(self):
        """bmk1880_acquire_cmdbuf (seed 3.3): every descriptor since register/reset, framed
        with cmd_hdr_t, with sync ids assigned now."""
        inherit = [e.name for e in self._engines.values() if e.inherit_wait]
        own, waits = self._sched.assign(inherit)
        plans = self._sync_plan
        records = []
        for engine, prepared, own_id, wait in zip(self._sched.engine_of, self._bodies, own, waits):
            patch, enable, others = plans[engine]
            values = enable + (own_id,) + (tuple([wait.get(o, 0) for o in others]) if wait else (0,) * len(others))
            records.append(patch.fill(prepared, values))     # header + descriptor with sync ids
        return b"".join(records)

    def reset(self):
        """bmk1880_reset (seed 3.4): empty the command buffer, forget links, serial mode;
        ids restart at 1. Op handles from before the reset become stale. Like the v2
        library, tensors allocated with tl_alloc stay allocated."""
        self._start()

    def cleanup(self):
        """bmk1880_cleanup (seed 3.2): the context can no longer be used."""
        self._start()
        self._cleaned = True
