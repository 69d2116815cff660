"""Instructions (valgrind's callgrind) of one steady run of a model with `Simulator.run`'s default
checks (races and bmk/sim/lmemcheck.py) and of the same run without, this tree beside a base
commit (issue 34 item 4: checks on <= 1.3x off). bench/sim_checks.py times the same runs in CPU
time, which moves by 10-30% between runs on a shared machine; a count does not (the same code
gives the same count), so it tells what a change to the checker did. A count is not a time: a
byte copy is cheaper per instruction than interpreted Python.

    python bench/sim_checks_instructions.py [--base REV] [--models NAME,...]

Each (tree, model, side) is its own process under callgrind, counting only inside one
functools.reduce call that runs one simulation (bench/sim_checks.py's model_workload: a Simulator
reset to a fresh chip, seeded random inputs); two untimed runs before it fill the plans, views
and the checker's pieces.

Measured (2026-11-29, `--models face_detection,retinaface,Yuv2rgb`; base 57f5c92 = before the
channel slots of a tensor were checked as one piece; millions of instructions, off, on, on/off):

    face_detection_fp32_b1   base  397.0   493.3  1.24 | this  397.0   494.8  1.25
    retinaface 384x640 b1    base  951.3  1399.3  1.47 | this  950.3  1352.0  1.42
    Yuv2rgb                  base   74.7   105.9  1.42 | this   74.7   106.1  1.42

By count, face_detection's checks cost 1.25x, where its CPU times say 1.5-1.9 (bench/sim_checks.py):
the checker's per-call numpy work and byte copies cost more time per instruction than the
simulation's BLAS products. The slot union took 47 M of retinaface's 448 M checking instructions.

Then (replay of a kept checked run, lmemcheck._Recording: the measured run is a program's third
on its Simulator, so it replays; `--base 8bbddb7 --models face_detection_fp32,retinaface,
Yuv2rgb_0_int8/`, at b35daf9-b88b6f7):

    face_detection_fp32_b1   base  381.3   478.1  1.25 | this  381.3   420.8  1.10
    retinaface 384x640 b1    base  937.4  1340.1  1.43 | this  937.8  1149.9  1.23
    Yuv2rgb                  base   57.2    88.4  1.55 | this   57.1    66.6  1.17
"""
import argparse
import functools
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from worktree import base_tree, callgrind  # noqa: E402

MODELS = Path("/work/shared/models")
DEFAULT = ["bm1684/face_detection_fp32_b1.bmodel", "bm1684/retinaface_mobilenet0.25_384x640_fp32_b1.bmodel",
           "bm1684x/Yuv2rgb_0_int8/compilation.bmodel", "tdl/bm1684x/cls_attribute_face_112_112_INT8_bm1684x.bmodel",
           "tdl/bm1684x/hand_keypoint_cls_bm1684x.bmodel", "tdl/bm1684x/cls_sound_babay_cry_188_40_INT8_bm1684x.bmodel"]


def child(path, side):
    import sim_checks
    go = sim_checks.model_workload(path)
    checked = side == "on"
    go(checked)
    go(checked)
    functools.reduce(lambda *_: go(checked), [0, 1])     # callgrind counts inside functools_reduce only


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="57f5c92")
    ap.add_argument("--models", default="", help="comma-separated substrings of the model paths (default: six "
                                                 "small shared models)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(*a.child)
    paths = DEFAULT if not a.models else [p for p in DEFAULT if any(m in p for m in a.models.split(","))]
    trees = {"base": base_tree(a.base), "this": HERE.parent}
    env = {"OPENBLAS_NUM_THREADS": "1"}
    print(f"callgrind instructions (millions) of one run, checks off / on; base = {a.base}")
    for rel in paths:
        path = str(MODELS / rel)
        if not os.path.exists(path):
            print(f"{rel}: not here")
            continue
        line = f"{rel.split('/')[-1][:44]:44}"
        for side_name, tree in trees.items():
            off = callgrind(__file__, [path, "off"], tree, env)[0] / 1e6
            on = callgrind(__file__, [path, "on"], tree, env)[0] / 1e6
            line += f" | {side_name} {off:9.1f} {on:9.1f} {on / off:5.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
