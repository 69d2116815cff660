"""LIN (tsk_typ 10, long LIN and short sLIN): per-channel linear functions of float data.

Sources: isa-facts bm1684x-lowering.md (eu 1 mac, 20 add_sqr, 21 sub_sqr), tpu-mlir
python/debugger/target_1684x/opparam.py `sLIN_t_converter` (opd0 and res0 aligned of
res0_prec; opd1 and opd2 compact (1, C, 1, 1) of the same type, or constants; mac takes
three operands, the others two), tpu-mlir third_party/ppl/runtime/checker/src/atomic_fused_linear.c
(the firmware's check: LIN_MAC, LIN_ADD_SQR, LIN_SUB_SQR on float types).

  mac          res0 = opd0 * opd1 + opd2
  square_sum   res0 = (opd0 + opd1) ** 2
  square_diff  res0 = (opd0 - opd1) ** 2
opd1 and opd2 hold one value per channel. Each result is computed in float64 and rounded once
to res0_prec (bmk's assumption: the hardware fuses the steps).
"""
from bmk.errors import SimulationError
from bmk.sim.bm1684x import fields as F
from bmk.sim.bm1684x.operands import check_shape, dt, operand, read, shape_of, tensor, write


def _lin(kind):
    def run(m, f):
        shape = shape_of(f)
        check_shape(m, "res0", shape)
        r_dt = dt(m, f, "res0", 1)
        if not r_dt.is_float:
            raise SimulationError(f"res0_prec must be a float precision, not {r_dt!r}")
        x = read(m, tensor(m, f, "opd0", shape, r_dt, "aligned"))
        per = (1, shape[1], 1, 1)
        a = operand(m, f, "opd1", per, r_dt, "compact")
        if kind == "lin.mac":
            y = x * a + operand(m, f, "opd2", per, r_dt, "compact")
        elif kind == "lin.square_sum":
            y = (x + a) ** 2
        else:
            y = (x - a) ** 2
        write(m, tensor(m, f, "res0", shape, r_dt, "aligned"), y, True, f)
    run.__name__ = kind.split(".")[1]
    return run


KINDS = {k: _lin(k) for k in ("lin.mac", "lin.square_sum", "lin.square_diff")}

_BASE = F.names({f"res0_{d}" for d in "nchw"}, {"res0_addr", "res0_prec", "opd0_addr", "opd1_addr", "opd1_const",
                                               "tsk_lane_num"})
# opd2 is mac's addend and no operand of the square kinds (its fields describe nothing there)
FIELDS = {k: _BASE | {"opd2_addr", "opd2_const"} for k in KINDS}
