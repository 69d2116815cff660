"""The host-CPU functions of cvimodel CPU routines, run in numpy (issue 30 item 3).

A CV18xx cvimodel may hand part of its network to the host: a CPU `Routine` names a function
(`CpuRoutine.function_section`) and carries its parameters (`function_args`, bmk/models/cpu/
params.py). The vendor's runtime looks the name up in a table of built-in functions
(cviruntime src/common/model.cpp, CviModel::CviModel: "argmax_v3" -> ArgMaxV3Func, "interp" ->
InterpolationFunc, ...) and fails the model when the name is not there (program.cpp,
CpuRoutine::initialize: "Cannot find runtime function"). bmk does the same with the functions it
implements: FUNCTIONS names each one's module, which has

    setup(function, inputs, outputs, path, where) -> config    # the checks of the C++ setup()
    run(config, arrays) -> [ndarray]                           # what the C++ run() computes

An unknown name is a ModelError naming it and the known ones, never a skip. This module
imports no numpy (the registry is consulted by `bmk check` and the reader's text paths).
"""
import importlib

from bmk.errors import ModelError

FUNCTIONS = {                           # function_section name -> implementing module
    "argmax_v3": "bmk.models.cpu.argmax_v3",
    "interp": "bmk.models.cpu.interp",
}


def known():
    """The names of the CPU functions bmk runs, sorted."""
    return sorted(FUNCTIONS)


def unknown_reason(name):
    """The sentence refusing a function bmk does not implement (None when it does)."""
    if name in FUNCTIONS:
        return None
    return (f"CPU function {name!r} is not one bmk runs (known: {', '.join(known())}); the vendor's runtime has more "
            "(cviruntime src/common/cpu_function/)")


def implementation(name, path=None, where="run"):
    """The module implementing CPU function `name`; ModelError naming it and listing the known ones."""
    reason = unknown_reason(name)
    if reason:
        raise ModelError(f"{where}: {reason}", path)
    return importlib.import_module(FUNCTIONS[name])
