"""Issue 32 item 16: the package says it is typed (py.typed, shipped), and the public calls
carry their argument types: no kernel-API argument is typed `object`."""
import inspect
import tomllib
from pathlib import Path

import attrs

import bmk
from bmk import bm1684, bm1684x, bm1880

ROOT = Path(__file__).resolve().parents[2]


def test_py_typed_is_shipped():
    assert (ROOT / "bmk" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["bmk"]


def test_public_functions_are_annotated():
    for fn in (bmk.decode, bmk.encode, bmk.load_model, bmk.check, bmk.Simulator.__init__, bmk.Simulator.run,
               bmk.Simulator.gmem_read, bmk.Simulator.gmem_write):
        sig = inspect.signature(fn)
        bare = [n for n, p in sig.parameters.items() if n != "self" and p.annotation is inspect.Parameter.empty]
        assert not bare, (fn.__qualname__, bare)


def test_no_kernel_api_argument_is_typed_object():
    for ctx in (bm1880.register(), bm1684.Context(), bm1684x.Context()):
        rows = [getattr(type(ctx), name).op_row for name in dir(type(ctx))
                if hasattr(getattr(type(ctx), name), "op_row")]
        assert len(rows) > 20
        for row in rows:
            if attrs.has(row.record):
                untyped = [f.name for f in attrs.fields(row.record) if f.type in (object, "object", None)]
                assert not untyped, (row.name, untyped)
            sig = inspect.signature(getattr(ctx, row.name))
            assert all(p.annotation not in (object, "object") for p in sig.parameters.values()), (row.name, sig)
    sig = inspect.signature(bm1684x.Context().bdc_and)
    assert sig.parameters["dst_addr"].annotation == "int" and "dim4" in sig.parameters["shape"].annotation
