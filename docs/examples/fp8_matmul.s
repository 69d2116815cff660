.chip bm1690
0 @0x0  tiu.mm.normal    id=1 wait.gdma=0 cmd_short=1 tsk_typ=MM opt_res0_prec=fp32 opt_opd0_prec=fp8 res0_c=1 res0_w=16 opd0_n=1 opd0_c=1 opd0_w=16 opd1_w=16 res0_addr=0x2000 opd1_addr=0x1000
