"""The floors (issues 17 and 28): every import statement of every bmk module, function-level
ones included, goes down the floors of FLOORS or sideways within one floor, and no two modules
import each other, directly or round a longer circle. A chip's API never loads the simulator,
and a chip's simulator never loads an API package, the op-table machinery or the call
templates; both read their facts from the ChipSpec they are given.

The chip rules are checked twice: on the import graph a fresh interpreter really builds (what
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
from bmk.isa.registry import chips_with

ROOT = pathlib.Path(bmk.__file__).parent
API_CHIPS = list(chips_with("api"))             # the chip registry: bmk/<chip>/api.py
SIM_CHIPS = list(chips_with("simulator"))       # bmk/sim/<chip>/__init__.py
MACHINERY = ("bmk.program", "bmk.optable", "bmk.emission", "bmk.ordering", "bmk.acquisition", "bmk.origin_log",
             "bmk.templates")



# The floors, bottom up: (name, module prefixes, lower floors it must not import). A module
# belongs to the floor of its longest matching prefix; "bmk" itself (the package's lazy
# front door: bmk.decode, bmk.check, bmk.Simulator ...) sits under the CLI only. A module
# imports from its own floor or a lower one not excluded: API and simulator are two columns that never meet; model containers, timing and
# text tools do not reach into the API machinery; text tools read no simulator (what a chip
# can do: bmk.isa.registry).
FLOORS = [
    ("ground", ("bmk.errors",), ()),
    ("values", ("bmk.util", "bmk.dtypes", "bmk.numerics", "bmk.layout", "bmk.images", "bmk.argtypes", "bmk.specs"),
     ()),
    ("isa", ("bmk.isa",), ()),
    ("codec", ("bmk.encoders",), ()),
    ("asm formatter", ("bmk.text.views", "bmk.text.asm", "bmk.text.listing"), ()),
    ("schedules", ("bmk.timing.schedule", "bmk.timing.basis"), ()),
    ("API machinery", ("bmk.scheduler", "bmk.optable", "bmk.templates", "bmk.checks", "bmk.lmem", "bmk.emission",
                       "bmk.ordering", "bmk.acquisition", "bmk.origins", "bmk.origin_log", "bmk.program"),
     ("schedules",)),
    ("chip APIs", tuple(f"bmk.{c}" for c in API_CHIPS), ("schedules",)),
    ("simulator", ("bmk.sim",), ("asm formatter", "API machinery", "chip APIs")),
    ("model containers", ("bmk.models",), ("asm formatter", "API machinery", "chip APIs")),
    ("timing", ("bmk.timing",), ("asm formatter", "API machinery", "chip APIs")),
    ("text tools", ("bmk.text",), ("simulator", "timing", "chip APIs")),
    ("testing", ("bmk.testing",), ("simulator", "timing", "chip APIs")),
    ("package", ("bmk",), ()),
    ("CLI", ("bmk.cli", "bmk.__main__"), ()),
]


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _floor(module):
    """(index, name, excluded floor names) of a module's floor: its longest matching prefix."""
    best = max(((len(prefix), k) for k, (_, prefixes, _) in enumerate(FLOORS) for prefix in prefixes
                if _under(module, prefix)), default=None)
    assert best is not None, f"{module} is on no floor of FLOORS"
    return best[1], FLOORS[best[1]][0], FLOORS[best[1]][2]


def _target(name):
    """The bmk module an imported name loads: the longest module prefix of the name."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _edges(module):
    """(line, imported bmk module) of every import statement of a module, function-level ones included."""
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            assert not (isinstance(node, ast.ImportFrom) and node.level), f"{module}: relative import"
            continue
        for name in names:
            target = _target(name) if name.startswith("bmk") else None
            if target is not None and target != module:
                yield node.lineno, target


GRAPH = {m: sorted(set(t for _, t in _edges(m))) for m in MODULES}


def test_every_module_is_on_a_floor():
    assert len(MODULES) > 150 and {"bmk", "bmk.sim.core", "bmk.cli.main"} <= set(MODULES)
    for m in MODULES:
        _floor(m)


def test_every_import_goes_down_or_sideways():
    """Every import statement anywhere in a module (function-level included) goes to its own
    floor or a lower one that floor does not exclude."""
    wrong = []
    for m in MODULES:
        k, name, excluded = _floor(m)
        for line, target in _edges(m):
            tk, tname, _ = _floor(target)
            if tk > k or tname in excluded:
                wrong.append(f"{MODULES[m].relative_to(ROOT.parent)}:{line} ({name}) imports {target} ({tname})")
    assert wrong == []


def _circles():
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(GRAPH[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(GRAPH[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def test_the_circle_finder_finds_a_circle():
    saved = dict(GRAPH)
    try:
        GRAPH.update({"bmk.errors": ["bmk.util"], "bmk.util": ["bmk.errors"]})
        assert ["bmk.errors", "bmk.util"] in _circles()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_no_two_modules_import_each_other():
    """No import circle between modules, function-level imports included (a package's
    __init__ counts as a module: a submodule importing a name from its own package's
    __init__, which imports that submodule, is a circle)."""
    assert _circles() == []


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
    # every package folder of bmk/ and bmk/sim/ named after a chip is the registry's
    spec_chips = set(bmk.isa.chips())
    assert {p.name for p in ROOT.iterdir() if p.name in spec_chips and (p / "__init__.py").is_file()} == set(API_CHIPS)
    assert {p.name for p in (ROOT / "sim").iterdir() if (p / "__init__.py").is_file()} == set(SIM_CHIPS)


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
