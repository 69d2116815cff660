"""Bounds on the work of one instruction, for every chip's semantics (issue 24 item 3).

A few bytes of descriptor can ask for an unbounded amount of work; the simulator refuses, before
computing, an instruction whose work is over these bounds (the memory its operands may take is
bounded where their views are made: bmk/sim/memory.py, MAX_VIEW_ELEMENTS and
MAX_INSTRUCTION_ELEMENTS).

Work counts element operations (a multiply-add, a comparison, a copied element) plus, for
each numpy pass the semantics make over an array, PASS_COST: a pass costs a few microseconds
however small its array, so a command of many passes over tiny outputs (a 4095-channel conv with
a 16 x 16 kernel and one output: a million passes, 5 s) is as costly as one over big arrays.
MAX_WORK is about a second and a half of numpy on one core; the vendor's yolov5s streams
need at most 4.7e8 (a conv of 2304 passes).
"""
from bmk.errors import SimulationError

MAX_WORK = 1 << 31
PASS_COST = 1 << 13


def check_work(elements, passes=0):
    """SimulationError unless elements + passes * PASS_COST is at most MAX_WORK."""
    work = elements + passes * PASS_COST
    if work > MAX_WORK:
        raise SimulationError(f"the command must take at most {MAX_WORK} element operations to be simulated "
                              f"(each pass over an array counting {PASS_COST}), not {work} ({elements} "
                              f"operations in {passes} passes)")
    return work
