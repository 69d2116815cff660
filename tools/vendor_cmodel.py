"""Record the vendor cmodel's outputs for tests/models (tests/models/vendor_cmodel.py says what
and how): run by hand where tpu-mlir's wheel is installed in a Python 3.10 environment.

    python tools/vendor_cmodel.py --runner 'CMD' [MODEL ...]

CMD runs the vendor's model_runner for one model: it is formatted with {chip} (BM1688, CV184X,
BM1684X; CV181X for a cvimodel), {model}, {input} and {output} (npz paths) and run by the shell;
e.g. a script that links the chip's libcmodel_*.so as libcmodel.so and calls tpu-mlir's
python/tools/model_runner.py with --input, --model, --output. Each model is copied to a
temporary folder first (model_runner writes a folder beside the model). Writes
tests/models/vendor_cmodel.json; prints each model's comparison with bmk."""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import bmk  # noqa: E402
from tests.models import vendor_cmodel as V  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    paths = [Path(p).resolve() for p in a.models] or sorted(p for p in (ROOT / "tests" / "models").rglob("*")
                                                   if p.suffix in (".bmodel", ".cvimodel"))
    data = json.loads(V.DIGESTS.read_text()) if V.DIGESTS.is_file() else {"models": {}}
    tests = (ROOT / "tests" / "models").resolve()
    for path in paths:
        if tests not in path.parents:
            print(f"{path}: not a tests/models file (the digests are of the tests' models): skipped")
            continue
        m = bmk.load_model(str(path))
        chip = "CV181X" if path.suffix == ".cvimodel" else m.target.upper()
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            shutil.copy(path, tmp / path.name)
            np.savez(tmp / "in.npz", **V.inputs(m))
            cmd = a.runner.format(chip=chip, model=tmp / path.name, input=tmp / "in.npz", output=tmp / "out.npz")
            res = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            if res.returncode or not (tmp / "out.npz").is_file():
                print(f"{path.name}: the vendor's runner failed ({res.returncode}): "
                      f"{(res.stderr or res.stdout).strip().splitlines()[-1:]}")
                continue
            vendor = V.as_outputs(m, dict(np.load(tmp / "out.npz")))
        mine = m.run(V.inputs(m))
        same = {k: float(np.mean(mine[k] == vendor[k])) for k in vendor}
        print(f"{path.name}: equal fraction per output {same}")
        data["models"][str(path.relative_to(tests))] = V.digests(vendor)
    V.DIGESTS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
