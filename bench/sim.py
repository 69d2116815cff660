"""Simulator speed: against bare numpy doing the same math, and against today's simulator
(issue 3; issue 13 item 5).

Cases (bm1880; each buffer is built once, with this tree's encoder):
1. tiled: a tiled 3x3 conv layer, C = 64 in and out, 56x56, pad 1, int8 with a 16-bit bias,
   rshift 8, relu: load weight and bias, then per tile of 2 output rows (28 tiles, ping-pong
   lmem buffers) load the input rows with their halo, conv, tpu_relu, store: 114 instructions.
   numpy: the whole layer at once (pad, im2col as a strided view, one matrix product, bias,
   rounding shift, relu, saturation).
2. golden: the 70000-instruction buffer of tests/golden/bm1880/sched_wrap_70000_ops.json
   (tiny element-wise ops and loads: almost pure per-instruction overhead).
3. add: 4M-element element-wise add with an int8 result: 32 tiles of (1, 32, 64, 64) (load the
   four int8 planes of a and b, tpu_add, store), 192 instructions. numpy: clip(a + b).
4. conv: one 3x3 conv of the whole 56x56x64 layer (5 instructions). numpy as in 1.

Timed: `Simulator(...).run(buf)` on a fresh simulator (decode, execution, timing, race
detection), in CPU seconds of the process (time.process_time; the machine may be shared), with
one BLAS thread for the simulator and numpy alike (see below). Simulator timings run in worker
subprocesses, one per round and tree, alternating "old" (today's code: a git worktree of BASE
at /tmp/sim-base) and "new" (this tree), each importing bmk through a package layout made of
symlinks (PYTHONPATH at it); a worker runs each case REPEAT times (golden: 2), each on a fresh
Simulator; the figure is the best over workers and runs, as numpy's is its best of REPEAT.
The workers return a digest of the report (Report.to_dict(), races included), of its Chrome
trace and of the result bytes: old and new must agree, and both must equal numpy.

Figures: sim ms old and new, numpy ms, sim/numpy, old/new, and per-instruction overhead
(sim - numpy) / instructions (for golden: sim / instructions) old and new with their ratio
("(<= np)" when the simulator is not slower than numpy).

Run: python bench/sim.py [ROUNDS] [--base SHA]
"""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

# One BLAS thread, set before numpy loads (here and, inherited, in the workers): the
# simulator and numpy then do the same math on one core. With a thread pool, a small matrix
# product on a busy machine waits for the pool (a 112 x 576 x 64 product took as long as one
# 28 times larger), which times the scheduler, not the simulator.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import as_strided  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
BASE = "33881d9ab5392a7079dea3302ed5bd875afc72ff"     # main when simspeed started (issue 13 item 5)
BASE_TREE = pathlib.Path("/tmp/sim-base")
# older trees' package-dir (pyproject.toml): bmk.<sub> lived at <tree>/<dir>
SUBPACKAGES = {"isa": "isa", "encoders": "encoders", "cli": "cli", "specs": "specs"}

C, H, W, K = 64, 56, 56, 3
X_G, W_G, B_G, O_G = 0x100000, 0x200000, 0x300000, 0x400000
RSHIFT = 8
TILE_ROWS = 2
REPEAT = 5          # runs per case in each worker (the golden buffer: 2), each on a fresh Simulator

N_ADD = 4 * 1024 * 1024
TILE = (1, 32, 64, 64)
T = 32 * 64 * 64
A_LO, A_HI, B_LO, B_HI, RES = (0x1000000 * i for i in range(1, 6))


def clock():
    """CPU seconds of this process: on a shared machine wall time also counts the neighbours."""
    return time.process_time()


