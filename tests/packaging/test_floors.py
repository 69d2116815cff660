"""The floors (issue 17): a chip's API never loads the simulator, and a chip's simulator never
loads an API package, the op-table machinery or the call templates; both read their facts
from the ChipSpec they are given.

Each rule is checked twice: on the import graph a fresh interpreter really builds (what
`import bmk.<chip>` / `import bmk.sim.<chip>` pulls in), and on the modules' own import
statements (so a function-level import cannot hide a leak).
"""
import ast
import json
import pathlib
import subprocess
import sys

import pytest

import bmk

ROOT = pathlib.Path(bmk.__file__).parent
API_CHIPS = sorted(p.name for p in ROOT.iterdir() if (p / "api.py").is_file())
SIM_CHIPS = sorted(p.name for p in (ROOT / "sim").iterdir() if (p / "__init__.py").is_file())
MACHINERY = ("bmk.program", "bmk.optable", "bmk.emission", "bmk.ordering", "bmk.acquisition", "bmk.origin_log", "bmk.templates")


def _loaded(module):
    """The bmk modules a fresh interpreter has loaded after `import module`."""
    code = f"import sys, json, {module}; print(json.dumps(sorted(m for m in sys.modules if m.startswith('bmk'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def _imports(folder):
    """(file, imported module) of every import statement under a package folder."""
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                yield from ((path, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                yield path, node.module
                yield from ((path, f"{node.module}.{a.name}") for a in node.names)


def _under(name, package):
    return name == package or name.startswith(package + ".")


def test_the_chips_are_found():
    assert {"bm1880", "bm1684", "bm1684x"} <= set(API_CHIPS) and set(API_CHIPS) <= set(SIM_CHIPS)


@pytest.mark.parametrize("chip", API_CHIPS)
def test_a_chip_api_does_not_load_the_simulator(chip):
    leaks = [m for m in _loaded(f"bmk.{chip}") if _under(m, "bmk.sim")]
    assert leaks == []
    assert [(p.name, m) for p, m in _imports(ROOT / chip) if _under(m, "bmk.sim")] == []


@pytest.mark.parametrize("chip", SIM_CHIPS)
def test_a_chip_simulator_loads_no_api_and_no_op_table_machinery(chip):
    banned = [f"bmk.{c}" for c in API_CHIPS] + list(MACHINERY)
    leaks = [m for m in _loaded(f"bmk.sim.{chip}") if any(_under(m, b) for b in banned)]
    assert leaks == []
    assert [(p.name, m) for p, m in _imports(ROOT / "sim" / chip) if any(_under(m, b) for b in banned)] == []


@pytest.mark.parametrize("chip", SIM_CHIPS)
def test_a_chip_simulator_loads_no_spec_of_its_own(chip):
    """Facts come from the Simulator's ChipSpec (`m.chip`, the `chip` given to check): a
    module-level load_chip would make Simulator(custom_spec) silently use the shipped one."""
    assert [(p.name, m) for p, m in _imports(ROOT / "sim" / chip) if m.endswith("load_chip")] == []
