"""LAR (tsk_typ 7, a 128-bit class of its own): the AR operations on a (1, res0_c, 1, res0_w) tensor.

Sources: isa-facts bm1684x-lowering.md and bm1684x.json (the LAR class: its EU codes are AR's
0..30, its fields res0_c/res0_w, the three addresses, precisions and signs of res0/opd0/opd1,
opd0_w_str / opd1_w_str, opd2_const, opd2_n_str, tsk_opd_num and start_tid; it has no sync
ids), tpu-mlir (no converter for LAR: none of the vendor's tools reads it).

No public source says what LAR does; bmk assumes (from its fields: 8-bit res0_c and res0_w,
16-bit addresses, 1-bit opd0_w_str / opd1_w_str) that each lar.<op> is arith.<op> (ar.py)
over the small tensor (1, res0_c, 1, res0_w): res0 aligned from res0_addr; opd0 and opd1 from
their addresses with w stride opd0_w_str / opd1_w_str (1: one element per position, 0: one
value broadcast along w), channel c in NPU (s + c) % npu_num at the same offset; opd2 is the
constant opd2_addr where the AR kind takes a third operand; the rounding mode is opd2_n_str;
results take opd0_sign | opd1_sign. start_tid must be 0 (a thread id: its effect is not
public).
"""
from bmk.errors import SimulationError
from bmk.sim.bm1684x import ar
from bmk.sim.bm1684x import fields as F


def _lar(op):
    fn = ar.KINDS[f"arith.{op}"]

    def run(m, f):
        if f.get("start_tid", 0):
            raise SimulationError(f"start_tid must be 0 (its effect is not public), not {f['start_tid']}")
        free = m.chip.code("tiu", "res0_str", "free")
        g = {"res0_n": 1, "res0_c": f.get("res0_c", 0), "res0_h": 1, "res0_w": f.get("res0_w", 0),
             "res0_addr": f.get("res0_addr", 0), "res0_prec": f.get("res0_prec", 0),
             "opd0_addr": f.get("opd0_addr", 0), "opd0_prec": f.get("opd0_prec", 0),
             "opd0_sign": f.get("opd0_sign", 0), "opd0_str": free, "opd0_w_str": f.get("opd0_w_str", 0),
             "opd1_addr": f.get("opd1_addr", 0), "opd1_prec": f.get("opd1_prec", 0),
             "opd1_sign": f.get("opd1_sign", 0), "opd1_str": free, "opd1_w_str": f.get("opd1_w_str", 0),
             "opd2_addr": f.get("opd2_addr", 0), "opd2_const": f.get("opd2_const", 0),
             "opd2_n_str": f.get("opd2_n_str", 0), "tsk_opd_num": f.get("tsk_opd_num", 0) or 2}
        fn(m, g)
    run.__name__ = f"lar_{op}"
    return run


KINDS = {f"lar.{k.split('.', 1)[1]}": _lar(k.split(".", 1)[1]) for k in ar.KINDS}
FIELDS = {k: F.names({"opd0_w_str", "opd1_w_str", "opd2_const", "res0_prec", "opd0_prec", "opd1_prec", "opd2_n_str",
                      "opd0_sign", "opd1_sign", "start_tid", "res0_c", "res0_w", "tsk_opd_num", "res0_addr",
                      "opd0_addr", "opd1_addr", "opd2_addr"}) for k in KINDS}