def best(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = clock()
        out = fn()
        times.append(clock() - t)
    return min(times), out


# -- programs (built with this tree) ----------------------------------------------------------
def conv_inputs():
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (1, C, H, W), dtype=np.int8)
    wt = rng.integers(-128, 128, (C, K, K, C), dtype=np.int8)         # (Cin, kh, kw, Cout)
    bias = rng.integers(-32768, 32768, C, dtype=np.int16)
    gmem = {X_G: x.tobytes(), W_G: np.ascontiguousarray(wt.transpose(3, 1, 2, 0)).tobytes(),  # (Cout, kh, kw, Cin)
            B_G: np.stack([bias.view(np.uint8)[0::2], bias.view(np.uint8)[1::2]]).tobytes()}
    return x, wt, bias, gmem


def tiled_program():
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    w = ctx.tl_prealloc(8192, bm1880.shape_t4(C, C, K, K), FMT_I8)
    w_view = ctx.tl_prealloc(8192, bm1880.shape_t4(1, C, K * K, C), FMT_I8)   # its lmem layout (seed 4.41)
    bias = ctx.tl_prealloc(10240, bm1880.shape_t4(2, C, 1, 1), FMT_I8)
    ctx.gdma_load(w_view, W_G, CTRL_NULL)
    ctx.gdma_load(bias, B_G, CTRL_NULL)
    gstride = bm1880.stride_t4(C * H * W, H * W, W, 1)
    for t in range(H // TILE_ROWS):
        buf = t % 2                                       # ping-pong: loads overlap the previous conv
        r0, r1 = max(0, t * TILE_ROWS - 1), min(H, (t + 1) * TILE_ROWS + 1)
        x = ctx.tl_prealloc_align(buf * 2048, bm1880.shape_t4(1, C, r1 - r0, W), FMT_I8)
        out = ctx.tl_prealloc_align(4096 + buf * 1024, bm1880.shape_t4(1, C, TILE_ROWS, W), FMT_I8)
        ctx.gdma_load_stride(x, X_G + r0 * W, gstride, CTRL_NULL)
        ctx.tpu_conv(ofmap=out, ifmap=x, weight=w, bias=bias, pad_top=int(t == 0),
                     pad_bottom=int(t == H // TILE_ROWS - 1), pad_left=1, pad_right=1, stride_h=1, stride_w=1,
                     dilation_h=1, dilation_w=1, relu_enable=False, rshift_width=RSHIFT)
        ctx.tpu_relu(ofmap=out, ifmap=out)
        ctx.gdma_store_stride(out, O_G + t * TILE_ROWS * W, gstride, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def conv_program():
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
    x = ctx.tl_prealloc_align(0, bm1880.shape_t4(1, C, H, W), FMT_I8)
    w = ctx.tl_prealloc(8192, bm1880.shape_t4(C, C, K, K), FMT_I8)
    w_view = ctx.tl_prealloc(8192, bm1880.shape_t4(1, C, K * K, C), FMT_I8)
    bias = ctx.tl_prealloc(10240, bm1880.shape_t4(2, C, 1, 1), FMT_I8)
    out = ctx.tl_prealloc_align(12288, bm1880.shape_t4(1, C, H, W), FMT_I8)
    ctx.gdma_load(x, X_G, CTRL_NULL)
    ctx.gdma_load(w_view, W_G, CTRL_NULL)
    ctx.gdma_load(bias, B_G, CTRL_NULL)
    ctx.tpu_conv(ofmap=out, ifmap=x, weight=w, bias=bias, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1,
                 stride_h=1, stride_w=1, dilation_h=1, dilation_w=1, relu_enable=True, rshift_width=RSHIFT)
    ctx.gdma_store(out, O_G, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def conv_numpy(x, wt, bias):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    s = xp.strides
    win = as_strided(xp, (1, H, W, C, K, K), (s[0], s[2], s[3], s[1], s[2], s[3]))
    acc = (win.reshape(H * W, C * K * K) @ wt.reshape(C * K * K, C).astype(np.float64)).astype(np.int64)
    acc = np.maximum(acc + bias, 0)
    acc = (acc + (1 << (RSHIFT - 1))) >> RSHIFT
    return np.clip(acc, -128, 127).astype(np.int8).T.reshape(1, C, H, W)


def add_program():
    from bmk import bm1880
    from bmk.bm1880 import CTRL_NULL, FMT_I8
    ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 24)
    s = bm1880.shape_t4(*TILE)
    al, ah, bl, bh, r = (ctx.tl_prealloc(i * 4096, s, FMT_I8) for i in range(5))
    for k in range(N_ADD // T):
        for t, g in ((al, A_LO), (ah, A_HI), (bl, B_LO), (bh, B_HI)):
            ctx.gdma_load(t, g + k * T, CTRL_NULL)
        ctx.tpu_add(res_high=None, res_low=r, a_high=ah, a_low=al, b_high=bh, b_low=bl)
        ctx.gdma_store(r, RES + k * T, CTRL_NULL)
    return ctx.acquire_cmdbuf()


def golden_program():
    sys.path.insert(0, str(REPO))
    from tests.goldens import load_cases, run_calls
    return run_calls(load_cases()["sched_wrap_70000_ops"])[-1][1]


def cases(repeat):
    """{name: (buffer, {gmem address: bytes}, (result address, bytes), numpy ms, numpy result)}."""
    out = {}
    x, wt, bias, gmem = conv_inputs()
    t_np, ref = best(lambda: conv_numpy(x, wt, bias.astype(np.int64)), repeat)
    out["tiled"] = (tiled_program(), gmem, (O_G, ref.nbytes), t_np, ref.tobytes())
    out["golden"] = (golden_program(), {}, (0x1000, 4096), 0.0, None)
    rng = np.random.default_rng(0)
    a = rng.integers(-32768, 32768, N_ADD, dtype=np.int16)
    b = rng.integers(-32768, 32768, N_ADD, dtype=np.int16)
    add_gmem = {addr: np.ascontiguousarray(v).tobytes()
                for addr, v in ((A_LO, a.view(np.uint8)[0::2]), (A_HI, a.view(np.uint8)[1::2]),
                                (B_LO, b.view(np.uint8)[0::2]), (B_HI, b.view(np.uint8)[1::2]))}
    t_add, add_ref = best(lambda: np.clip(a.astype(np.int32) + b, -128, 127).astype(np.int8), repeat)
    out["add"] = (add_program(), add_gmem, (RES, N_ADD), t_add, add_ref.tobytes())
    out["conv"] = (conv_program(), gmem, (O_G, ref.nbytes), t_np, ref.tobytes())
    return out


# -- the worker: times Simulator.run with whichever bmk its PYTHONPATH gives ------------------
def worker(path):
    import bmk
    with open(path, "rb") as fh:
        spec = json.load(fh)
    result = {"bmk": bmk.__file__, "isa": sys.modules["bmk"].__name__}
    from bmk import isa
    result["isa"] = isa.__file__
    for name, case in spec.items():
        buf = pathlib.Path(case["buf"]).read_bytes()
        elapsed = []
        for _ in range(case["repeat"]):
            sim = bmk.Simulator("bm1880")
            for addr, file in case["gmem"].items():
                sim.gmem_write(int(addr), pathlib.Path(file).read_bytes())
            t = clock()
            report = sim.run(buf)
            elapsed.append(clock() - t)
        elapsed = min(elapsed)
        addr, n = case["out"]
        got = sim.gmem_read(addr, n)
        digest = hashlib.sha256(json.dumps(report.to_dict(), sort_keys=True).encode()
                                + json.dumps(report.trace_events(), sort_keys=True).encode()).hexdigest()
        result[name] = {"t": elapsed, "n": len(report.instructions), "report": digest,
                        "out": hashlib.sha256(got).hexdigest(), "races": len(report.races)}
    json.dump(result, sys.stdout)


def layout(tree, where):
    """A directory importing `bmk` (and bmk.isa, ...) from `tree` (pyproject's package-dir)."""
    pkg = where / "bmk"
    pkg.mkdir(parents=True)
    for entry in (tree / "bmk").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for sub, folder in SUBPACKAGES.items():
        if not (pkg / sub).exists() and (tree / folder).is_dir():    # older trees: bmk.isa at <tree>/isa
            (pkg / sub).symlink_to(tree / folder)
    return where


def base_tree(sha):
    if not (BASE_TREE / "bmk").is_dir():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(BASE_TREE), sha], check=True,
                       capture_output=True)
    head = subprocess.run(["git", "-C", str(BASE_TREE), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    if head != sha:
        raise SystemExit(f"{BASE_TREE} is at {head}, not {sha}: remove it (git worktree remove) and rerun")
    return BASE_TREE


def run_worker(site, spec_path):
    env = dict(os.environ, PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, __file__, "--worker", str(spec_path)], env=env, check=True,
                         capture_output=True, text=True)
    res = json.loads(out.stdout)
    for key in ("bmk", "isa"):
        if not res[key].startswith(str(site)):
            raise SystemExit(f"worker imported {key} from {res[key]}, not from {site}")
    return res


def main(rounds=3, sha=BASE):
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        built = cases(5)
        spec = {}
        for name, (buf, gmem, out, _, _) in built.items():
            (tmp / f"{name}.bin").write_bytes(buf)
            files = {}
            for addr, data in gmem.items():
                files[str(addr)] = str(tmp / f"{name}_{addr:x}.bin")
                pathlib.Path(files[str(addr)]).write_bytes(data)
            spec[name] = {"buf": str(tmp / f"{name}.bin"), "gmem": files, "out": list(out),
                          "repeat": 2 if name == "golden" else REPEAT}
        (tmp / "spec.json").write_text(json.dumps(spec))
        sites = {"old": layout(base_tree(sha), tmp / "old"), "new": layout(REPO, tmp / "new")}
        runs = {"old": [], "new": []}
        for _ in range(rounds):
            for which in ("old", "new"):
                runs[which].append(run_worker(sites[which], tmp / "spec.json"))
    print(f"old = {sha[:12]} ({BASE_TREE}), new = {REPO}; best of {rounds} rounds, fresh Simulator each; "
          f"CPU ms; OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"{'case':8} {'instrs':>6} {'numpy ms':>9} {'old ms':>9} {'new ms':>9} {'old/new':>7} "
          f"{'old/np':>7} {'new/np':>7} {'old us/ins':>10} {'new us/ins':>10} {'ovh ratio':>9}")
    for name, (_, _, _, t_np, ref) in built.items():
        old = min(r[name]["t"] for r in runs["old"])
        new = min(r[name]["t"] for r in runs["new"])
        first = runs["old"][0][name]
        for r in runs["old"] + runs["new"]:
            for key in ("report", "out", "n"):
                assert r[name][key] == first[key], f"{name}: old and new simulators disagree ({key})"
        if ref is not None:
            assert first["out"] == hashlib.sha256(ref).hexdigest(), f"{name}: simulator and numpy disagree"
        n = first["n"]
        ovh_old, ovh_new = (old - t_np) / n, (new - t_np) / n
        np_cols = f"{t_np * 1e3:9.1f}" if t_np else f"{'-':>9}"
        ratio_np = (f"{old / t_np:7.2f} {new / t_np:7.2f}" if t_np else f"{'-':>7} {'-':>7}")
        ovh_ratio = f"{ovh_old / ovh_new:9.2f}" if ovh_new > 0 and ovh_old > 0 else f"{'(<= np)':>9}"
        print(f"{name:8} {n:6d} {np_cols} {old * 1e3:9.1f} {new * 1e3:9.1f} {old / new:7.2f} {ratio_np} "
              f"{ovh_old * 1e6:10.1f} {ovh_new * 1e6:10.1f} {ovh_ratio}")
    print(f"reports, traces, races and results identical old vs new; bench took {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
    else:
        args = sys.argv[1:]
        sha = BASE
        if "--base" in args:
            k = args.index("--base")
            sha = args[k + 1]
            del args[k:k + 2]
        main(*(int(a) for a in args[:1]), sha=sha)
