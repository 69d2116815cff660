"""The cvimodel CPU functions (bmk/models/cpu) timed: numpy against the element-by-element
references of tests/models/test_cpu_functions.py (written from the vendor's C++), on the
sizes the shared topformer_seg model hands its host (argmax_v3 over (1, 48, 80, 5)) and on a
segmentation-sized resize. Run by hand from the repository root:

    PYTHONPATH=. python bench/cpu_functions.py
"""
import time

import numpy as np

import bmk
from bmk.models.cpu.runner import run_cpu_subnet, setup_cpu_subnet
from tests.models.test_cpu_functions import (SEG_181X, argmax_v3_reference, interp_subnet, ref_align_corners,
                                             ref_asymmetric, ref_half_pixel, ref_nearest, tile_max)


def timed(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    m = bmk.load_model(SEG_181X)
    sn = m.nets[0].stages[0].subnets[1]
    x = np.random.default_rng(0).integers(-128, 128, (1, 48, 80, 5)).astype(np.int8)
    mm = tile_max(x, np.int8).reshape(1, 48, 80, 1)
    prep = setup_cpu_subnet(m, sn)
    ours = timed(lambda: run_cpu_subnet(m, sn, {"output_ArgMax_permute": x, "output_ArgMax_trans1": mm},
                                        prepared=prep))
    ref = timed(lambda: argmax_v3_reference(x, mm, 3, 1 / 127, True, True), 1)
    print(f"argmax_v3 (1, 48, 80, 5): {ours * 1e3:.2f} ms, reference loop {ref * 1e3:.1f} ms ({ref / ours:.0f}x)")
    xi = np.random.default_rng(0).standard_normal((1, 2, 24, 40)).astype(np.float32)
    refs = {"half_pixel": lambda: ref_half_pixel(xi, 96, 160, False), "asymmetric": lambda: ref_asymmetric(xi, 96, 160),
            "align_corners": lambda: ref_align_corners(xi, 96, 160), "nearest": lambda: ref_nearest(xi, 96, 160, False)}
    for mode, reference in refs.items():
        s = interp_subnet(mode, xi.shape, (1, 2, 96, 160), height=96, width=160)
        prep = setup_cpu_subnet(m, s)
        ours = timed(lambda: run_cpu_subnet(m, s, {"x": xi}, prepared=prep))
        ref = timed(reference, 1)
        print(f"interp {mode} (1, 2, 24, 40) -> (96, 160): {ours * 1e3:.2f} ms, reference loop {ref * 1e3:.0f} ms "
              f"({ref / ours:.0f}x)")


if __name__ == "__main__":
    main()
