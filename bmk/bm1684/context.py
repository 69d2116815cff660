"""The bm1684 Context: okk_initialize() and the OKKernel functions that emit commands.

The API functions are the rows of the op table (api.py), turned into methods by
`bmk.program.Program` (check -> lower -> pack -> schedule; a failed call changes nothing).
Here: the Common functions that drive the scheduler (seed 003 "Common Functions"):
okk_parallel_start / okk_parallel_end / okk_is_parallel_state / okk_poll.
"""
from bmk.bm1684 import api
from bmk.bm1684 import geometry as g
from bmk.bm1684.checks.common import Check
from bmk.dtypes import as_dtype
from bmk.errors import ArgumentError, ScheduleError
from bmk.isa import load_chip
from bmk.lmem import LocalAllocation
from bmk.program import Program

__all__ = ["Context"]


class Context(LocalAllocation, Program):
    """okk_initialize(): an empty command buffer for BM1684 (TIU and GDMA streams).

    Local memory: tl_alloc / tl_alloc_bank / tl_prealloc / tl_free (bmk/lmem.py) place tensors
    of any start NPU, channel wrap-around counted."""

    OPS = api.OPS
    CHECK = Check
    REGISTER = "initialize"

    def __init__(self, cmdbuf_size=1 << 26):
        super().__init__(load_chip("bm1684"), cmdbuf_size)

    def _local_layout(self, call, addr, shape, dtype, stride, start_npu):
        """The tl_* calls' tensor: dtype a bmk DType or its name (8-, 16- or 32-bit); stored in
        32-bit words (geometry.py: 8-bit 4N, 16-bit 2N), so strides count words and n groups
        of 4 / 2 batches; stride None: the 128-byte aligned layout. A tl_prealloc address
        (start_npu None) follows the calls' rules (divisible by 4, the tensor fits)."""
        c = Check(self.chip, call)
        if start_npu is None:
            addr = c.address("addr", addr)
        shape = c.shape(shape)
        try:
            dt = as_dtype(dtype, call)
        except ArgumentError:
            dt = None
        if dt is None or dt.bits not in (8, 16, 32):
            c.fail("dtype", "an 8-, 16- or 32-bit bmk DType or its name (e.g. 'fp32', 'int8')", dtype)
        word = g.word_bytes(self.chip)
        pack = word // dt.itemsize
        st = c.aligned(addr, shape) if stride is None else c.stride("stride", stride)
        if start_npu is None:
            c.fits("addr", addr, shape, st, pack=pack)
        return shape, st, word, pack, dt

    def is_parallel_state(self):
        """okk_is_parallel_state (seed 003 Common): True while the parallel mode is active."""
        return self.in_parallel

    ACQUIRE_IN_PARALLEL = False     # acquire_* is okk_poll's / tpu_poll's hand-over: serial mode only

    def parallel_start(self):
        """okk_parallel_start (seed 003 Common): the following GDMA and BDC functions run in
        parallel (none waits for another of the group; each waits for what came before).
        Remark: the parallel mode must be inactive."""
        if self.is_parallel_state():
            raise ScheduleError("parallel_start: the parallel mode must be inactive, not active "
                                "(parallel_start was already called)")
        self._sched.parallel_enable()

    def parallel_end(self):
        """okk_parallel_end (seed 003 Common): back to serial order.
        Remark: the parallel mode must be active."""
        if not self.is_parallel_state():
            raise ScheduleError("parallel_end: the parallel mode must be active, not inactive "
                                "(call parallel_start first)")
        self._sched.parallel_disable()

    def poll(self):
        """okk_poll (seed 003 Common): all previous functions are done before the next one.
        Remark: the parallel mode must be inactive. Outside a parallel group every command
        already waits for the commands before it (serial order), so the barrier needs no
        command of its own; poll checks the remark."""
        if self.is_parallel_state():
            raise ScheduleError("poll: the parallel mode must be inactive, not active (call parallel_end first)")

    # The generic names of the ordering API are the seed's names on this chip.
    def parallel_enable(self):
        """Same as parallel_start."""
        self.parallel_start()

    def parallel_disable(self):
        """Same as parallel_end."""
        self.parallel_end()
