"""RQ&DQ on BM1688: BM1684X's (bmk/sim/bm1684x/quant.py) but for the constant dq0 / dq2.

Source: the shared tdl_models streams. BM1688 and CV184X dequantizations with constant operands
carry the fp32 scale in opd1_addr and leave opd2_addr 0: cls_attribute_face_112_112_INT8's four
sigmoid outputs are dequantized with opd1_addr 0x3b808081 (1/255), the value its BM1684X build
carries in opd2_addr; cls_sound_babay_cry's logits with opd1_addr 0x3d16645b (0.0367: 4.66 / 127,
the output scale its BM1684X build gives) and 26 other dq0 of the cv184x models alike. So the
constant zero point is opd2_addr (an int32 of A's sign). The tensor form is BM1684X's.
"""
from bmk.sim.bm1684x import quant

KINDS = {"quant.dq0": quant.dequant_float(False, zp_field="opd2_addr", scale_field="opd1_addr"),
         "quant.dq2": quant.dequant_float(True, zp_field="opd2_addr", scale_field="opd1_addr")}
FIELDS = {k: quant.FIELDS[k] for k in KINDS}
CHECKS = {k: quant.CHECKS[k] for k in KINDS}
