"""Ordering, the seeds' system API: parallel groups, streams and explicit dependencies between
calls, kept by the context's Scheduler (bmk/scheduler.py) and turned into sync ids at acquisition."""
import contextlib

from bmk.errors import ScheduleError, must
from bmk.optable import Op
from bmk.scheduler import PARALLEL


class Ordering:
    """The ordering half of a Program (bmk/program.py holds the state it reads)."""

    @property
    def in_parallel(self):
        """Whether a parallel group is open (the chips' is_parallel_state)."""
        return self._sched.mode is PARALLEL

    def parallel_enable(self):
        """Descriptors issued until parallel_disable need not wait for one another. Groups
        open only from serial mode (no nesting, not inside streams): else ScheduleError."""
        self._sched.parallel_enable()

    def parallel_disable(self):
        """Back to serial order; ScheduleError when no group is open."""
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
        """`nr_streams` independent streams, each serial; set_stream selects one."""
        self._sched.create_streams(nr_streams)

    def set_stream(self, i):
        """Issue the next calls on stream `i`."""
        self._sched.set_stream(i)

    def destroy_streams(self):
        """Back to serial order after the streams."""
        self._sched.destroy_streams()

    def add_dependency(self, before, after):
        """`before` must finish before `after` starts (links chosen by `dependency_links`)."""
        for name, op in (("before", before), ("after", after)):
            if not isinstance(op, Op):
                raise ScheduleError(must("add_dependency", name, "an Op returned by a computation call", op))
            if op.context is not self:
                raise ScheduleError(f"add_dependency: {name} must be an Op of this context, not of another one")
            if op.generation != self._generation:
                raise ScheduleError(f"add_dependency: {name} must be an Op issued since the last reset, "
                                    f"not {op!r} from before it")
        if before.start >= after.start:
            raise ScheduleError(f"add_dependency: before ({before!r}) must be issued earlier than after ({after!r})")
        for b, a in self.dependency_links(before, after):
            self._sched.link(b, a)
