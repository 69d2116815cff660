"""The bm1684x Context: the TPU-Kernel API (seed 001) over `bmk.program.Program`.

The API functions are the rows of the op table (api.py). Here: construction (the short or
long command forms), and the TPU-Kernel system calls parallel_start / parallel_end / poll.
"""
from bmk.bm1684x import api
from bmk.bm1684x.checks.common import ITEMSIZE, Check
from bmk.bm1684x.constants import WHOLE_BYTE_DTYPES, DataType
from bmk.isa import load_chip
from bmk.lmem import LocalAllocation
from bmk.program import Program

__all__ = ["Context"]


class Context(LocalAllocation, Program):
    """tpu_initialize(): a new, empty TPU-Kernel program for BM1684X.

    `long_form=True` makes every TIU command take its long class (AR, VC) instead of the
    short one the vendor compiler emits (sAR, sVC): the same calls, the same fields.
    Local memory: tl_alloc / tl_alloc_bank / tl_prealloc / tl_free (bmk/lmem.py) place tensors
    of any start NPU, channel wrap-around counted."""

    OPS = api.OPS
    CHECK = Check
    REGISTER = "Context"
    SYSTEM_CALLS = Program.SYSTEM_CALLS + ("parallel_start", "parallel_end", "is_parallel_state", "poll")

    def __new__(cls, cmdbuf_size=1 << 24, long_form=False):
        if long_form and cls is Context:
            cls = LongContext
        return super().__new__(cls)

    def __init__(self, cmdbuf_size=1 << 24, long_form=False):
        super().__init__(load_chip("bm1684x"), cmdbuf_size)

    def _local_layout(self, call, addr, shape, dtype, stride, start_npu):
        """The tl_* calls' tensor: dtype a whole-byte data_type_t; strides in elements, None:
        the 64-byte aligned layout from its start NPU. A tl_prealloc address (start_npu None)
        follows the calls' rules (Check.local: aligned offset for a NULL stride, the tensor fits)."""
        c = Check(self.chip, call)
        shape = c.shape("shape", shape)
        code = c.dtype("dtype", dtype, WHOLE_BYTE_DTYPES)
        itemsize = ITEMSIZE[code]
        if start_npu is None:
            st = c.local("addr", addr, shape, stride, code, stride_name="stride").stride
        elif stride is None:
            st = c.aligned(shape, itemsize, start_npu)
        else:
            st = c.free_stride("stride", stride)
        return shape, st, itemsize, 1, DataType(code)

    @property
    def long_form(self):
        """Whether TIU commands take their long classes."""
        return False

    ACQUIRE_IN_PARALLEL = False     # acquire_* is okk_poll's / tpu_poll's hand-over: serial mode only

    def parallel_start(self):
        """tpu_parallel_start: commands until parallel_end need not wait for one another."""
        self._sched.parallel_enable("parallel_start")

    def parallel_end(self):
        """tpu_parallel_end: back to serial order."""
        self._sched.parallel_disable("parallel_end")

    def is_parallel_state(self):
        """tpu_is_parallel_state: whether a parallel section is open."""
        return self.in_parallel

    def poll(self):
        """tpu_poll: every command issued later waits for every command issued so far. In
        serial order that holds already; inside a parallel section it closes the current
        group and opens a new one after it."""
        if self.is_parallel_state():
            self.parallel_disable()
            self.parallel_enable()


class LongContext(Context):
    """A Context whose TIU commands take their long classes (`Context(long_form=True)`)."""

    OPS = api.LONG_OPS

    @property
    def long_form(self):
        return True
